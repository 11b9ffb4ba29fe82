import Foundation
import Testing

/// Whether Syncplay, its server, mpv and ffmpeg are on PATH (scripts/install-deps.sh --bench).
private let syncplayAvailable: Bool = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return ["syncplay", "syncplay-server", "mpv", "ffmpeg"].allSatisfy { tool in
        path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }
}()

/// `coplay bench [run] --scenario ...`: the scenario runner, end to end with real processes.
@Suite("coplay bench --scenario (the scenario runner)", .serialized)
struct BenchRunCLITests {
    static func summary(_ out: URL) throws -> [[String: Any]] {
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        return try #require(object["scenarios"] as? [[String: Any]])
    }

    @Test(
        "quiet with 2 players for 20 s (and Syncplay beside it when installed): real, plausible figures; every action runs",
        .timeLimit(.minutes(4)))
    func quietEndToEnd() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-run-\(UUID())")
        defer { try? FileManager.default.removeItem(at: out) }
        var scenarios = "quiet"
        if syncplayAvailable {
            scenarios += ",syncplay"
        } else {
            print("coplay bench run test: syncplay, syncplay-server, mpv or ffmpeg missing (scripts/install-deps.sh --bench): the Syncplay row is not checked")
        }
        let result = try await CoplayProcess.run(
            ["bench", "--scenario", scenarios, "--players", "2", "--duration", "20", "--out", out.path], timeout: 220)
        #expect(result.status == 0, "stderr: \(result.stderr.suffix(2000))")
        // The action script and the progress line go to stderr; the table to stdout.
        #expect(result.stderr.contains("relay restart"))
        #expect(result.stderr.contains("bench quiet: "))
        #expect(result.stdout.contains("| quiet | coplay | 2 |"))

        let rows = try Self.summary(out)
        let quiet = try #require(rows.first { $0["name"] as? String == "quiet" })
        #expect(quiet["status"] as? String == "ok")
        #expect(quiet["players"] as? Int == 2)
        #expect(quiet["implementation"] as? String == "coplay")
        let p50 = try #require(quiet["p50SkewMs"] as? Double)
        let p99 = try #require(quiet["p99SkewMs"] as? Double)
        let max = try #require(quiet["maxSkewMs"] as? Double)
        #expect(p50.isFinite && p99.isFinite && max.isFinite)
        #expect(0 <= p50 && p50 <= p99 && p99 <= max)
        #expect(p99 < 50, "p99 skew \(p99) ms")
        // Both players presented a few seconds of frames together at 25 fps.
        #expect((quiet["frames"] as? Int ?? 0) >= 50)
        let within = try #require(quiet["withinHalfFrameShare"] as? Double)
        #expect(within > 0.9 && within <= 1)
        // Commands took effect on both players (pause, play, seek after the late joiner).
        let latency = try #require(quiet["commandLatency"] as? [String: Any])
        #expect((latency["count"] as? Int ?? 0) >= 2)
        #expect((latency["p50Ms"] as? Double ?? -1) > 0)
        let clock = try #require(quiet["clockOffsetError"] as? [String: Any])
        #expect((clock["p50Ms"] as? Double ?? 1000) < 50)
        #expect(quiet["relayRestart"] is String)
        // Every action of the 20 s script ran, the suspension included (held 0.7 s): both players
        // stopped for it and resumed.
        let actions = try #require(quiet["actions"] as? [String])
        #expect(actions.contains("15.2 suspension 0.7 s"), "\(actions)")
        #expect(!actions.contains { $0.contains("not run") })
        #expect(!result.stdout.contains("not run") && !result.stderr.contains("not run"))
        #expect(result.stdout.contains("suspension: suspend accepted: buffering"))
        let suspensions = try #require(quiet["suspensions"] as? [String: Any])
        #expect(suspensions["count"] as? Int == 1)
        #expect(suspensions["unresumed"] as? Int == 0)
        let held = try #require(suspensions["held"] as? [String: Any])
        #expect(held["count"] as? Int == 2)
        #expect((held["p50Ms"] as? Double ?? 0) >= 690, "the players presented nothing for \(held["p50Ms"] ?? "?") ms")
        #expect(suspensions["stopSpreadMs"] is Double && suspensions["resumeSpreadMs"] is Double)
        for name in ["report.md", "skew.svg", "quiet-p1.jsonl", "quiet-p2.jsonl"] {
            #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path), "\(name) missing")
        }

        if syncplayAvailable {
            let syncplay = try #require(rows.first { $0["name"] as? String == "syncplay" })
            #expect(syncplay["status"] as? String == "ok", "\(syncplay["error"] ?? "")")
            #expect(syncplay["implementation"] as? String == "syncplay")
            #expect(syncplay["p99SkewMs"] is Double)
            #expect(result.stdout.contains("| syncplay | Syncplay | 2 |"))
        }
    }

    @Test("a scenario that cannot run (missing media) exits non-zero with a FAILED row", .timeLimit(.minutes(2)))
    func missingMedia() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-run-\(UUID())")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try await CoplayProcess.run(
            ["bench", "run", "--scenario", "quiet", "--players", "2", "--duration", "5", "--media", "/nonexistent/clip.mp4",
             "--out", out.path], timeout: 100)
        #expect(result.status != 0)
        #expect(result.stderr.contains("FAILED"))
        #expect(result.stdout.contains("INCOMPLETE RUN"))
        #expect(result.stdout.contains("| quiet | coplay | 2 | FAILED: "))
        let rows = try Self.summary(out)
        #expect(rows.count == 1)
        #expect(rows[0]["status"] as? String == "failed")
        #expect((rows[0]["error"] as? String ?? "").contains("/nonexistent/clip.mp4"))
        #expect(rows[0]["p99SkewMs"] == nil)
        let report = try String(contentsOf: out.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(report.contains("FAILED"))
    }

    @Test("bad arguments are usage errors")
    func validation() async throws {
        let unknown = try await CoplayProcess.run(["bench", "--scenario", "lunar"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("unknown scenario 'lunar'"))
        let players = try await CoplayProcess.run(["bench", "run", "--scenario", "quiet", "--players", "1"])
        #expect(players.status == 64)
        #expect(players.stderr.contains("--players"))
        let duration = try await CoplayProcess.run(["bench", "--duration", "1"])
        #expect(duration.status == 64)
        let help = try await CoplayProcess.run(["bench", "run", "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("--scenario"))
        // The queue scenario's options apply to it alone, and it needs two members.
        let mpvElsewhere = try await CoplayProcess.run(["bench", "--scenario", "quiet", "--mpv", "0"])
        #expect(mpvElsewhere.status == 64)
        #expect(mpvElsewhere.stderr.contains("queue scenario"))
        let alone = try await CoplayProcess.run(["bench", "--scenario", "queue", "--headless", "1", "--mpv", "0"])
        #expect(alone.status == 64)
        #expect(alone.stderr.contains("at least two members"))
        #expect(help.stdout.contains("--queue-entries"))
    }
}
