/// A monotonic clock expressed as NTP timestamps: anchored to UTC once, then never stepped.
///
/// `LocalTimescale` reads the system's real-time clock a single time, at creation, and from then on
/// derives every time from the injected monotonic clock: `time(at: i) = anchorTime + (i - anchorInstant)`.
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

    /// Creates a timescale anchored at the clock's current instant.
    ///
    /// - Parameters:
    ///   - clock: The monotonic clock to follow.
    ///   - anchorTime: The time to assign to the clock's current instant; the system's UTC time by default.
    public init(clock: C, anchorTime: NTPTimestamp = .systemNow()) {
        self.clock = clock
        self.anchorInstant = clock.now
        self.anchorTime = anchorTime
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
