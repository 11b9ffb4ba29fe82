/// Order statistics: the one percentile definition of coplay's measurements.
///
/// Percentiles use the **nearest-rank** definition: the p-th percentile of n sorted values is the
/// value at rank `ceil(p * n)` (1-based, at least 1), so it is always one of the observed values,
/// p = 0 is the minimum, p = 1 the maximum, and no interpolation ever invents a value nobody
/// measured. Every figure `coplay bench`, `coplay demo`, the scenario reports and `Benchmarks/`
/// print as p50, p95 or p99 comes from here (docs/benchmarks.md).
///
/// ```swift
/// Statistics.percentile([4, 1, 3, 2], 0.5)       // 2: rank ceil(0.5 * 4) = 2
/// Statistics.percentile([1, 2, 3, 4], 0.99)      // 4: rank ceil(3.96) = 4
/// Statistics.percentileOfSorted([1, 2, 3], 0.1)  // 1
/// ```
package enum Statistics {
    /// The nearest-rank percentile of `values` (`p` in 0...1), or nil for no values.
    ///
    /// ```swift
    /// Statistics.percentile([1, 2, 3, 4], 0.5) // 2
    /// ```
    package static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return percentileOfSorted(sorted, p)
    }

    /// The nearest-rank percentile of values already sorted ascending (`p` in 0...1, clamped), or nil
    /// for no values. Use it to take several percentiles of one sample without sorting it again.
    package static func percentileOfSorted(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let clamped = min(max(p, 0), 1)
        let rank = Int((clamped * Double(sorted.count)).rounded(.up))
        return sorted[max(rank, 1) - 1]
    }

    /// The arithmetic mean, or nil for no values.
    package static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    /// The median of `values` (the nearest-rank 50th percentile), or nil for no values.
    package static func median(_ values: [Double]) -> Double? { percentile(values, 0.5) }
}
