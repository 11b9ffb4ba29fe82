import ArgumentParser
import Foundation
import SyncBench

/// `coplay bench analyze`: the scenario analysis applied to event streams recorded elsewhere.
struct BenchScenarioAnalyzeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analyze",
        abstract: "Compute inter-player skew from players' JSON Lines event streams.",
        discussion: """
            Each FILE is one player's event stream (JSON Lines; every line has "type" and "realtime", \
            frame lines also "index" and "pts"), the player named after the file (without extension). \
            Writes summary.json, report.md and skew.svg to --out and prints the Markdown table. A stream \
            whose player played a near copy (its own nearCopy event) is left out: only frame-identical \
            players count. \
            Definitions: docs/benchmarks.md.
            """
    )

    @Option(help: "The scenario's name in the report.")
    var name: String = "scenario"

    @Option(help: "Directory for summary.json, report.md and skew.svg.")
    var out: String = "bench-out"

    @Option(name: .customLong("frame-rate"), help: "The media's frame rate; default: derived from the frames' pts.")
    var frameRate: Double?

    @Option(name: .customLong("pairing-window"), help: "Largest skew (seconds) that still pairs two presentations of a frame.")
    var pairingWindow: Double = 5

    @Argument(help: "One JSON Lines file per player (at least two).")
    var files: [String]

    func validate() throws {
        guard files.count >= 2 else { throw ValidationError("give at least two event streams") }
        if let frameRate, !(frameRate > 0) { throw ValidationError("--frame-rate must be positive") }
        guard pairingWindow > 0 else { throw ValidationError("--pairing-window must be positive") }
    }

    func run() async throws {
        var streams: [PlayerEventStream] = []
        for file in files {
            let url = URL(fileURLWithPath: file)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw ValidationError("cannot read \(file)")
            }
            let stream = try PlayerEventStream(player: url.deletingPathExtension().lastPathComponent, jsonLines: data)
            // Only frame-identical players count: one that played a near copy (another encode) shows other frames.
            if stream.events.contains(where: \.isOwnNearCopy) {
                Console.err.write("coplay bench analyze: left out \(file): it played a near copy (another encode, not frame-identical)\n")
                continue
            }
            streams.append(stream)
        }
        guard streams.count >= 2 else { throw ValidationError("fewer than two frame-identical event streams to compare") }
        let analysis = ScenarioAnalysis(
            name: name, streams: streams,
            configuration: .init(pairingWindow: pairingWindow, frameDuration: frameRate.map { 1 / $0 }))
        var report = BenchReport()
        report.append(analysis)
        try report.write(to: URL(fileURLWithPath: out))
        print(report.markdownReport())
        guard (analysis.result.frames ?? 0) > 0 else {
            Console.err.write("Error: no frame was presented by every player\n")
            throw ExitCode.failure
        }
    }
}
