import Foundation
import Testing

/// Why the browser scenario cannot run here (Chromium, Python 3 with Playwright, ffmpeg), or nil.
private let browserUnavailable: String? = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    func find(_ tool: String) -> String? {
        path.split(separator: ":").map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium") else { return "/usr/bin/chromium is missing" }
    guard find("ffmpeg") != nil else { return "ffmpeg is missing" }
    guard let python = find("python3") else { return "python3 is missing" }
    let check = Process()
    check.executableURL = URL(fileURLWithPath: python)
    check.arguments = ["-c", "import playwright.sync_api"]
    check.standardOutput = FileHandle.nullDevice
    check.standardError = FileHandle.nullDevice
    guard (try? check.run()) != nil else { return "python3 does not run" }
    check.waitUntilExit()
    return check.terminationStatus == 0 ? nil : "Playwright for Python is missing (pip install playwright)"
}()

/// `coplay bench --scenario browser`: a headless `coplay join` and two pages of the relay's web client,
/// each in its own headless Chromium (scripts/browser-driver.py), under the action script.
@Suite("coplay bench --scenario browser (Chromium pages beside a headless member)", .serialized)
struct BenchBrowserCLITests {
    @Test(
        "browser for 20 s: rows from the pages' rVFC samples beside the headless member's frames; every action; relay restart",
        .enabled(
            if: browserUnavailable == nil,
            "\(browserUnavailable ?? ""): scripts/install-deps.sh installs Chromium and Playwright; the browser scenario was not run"),
        .timeLimit(.minutes(3)))
    func browserEndToEnd() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-browser-\(UUID())")
        defer { try? FileManager.default.removeItem(at: out) }
        // The driver is found from the repository root (this test's working directory) or next to the binary.
        let result = try await CoplayProcess.run(
            ["bench", "--scenario", "browser", "--duration", "20", "--out", out.path], timeout: 170)
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let row = try #require((object["scenarios"] as? [[String: Any]])?.first)
        #expect(result.status == 0, "stderr: \(result.stderr.suffix(2000))")
        #expect(row["status"] as? String == "ok", "\(row["error"] ?? "")")
        #expect(result.stdout.contains("| browser | coplay + Chromium | 3 |"))
        #expect(row["mediaPlayer"] as? String == "browser")
        #expect(row["method"] as? String == "display")
        #expect(abs((row["frameDurationMs"] as? Double ?? 0) - 40) < 1e-6)
        // The three players presented frames together for several seconds (the window is about 10 s).
        #expect((row["frames"] as? Int ?? 0) >= 50, "\(row["frames"] ?? "?") shared frames")
        let p50 = try #require(row["p50SkewMs"] as? Double)
        let p99 = try #require(row["p99SkewMs"] as? Double)
        let max = try #require(row["maxSkewMs"] as? Double)
        #expect(0 <= p50 && p50 <= p99 && p99 <= max)
        // Plausible, not the goal (a loaded CI machine, a 20 s script of back-to-back actions).
        #expect(p50 < 40, "p50 skew \(p50) ms")
        // The pages' samples, windows and the figures beside the row.
        let browser = try #require(row["browser"] as? [String: Any])
        #expect(browser["pages"] as? [String] == ["b1", "b2"])
        let samples = try #require(browser["samples"] as? Int)
        let used = try #require(browser["usedSamples"] as? Int)
        #expect(samples >= 200 && used >= 100 && used <= samples, "\(used) of \(samples) samples in media-clock windows")
        // Every frame shown while playing is dated by its display time (more than the windows hold).
        let displayed = try #require(browser["displayedFrames"] as? Int)
        #expect(displayed > used && displayed <= samples, "\(displayed) of \(samples) samples dated by display time")
        // The per-second display origins against the headless member.
        let spread = try #require(browser["displaySpread"] as? [String: Any])
        #expect(spread["reference"] as? String == "p1")
        let perSecond = try #require(spread["spread"] as? [String: Any])
        #expect((perSecond["count"] as? Int ?? 0) >= 3)
        #expect((spread["offsets"] as? [String: Any])?.count == 2)
        #expect(spread["tickApartSeconds"] is Int)
        #expect((browser["windows"] as? Int ?? 0) >= 10)
        #expect(browser["hasAudio"] as? Bool == false)
        #expect((browser["chromium"] as? String)?.isEmpty == false)
        let pagesOnly = try #require(browser["pagesOnly"] as? [String: Any])
        #expect((pagesOnly["frames"] as? Int ?? 0) >= 50)
        #expect(browser["mediaClock"] is [String: Any])
        #expect((browser["displayLatencyMs"] as? [String: Double])?.count == 2)
        // performance.timeOrigin + now is CLOCK_REALTIME on the same machine, to within a round trip.
        #expect((browser["calibrationMaxMs"] as? Double ?? 99) < 5)
        // Commands reached the pages (the pages' own accepted events, the <video>'s pause as the pause's effect).
        let latency = try #require(row["commandLatency"] as? [String: Any])
        #expect((latency["count"] as? Int ?? 0) >= 4)
        #expect(row["relayRestart"] is String)
        #expect(result.stdout.contains("DISPLAY ORIGINS per second"))
        #expect(result.stdout.contains("between the pages alone"))
        for name in ["report.md", "skew.svg", "browser-p1.jsonl", "browser-b1.jsonl", "browser-b2.jsonl", "work/browser/b1.log"] {
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path), "\(name) missing")
        }
        print("bench browser test: p50/p99/max skew \(p50)/\(p99)/\(max) ms; \(displayed) of \(samples) samples; display spread \(perSecond); pages alone \(pagesOnly)")
    }
}
