import Foundation
import Testing

@testable import SyncBench

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("BenchReport: summary.json, Markdown and SVG")
struct BenchReportTests {
    func sampleReport(failing: Bool) -> BenchReport {
        var report = BenchReport()
        let streams = [
            PlayerEventStream(player: "a", events: frames("a", count: 3000)),
            PlayerEventStream(player: "b", events: frames("b", count: 3000) { n in Double(n % 7) * 0.0002 }),
        ]
        report.append(ScenarioAnalysis(name: "quiet", streams: streams))
        if failing {
            report.append(ScenarioResult.failed(name: "syncplay", players: 2, error: "mpv is not installed"))
        }
        return report
    }

    @Test("summary.json has the scenarios array with the documented keys")
    func summary() throws {
        let data = try sampleReport(failing: false).summaryJSON()
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let scenarios = try #require(object["scenarios"] as? [[String: Any]])
        #expect(scenarios.count == 1)
        let row = scenarios[0]
        #expect(row["name"] as? String == "quiet")
        #expect(row["players"] as? Int == 2)
        for key in ["p50SkewMs", "p99SkewMs", "maxSkewMs", "within1msShare", "withinHalfFrameShare"] {
            #expect(row[key] is Double, "missing \(key)")
        }
        #expect(object["complete"] as? Bool == true)
    }

    @Test("a failed scenario makes the run incomplete and its row says FAILED without figures")
    func failedRow() throws {
        let report = sampleReport(failing: true)
        #expect(!report.isComplete)
        let markdown = report.markdownReport()
        #expect(markdown.contains("INCOMPLETE RUN"))
        #expect(markdown.contains("| syncplay | – | 2 | FAILED: mpv is not installed |"))
        let object = try JSONSerialization.jsonObject(with: report.summaryJSON()) as? [String: Any]
        #expect(object?["complete"] as? Bool == false)
        let rows = object?["scenarios"] as? [[String: Any]]
        #expect(rows?[1]["status"] as? String == "failed")
        #expect(rows?[1]["p99SkewMs"] == nil)
    }

    @Test("the Markdown table has one row per scenario")
    func markdownTable() {
        let markdown = sampleReport(failing: false).markdownReport()
        let rows = markdown.split(separator: "\n").filter { $0.hasPrefix("| ") }
        #expect(rows.count == 2)  // header + quiet
        #expect(rows[1].hasPrefix("| quiet | – | 2 |"))
        #expect(rows[1].hasSuffix("| 3000 |"))
    }

    @Test("the SVG is well-formed XML with one polyline per player and bounded size")
    func svg() throws {
        let svg = sampleReport(failing: true).skewPlotSVG()
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "SVG does not parse: \(String(describing: parser.parserError))")
        #expect(svg.components(separatedBy: "<polyline").count - 1 == 2)
        #expect(svg.contains("FAILED: mpv is not installed"))
        // 3000 points are reduced to at most 2 per bucket per player.
        let firstLine = try #require(svg.components(separatedBy: "points=\"").dropFirst().first)
        let coordinates = firstLine.prefix { $0 != "\"" }.split(separator: " ")
        #expect(coordinates.count <= 2 * BenchReport.maxPlotBuckets)
    }

    @Test("a stretch without presented frames (a pause) breaks a player's line instead of bridging it")
    func lineBreaks() {
        var points: [(time: Double, value: Double)] = []
        for index in 0..<100 { points.append((time: Double(index) * 0.04, value: 1)) }
        for index in 0..<100 { points.append((time: 10 + Double(index) * 0.04, value: -1)) }
        let stretches = BenchReport.stretches(points, gap: BenchReport.lineBreakGap)
        #expect(stretches.count == 2)
        #expect(stretches.map { $0.count } == [100, 100])
        #expect(BenchReport.stretches([], gap: 0.5).isEmpty)
    }

    @Test("write(to:) creates the three files")
    func writeFiles() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("syncbench-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let urls = try sampleReport(failing: false).write(to: directory)
        #expect(urls.map(\.lastPathComponent) == ["summary.json", "report.md", "skew.svg"])
        for url in urls { #expect(FileManager.default.fileExists(atPath: url.path)) }
    }
}
