/// Order statistics used by the analysis.
///
/// Percentiles use the nearest-rank definition: the p-th percentile of n sorted values is the value at
/// rank `ceil(p * n)` (1-based), so it is always one of the observed values and p = 1 is the maximum.
public enum Statistics {
    /// The nearest-rank percentile of `values` (`p` in 0...1), or nil for no values.
    ///
    /// ```swift
    /// Statistics.percentile([1, 2, 3, 4], 0.5) // 2
    /// ```
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        return percentileOfSorted(sorted, p)
    }

    /// The nearest-rank percentile of values already sorted ascending.
    public static func percentileOfSorted(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let clamped = min(max(p, 0), 1)
        let rank = Int((clamped * Double(sorted.count)).rounded(.up))
        return sorted[max(rank, 1) - 1]
    }

    /// The arithmetic mean, or nil for no values.
    public static func mean(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.reduce(0, +) / Double(values.count)
    }

    /// The median of `values` (the nearest-rank 50th percentile), or nil for no values.
    public static func median(_ values: [Double]) -> Double? { percentile(values, 0.5) }
}
