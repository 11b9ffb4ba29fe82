import Logging
import Synchronization

/// The reference clock as seen from this machine: local monotonic time mapped to reference time by an
/// offset and a drift, corrected smoothly.
///
/// A ``TimeClient`` feeds it ``ClockEstimate``s; any module reads it. The mapping is
/// `reference(t) = t + target(t) + residual(t)`, where `t` is local time (a ``LocalTimescale`` over the
/// injected clock), `target(t) = offset + drift * (t - t0)` is the latest estimate, and `residual` is
/// what is left of the previous mapping: at each update the residual is set so that reference time is
/// continuous, then decays linearly at ``Configuration/maximumSlewRate``. So once synchronized the
/// clock never steps, and reference time always advances (its rate stays within
/// `1 ± (drift + slew)`), unless a new estimate differs from the current mapping by more than
/// ``Configuration/stepThreshold`` (a gross error), in which case it steps once and logs it.
///
/// The first estimate is applied at once (a step from "unsynchronized").
///
/// ```swift
/// let synced = SyncedClock(clock: ContinuousClock())
/// synced.update(with: estimate)
/// if synced.isSynchronized {
///     let reference = synced.now()                      // NTPTimestamp on the reference timescale
///     let instant = synced.localInstant(forReference: reference.advanced(bySeconds: 0.5))
///     try await ContinuousClock().sleep(until: instant) // wake when the reference reads +0.5 s
/// }
/// ```
public final class SyncedClock<C: Clock>: Sendable where C.Duration == Duration {
    /// How corrections are applied.
    public struct Configuration: Sendable, Hashable {
        /// The fastest rate at which a correction is slewed in, as a fraction (0.0005 = 500 ppm).
        public var maximumSlewRate: Double = 0.0005
        /// Corrections larger than this many seconds are stepped instead of slewed.
        public var stepThreshold: Double = 0.1
        /// The dispersion growth rate for the age of the estimate (NTP's PHI, 15 ppm).
        public var dispersionRate: Double = 15e-6

        /// Creates the default configuration.
        public init() {}

        /// Settings for a clock that schedules playback: corrections slew in at up to 5 ms per second.
        ///
        /// A player presents frames at reference instants, so what matters is that its clock follows
        /// each better estimate quickly, not that a correction of a millisecond takes two seconds
        /// (the default 500 ppm, NTP's limit, suits a system clock). 5000 ppm moves a 40 ms frame by
        /// at most 0.2 ms against its neighbour, which nobody sees; corrections above 0.1 s still step.
        ///
        /// ```swift
        /// let synced = SyncedClock(clock: ContinuousClock(), configuration: .playback)
        /// ```
        public static var playback: Configuration {
            var configuration = Configuration()
            configuration.maximumSlewRate = 0.005
            return configuration
        }
    }

    /// A snapshot of the clock's state.
    public struct Status: Sendable, Hashable {
        /// Whether an estimate has been applied.
        public var isSynchronized: Bool
        /// The current correction (reference minus local time), in seconds.
        public var offset: Double
        /// The drift applied, in parts per million.
        public var driftPPM: Double
        /// The part of the last correction still being slewed in, in seconds.
        public var residual: Double
        /// The current error bound, in seconds.
        public var errorBound: Double
        /// How many updates have been applied.
        public var updates: Int
        /// How many of them were gross errors that stepped the clock.
        public var steps: Int
    }

    private struct Model: Sendable {
        var estimate: ClockEstimate
        /// Local time of the last update; the residual decays from here.
        var updateTime: NTPTimestamp
        /// The residual at `updateTime`.
        var residual: Double

        func residual(at t: NTPTimestamp, slewRate: Double) -> Double {
            let elapsed = max(0, t.seconds(since: updateTime))
            let remaining = max(0, abs(residual) - slewRate * elapsed)
            return residual < 0 ? -remaining : remaining
        }

        func correction(at t: NTPTimestamp, slewRate: Double) -> Double {
            estimate.offset(atLocal: t) + residual(at: t, slewRate: slewRate)
        }
    }

    private struct State: Sendable {
        var model: Model?
        var updates = 0
        var steps = 0
    }

    /// The local timescale reference time is derived from.
    public let timescale: LocalTimescale<C>
    /// The configuration in use.
    public let configuration: Configuration
    private let state = Mutex(State())
    private let logger: Logger

    /// Creates an unsynchronized clock over `clock`.
    ///
    /// - Parameters:
    ///   - clock: The local monotonic clock.
    ///   - configuration: Slew and step settings.
    ///   - logger: Where steps and gross corrections are logged (at info and below).
    public convenience init(
        clock: C,
        configuration: Configuration = .init(),
        logger: Logger = .current
    ) {
        self.init(timescale: LocalTimescale(clock: clock), configuration: configuration, logger: logger)
    }

    /// Creates an unsynchronized clock over an existing local timescale.
    ///
    /// - Parameters:
    ///   - timescale: The local timescale (shared with the ``TimeClient`` that feeds this clock).
    ///   - configuration: Slew and step settings.
    ///   - logger: Where steps and gross corrections are logged (at info and below).
    public init(
        timescale: LocalTimescale<C>,
        configuration: Configuration = .init(),
        logger: Logger
    ) {
        self.timescale = timescale
        self.configuration = configuration
        self.logger = logger
    }

    /// Whether at least one estimate has been applied.
    public var isSynchronized: Bool { state.withLock { $0.model != nil } }

    /// Applies a new estimate at the current local time.
    ///
    /// - Parameter estimate: The filter's latest estimate (on this clock's local timescale).
    public func update(with estimate: ClockEstimate) {
        update(with: estimate, atLocal: timescale.now())
    }

