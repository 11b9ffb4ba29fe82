import ArgumentParser
import Foundation
import Logging
import NetworkEmulation
import SyncBench

/// `coplay bench syncplay`: the Syncplay baseline, measured for real on loopback.
struct BenchSyncplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "syncplay",
        abstract: "Measure Syncplay + mpv on loopback, the baseline coplay is compared with.",
        discussion: """
            Starts syncplay-server and two `syncplay --no-gui` clients, each driving mpv with \
            --vo=null --ao=null, on the scenarios' generated 25 fps test clip. An action script (play, pause, \
            play, seek, pause) goes into the first client's mpv; the benchmark's own sampler watches each \
            mpv's time-pos change from frame to frame (densely around each predicted change) and dates \
            every frame presentation (docs/benchmarks.md). Writes summary.json, report.md, skew.svg and the \
            players' event streams to --out. Needs `scripts/install-deps.sh --bench`. Exits non-zero if \
            the scenario could not run.
            """
    )

    @Option(help: "Seconds of action script and sampling (at least 5).")
    var duration: Double = 30

    @Option(help: "Directory for summary.json, report.md, skew.svg and the event streams.")
    var out: String = "bench-out"

    @Option(
        name: .customLong("sample-interval"),
        help: "The longest gap between two samples of one player away from a predicted frame change, in milliseconds (dense sampling around each change is 0.25 ms).")
    var sampleInterval: Double = 5

    @Option(help: "Network between clients and server: quiet, jitter (20±10 ms), asymmetric (65/35 ms), loss (1 %).")
    var network: String = "quiet"

    @Option(help: "Seed of the impairment proxy's random choices.")
    var seed: UInt64 = 1

    @Flag(help: "Keep the work directory (media, Syncplay logs) under --out.")
    var keepWork = false

    func validate() throws {
        guard NetworkCondition.all.contains(where: { $0.name == network }) else {
            throw ValidationError(
                "--network must be one of \(NetworkCondition.all.map(\.name).joined(separator: ", "))")
        }
        guard duration >= 5, duration <= 3600 else { throw ValidationError("--duration must be within 5...3600 seconds") }
        guard sampleInterval >= 1, sampleInterval <= 500 else {
            throw ValidationError("--sample-interval must be within 1...500 milliseconds")
        }
    }

    /// `syncplay` on quiet loopback, `syncplay-jitter` and so on otherwise.
    var scenarioName: String { network == "quiet" ? "syncplay" : "syncplay-\(network)" }

    func run() async throws {
        var logger = Logger(label: "coplay.bench.syncplay")
        logger.logLevel = .warning
        let outURL = URL(fileURLWithPath: out)
        let runner = SyncplayBaseline(
            configuration: .init(
                duration: duration, sampleInterval: sampleInterval / 1000,
                workDirectory: keepWork ? outURL.appendingPathComponent("syncplay-work") : nil,
                network: try NetworkCondition.named(network), seed: seed),
            logger: logger)
        var report = BenchReport()
        var failure: (any Error)?
        do {
            let result = try await runner.run { line in
                Console.err.write("bench syncplay: \(line)\n")
            }
            let analysis = ScenarioAnalysis(
                name: scenarioName, streams: result.streams,
                configuration: .init(frameDuration: 1.0 / result.frameRate, method: "transitions"))
            if (analysis.result.frames ?? 0) == 0 {
                throw BenchError.scenarioFailed("the players never played the same frames")
            }
            var row = analysis.result
            row.mediaPlayer = "mpv"
            row.sampler = ScenarioResult.Sampler(records: result.samplerRecords)
            row.pauseFrames = PauseFrames(result.pauseChecks)
            report.append(ScenarioAnalysis(result: row, series: analysis.series))
            report.notes = [
                "syncplay: \(Self.version(result.syncplayVersion)); \(Self.version(result.mpvVersion)); 2 clients, loopback, network \(network), default Syncplay thresholds",
                String(
                    format: "syncplay: frames from mpv's time-pos transitions, sampled at least every %.0f ms per player and every 0.25 ms around each predicted change",
                    sampleInterval),
            ]
            try FileManager.default.createDirectory(at: outURL, withIntermediateDirectories: true)
            for stream in result.streams {
                try stream.jsonLines().write(to: outURL.appendingPathComponent("syncplay-\(stream.player).jsonl"))
            }
        } catch {
            failure = error
            report.append(ScenarioResult.failed(name: scenarioName, players: 2, error: "\(error)"))
        }
        let written = try report.write(to: outURL)
        print(report.markdownReport())
        Console.err.write("bench syncplay: wrote \(written.map(\.path).joined(separator: ", "))\n")
        if let failure {
            Console.err.write("Error: \(failure)\n")
            throw ExitCode.failure
        }
    }

    /// "You're using Syncplay version 1.6.9 (Yoitsu)" -> "Syncplay version 1.6.9 (Yoitsu)"; "mpv 0.35.1 Copyright..." -> "mpv 0.35.1".
    static func version(_ line: String) -> String {
        if let range = line.range(of: "Syncplay version") { return String(line[range.lowerBound...]) }
        if let range = line.range(of: " Copyright") { return String(line[..<range.lowerBound]) }
        return line
    }
}
