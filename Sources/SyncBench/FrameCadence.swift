/// Re-dates the frame presentations an ``MPVFrameSampler`` bracketed, from the frames around each one:
/// the sampler's precision made independent of its worst wake-ups. Sans-IO and pure.
///
/// **The problem.** The sampler dates a `time-pos` change by two samples: the last still showing the
/// old frame and the first showing the new one (``FrameTransitionTracker``). On two shared cores
/// those samples are often late: a sampler woken 3 ms late, or a round trip that waited for mpv, makes
/// a 3-6 ms bracket, and the frame's dating error is half of it. That is the same size as the skew to
/// be measured (a 2 ms goal), so a wide bracket on one player reads as skew.
///
/// **What else is known.** mpv changes `time-pos` when a frame is due, and frames are due on a
/// cadence: frame k+1 comes (pts(k+1) - pts(k)) / speed after frame k, with `speed` the value in
/// force when frame k appeared (mpv applies a new speed from the next frame change on; the sampler
/// observes `speed`). Between two tightly bracketed frames, the changes deviate from that cadence by
/// at most about 0.5 ms (measured on this machine at load 6-12: consecutive frames both bracketed
/// within 0.8 ms were 0.4 ms (p90) and 1 ms (p99) off the nominal interval, brackets included).
///
/// **The method.** Within a *run* (consecutive frames, 1-3 apart, with no pause, jump or speed
/// notification too close to a change to place it), every neighbour j up to ``neighbours`` frames
/// away gives an interval for frame i's change: its own bracket moved back by the nominal time
/// between the two, widened by the ``jitter`` allowance and by ``rateTolerance`` of that time.
/// Frame i is dated at the middle of the intersection of its own bracket with those intervals,
/// taken tightest first and skipping any that would leave nothing (a neighbour that was itself off
/// the cadence). Its error is at most half that intersection: the *dating error* the benchmark
/// reports. A frame whose own bracket is tight keeps it (the intersection lies inside it), so real
/// lateness of a frame measured tightly stays visible; a frame whose own bracket is wide is placed on
/// its neighbours' cadence, which assumes it came within the jitter allowance of it.
///
/// This is the delay-envelope idea of NTP (keep the samples with the shortest round trips), applied
/// to the staircase of `time-pos`: the tight brackets of the neighbours fix the phase of the
/// cadence, and the wide ones only need to agree with it.
///
/// ```swift
/// let dated = FrameCadence.redate(record)        // one per record.transitions entry
/// dated[5].realtime, dated[5].uncertainty        // seconds
/// ```
package enum FrameCadence {
    /// One frame's new date.
    package struct Dated: Sendable, Hashable {
        /// The estimated instant of the change (CLOCK_REALTIME seconds).
        package var realtime: Double
        /// Half the width of the interval the change lies in (seconds): the dating error.
        package var uncertainty: Double
    }

    /// How many frames either side are used.
    package static let neighbours = 4
    /// How far a frame's change may be off its neighbours' cadence (seconds).
    package static let jitter = 0.0005
    /// How far mpv's pace may be off the nominal one, as a fraction of the time between two frames.
    package static let rateTolerance = 0.002
    /// A speed notification this close to a frame change (seconds) makes the speed of the interval
    /// after it uncertain: the run ends there.
    package static let speedGuard = 0.002

    /// The new dates of `record`'s transitions, in the same order.
    package static func redate(_ record: MPVFrameSampler.Record) -> [Dated] {
        let frames = record.transitions
        guard !frames.isEmpty, let rate = record.frameRate, rate > 0 else {
            return frames.map { Dated(realtime: $0.realtime, uncertainty: $0.bracket / 2) }
        }
        let speeds = record.speeds.sorted { $0.realtime < $1.realtime }
        var breaks = record.jumps.map(\.realtime) + record.pauses.map(\.realtime)
        breaks.sort()
        func speed(at t: Double) -> Double {
            speeds.last { $0.realtime <= t }?.speed ?? 1
        }
        func speedChangeNear(_ t: Double) -> Bool {
            speeds.contains { abs($0.realtime - t) <= speedGuard }
        }
        func breakBetween(_ a: Double, _ b: Double) -> Bool {
            breaks.contains { $0 > a && $0 <= b }
        }
        // Runs and each frame's nominal time within its run.
        var run = [Int](repeating: 0, count: frames.count)
        var nominal = [Double](repeating: 0, count: frames.count)
        for i in 1..<frames.count {
            let previous = frames[i - 1], frame = frames[i]
            let step = ((frame.pts - previous.pts) * rate).rounded()
            let continues = step >= 1 && step <= 3 && frame.before >= previous.before
                && !breakBetween(previous.realtime, frame.realtime) && !speedChangeNear(previous.realtime)
            let pace = speed(at: previous.realtime)
            if continues, pace > 0 {
                run[i] = run[i - 1]
                nominal[i] = nominal[i - 1] + (frame.pts - previous.pts) / pace
            } else {
                run[i] = run[i - 1] + 1
                nominal[i] = 0
            }
        }
        return frames.indices.map { i in
            var low = frames[i].before
            var high = frames[i].after
            let candidates = (max(0, i - neighbours)...min(frames.count - 1, i + neighbours))
                .filter { $0 != i && run[$0] == run[i] }
                .sorted { frames[$0].bracket < frames[$1].bracket }
            for j in candidates {
                let shift = nominal[j] - nominal[i]
                let slack = jitter + rateTolerance * abs(shift)
                let from = max(low, frames[j].before - shift - slack)
                let to = min(high, frames[j].after - shift + slack)
                if from <= to {
                    low = from
                    high = to
                }
            }
            return Dated(realtime: (low + high) / 2, uncertainty: (high - low) / 2)
        }
    }
}
