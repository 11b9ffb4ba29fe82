/// Turns a stream of ``NTPSample``s into a ``ClockEstimate`` by the delay envelope of the window:
/// the fastest forward and the fastest backward trip, with the drift taken from the same envelopes.
///
/// This is a pure value (sans-IO): feed it samples with ``add(_:)`` and ask for ``estimate()``.
///
/// Every exchange bounds the true offset θ from both sides, whatever the path does: with T1...T4 as
/// in ``NTPSample``, `T2 - T1 = θ + d_forward ≥ θ` and `T3 - T4 = θ - d_backward ≤ θ`. In terms of a
/// sample these are `offset + delay / 2` (its *upper* bound) and `offset - delay / 2` (its *lower*
/// bound). Queueing and scheduling only ever make a trip longer, so they only loosen a bound. The
/// filter therefore works on the two envelopes of the window of the last
/// ``Configuration/capacity`` samples (no older than ``Configuration/maximumAge``):
/// 1. **Drift.** When the samples span at least ``Configuration/minimumDriftSpan`` seconds, the slope
///    of the lower convex hull of the upper bounds and that of the upper hull of the lower bounds,
///    each taken at the window's mean time (the line the linear-programming estimator of Moon,
///    Skelly and Towsley picks), estimate the drift twice independently. Their mean is the measured
///    drift; its uncertainty σ is the larger of half their difference and the envelope noise over the
///    span (`4 × (median delay - best delay) / (n × span)`). The measurement is then combined with a
///    prior: clocks run within about ``Configuration/driftPriorPPM`` of each other (one standard
///    deviation; crystals are specified to tens of ppm), unless the samples say otherwise. The prior's
///    spread τ is widened to what the measurement shows beyond three of its standard errors,
///    `τ² = max(prior², m² - 25σ²)`, so a large drift that stands out of the noise is believed. The
///    drift is the posterior mean `m × τ² / (τ² + σ²)` and its uncertainty the posterior standard
///    deviation `σ × τ / √(τ² + σ²)`: on a quiet path σ is a fraction of a ppm within seconds and the
///    prior has no say; under tens of milliseconds of jitter, a few seconds of samples measure the
///    drift to no better than hundreds of ppm, and believing such a measurement would carry its error
///    over the window's age into the offset. The estimate never exceeds ``Configuration/maximumDriftPPM``.
/// 2. **Offset.** Each bound is carried to the newest sample's time with that drift; the tightest
///    upper bound `U` and the tightest lower bound `L` enclose θ, and the estimate is their midpoint,
///    `θ + (min d_forward - min d_backward) / 2`. Its error falls like 1/n with the number of samples
///    under random queueing (averaging the lowest-delay samples only falls like 1/√n), and `(U - L) / 2`
///    bounds it. Each bound is loosened by the drift's uncertainty times its age before the tightest
///    are picked, so an old sample only sets U or L when it is much better than the recent ones; the
///    error bound adds two more such uncertainties for the samples that set U and L (three in all).
///
/// With a constant path asymmetry the estimate is biased by half the difference of the two minimum
/// one-way delays, like any two-way time transfer.
///
/// ```swift
/// var filter = SampleFilter()
/// for sample in samples { filter.add(sample) }
/// let estimate = filter.estimate()
/// ```
public struct SampleFilter: Sendable {
    /// Tuning knobs; the defaults suit a LAN, loopback or a noisy path alike.
    public struct Configuration: Sendable, Hashable {
        /// How many recent samples the window holds.
        public var capacity: Int = 128
        /// Samples older than this many seconds (behind the newest) leave the window.
        public var maximumAge: Double = .infinity
        /// The delay limit of a "clean" sample (``SampleFilter/delayLimit``) is this fraction above
        /// the best delay...
        public var relativeDelayTolerance: Double = 0.5
        /// ...plus this many seconds.
        public var absoluteDelayTolerance: Double = 20e-6
        /// Samples must span this many seconds before drift is estimated. The default waits for 8 s
        /// of samples, so a one-off query burst reports no drift; ``TimeClient/Configuration/playback``
        /// starts at 1 s (the initial burst), where the shrinkage and error bound take care of noise.
        public var minimumDriftSpan: Double = 8
        /// The largest drift the filter will report, in parts per million.
        public var maximumDriftPPM: Double = 2000
        /// How far apart two clocks' rates typically are before any measurement, in parts per million
        /// (one standard deviation of the drift's prior; see the type's discussion). A measured drift
        /// is shrunk toward zero while its own uncertainty is larger than this, unless it stands more
        /// than three standard errors out.
        public var driftPriorPPM: Double = 100

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

    /// Adds a sample in time order, dropping the oldest ones when the window is full or they are too old.
    ///
    /// - Parameter sample: A new sample; NaN or infinite values are ignored.
    public mutating func add(_ sample: NTPSample) {
        guard sample.offset.isFinite, sample.delay.isFinite else { return }
        // Oldest first, even when answers to overlapping requests arrive out of order.
        var index = samples.endIndex
        while index > samples.startIndex, samples[index - 1].localTime.seconds(since: sample.localTime) > 0 { index -= 1 }
        samples.insert(sample, at: index)
        let capacity = max(1, configuration.capacity)
        if samples.count > capacity {
            samples.removeFirst(samples.count - capacity)
        }
        if configuration.maximumAge.isFinite, let newest = samples.last {
            let tooOld = samples.prefix { newest.localTime.seconds(since: $0.localTime) > configuration.maximumAge }
            samples.removeFirst(min(tooOld.count, samples.count - 1))
        }
    }

    /// Forgets every sample (e.g. after the server's timescale changed).
    public mutating func reset() {
        samples.removeAll()
    }

