/// Turns samples of mpv's `time-pos` into dated frame presentations, and says when to sample next.
/// Sans-IO: ``MPVFrameSampler`` feeds it samples and mpv's events and sleeps as it is told.
///
/// mpv's `time-pos` is the presentation time of the frame on screen, so it changes a whole frame at a
/// time. A change is bracketed by the last sample still showing the old frame and the first showing
/// the new one; the new frame is dated at the midpoint of the two samples' instants (each sample's
/// instant is the midpoint of its request and reply), and the bracket's width is the sampler's
/// resolution for that frame.
///
/// **What counts as a presentation.** A forward step of 1 ... ``Configuration/maximumStep`` frames
/// (normal playback, or a frame mpv dropped in between). Anything else is a jump (a seek, a step
/// back such as a pause snapping back to the group's frame, the item reloaded) and is reported as
/// such, not as a frame: the frame a seek lands on is shown while mpv waits to resume, so its instant
/// says when the seek completed, not when playback presented it.
///
/// **Another file.** When `time-pos` comes back after being unavailable (mpv opening another file),
/// its first value is a jump from the last position before, dated at the midpoint of the last sample
/// without a position and the first with one. mpv's `start-file` (``fileStarted(at:)``) makes the
/// first position after it a jump even when it equals the one before: an entry paused on its first
/// frame (`time-pos` 0) replaced by the next entry's first frame (`time-pos` 0 again) is a change of
/// picture that the position alone does not show.
///
/// **When to sample.** Once a frame change has been seen, the next one is predicted one frame
/// duration later (divided by mpv's `speed`, which the sampler observes; a speed change mid-frame
/// moves the prediction accordingly). Samples are dense (``Configuration/denseInterval``) within
/// ``Configuration/window`` (plus half the last bracket) either side of the prediction, sparse
/// (``Configuration/sparseInterval``) otherwise. A change that has not come by the end of the window
/// is looked for every ``Configuration/recoveryInterval`` for another half frame, then sparsely.
/// After mpv resumes (`pause` turns false), the first change is predicted from how far into its frame
/// playback was when it paused: a whole frame after the resume when the frame on screen was
/// presented while paused (a seek, a load, a snap), the rest of the frame otherwise; the window is
/// widened by ``Configuration/resumeUncertainty`` (the notification is read a little after mpv
/// resumed). When that is not known, or after mpv restarts playback after a seek while playing, the
/// first change cannot be predicted: samples are dense until it is seen, for at most a frame duration
/// and 5 ms. After it pauses they come every ``Configuration/recoveryInterval`` for
/// ``Configuration/pauseSettle`` (a player snapping back or forward to the group's frame shows it
/// then, and a new file's first frame), sparse afterwards.
///
/// **Why not densely throughout.** Every sample is a request mpv's core answers. Sampled every 0.25 ms
/// for the 0.1 s after each pause and the frame after each resume, three mpv changing entries together
/// were each asked some 500 times while they opened the next file and started it, and their starts
/// scattered by 2-10 ms more than with these windows (`coplay bench --scenario queue`, 28 Nov 2026).
///
/// ```swift
/// var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
/// tracker.pauseChanged(false, at: t0)
/// if case .frame(let frame) = tracker.record(position: 0.04, sent: t1, received: t1 + 0.0001) { print(frame.index) }
/// let next = tracker.nextSample(after: now)   // CLOCK_REALTIME seconds
/// ```
package struct FrameTransitionTracker: Sendable {
    /// The tracker's knobs.
    package struct Configuration: Sendable, Hashable {
        /// The media's frame rate (frames per second).
        package var frameRate: Double
        /// Seconds between samples near a predicted change and while re-synchronizing.
        package var denseInterval: Double
        /// Seconds between samples otherwise.
        package var sparseInterval: Double
        /// Half-width of the dense window around a predicted change (seconds).
        package var window: Double
        /// Seconds between samples after a predicted change did not come within its window.
        package var recoveryInterval: Double
        /// Seconds of sampling every ``recoveryInterval`` after mpv pauses.
        package var pauseSettle: Double
        /// How much earlier than predicted the first change after a resume may come (seconds): the
        /// resume's notification is read after mpv resumed.
        package var resumeUncertainty: Double
        /// The largest forward step (frames) still counted as a presentation.
        package var maximumStep: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - frameRate: frames per second.
        ///   - denseInterval: seconds (default 0.25 ms).
        ///   - sparseInterval: seconds (default 5 ms).
        ///   - window: seconds (default 1.5 ms).
        ///   - recoveryInterval: seconds (default 1 ms).
        ///   - pauseSettle: seconds (default 0.1).
        ///   - resumeUncertainty: seconds (default 3 ms).
        ///   - maximumStep: frames (default 3).
        package init(
            frameRate: Double, denseInterval: Double = 0.000_25, sparseInterval: Double = 0.005, window: Double = 0.001_5,
            recoveryInterval: Double = 0.001, pauseSettle: Double = 0.1, resumeUncertainty: Double = 0.003, maximumStep: Int = 3
        ) {
            self.frameRate = frameRate
            self.denseInterval = denseInterval
            self.sparseInterval = sparseInterval
            self.window = window
            self.recoveryInterval = recoveryInterval
            self.pauseSettle = pauseSettle
            self.resumeUncertainty = resumeUncertainty
            self.maximumStep = maximumStep
        }

        /// Seconds per frame at speed 1.
        package var frameDuration: Double { 1 / frameRate }
    }

    /// A frame presentation: the change of `time-pos` to `pts`, bracketed by two samples.
    package struct Transition: Sendable, Hashable {
        /// The frame's index on the media's grid (`pts` times the frame rate, rounded).
        package var index: Int
        /// The frame's presentation time in the media (seconds).
        package var pts: Double
        /// The instant (CLOCK_REALTIME seconds) of the last sample still showing the previous frame.
        package var before: Double
        /// The instant of the first sample showing this frame.
        package var after: Double
        /// When the tracker expected this change (nil when it had no prediction).
        package var predicted: Double?
        /// The round trips (seconds) of the two bracketing samples: a long one (mpv busy when it
        /// answered) widens the bracket.
        package var roundTrips: (before: Double, after: Double)?

        /// Creates a transition.
        package init(
            index: Int, pts: Double, before: Double, after: Double, predicted: Double? = nil,
            roundTrips: (before: Double, after: Double)? = nil
        ) {
            self.index = index
            self.pts = pts
            self.before = before
            self.after = after
            self.predicted = predicted
            self.roundTrips = roundTrips
        }

        package static func == (a: Transition, b: Transition) -> Bool {
            a.index == b.index && a.pts == b.pts && a.before == b.before && a.after == b.after && a.predicted == b.predicted
                && a.roundTrips?.before == b.roundTrips?.before && a.roundTrips?.after == b.roundTrips?.after
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(index)
            hasher.combine(before)
            hasher.combine(after)
        }

        /// When the frame appeared: the midpoint of the bracket.
        package var realtime: Double { (before + after) / 2 }
        /// The bracket's width (seconds): the frame appeared within it.
        package var bracket: Double { after - before }
    }

    /// A change of `time-pos` that is not a presentation (a seek, a step back, a reload).
    package struct Jump: Sendable, Hashable {
        /// The position before, seconds.
        package var from: Double
        /// The position after, seconds.
        package var to: Double
        /// The midpoint of the bracketing samples (CLOCK_REALTIME seconds).
        package var realtime: Double
        /// Whether `to` is the first position of another file (mpv's `start-file` came before it).
        package var newFile: Bool

        /// Creates a jump.
        package init(from: Double, to: Double, realtime: Double, newFile: Bool = false) {
            self.from = from
            self.to = to
            self.realtime = realtime
            self.newFile = newFile
        }
    }

    /// What one sample showed.
    package enum Change: Sendable, Hashable {
        /// A frame was presented.
        case frame(Transition)
        /// The position jumped.
        case jump(Jump)
    }

    /// One sample: the position read, and when its request was written and its reply read.
    package struct Sample: Sendable, Hashable {
        package var position: Double
        package var sent: Double
        package var received: Double
        /// The sample's instant: the midpoint of request and reply.
        package var instant: Double { (sent + received) / 2 }
    }

    /// Where playback is within the frame on screen: `progress` media seconds into it at `at`, the
    /// frame's start known to within `uncertainty` seconds.
    private struct Phase: Sendable, Hashable {
        var at: Double
        var progress: Double
        var uncertainty: Double
        var missed = false
    }

    /// The knobs (the frame rate follows the file mpv has open: ``frameRateChanged(_:)``).
    package private(set) var configuration: Configuration
    /// The last sample with a position.
    package private(set) var last: Sample?
    /// Whether mpv is paused, once known.
    package private(set) var paused: Bool?
    /// mpv's playback speed.
    package private(set) var speed: Double = 1
    /// Predicted changes that did not come within their window.
    package private(set) var missedPredictions = 0
    private var phase: Phase?
    private var resyncUntil: Double?
    /// While paused: until when samples come every ``Configuration/recoveryInterval``.
    private var settleUntil: Double?
    /// While paused: how far into the frame on screen playback was (media seconds), if known; 0 for a
    /// frame presented while paused.
    private var pausedProgress: Double?
    /// The last sample with a position before `time-pos` became unavailable.
    private var held: Sample?
    /// The instant of the last sample, with or without a position.
    private var previousInstant: Double?
    /// When mpv started another file, until a position after it was read.
    private var fileStart: Double?
    /// A position that came back after being unavailable, equal to the one before: not reported,
    /// unless a `start-file` read late turns out to have come before it (the sample it was read in,
    /// received at `received`).
    private var unreported: (jump: Jump, received: Double)?

    /// Creates a tracker.
    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The instant the next change is predicted at, if there is a prediction (CLOCK_REALTIME seconds).
    package var predictedChange: Double? {
        guard let phase, paused != true else { return nil }
        return phase.at + max(0, configuration.frameDuration - phase.progress) / speed
    }

    /// Records one sample: `position` (`time-pos`, nil when mpv has none) read by a request written at
    /// `sent` whose reply was read at `received`.
    ///
    /// - Returns: the presentation or jump the sample completes, if the position changed.
    package mutating func record(position: Double?, sent: Double, received: Double) -> Change? {
        guard let position, position.isFinite else {
            if let last { held = last }
            last = nil
            phase = nil
            previousInstant = (sent + received) / 2
            return nil
        }
        let sample = Sample(position: position, sent: sent, received: received)
        let newFile = fileStart.map { $0 <= received } ?? false
        defer {
            last = sample
            previousInstant = sample.instant
        }
        guard let last else {
            // The first position after none: another file's (or the same after a reload).
            guard let held else { return nil }
            self.held = nil
            let jump = Jump(from: held.position, to: position, realtime: ((previousInstant ?? sample.instant) + sample.instant) / 2, newFile: newFile)
            guard newFile || abs(position - held.position) > 0.000_5 else {
                unreported = (jump, received)
                return nil
            }
            return reportJump(jump, at: sample.instant)
        }
        guard sample.instant > last.instant else { return nil }
        if newFile {
            return reportJump(Jump(from: last.position, to: position, realtime: (last.instant + sample.instant) / 2, newFile: true), at: sample.instant)
        }
        guard position != last.position else {
            if var current = phase, !current.missed, let predicted = predictedChange,
                sample.instant > predicted + configuration.window + current.uncertainty
            {
                current.missed = true
                phase = current
                missedPredictions += 1
            }
            return nil
        }
        resyncUntil = nil
        unreported = nil
        let steps = ((position - last.position) * configuration.frameRate).rounded()
        if steps >= 1, steps <= Double(configuration.maximumStep) {
            let transition = Transition(
                index: Int((position * configuration.frameRate).rounded()), pts: position, before: last.instant,
                after: sample.instant, predicted: predictedChange,
                roundTrips: (last.received - last.sent, sample.received - sample.sent))
            phase = Phase(at: transition.realtime, progress: 0, uncertainty: transition.bracket / 2)
            if paused == true { pausedProgress = 0 }
            return .frame(transition)
        }
        return reportJump(Jump(from: last.position, to: position, realtime: (last.instant + sample.instant) / 2), at: sample.instant)
    }

    private mutating func reportJump(_ jump: Jump, at instant: Double) -> Change {
        if jump.newFile { fileStart = nil }
        unreported = nil
        phase = nil
        if paused != true { resyncUntil = instant + resyncSpan } else { pausedProgress = 0 }
        return .jump(jump)
    }

    /// mpv started another file (its `start-file` event, read at `instant`): the first position
    /// read after it is a jump even when it equals the one before.
    ///
    /// - Returns: that jump, when the position had already come back (equal to the one before) in a
    ///   sample read after `instant`: the event was handled after the reply that followed it.
    package mutating func fileStarted(at instant: Double) -> Change? {
        phase = nil
        if paused == true { pausedProgress = 0 }
        if let pending = unreported, instant <= pending.received {
            var jump = pending.jump
            jump.newFile = true
            unreported = nil
            return .jump(jump)
        }
        fileStart = instant
        return nil
    }

    /// The file mpv has open now plays at `frameRate` (its `container-fps`).
    package mutating func frameRateChanged(_ frameRate: Double) {
        guard frameRate > 0, frameRate.isFinite else { return }
        configuration.frameRate = frameRate
        phase = nil
    }

    /// mpv's `pause` changed to `paused` at `instant` (when its notification was read).
    package mutating func pauseChanged(_ paused: Bool, at instant: Double) {
        defer { self.paused = paused }
        guard paused != self.paused else { return }
        if paused {
            pausedProgress = phase.map { min(configuration.frameDuration, $0.progress + max(0, instant - $0.at) * speed) }
            phase = nil
            resyncUntil = nil
            settleUntil = instant + configuration.pauseSettle
            return
        }
        settleUntil = nil
        if let progress = pausedProgress, self.paused == true {
            phase = Phase(at: instant, progress: progress, uncertainty: configuration.resumeUncertainty)
            resyncUntil = nil
        } else {
            phase = nil
            resyncUntil = instant + resyncSpan
        }
        pausedProgress = nil
    }

    /// mpv's `speed` changed to `speed` at `instant`.
    package mutating func speedChanged(_ speed: Double, at instant: Double) {
        guard speed > 0, speed.isFinite else { return }
        if var current = phase, instant > current.at {
            current.progress += (instant - current.at) * self.speed
            current.at = instant
            phase = current
        }
        self.speed = speed
    }

    /// mpv restarted playback (a seek completed, a file loaded) at `instant`.
    package mutating func restarted(at instant: Double) {
        phase = nil
        resyncUntil = paused == true ? nil : instant + resyncSpan
        if paused == true { pausedProgress = 0 }
    }

    /// The longest dense re-synchronization: a frame at the current speed, and 5 ms.
    private var resyncSpan: Double { configuration.frameDuration / speed + 0.005 }

    /// When to take the next sample (CLOCK_REALTIME seconds, never before `now`).
    package func nextSample(after now: Double) -> Double {
        let dense = max(now, (last?.sent ?? now) + configuration.denseInterval)
        let sparse = now + configuration.sparseInterval
        if let resyncUntil, now < resyncUntil { return dense }
        if paused == true, let settleUntil, now < settleUntil { return now + configuration.recoveryInterval }
        guard paused != true, let phase, let predicted = predictedChange else { return sparse }
        let half = configuration.window + phase.uncertainty
        if now < predicted - half { return min(predicted - half, sparse) }
        if now <= predicted + half, !phase.missed { return dense }
        if now <= predicted + configuration.frameDuration / speed / 2 { return now + configuration.recoveryInterval }
        return sparse
    }
}
