import Benchmark

/// Metrics the relay benchmarks report beyond the framework's own.
enum RelayMetric {
    static let forwardedPerSecond = BenchmarkMetric.custom("Frames forwarded /s", polarity: .prefersLarger, useScalingFactor: false)
    static let fanOutLatency = BenchmarkMetric.custom("Fan-out latency (us)", polarity: .prefersSmaller, useScalingFactor: false)
    static let assembly = BenchmarkMetric.custom("Session assembly (ms)", polarity: .prefersSmaller, useScalingFactor: false)
    static let connectionsHeld = BenchmarkMetric.custom("Connections held", polarity: .prefersLarger, useScalingFactor: false)
    static let bytesPerConnection = BenchmarkMetric.custom("Relay bytes per idle connection", polarity: .prefersSmaller, useScalingFactor: false)
    static let heapBytesPerConnection = BenchmarkMetric.custom("Relay heap bytes per idle connection", polarity: .prefersSmaller, useScalingFactor: false)
    static let heapAllocationsPerConnection = BenchmarkMetric.custom("Relay heap allocations per idle connection", polarity: .prefersSmaller, useScalingFactor: false)
    static let relayResident = BenchmarkMetric.custom("Relay resident (KiB)", polarity: .prefersSmaller, useScalingFactor: false)
}