    /// The largest delay of a "clean" sample given the current window (infinite when empty): a sample
    /// above it was queued somewhere. ``TimeClient`` counts clean samples to decide how often to poll.
    public var delayLimit: Double {
        guard let bestDelay = samples.map(\.delay).min() else { return .infinity }
        return bestDelay * (1 + configuration.relativeDelayTolerance) + configuration.absoluteDelayTolerance
    }

    /// The current estimate, or `nil` before the first sample.
    public func estimate() -> ClockEstimate? {
        guard let newest = samples.last else { return nil }
        let origin = newest.localTime
        // x: seconds relative to the newest sample (≤ 0); upper/lower: the bounds each sample puts on θ.
        let xs = samples.map { $0.localTime.seconds(since: origin) }
        let upper = samples.map { $0.offset + $0.delay / 2 }
        let lower = samples.map { $0.offset - $0.delay / 2 }
        let delays = samples.map(\.delay)
        let bestDelay = delays.min() ?? 0
        // How far the typical delay sits above the best: the envelope's noise, for drift and typical error.
        let spread = max(0, Self.median(delays) - bestDelay)

        let drift = Self.drift(xs: xs, upper: upper, lower: lower, spread: spread, configuration: configuration)
        let slope = drift?.slope ?? 0
        let widening = drift?.error ?? 0
        // Carry every bound to x = 0 along the drift, loosened by the drift's uncertainty over its
        // age (so old samples only win when they are much better), and keep the tightest of each kind.
        var upperIndex = 0
        var lowerIndex = 0
        var tightestUpper = Double.infinity
        var tightestLower = -Double.infinity
        for i in samples.indices {
            let u = upper[i] - slope * xs[i] + widening * abs(xs[i])
            let l = lower[i] - slope * xs[i] - widening * abs(xs[i])
            if u < tightestUpper { tightestUpper = u; upperIndex = i }
            if l > tightestLower { tightestLower = l; lowerIndex = i }
        }
        let offset = (tightestUpper + tightestLower) / 2
        let halfWidth = abs(tightestUpper - tightestLower) / 2
        let oldestAge = max(-xs[upperIndex], -xs[lowerIndex])
        let driftError = drift?.error ?? .infinity
        let offsetStandardError = driftError.isFinite ? 2.0 / 3.0 * driftError * oldestAge : 0
        // Too few samples say nothing about the spread of the delays.
        let noise = samples.count < 4 ? .infinity : spread / Double(samples.count)
        return ClockEstimate(
            localTime: origin,
            offset: offset,
            driftPPM: slope * 1e6,
            driftErrorPPM: driftError * 1e6,
            // The envelope already allows one standard error of drift over each sample's age; the
            // bound's three standard errors add the other two.
            offsetStandardError: offsetStandardError,
            bestDelay: bestDelay,
            worstUsedDelay: max(delays[upperIndex], delays[lowerIndex]),
            latestSampleTime: newest.localTime,
            usedSamples: samples.count,
            totalSamples: samples.count,
            envelopeHalfWidth: halfWidth,
            typicalError: noise + offsetStandardError
        )
    }

    /// The drift (seconds per second) and its uncertainty, or `nil` while the window is too short.
    private static func drift(
        xs: [Double],
        upper: [Double],
        lower: [Double],
        spread: Double,
        configuration: Configuration
    ) -> (slope: Double, error: Double)? {
        guard let first = xs.first, let last = xs.last, xs.count >= 3 else { return nil }
        let span = last - first
        guard span >= configuration.minimumDriftSpan, span > 0 else { return nil }
        let meanX = xs.reduce(0, +) / Double(xs.count)
        guard let forward = supportSlope(xs: xs, ys: upper, at: meanX),
              let backward = supportSlope(xs: xs, ys: lower.map { -$0 }, at: meanX).map({ -$0 })
        else { return nil }
        let raw = (forward + backward) / 2
        let sigma = max(abs(forward - backward) / 2, 4 * spread / (Double(xs.count) * span), 1e-12)
        // Posterior of a normal prior (widened to what stands 5σ out of the noise) and the measurement.
        let prior = max(configuration.driftPriorPPM * 1e-6, 1e-12)
        let tauSquared = max(prior * prior, raw * raw - 25 * sigma * sigma)
        let posterior = raw * tauSquared / (tauSquared + sigma * sigma)
        let posteriorError = sigma * (tauSquared / (tauSquared + sigma * sigma)).squareRoot()
        let limit = configuration.maximumDriftPPM * 1e-6
        let slope = min(max(posterior, -limit), limit)
        return (slope, posteriorError + abs(posterior - slope))
    }

    /// The slope of the lower convex hull of the points `(xs[i], ys[i])` at `x` (the best line below
    /// every point in the least-sum-of-gaps sense), or `nil` if the hull has no edge over `x`.
    private static func supportSlope(xs: [Double], ys: [Double], at x: Double) -> Double? {
        let points = zip(xs, ys).sorted { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
        var hull: [(Double, Double)] = []
        hull.reserveCapacity(points.count)
        for point in points {
            if let last = hull.last, last.0 == point.0 { continue }  // same x, higher y: never on the hull
            while hull.count >= 2 {
                let a = hull[hull.count - 2]
                let b = hull[hull.count - 1]
                let cross = (b.0 - a.0) * (point.1 - a.1) - (b.1 - a.1) * (point.0 - a.0)
                if cross <= 0 { hull.removeLast() } else { break }
            }
            hull.append(point)
        }
        for (a, b) in zip(hull, hull.dropFirst()) where a.0 <= x && x <= b.0 {
            return (b.1 - a.1) / (b.0 - a.0)
        }
        return nil
    }

    private static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
