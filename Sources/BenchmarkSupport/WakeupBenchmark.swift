import Logging
import PlaybackCoordinator

/// Measures how precisely a `HeadlessPlayer` presents frames at their instants on this machine.
///
/// It plays a synthetic timeline on `CLOCK_MONOTONIC` with the player's dedicated presentation
/// thread and records, for every frame, how late it was presented against its scheduled instant
/// (the frame event's `errorMs`).
///
/// ```swift
/// let report = await WakeupBenchmark.run(frames: 250, frameRate: 50, spinWindow: .milliseconds(2))
/// print(report.p99Ms)
/// ```
package enum WakeupBenchmark {
    /// Lateness statistics, in milliseconds.
    package struct Report: Hashable, Sendable {
        /// Spin window used.
        package var spinWindowMs: Double
        /// Frames presented.
        package var frames: Int
        /// Frames expected.
        package var expectedFrames: Int
        /// Median lateness (nearest rank, as every percentile here: ``Statistics``).
        package var p50Ms: Double
        /// 90th percentile lateness.
        package var p90Ms: Double
        /// 99th percentile lateness.
        package var p99Ms: Double
        /// Worst lateness.
        package var maxMs: Double
        /// Smallest lateness (negative would mean early).
        package var minMs: Double
    }

    /// Plays `frames` frames at `frameRate` and reports the presentation lateness.
    ///
    /// - Parameters:
    ///   - frames: how many frames to present.
    ///   - frameRate: frames per second.
    ///   - spinWindow: the presentation thread's busy-wait window (zero: sleep only).
    package static func run(frames: Int, frameRate: Double, spinWindow: Duration) async -> Report {
        let reference = MonotonicReferenceTimeSource()
        let timeline = MediaTimeline(identifier: "wakeup", duration: Double(frames) / frameRate, frameRate: frameRate)
        let player = HeadlessPlayer(
            participant: "bench", items: [timeline], reference: reference, spinWindow: spinWindow,
            presentationThread: PresentationThread.Configuration(spinWindow: spinWindow), logger: .current)
        let running = Task { await player.run() }
        let start = reference.now()! + .milliseconds(100)
        await player.handle(PlaybackCommand(
            kind: .play(itemTime: 0, referenceTime: start, rate: 1), originator: "bench", expectedItemIdentifier: timeline.identifier,
            revision: 1))
        // Collect until the last frame, bounded in time so a stalled machine cannot hang the run.
        let limit = Duration.secondsRounded(timeline.duration) + .seconds(30)
        var errors = await withTaskGroup(of: [Double]?.self) { group in
            group.addTask {
                var collected: [Double] = []
                for await event in player.events where event.type == .frame {
                    collected.append(event.errorMs ?? 0)
                    if event.index == timeline.frameCount - 1 { break }
                }
                return collected
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? []
        }
        running.cancel()
        await running.value
        errors.sort()
        func at(_ fraction: Double) -> Double { Statistics.percentileOfSorted(errors, fraction) ?? 0 }
        return Report(
            spinWindowMs: spinWindow.millisecondsValue, frames: errors.count, expectedFrames: timeline.frameCount,
            p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: errors.last ?? 0, minMs: errors.first ?? 0)
    }
}
