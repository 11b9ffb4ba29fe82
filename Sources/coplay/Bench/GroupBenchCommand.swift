import ArgumentParser
import BenchmarkSupport
import Foundation
import PlaybackCoordinator

/// `coplay bench group`: N coordinated headless players in one process, scripted commands, skew.
struct GroupBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Run coordinated headless players in one process and measure their frame skew.",
        discussion: """
            Starts --players members on an in-memory channel and this machine's monotonic clock (no relay,
            no network: this isolates the coordinator and players), then: play; seek to 30 s at 40% of
            --duration; rate 1.5 at 60%; pause at 85%. Every frame event carries CLOCK_REALTIME; the
            summary line gives the per-frame inter-player spread. --events prints every event as JSON Lines.
            """
    )

    @Option(help: "Number of players.")
    var players: Int = 3

    @Option(help: "Run length in seconds.")
    var duration: Double = 10

    @Option(help: "Frames per second of the synthetic item.")
    var fps: Double = 25

    @Flag(help: "Print every event as a JSON line.")
    var events = false

    func validate() throws {
        guard (2...16).contains(players) else { throw ValidationError("--players must be in 2...16") }
        guard duration >= 2, duration <= 3600 else { throw ValidationError("--duration must be in 2...3600 seconds") }
        guard fps > 0, fps <= 240 else { throw ValidationError("--fps must be in (0, 240]") }
    }

    func run() async throws {
        let item = MediaTimeline(identifier: "synthetic", duration: duration + 60, frameRate: fps)
        let group = await LocalGroup.make(players: players, items: [item])
        let running = Task { await group.run() }
        let printing = events
        let collecting = Task { () -> [PlaybackEvent] in
            var all: [PlaybackEvent] = []
            for await event in group.events {
                if printing { print(event.jsonLine) }
                all.append(event)
            }
            return all
        }
        let c = group.coordinators
        try await Task.sleep(for: .milliseconds(300))
        try await c[0].play()
        try await Task.sleep(for: .seconds(duration * 0.4))
        try await c[1 % c.count].coordinateSeek(to: 30)
        try await Task.sleep(for: .seconds(duration * 0.2))
        try await c[2 % c.count].coordinateRateChange(to: 1.5)
        try await Task.sleep(for: .seconds(duration * 0.25))
        try await c[0].pause()
        try await Task.sleep(for: .seconds(duration * 0.15))
        running.cancel()
        await running.value
        let all = await collecting.value

        let skew = FrameSkew(events: all)
        let stops = all.filter { $0.type == .stopped && $0.detail == "paused" }
        let stoppedFrames = Set(stops.compactMap(\.index)).sorted()
        print(
            "{\"bench\":\"group\",\"players\":\(players),\"fps\":\(fps),\"frames\":\(skew.spreads.count),"
                + "\"completeFrames\":\(skew.completeFrames),\"p50SkewMs\":\(skew.percentile(0.5) * 1e3),"
                + "\"p99SkewMs\":\(skew.percentile(0.99) * 1e3),\"maxSkewMs\":\((skew.spreads.max() ?? 0) * 1e3),"
                + "\"within1ms\":\(skew.share(within: 0.001)),\"pausedOnFrames\":\(stoppedFrames)}")
        if skew.spreads.isEmpty || stops.count != players || stoppedFrames.count != 1 {
            Console.err.write("error: the group did not play and pause together\n")
            throw ExitCode.failure
        }
    }
}
