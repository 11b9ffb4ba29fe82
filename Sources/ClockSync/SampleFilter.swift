/// Turns a stream of ``NTPSample``s into a ``ClockEstimate``: prefers low-delay samples, rejects
/// outliers, and estimates drift by a weighted regression of offset over local time.
///
/// This is a pure value (sans-IO): feed it samples with ``add(_:)`` and ask for ``estimate()``.
///
/// The estimate is computed in three steps over the window of the last ``Configuration/capacity``
/// samples:
/// 1. **Delay pre-filter.** A sample whose delay is far above the smallest delay in the window
///    was queued somewhere, and its offset is off by up to half that extra delay. Only samples with
///    delay at most `bestDelay * (1 + relativeDelayTolerance) + absoluteDelayTolerance` are kept, or,
///    if that leaves too few, the lowest-delay quarter of the window (at least `minimumSamples`).
/// 2. **Weighted fit.** Each kept sample is weighted by `1 / (delay - bestDelay + ε)²`, so the
///    cleanest exchanges dominate. When the kept samples span at least `minimumDriftSpan` seconds,
///    offset is regressed linearly on local time (slope = drift); otherwise the drift is taken as 0
///    and the offset is the weighted mean.
/// 3. **Outlier rejection.** Samples whose residual exceeds `outlierThreshold` robust standard
///    deviations (1.4826 × the median absolute residual), with a floor of a tenth of the best
///    delay, are dropped and the fit is repeated once.
///
/// ```swift
/// var filter = SampleFilter()
/// for sample in samples { filter.add(sample) }
/// let estimate = filter.estimate()
/// ```
public struct SampleFilter: Sendable {
    /// Tuning knobs; the defaults suit a LAN or loopback.
    public struct Configuration: Sendable, Hashable {
        /// How many recent samples the window holds.
        public var capacity: Int = 128
        /// The fewest samples the fit uses when the window holds that many.
        public var minimumSamples: Int = 4
        /// Accept delays up to this fraction above the best delay...
        public var relativeDelayTolerance: Double = 0.5
        /// ...plus this many seconds.
        public var absoluteDelayTolerance: Double = 20e-6
        /// Samples must span this many seconds before drift is estimated.
        public var minimumDriftSpan: Double = 8
        /// Residuals beyond this many robust standard deviations are outliers.
        public var outlierThreshold: Double = 3.5

        /// Creates the default configuration.
        public init() {}
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The samples in the window, oldest first.
    public private(set) var samples: [NTPSample] = []

    /// Creates an empty filter.
    ///
    /// - Parameter configuration: The tuning knobs.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
    }

    /// Adds a sample, dropping the oldest one when the window is full.
    ///
    /// - Parameter sample: A new sample; NaN or infinite values are ignored.
    public mutating func add(_ sample: NTPSample) {
        guard sample.offset.isFinite, sample.delay.isFinite else { return }
        samples.append(sample)
        if samples.count > max(1, configuration.capacity) {
            samples.removeFirst(samples.count - max(1, configuration.capacity))
        }
    }

    /// Forgets every sample (e.g. after the server's timescale changed).
    public mutating func reset() {
        samples.removeAll()
    }

    /// The largest delay the delay pre-filter accepts given the current window (infinite when empty).
    public var delayLimit: Double {
        guard let bestDelay = samples.map(\.delay).min() else { return .infinity }
        return bestDelay * (1 + configuration.relativeDelayTolerance) + configuration.absoluteDelayTolerance
    }

    /// The current estimate, or `nil` before the first sample.
    public func estimate() -> ClockEstimate? {
        guard let newest = samples.last else { return nil }
        let bestDelay = samples.map(\.delay).min() ?? 0
        let limit = delayLimit
        var kept = samples.filter { $0.delay <= limit }
        let wanted = min(samples.count, max(configuration.minimumSamples, samples.count / 4))
        if kept.count < wanted {
            kept = Array(samples.sorted { $0.delay < $1.delay }.prefix(wanted))
        }

        let origin = newest.localTime
        var fit = Self.fit(kept, bestDelay: bestDelay, origin: origin, configuration: configuration)
        if kept.count >= 4 {
            let residuals = kept.map { abs($0.offset - fit.offset(at: $0.localTime.seconds(since: origin))) }
            let scale = 1.4826 * Self.median(residuals)
            let threshold = max(configuration.outlierThreshold * scale, bestDelay / 10, 1e-7)
            let inliers = zip(kept, residuals).filter { $0.1 <= threshold }.map(\.0)
            if inliers.count >= max(3, kept.count / 2), inliers.count < kept.count {
                kept = inliers
                fit = Self.fit(kept, bestDelay: bestDelay, origin: origin, configuration: configuration)
            }
        }

        let usedDelays = kept.map(\.delay)
        let latest = kept.max { $0.localTime.seconds(since: origin) < $1.localTime.seconds(since: origin) }!
        return ClockEstimate(
            localTime: origin.advanced(bySeconds: fit.meanX),
            offset: fit.intercept,
            driftPPM: fit.slope * 1e6,
            driftErrorPPM: fit.slopeError * 1e6,
            offsetStandardError: fit.interceptError,
            bestDelay: usedDelays.min() ?? bestDelay,
            worstUsedDelay: usedDelays.max() ?? bestDelay,
            latestSampleTime: latest.localTime,
            usedSamples: kept.count,
            totalSamples: samples.count
        )
    }

    /// A weighted straight-line fit `offset = intercept + slope * (x - meanX)`, x in seconds from `origin`.
    private struct Fit {
        var meanX: Double
        var intercept: Double
        var slope: Double
        var interceptError: Double
        var slopeError: Double

        func offset(at x: Double) -> Double { intercept + slope * (x - meanX) }
    }

    private static func fit(
        _ samples: [NTPSample],
        bestDelay: Double,
        origin: NTPTimestamp,
        configuration: Configuration
    ) -> Fit {
        let epsilon = max(bestDelay * 0.05, 1e-6)
        let xs = samples.map { $0.localTime.seconds(since: origin) }
        let ys = samples.map(\.offset)
        let ws = samples.map { 1 / (($0.delay - bestDelay + epsilon) * ($0.delay - bestDelay + epsilon)) }
        let sumW = ws.reduce(0, +)
        let meanX = zip(ws, xs).map(*).reduce(0, +) / sumW
        let meanY = zip(ws, ys).map(*).reduce(0, +) / sumW
        let span = (xs.max() ?? 0) - (xs.min() ?? 0)
        let n = Double(samples.count)

        var slope = 0.0
        var sxx = 0.0
        let estimateDrift = samples.count >= 3 && span >= configuration.minimumDriftSpan
        if estimateDrift {
            var sxy = 0.0
            for i in samples.indices {
                let dx = xs[i] - meanX
                sxx += ws[i] * dx * dx
                sxy += ws[i] * dx * (ys[i] - meanY)
            }
            slope = sxx > 0 ? sxy / sxx : 0
        }
        var sumWR2 = 0.0
        for i in samples.indices {
            let r = ys[i] - (meanY + slope * (xs[i] - meanX))
            sumWR2 += ws[i] * r * r
        }
        let degrees = n - (estimateDrift ? 2 : 1)
        let variance = degrees > 0 ? sumWR2 / degrees : 0
        return Fit(
            meanX: meanX,
            intercept: meanY,
            slope: slope,
            interceptError: (variance / sumW).squareRoot(),
            slopeError: estimateDrift && sxx > 0 ? (variance / sxx).squareRoot() : .infinity
        )
    }

    private static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
