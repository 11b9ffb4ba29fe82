import Foundation

/// The outputs of a benchmark run: `summary.json`, `report.md` and `skew.svg`.
///
/// A report holds one entry per scenario, measured or failed. ``isComplete`` is false when any scenario
/// failed; the Markdown table then marks that row FAILED and says so above the table, so a partial run
/// never looks whole.
///
/// ```swift
/// var report = BenchReport()
/// report.append(ScenarioAnalysis(name: "syncplay", streams: streams))
/// try report.write(to: URL(fileURLWithPath: "out"))
/// ```
package struct BenchReport: Sendable {
    /// One scenario's summary row and, when it ran, its skew series.
    package struct Entry: Sendable {
        /// The summary row.
        package var result: ScenarioResult
        /// The skew series (nil for a failed scenario).
        package var series: SkewSeries?
    }

    /// The scenarios, in run order.
    package private(set) var entries: [Entry] = []
    /// Free-form lines describing the run's conditions, printed under the table.
    package var notes: [String] = []

    /// Creates an empty report.
    package init() {}

    /// Adds a measured scenario.
    package mutating func append(_ analysis: ScenarioAnalysis) {
        entries.append(Entry(result: analysis.result, series: analysis.series))
    }

    /// Adds a scenario row without a series (for example a failed one).
    package mutating func append(_ result: ScenarioResult) {
        entries.append(Entry(result: result, series: nil))
    }

    /// Whether every scenario ran and was measured.
    package var isComplete: Bool { !entries.isEmpty && entries.allSatisfy { $0.result.succeeded } }

    /// `summary.json`: `{"scenarios":[...]}` with sorted keys.
    package func summaryJSON() throws -> Data {
        struct Summary: Encodable {
            var complete: Bool
            var scenarios: [ScenarioResult]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(Summary(complete: isComplete, scenarios: entries.map(\.result)))
        data.append(UInt8(ascii: "\n"))
        return data
    }

    /// Writes `summary.json`, `report.md` and `skew.svg` into `directory` (created if missing).
    ///
    /// - Returns: the URLs written.
    @discardableResult
    package func write(to directory: URL) throws -> [URL] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let summary = directory.appendingPathComponent("summary.json")
        let markdown = directory.appendingPathComponent("report.md")
        let svg = directory.appendingPathComponent("skew.svg")
        try summaryJSON().write(to: summary, options: .atomic)
        try Data(markdownReport().utf8).write(to: markdown, options: .atomic)
        try Data(skewPlotSVG().utf8).write(to: svg, options: .atomic)
        return [summary, markdown, svg]
    }
}
