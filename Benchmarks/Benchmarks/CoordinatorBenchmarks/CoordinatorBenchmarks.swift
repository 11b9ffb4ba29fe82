import Benchmark
import PlaybackCoordinator

// The playback side's sans-IO cores: CoordinatorCore handling commands and channel traffic, and
// HeadlessPlayerCore stepping through frames under its sync controller. No I/O, no clock reads:
// reference time is advanced by hand, so each figure is the core's own cost.

let clip = MediaTimeline(identifier: "clip", duration: 600, frameRate: 60)

let benchmarks: @Sendable () -> Void = {
    let micro = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo,
        maxDuration: .seconds(5), maxIterations: 1_000)

    // A local seek: propose, then accept it when the channel hands it back in the total order
    // (what every local play/pause/seek costs the member that issues it).
    Benchmark("CoordinatorCore: local seek, proposed and received back", configuration: micro) { benchmark in
        var group = CoordinatorGroup(members: 8)
        for _ in benchmark.scaledIterations {
            blackHole(try group.localSeek())
        }
    }

    // Another member's play/pause arriving from the channel (every member handles every command).
    Benchmark("CoordinatorCore: remote play/pause received", configuration: micro) { benchmark in
        var group = CoordinatorGroup(members: 8)
        for _ in benchmark.scaledIterations {
            blackHole(group.remoteToggle())
        }
    }

    // Presence reports from 7 other members, then a tick (the steady-state background traffic).
    Benchmark("CoordinatorCore: 7 presence reports + tick", configuration: micro) { benchmark in
        var group = CoordinatorGroup(members: 8)
        for _ in benchmark.scaledIterations {
            blackHole(group.presenceRound())
        }
    }

    // One minute of 60 fps playback on a decoder with a start latency and a 200 ppm clock error,
    // so the sync controller trims as it goes: 3,600 presented frames per iteration.
    Benchmark(
        "HeadlessPlayerCore: 60 s at 60 fps with drift correction (3,600 frames)",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(5), maxIterations: 1_000)
    ) { benchmark in
        var player = HeadlessPlayerCore(
            items: [clip], imperfections: .init(startLatency: .milliseconds(3), driftPPM: 200))
        let start = ReferenceTime(seconds: 100)
        let end = start + .seconds(60)
        let play = PlaybackCommand(
            kind: .play(itemTime: 0, referenceTime: start, rate: 1), originator: "alice",
            expectedItemIdentifier: clip.identifier, revision: 1)
        var frames = player.apply(play, now: start - .milliseconds(50)).count
        while let wake = player.nextWake, wake < end {
            for output in player.advance(to: wake) {
                if case .frame = output { frames += 1 }
            }
        }
        guard frames >= 3_590 else { return benchmark.error("only \(frames) frames presented in 60 s at 60 fps") }
        blackHole(frames)
    }
}
