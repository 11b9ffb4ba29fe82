import ArgumentParser
import BenchmarkSupport
import PlaybackCoordinator

/// `coplay bench wakeup`: how precisely the headless player presents frames at their instants.
struct WakeupBenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wakeup",
        abstract: "Measure the headless player's frame presentation lateness on this machine.",
        discussion: """
            Plays a synthetic timeline on CLOCK_MONOTONIC and reports how late each frame was presented
            against its scheduled instant, once sleeping only and once sleeping then busy-waiting the last
            --spin-ms milliseconds (the player's default). Prints one JSON line per run; frames a loaded
            machine made the player drop show as frames < expectedFrames.
            """
    )

    @Option(help: "Frames to present per run.")
    var frames: Int = 250

    @Option(help: "Frames per second.")
    var fps: Double = 50

    @Option(name: .customLong("spin-ms"), help: "Busy-wait window in milliseconds for the spinning run (the player's: 0.3).")
    var spinMs: Double = 0.3

    func validate() throws {
        guard frames > 0, frames <= 100_000 else { throw ValidationError("--frames must be in 1...100000") }
        guard fps > 0, fps <= 1000 else { throw ValidationError("--fps must be in (0, 1000]") }
        guard spinMs > 0, spinMs <= 50 else { throw ValidationError("--spin-ms must be in (0, 50]") }
    }

    func run() async throws {
        for spin in [Duration.zero, Duration.secondsRounded(spinMs / 1e3)] {
            let report = await WakeupBenchmark.run(frames: frames, frameRate: fps, spinWindow: spin)
            print(
                "{\"bench\":\"wakeup\",\"spinMs\":\(report.spinWindowMs),\"frames\":\(report.frames),"
                    + "\"expectedFrames\":\(report.expectedFrames),\"p50Ms\":\(report.p50Ms),\"p90Ms\":\(report.p90Ms),"
                    + "\"p99Ms\":\(report.p99Ms),\"maxMs\":\(report.maxMs),\"minMs\":\(report.minMs)}")
        }
    }
}