    /// Applies a new estimate as of local time `now` (tests pass it explicitly).
    ///
    /// - Parameters:
    ///   - estimate: The filter's latest estimate.
    ///   - now: The local time of the update.
    public func update(with estimate: ClockEstimate, atLocal now: NTPTimestamp) {
        let slew = configuration.maximumSlewRate
        let (stepped, residual): (Double?, Double) = state.withLock { state in
            state.updates += 1
            guard let old = state.model else {
                state.model = Model(estimate: estimate, updateTime: now, residual: 0)
                return (nil, 0)
            }
            let residual = old.correction(at: now, slewRate: slew) - estimate.offset(atLocal: now)
            if abs(residual) > configuration.stepThreshold {
                state.steps += 1
                state.model = Model(estimate: estimate, updateTime: now, residual: 0)
                return (residual, 0)
            }
            state.model = Model(estimate: estimate, updateTime: now, residual: residual)
            return (nil, residual)
        }
        if let stepped {
            logger.info("reference clock stepped", metadata: ["correction": "\(-stepped)"])
        } else {
            // residual: how far the clock reads from the new estimate, to be slewed out.
            logger.debug("reference clock updated", metadata: [
                "offset": "\(estimate.offset)", "driftPPM": "\(estimate.driftPPM)",
                "errorBound": "\(estimate.errorBound)", "residual": "\(residual)",
            ])
        }
    }

    /// Adopts `estimate` at once, without slewing toward it: for the end of an initial burst
    /// (``TimeClient/converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)``), before anything has
    /// read the clock. Counted in ``Status/steps`` when it moves the clock by more than
    /// ``Configuration/stepThreshold``.
    ///
    /// - Parameter estimate: The filter's latest estimate (on this clock's local timescale).
    public func adopt(_ estimate: ClockEstimate) {
        let now = timescale.now()
        let slew = configuration.maximumSlewRate
        let moved: Double? = state.withLock { state in
            state.updates += 1
            let moved = state.model.map { estimate.offset(atLocal: now) - $0.correction(at: now, slewRate: slew) }
            if let moved, abs(moved) > configuration.stepThreshold { state.steps += 1 }
            state.model = Model(estimate: estimate, updateTime: now, residual: 0)
            return moved
        }
        logger.debug("reference clock adopted an estimate", metadata: [
            "offset": "\(estimate.offset)", "moved": "\(moved.map { "\($0)" } ?? "-")",
        ])
    }

    /// The reference time at a local clock instant (the local time itself while unsynchronized).
    ///
    /// - Parameter instant: An instant of the local clock.
    public func referenceTime(atLocal instant: C.Instant) -> NTPTimestamp {
        referenceTime(atLocalTime: timescale.time(at: instant))
    }

    /// The reference time at a local time (on ``timescale``).
    ///
    /// - Parameter local: A local time.
    public func referenceTime(atLocalTime local: NTPTimestamp) -> NTPTimestamp {
        let slew = configuration.maximumSlewRate
        let correction = state.withLock { $0.model?.correction(at: local, slewRate: slew) } ?? 0
        return local.advanced(bySeconds: correction)
    }

    /// The reference time now.
    public func now() -> NTPTimestamp {
        referenceTime(atLocalTime: timescale.now())
    }

    /// The local clock instant at which the reference clock will read (or read) `reference`.
    ///
    /// Use it to schedule work at a reference time: sleep on the local clock until this instant.
    ///
    /// - Parameter reference: A reference time.
    public func localInstant(forReference reference: NTPTimestamp) -> C.Instant {
        let slew = configuration.maximumSlewRate
        let model = state.withLock { $0.model }
        guard let model else { return timescale.instant(at: reference) }
        // Solve local + correction(local) = reference; the correction changes by at most ~1e-3 s/s,
        // so fixed-point iteration converges by a factor of 1000 per step.
        var local = reference.advanced(bySeconds: -model.correction(at: reference, slewRate: slew))
        for _ in 0..<4 {
            local = reference.advanced(bySeconds: -model.correction(at: local, slewRate: slew))
        }
        return timescale.instant(at: local)
    }

    /// The error bound of ``now()``, in seconds (infinite while unsynchronized).
    public var errorBound: Double {
        errorBound(atLocalTime: timescale.now())
    }

    /// The error bound of the reference time at local time `local`, in seconds.
    ///
    /// Half the best delay plus the dispersion: the estimate's own bound (see
    /// ``ClockEstimate/errorBound``), the correction still being slewed in, and growth with the age of
    /// the newest sample at PHI (15 ppm) plus the drift's standard error.
    ///
    /// - Parameter local: A local time.
    public func errorBound(atLocalTime local: NTPTimestamp) -> Double {
        let slew = configuration.maximumSlewRate
        let phi = configuration.dispersionRate
        return state.withLock { state in
            guard let model = state.model else { return .infinity }
            let age = abs(local.seconds(since: model.estimate.latestSampleTime))
            let driftError = model.estimate.driftErrorPPM.isFinite ? min(model.estimate.driftErrorPPM, 1000) * 1e-6 : 0
            return model.estimate.errorBound + abs(model.residual(at: local, slewRate: slew))
                + (phi + driftError) * age
        }
    }

    /// A snapshot of the current state.
    public var status: Status {
        let local = timescale.now()
        let slew = configuration.maximumSlewRate
        let bound = errorBound(atLocalTime: local)
        return state.withLock { state in
            Status(
                isSynchronized: state.model != nil,
                offset: state.model?.correction(at: local, slewRate: slew) ?? 0,
                driftPPM: state.model?.estimate.driftPPM ?? 0,
                residual: state.model?.residual(at: local, slewRate: slew) ?? 0,
                errorBound: bound,
                updates: state.updates,
                steps: state.steps
            )
        }
    }
}
