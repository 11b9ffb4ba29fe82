/// A clock that runs fast or slow against another by a fixed rate error: a simulated quartz drift
/// (`coplay host` / `coplay join --clock-drift-ppm`), for trying and testing clock synchronisation
/// without a bad crystal.
///
/// It wraps a base clock and reads `anchor + (base.now - anchor) * (1 + driftPPM / 1e6)`, where
/// `anchor` is the base clock's instant at creation, so both clocks agree at creation and then
/// part at `driftPPM` microseconds per second. Sleeping converts the deadline back to the base
/// clock. A member built on it (its `TimeClient`, `SyncedClock` and presentation thread) sees a
/// drifting local clock, which ClockSync must measure and correct, while `CLOCK_REALTIME`
/// stamps stay true (they are read directly). With a drift of 0 it reads exactly the base clock.
///
/// ```swift
/// let clock = DriftingClock(ContinuousClock(), driftPPM: 100)   // 100 µs per second fast
/// let synced = SyncedClock(clock: clock)
/// ```
public struct DriftingClock<Base: Clock>: Clock where Base.Duration == Duration {
    public typealias Instant = Base.Instant
    public typealias Duration = Swift.Duration

    /// The clock being drifted.
    public let base: Base
    /// The rate error in parts per million (positive: runs fast).
    public let driftPPM: Double
    /// The base instant at which both clocks agree.
    public let anchor: Base.Instant

    /// Creates a drifting clock that agrees with `base` now.
    ///
    /// - Parameters:
    ///   - base: the real clock.
    ///   - driftPPM: the rate error in parts per million (finite; positive runs fast).
    public init(_ base: Base, driftPPM: Double = 0) {
        self.base = base
        self.driftPPM = driftPPM.isFinite ? driftPPM : 0
        self.anchor = base.now
    }

    public var now: Instant { instant(atBase: base.now) }

    public var minimumResolution: Duration { base.minimumResolution }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try await base.sleep(until: baseInstant(at: deadline), tolerance: tolerance)
    }

    /// This clock's reading at a base instant.
    public func instant(atBase instant: Base.Instant) -> Instant {
        anchor.advanced(by: Self.scale(anchor.duration(to: instant), by: 1 + driftPPM / 1e6))
    }

    /// The base instant at which this clock reads `instant`.
    public func baseInstant(at instant: Instant) -> Base.Instant {
        anchor.advanced(by: Self.scale(anchor.duration(to: instant), by: 1 / (1 + driftPPM / 1e6)))
    }

    /// `duration * factor`, exact when `factor` is 1, to the nanosecond otherwise.
    static func scale(_ duration: Duration, by factor: Double) -> Duration {
        guard factor != 1 else { return duration }
        // Whole nanoseconds, saturating at the Int64 range (some 292 years).
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let nanoseconds = overflow ? (seconds < 0 ? .min : .max) : scaled &+ attoseconds / 1_000_000_000
        return .nanoseconds(nanoseconds + Int64((Double(nanoseconds) * (factor - 1)).rounded()))
    }
}
