/// The filter's best estimate of how the reference clock relates to the local clock.
///
/// The relation is linear: `offset(atLocal: t) = offset + drift * (t - localTime)`, where `drift` is
/// ``driftPPM`` / 10^6. ``errorBound`` bounds the error of that offset at `localTime`.
///
/// ```swift
/// if let estimate = filter.estimate() {
///     let reference = localNow.advanced(bySeconds: estimate.offset(atLocal: localNow))
/// }
/// ```
public struct ClockEstimate: Sendable, Hashable {
    /// The local time the fit is centred on (the weighted mean time of the samples used).
    public var localTime: NTPTimestamp
    /// Reference minus local time at ``localTime``, in seconds.
    public var offset: Double
    /// How fast the offset changes, in parts per million (reference runs faster when positive).
    public var driftPPM: Double
    /// The standard error of ``driftPPM``; infinite when the samples span too short a time to tell.
    public var driftErrorPPM: Double
    /// The standard error of ``offset`` from the regression's residuals, in seconds.
    public var offsetStandardError: Double
    /// The smallest round-trip delay among the samples used, in seconds.
    public var bestDelay: Double
    /// The largest round-trip delay among the samples used, in seconds.
    public var worstUsedDelay: Double
    /// The local time of the newest sample used.
    public var latestSampleTime: NTPTimestamp
    /// How many samples the fit used.
    public var usedSamples: Int
    /// How many samples the filter held (used ones included).
    public var totalSamples: Int

    /// Creates an estimate from its parts (the filter computes these; tests may build them directly).
    ///
    /// - Parameters:
    ///   - localTime: The local time the fit is centred on.
    ///   - offset: Reference minus local time at `localTime`, in seconds.
    ///   - driftPPM: The drift in parts per million.
    ///   - driftErrorPPM: The standard error of the drift (infinite when unknown).
    ///   - offsetStandardError: The standard error of the offset, in seconds.
    ///   - bestDelay: The smallest delay used, in seconds.
    ///   - worstUsedDelay: The largest delay used, in seconds.
    ///   - latestSampleTime: The local time of the newest sample used.
    ///   - usedSamples: How many samples were used.
    ///   - totalSamples: How many samples were held.
    public init(
        localTime: NTPTimestamp,
        offset: Double,
        driftPPM: Double,
        driftErrorPPM: Double,
        offsetStandardError: Double,
        bestDelay: Double,
        worstUsedDelay: Double,
        latestSampleTime: NTPTimestamp,
        usedSamples: Int,
        totalSamples: Int
    ) {
        self.localTime = localTime
        self.offset = offset
        self.driftPPM = driftPPM
        self.driftErrorPPM = driftErrorPPM
        self.offsetStandardError = offsetStandardError
        self.bestDelay = bestDelay
        self.worstUsedDelay = worstUsedDelay
        self.latestSampleTime = latestSampleTime
        self.usedSamples = usedSamples
        self.totalSamples = totalSamples
    }

    /// The estimated offset (reference minus local, seconds) at local time `t`.
    ///
    /// - Parameter t: A local time.
    public func offset(atLocal t: NTPTimestamp) -> Double {
        offset + driftPPM * 1e-6 * t.seconds(since: localTime)
    }

    /// A bound on the error of ``offset`` at ``localTime``, in seconds.
    ///
    /// Half the best delay (no path asymmetry can bias a sample by more than half its delay), plus a
    /// dispersion: half the spread of the delays used (the samples that were averaged in are only
    /// that good) and three standard errors of the fit.
    public var errorBound: Double {
        bestDelay / 2 + (worstUsedDelay - bestDelay) / 2 + 3 * offsetStandardError
    }
}
