import PlaybackCoordinator

/// Estimates how far a player's video runs ahead of the group's timeline from the instants its
/// displayed frame changes. Sans-IO: the caller samples mpv's `time-pos` and feeds it here.
///
/// mpv's `time-pos` is the presentation time of the frame on screen, so it moves a whole frame at a
/// time. Two samples that bracket a change to frame `k` (the first showing `k`, the one before it
/// the previous frame) date frame `k`'s presentation to within their distance; comparing that with
/// when the group timeline reaches frame `k`'s time gives the error. The estimate is the median of
/// the errors of the last few tight brackets (robust to a sample delayed by the scheduler).
///
/// Positive errors mean the player is *ahead* (it shows frames early).
///
/// ```swift
/// var clock = FrameClock()
/// clock.record(position: 0.04, at: t1)      // still frame 1
/// clock.record(position: 0.08, at: t2)      // frame 2 appeared between t1 and t2
/// clock.error(for: motion)                  // seconds of item time ahead of the group
/// ```
public struct FrameClock: Sendable {
    /// One bracketed frame change.
    public struct Change: Sendable, Hashable {
        /// The new frame's presentation time (item seconds).
        public var position: Double
        /// The last sample still showing the previous frame.
        public var before: ReferenceTime
        /// The first sample showing the new frame.
        public var after: ReferenceTime
        /// Half the bracket: the dating uncertainty.
        public var uncertainty: Double { (after - before).secondsValue / 2 }
        /// The estimated instant of the change.
        public var instant: ReferenceTime { before + (after - before) / 2 }
    }

    /// Brackets wider than this are not used for the fine estimate (seconds).
    public var maximumUncertainty: Double
    /// How many recent changes the estimate looks at.
    public var window: Int
    /// Changes older than this before the newest one are not used (seconds): an estimate never
    /// rests on stale brackets when new ones stop being tight.
    public var maximumAge: Double

    private var last: (position: Double, at: ReferenceTime)?
    private(set) public var changes: [Change] = []

    /// Creates an estimator.
    ///
    /// - Parameters:
    ///   - maximumUncertainty: seconds (default 0.5 ms: brackets up to 1 ms).
    ///   - window: changes (default 5).
    ///   - maximumAge: seconds (default 1).
    public init(maximumUncertainty: Double = 0.0005, window: Int = 7, maximumAge: Double = 1) {
        self.maximumUncertainty = maximumUncertainty
        self.window = window
        self.maximumAge = maximumAge
    }

    /// Forgets everything (after a seek, a pause or an item change).
    public mutating func reset() {
        last = nil
        changes.removeAll()
    }

    /// The position last sampled, if any.
    public var lastPosition: Double? { last?.position }

    /// Records a sample: `position` (mpv's `time-pos`) read at reference time `at`.
    ///
    /// - Returns: the change it completed, if the displayed frame changed since the previous sample.
    @discardableResult
    public mutating func record(position: Double, at instant: ReferenceTime) -> Change? {
        defer { last = (position, instant) }
        guard let last, position != last.position, instant > last.at else { return nil }
        guard position > last.position else {
            // Backwards: a seek. The next change starts afresh.
            changes.removeAll()
            return nil
        }
        let change = Change(position: position, before: last.at, after: instant)
        changes.append(change)
        if changes.count > 4 * window { changes.removeFirst(changes.count - 4 * window) }
        return change
    }

    /// The error (item seconds the player runs ahead of `motion`; negative: behind), from the
    /// last ``window`` tight changes (at or after `since`, when given), or, without any, from the
    /// envelope of the wide ones (``envelopeError(for:since:)``); `nil` when neither is tight enough.
    public func error(for motion: CommandSchedule.Motion, since: ReferenceTime? = nil) -> Double? {
        guard let oldest = oldestUsable(for: motion, since: since) else { return nil }
        let tight = changes.suffix(4 * window).filter { $0.uncertainty <= maximumUncertainty && $0.instant >= oldest }
        let recent = tight.suffix(window).map { $0.position - motion.itemTime(at: $0.instant) }
        guard !recent.isEmpty else { return envelopeError(for: motion, since: since) }
        let sorted = recent.sorted()
        return sorted.count.isMultiple(of: 2) ? (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2 : sorted[sorted.count / 2]
    }

    /// How far a change may be off a constant error (seconds), in ``envelopeError(for:since:)``.
    public static let envelopeJitter = 0.0003

    /// The error from the recent changes taken together, when none alone is tight: each change's
    /// bracket says the error lies between the position minus the group's item time at its end and
    /// minus that at its start; with the error constant over the window, it lies in the intersection
    /// of those intervals (each widened by ``envelopeJitter``), taken tightest first, skipping one that
    /// would leave nothing. Like NTP's delay envelope: wide brackets at random phases narrow it down
    /// to well under any one of them. On two busy cores most brackets are 1-5 ms wide and the tight
    /// ones alone were too few: the error went unmeasured, and the players stayed 15-40 ms apart.
    ///
    /// - Returns: the middle of the intersection when at least three changes made it and its half
    ///   width is at most twice ``maximumUncertainty``, else `nil`.
    public func envelopeError(for motion: CommandSchedule.Motion, since: ReferenceTime? = nil) -> Double? {
        guard let oldest = oldestUsable(for: motion, since: since) else { return nil }
        let recent = changes.suffix(4 * window).filter { $0.instant >= oldest }.sorted { $0.uncertainty < $1.uncertainty }
        var low = -Double.infinity
        var high = Double.infinity
        var used = 0
        for change in recent {
            let from = max(low, change.position - motion.itemTime(at: change.after) - Self.envelopeJitter)
            let to = min(high, change.position - motion.itemTime(at: change.before) + Self.envelopeJitter)
            if from <= to {
                low = from
                high = to
                used += 1
            }
        }
        guard used >= 3, (high - low) / 2 <= 2 * maximumUncertainty else { return nil }
        return (low + high) / 2
    }

    /// The earliest instant a change may have to be used in an estimate.
    private func oldestUsable(for motion: CommandSchedule.Motion, since: ReferenceTime?) -> ReferenceTime? {
        guard let newest = changes.last else { return nil }
        var oldest = max(motion.referenceTime, newest.instant - .secondsRounded(maximumAge))
        if let since { oldest = max(oldest, since) }
        return oldest
    }

    /// A coarse error from the last sample alone (for large errors): the position shown minus where
    /// the group is, less half a frame, with `frameInterval` the media's frame interval.
    public func coarseError(for motion: CommandSchedule.Motion, frameInterval: Double) -> Double? {
        guard let last else { return nil }
        return last.position - motion.itemTime(at: last.at) + frameInterval / 2
    }
}
