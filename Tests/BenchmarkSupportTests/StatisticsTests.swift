import BenchmarkSupport
import PropertyBased
import Testing

@Suite("Statistics: nearest-rank percentiles")
struct StatisticsTests {
    @Test("known values: rank ceil(p * n), 1-based, clamped to the sample", arguments: [
        (0.0, 10.0), (0.01, 10.0), (0.1, 10.0), (0.25, 30.0), (0.5, 50.0), (0.51, 60.0), (0.9, 90.0), (0.95, 100.0),
        (0.99, 100.0), (1.0, 100.0), (-1.0, 10.0), (2.0, 100.0),
    ])
    func knownValues(p: Double, expected: Double) {
        let values: [Double] = [70, 10, 40, 100, 20, 90, 30, 60, 50, 80]
        #expect(Statistics.percentile(values, p) == expected)
        #expect(Statistics.percentileOfSorted(values.sorted(), p) == expected)
    }

    @Test("the definitions other helpers used to have differ from it where documented")
    func formerDefinitions() {
        // Index round(p * (n - 1)) (the relay, keypress and clock benches before) took the upper middle of an
        // even count at p50 (3 here); nearest rank takes the lower one.
        #expect(Statistics.median([1, 2, 3, 4]) == 2)
        // Index floor(p * n) (the demo's summary before) took index 99 (the maximum) of 100 values at p99; nearest rank takes rank 99.
        let hundred = (1...100).map(Double.init)
        #expect(Statistics.percentile(hundred, 0.99) == 99)
    }

    @Test("no values: nil; mean and median")
    func emptyAndMean() {
        #expect(Statistics.percentile([], 0.5) == nil)
        #expect(Statistics.percentileOfSorted([], 0.5) == nil)
        #expect(Statistics.mean([]) == nil)
        #expect(Statistics.mean([1, 2, 6]) == 3)
        #expect(Statistics.median([5]) == 5)
    }

    @Test("for any sample and p: an observed value, monotone in p, min at 0 and max at 1")
    func properties() async {
        await propertyCheck(input: Gen.double(in: -1e6...1e6).array(of: 1...50), Gen.double(in: 0...1), Gen.double(in: 0...1)) {
            values, a, b in
            let (low, high) = (min(a, b), max(a, b))
            let pLow = Statistics.percentile(values, low)!
            let pHigh = Statistics.percentile(values, high)!
            #expect(values.contains(pLow))
            #expect(pLow <= pHigh)
            #expect(Statistics.percentile(values, 0) == values.min())
            #expect(Statistics.percentile(values, 1) == values.max())
            // At least a share p of the values are at or below the p-th percentile, and fewer than p strictly below.
            let atOrBelow = Double(values.filter { $0 <= pHigh }.count)
            let below = Double(values.filter { $0 < pHigh }.count)
            #expect(atOrBelow >= high * Double(values.count) - 1e-9)
            #expect(below < max(high * Double(values.count), 1))
        }
    }
}
