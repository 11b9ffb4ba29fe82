import PlaybackCoordinator

/// Estimates how far a player with an audio track runs ahead of the group's timeline from mpv's
/// `audio-pts`. Sans-IO: ``MPVPlayer`` samples the property and feeds it here.
///
/// On a file with audio, mpv times its video by the audio clock (`--video-sync=audio`), and
/// `audio-pts` is that clock: the position of the sound playing now (the written audio's position
/// less what the output still holds). Unlike `time-pos`, which moves a whole frame at a time and
/// needs two samples that bracket a frame change, `audio-pts` advances smoothly (it scatters by
/// about 0.02 ms), so every single sample dated by the midpoint of its request and reply is an error
/// estimate, good to half its round trip. The estimate is the median of the last few samples whose
/// round trip was short (robust to a sample delayed by the scheduler).
///
/// That matters most right after a start through a real audio server. Measured with PulseAudio
/// (null sink) under load: the audio clock ran for the output's first 100 ms and then often stood
/// still for 0.1-2 s before it moved on (in 3 of 5 first starts after attaching; later starts
/// mostly landed within 3 ms), so the player started late by that much; the video followed the audio
/// clock. `time-pos` shows no frame change while it stands, so a frame-change estimator sees nothing
/// until it moves again; `audio-pts` shows the stall at once (docs/mpv.md, "Sound").
///
/// Positive errors mean the player is *ahead*.
///
/// ```swift
/// var clock = AudioClock()
/// clock.record(position: 3.102, at: t, roundTrip: 0.00006)
/// clock.error(for: motion)      // seconds of item time ahead of the group
/// ```
public struct AudioClock: Sendable {
    /// One sample of `audio-pts`.
    public struct Sample: Sendable, Hashable {
        /// `audio-pts` (item seconds).
        public var position: Double
        /// The midpoint of its request and reply.
        public var instant: ReferenceTime
        /// Request to reply (seconds).
        public var roundTrip: Double
    }

    /// Samples whose round trip was longer than this are not used (seconds).
    public var maximumRoundTrip: Double
    /// How many recent samples the estimate looks at.
    public var window: Int
    /// Samples older than this before the newest one are not used (seconds).
    public var maximumAge: Double

    private(set) public var samples: [Sample] = []

    /// Creates an estimator.
    ///
    /// - Parameters:
    ///   - maximumRoundTrip: seconds (default 1 ms: the estimate is then good to 0.5 ms).
    ///   - window: samples (default 5).
    ///   - maximumAge: seconds (default 0.25).
    public init(maximumRoundTrip: Double = 0.001, window: Int = 5, maximumAge: Double = 0.25) {
        self.maximumRoundTrip = maximumRoundTrip
        self.window = window
        self.maximumAge = maximumAge
    }

    /// Forgets everything (after a seek, a pause or an item change).
    public mutating func reset() {
        samples.removeAll()
    }

    /// Records a sample: `position` (mpv's `audio-pts`) read by a request whose midpoint was `instant`
    /// and whose reply took `roundTrip` seconds.
    public mutating func record(position: Double, at instant: ReferenceTime, roundTrip: Double) {
        guard position.isFinite, roundTrip >= 0 else { return }
        if let last = samples.last, instant <= last.instant { return }
        samples.append(Sample(position: position, instant: instant, roundTrip: roundTrip))
        if samples.count > 4 * window { samples.removeFirst(samples.count - 4 * window) }
    }

    /// The error (item seconds the player runs ahead of `motion`; negative: behind), the median of
    /// the last ``window`` samples with a short round trip taken at or after `since` (and after the
    /// motion's instant), or `nil` with fewer than `minimumSamples` of them.
    public func error(for motion: CommandSchedule.Motion, since: ReferenceTime? = nil, minimumSamples: Int = 3) -> Double? {
        guard let newest = samples.last else { return nil }
        var oldest = max(motion.referenceTime, newest.instant - .secondsRounded(maximumAge))
        if let since { oldest = max(oldest, since) }
        let usable = samples.filter { $0.roundTrip <= maximumRoundTrip && $0.instant >= oldest }.suffix(window)
        guard usable.count >= max(1, minimumSamples) else { return nil }
        let sorted = usable.map { $0.position - motion.itemTime(at: $0.instant) }.sorted()
        return sorted.count.isMultiple(of: 2) ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
    }
}
