import Foundation
import Testing

/// Whether every program the Syncplay baseline needs is on PATH (scripts/install-deps.sh --bench).
private let syncplayInstalled: Bool = {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return ["syncplay", "syncplay-server", "mpv", "ffmpeg"].allSatisfy { tool in
        path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
    }
}()

@Suite("coplay bench syncplay")
struct BenchSyncplayTests {
    @Test("bad arguments are usage errors with a non-zero exit")
    func validation() async throws {
        let result = try await CoplayProcess.run(["bench", "syncplay", "--duration", "1"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("--duration"))
        let network = try await CoplayProcess.run(["bench", "syncplay", "--network", "lunar"])
        #expect(network.status != 0)
        #expect(network.stderr.contains("--network must be one of quiet, jitter, asymmetric, loss"))
    }

    @Test("without the tools on PATH the run fails clearly, non-zero, and the outputs say FAILED")
    func missingTools() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-missing-\(UUID())")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try await CoplayProcess.run(
            ["bench", "syncplay", "--duration", "5", "--out", out.path], environment: ["PATH": "/nonexistent"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("is not installed"))
        let summary = try String(contentsOf: out.appendingPathComponent("summary.json"), encoding: .utf8)
        #expect(summary.contains("\"failed\""))
        #expect(summary.contains("\"complete\" : false"))
        let report = try String(contentsOf: out.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(report.contains("INCOMPLETE RUN"))
    }

    @Test(
        "a real Syncplay run writes summary.json, report.md, skew.svg with measured figures",
        .enabled(if: syncplayInstalled, "needs syncplay, syncplay-server, mpv and ffmpeg: scripts/install-deps.sh --bench"),
        .timeLimit(.minutes(3))
    )
    func realRun() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-syncplay-\(UUID())")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try await CoplayProcess.run(
            ["bench", "syncplay", "--duration", "12", "--out", out.path], timeout: 170)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let row = try #require((object["scenarios"] as? [[String: Any]])?.first)
        #expect(row["name"] as? String == "syncplay")
        #expect(row["status"] as? String == "ok")
        #expect(row["players"] as? Int == 2)
        // Both players played together and their shared frames were measured. How many, and whether
        // Syncplay delivered every command, is what the run measures of Syncplay (at load 12 one run
        // had 81 shared frames and one command that never took effect), so only their presence is asserted.
        #expect((row["frames"] as? Int ?? 0) > 0)
        let p50 = try #require(row["p50SkewMs"] as? Double)
        let p99 = try #require(row["p99SkewMs"] as? Double)
        let max = try #require(row["maxSkewMs"] as? Double)
        #expect(p50 >= 0 && p50 <= p99 && p99 <= max)
        let missed = try #require(row["missedEffects"] as? Int)
        #expect(missed >= 0 && missed <= 1, "Syncplay missed \(missed) of the script's commands")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("skew.svg").path))
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("syncplay-b.jsonl").path))
        let report = try String(contentsOf: out.appendingPathComponent("report.md"), encoding: .utf8)
        #expect(report.contains("| syncplay | – | 2 |"))
    }

    @Test(
        "a real Syncplay run through the jitter impairment proxy is measured and named syncplay-jitter",
        .enabled(if: syncplayInstalled, "needs syncplay, syncplay-server, mpv and ffmpeg: scripts/install-deps.sh --bench"),
        .timeLimit(.minutes(3))
    )
    func realRunThroughProxy() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-jitter-\(UUID())")
        defer { try? FileManager.default.removeItem(at: out) }
        let result = try await CoplayProcess.run(
            ["bench", "syncplay", "--duration", "10", "--network", "jitter", "--out", out.path], timeout: 170)
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stderr.contains("jitter impairment proxy"))
        let data = try Data(contentsOf: out.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let row = try #require((object["scenarios"] as? [[String: Any]])?.first)
        #expect(row["name"] as? String == "syncplay-jitter")
        #expect(row["status"] as? String == "ok")
        #expect((row["frames"] as? Int ?? 0) >= 50)
        // Commands cross the proxy twice (client a -> server -> client b), each way at least 10 ms.
        let latency = try #require(row["commandLatency"] as? [String: Any])
        #expect((latency["p50Ms"] as? Double ?? 0) >= 20)
    }
}

@Suite("coplay bench analyze")
struct BenchAnalyzeTests {
    @Test("two recorded streams with a known 3 ms offset give 3 ms of skew in every output")
    func analyze() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-analyze-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (player, offset) in [("alpha", 0.0), ("beta", 0.003)] {
            let lines = (0..<50).map { n in
                "{\"type\":\"frame\",\"index\":\(n),\"pts\":\(Double(n) / 25),\"realtime\":\(1000 + Double(n) / 25 + offset)}"
            }
            try Data(lines.joined(separator: "\n").utf8).write(to: directory.appendingPathComponent("\(player).jsonl"))
        }
        let out = directory.appendingPathComponent("out")
        let result = try await CoplayProcess.run([
            "bench", "analyze", "--name", "recorded", "--out", out.path,
            directory.appendingPathComponent("alpha.jsonl").path, directory.appendingPathComponent("beta.jsonl").path,
        ])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        #expect(result.stdout.contains("| recorded | – | 2 | 3.000 | 3.000 | 3.000 |"))
        let summary = try String(contentsOf: out.appendingPathComponent("summary.json"), encoding: .utf8)
        #expect(summary.contains("\"name\" : \"recorded\""))
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("skew.svg").path))
    }

    @Test("a single stream is a usage error")
    func oneStream() async throws {
        let result = try await CoplayProcess.run(["bench", "analyze", "only.jsonl"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("at least two"))
    }
}
