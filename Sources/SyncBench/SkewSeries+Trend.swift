import BenchmarkSupport

extension SkewSeries {
    /// The drift check's figures: the least-squares slope of skew over time (ms per minute) and the p99
    /// skew of the first and last thirds of the series; nil without at least 3 points spanning time.
    ///
    /// ```swift
    /// if let trend = series.trend { print(trend.slopeMsPerMinute) }
    /// ```
    package var trend: (slopeMsPerMinute: Double, firstThirdP99Ms: Double, lastThirdP99Ms: Double)? {
        guard points.count >= 3, let first = points.first, let last = points.last, last.time > first.time else {
            return nil
        }
        let n = Double(points.count)
        let meanT = points.reduce(0) { $0 + $1.time } / n
        let meanS = points.reduce(0) { $0 + $1.skewMs } / n
        var covariance = 0.0
        var variance = 0.0
        for point in points {
            covariance += (point.time - meanT) * (point.skewMs - meanS)
            variance += (point.time - meanT) * (point.time - meanT)
        }
        guard variance > 0 else { return nil }
        let span = last.time - first.time
        let early = points.filter { $0.time <= first.time + span / 3 }.map(\.skewMs).sorted()
        let late = points.filter { $0.time >= last.time - span / 3 }.map(\.skewMs).sorted()
        guard let p99Early = Statistics.percentileOfSorted(early, 0.99),
            let p99Late = Statistics.percentileOfSorted(late, 0.99)
        else { return nil }
        return (covariance / variance * 60, p99Early, p99Late)
    }
}
