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
    /// Half the width of the interval the samples' delay envelopes leave for the offset at
    /// ``localTime``, in seconds (infinite when the estimate was not made that way).
    public var envelopeHalfWidth: Double
    /// The typical error that delay noise leaves in ``offset``, in seconds: the spread of the delays
    /// above the best one (median minus best) divided by the number of samples, plus the offset's
    /// standard error (infinite with fewer than four samples, or when unknown).
    ///
    /// The envelope's error falls like 1/n under random queueing, and this figure does too; unlike
    /// ``errorBound`` (which never falls below half the best delay, whatever the samples say) it tells
    /// whether a burst has seen enough: ``TimeClient/converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)``
    /// polls until it is small. It is a typical size, not a bound: the error can exceed it.
    public var typicalError: Double

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
    ///   - envelopeHalfWidth: Half the width of the envelope interval (infinite if unknown).
    ///   - typicalError: The typical error delay noise leaves in the offset (infinite if unknown).
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
        totalSamples: Int,
        envelopeHalfWidth: Double = .infinity,
        typicalError: Double = .infinity
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
        self.envelopeHalfWidth = envelopeHalfWidth
        self.typicalError = typicalError
    }

    /// The estimated offset (reference minus local, seconds) at local time `t`.
    ///
    /// - Parameter t: A local time.
    public func offset(atLocal t: NTPTimestamp) -> Double {
        offset + driftPPM * 1e-6 * t.seconds(since: localTime)
    }

    /// A bound on the error of ``offset`` at ``localTime``, in seconds.
    ///
    /// Half the best delay (no path asymmetry can bias the estimate by more than that), or the envelope
    /// half-width where it is larger (an inconsistent window, e.g. a mis-estimated drift), or half the
    /// worst delay used if that is smaller still; plus three standard errors of the fit (for
    /// ``SampleFilter``: the drift's uncertainty over the age of the samples that set the envelope).
    public var errorBound: Double {
        let envelope = envelopeHalfWidth.isFinite ? max(bestDelay / 2, envelopeHalfWidth) : .infinity
        return min(bestDelay / 2 + (worstUsedDelay - bestDelay) / 2, envelope) + 3 * offsetStandardError
    }
}
