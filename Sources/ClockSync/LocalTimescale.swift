/// A monotonic clock expressed as NTP timestamps: anchored to UTC once, then never stepped.
///
/// `LocalTimescale` reads the system's real-time clock at creation (between two reads of the
/// monotonic clock, ``anchorUncertainty`` apart), and from then on derives every time from the
/// injected monotonic clock: `time(at: i) = anchorTime + (i - anchorInstant)`.
/// The time server uses it as its timescale (so it never steps, whatever happens to the system
/// clock), and the time client uses it as "local time".
///
/// ```swift
/// let timescale = LocalTimescale(clock: ContinuousClock())
/// let now = timescale.now()                        // an NTPTimestamp close to UTC
/// let later = timescale.time(at: .now + .seconds(1))
/// ```
public struct LocalTimescale<C: Clock>: Sendable where C.Duration == Duration {
    /// The monotonic clock the timescale follows.
    public let clock: C
    /// The clock instant that corresponds to ``anchorTime``.
    public let anchorInstant: C.Instant
    /// The UTC time (as read once from the system clock, or given) at ``anchorInstant``.
    public let anchorTime: NTPTimestamp
    /// How far apart the monotonic reads that bracketed the system clock's read were: the anchor is
    /// within half of this of the system clock (zero for a given ``anchorTime``).
    public let anchorUncertainty: Duration

    /// Creates a timescale anchored to the system's UTC clock now.
    ///
    /// The system clock is read between two reads of `clock`, and ``anchorInstant`` is their
    /// midpoint; of up to 8 such brackets the narrowest is kept (the first one of 20 µs or less).
    /// One read of each, one after the other, can be any distance apart: a process preempted
    /// between them keeps a timescale off UTC by that much for its whole life (a relay node
    /// started on a loaded machine here served a timescale 0.94 ms behind its two siblings).
    ///
    /// - Parameter clock: The monotonic clock to follow.
    public init(clock: C) {
        var best: (instant: C.Instant, time: NTPTimestamp, width: Duration)?
        for _ in 0..<8 {
            let before = clock.now
            let time = NTPTimestamp.systemNow()
            let width = before.duration(to: clock.now)
            if best.map({ width < $0.width }) ?? true { best = (before.advanced(by: width / 2), time, width) }
            if width <= .microseconds(20) { break }
        }
        self.clock = clock
        self.anchorInstant = best!.instant
        self.anchorTime = best!.time
        self.anchorUncertainty = best!.width
    }

    /// Creates a timescale that reads `anchorTime` at the clock's current instant.
    ///
    /// - Parameters:
    ///   - clock: The monotonic clock to follow.
    ///   - anchorTime: The time to assign to the clock's current instant.
    public init(clock: C, anchorTime: NTPTimestamp) {
        self.clock = clock
        self.anchorInstant = clock.now
        self.anchorTime = anchorTime
        self.anchorUncertainty = .zero
    }

    /// The timescale's time at a clock instant.
    ///
    /// - Parameter instant: An instant of ``clock``.
    public func time(at instant: C.Instant) -> NTPTimestamp {
        anchorTime.advanced(by: anchorInstant.duration(to: instant))
    }

    /// The timescale's time now.
    public func now() -> NTPTimestamp {
        time(at: clock.now)
    }

    /// The clock instant at which the timescale reads `time`.
    ///
    /// - Parameter time: A time on this timescale (within 68 years of the anchor).
    public func instant(at time: NTPTimestamp) -> C.Instant {
        anchorInstant.advanced(by: time.duration(since: anchorTime))
    }
}
