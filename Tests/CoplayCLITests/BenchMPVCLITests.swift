import Foundation
import Testing

/// Whether mpv and ffmpeg are on PATH (scripts/install-deps.sh).
private let mpvInstalled: Bool = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return ["mpv", "ffmpeg"].allSatisfy { tool in
        path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }
}()

/// `coplay bench --scenario mpv`: coplay members driving real mpv processes, measured by the
/// benchmark's own sampler of each mpv, end to end.
@Suite("coplay bench --scenario mpv (coplay driving mpv)", .serialized)
struct BenchMPVCLITests {
    @Test(
        "mpv with 2 players for 20 s: frames from the sampler, its resolution, every action, pictures compared at the pauses",
        .enabled(if: mpvInstalled, "needs mpv and ffmpeg on PATH (scripts/install-deps.sh): the mpv scenario was not run"),
        .timeLimit(.minutes(2)))
    func mpvEndToEnd() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-mpv-\(UUID())")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try await CoplayProcess.run(
            ["bench", "--scenario", "mpv", "--players", "2", "--duration", "20", "--out", out.path], timeout: 110)
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let row = try #require((object["scenarios"] as? [[String: Any]])?.first)
        #expect(result.stdout.contains("| mpv | coplay + mpv | 2 |"))
        if let error = row["error"] as? String, error.contains("did not confirm") {
            // Known (24 Nov 2026): MPVPlayer takes mpv's notification of its own speed trim, rounded to
            // 6 decimals, for the person's speed change and proposes it to the group; the players'
            // hundreds of rate proposals can make a `coplay control` time out waiting for its
            // confirmation. Remove this once the adapter's echo rule allows for the rounding.
            withKnownIssue("the mpv adapter's speed-trim echo floods the group with rate changes", isIntermittent: true) {
                Issue.record("the mpv scenario failed: \(error)")
            }
            return
        }
        #expect(result.status == 0, "stderr: \(result.stderr.suffix(2000))")
        #expect(row["status"] as? String == "ok", "\(row["error"] ?? "")")
        #expect(row["implementation"] as? String == "coplay")
        #expect(row["mediaPlayer"] as? String == "mpv")
        #expect(row["method"] as? String == "transitions")
        // The media's 25 fps, as mpv reported it to the sampler.
        #expect(abs((row["frameDurationMs"] as? Double ?? 0) - 40) < 1e-6)
        // Both mpvs presented several seconds of frames together (the window is about 15 s).
        #expect((row["frames"] as? Int ?? 0) >= 100)
        let p50 = try #require(row["p50SkewMs"] as? Double)
        let p99 = try #require(row["p99SkewMs"] as? Double)
        let max = try #require(row["maxSkewMs"] as? Double)
        #expect(0 <= p50 && p50 <= p99 && p99 <= max)
        // Sampled frames carry no clock estimate.
        #expect(row["clockOffsetError"] == nil)
        // Every command took effect on both players; the relay restart was survived.
        let latency = try #require(row["commandLatency"] as? [String: Any])
        #expect((latency["count"] as? Int ?? 0) >= 10)
        #expect(row["relayRestart"] as? String == "resumed")
        let suspensions = try #require(row["suspensions"] as? [String: Any])
        // The scripted suspension and no other: an mpv member's own seeks (after a play, a rate change,
        // a re-anchoring) make the group wait only when they outlast the start the group expects.
        #expect(suspensions["count"] as? Int == 1 && suspensions["unresumed"] as? Int == 0, "suspensions: \(suspensions)")
        // The sampler's own resolution is reported.
        let sampler = try #require(row["sampler"] as? [String: Any])
        let bracket = try #require(sampler["bracket"] as? [String: Any])
        #expect((bracket["count"] as? Int ?? 0) >= 100)
        #expect((bracket["p50Ms"] as? Double ?? -1) > 0)
        #expect(sampler["roundTrip"] is [String: Any])
        // Every frame re-dated from its neighbours (FrameCadence), never less precisely than its own bracket.
        let dating = try #require(sampler["datingError"] as? [String: Any])
        #expect(dating["count"] as? Int == bracket["count"] as? Int)
        #expect((dating["maxMs"] as? Double ?? .infinity) <= (bracket["maxMs"] as? Double ?? 0) / 2 + 1e-6, "\(dating) \(bracket)")
        // The pause and the suspension: each mpv's picture written and compared.
        let pauses = try #require(row["pauseFrames"] as? [String: Any])
        #expect(pauses["pauses"] as? Int == 2)
        let checks = try #require(pauses["checks"] as? [String])
        #expect(checks.count == 2 && checks[0].hasPrefix("5.0 pause: ") && checks[1].hasPrefix("15.2 suspension: "), "\(checks)")
        #expect(!checks.contains { $0.contains("no screenshot") }, "\(checks)")
        print("bench mpv test: \(pauses["identical"] ?? "?") of 2 pauses identical; p50/p99/max skew \(p50)/\(p99)/\(max) ms; bracket p50 \(bracket["p50Ms"] ?? "?") ms")
        #expect(result.stdout.contains("identical frames on"))
        for name in ["report.md", "skew.svg", "mpv-p1.jsonl", "mpv-p2.jsonl", "work/mpv/p1-sampler.jsonl"] {
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path), "\(name) missing")
        }
        let screenshots = try FileManager.default.contentsOfDirectory(atPath: out.appendingPathComponent("work/mpv/screenshots").path)
        #expect(screenshots.filter { $0.hasSuffix(".png") }.count == 4, "\(screenshots)")
    }
}
