import Benchmark
import ClockSync

// ClockSync's hot paths: the 48-byte NTP packet codec, the sample filter a TimeClient feeds on
// every poll, and one real NTP round trip over UDP on loopback against a TimeServer.

/// A server response as the TimeServer writes it (every field set).
let samplePacket = NTPPacket(
    mode: .server, stratum: 1, poll: 4, precision: -20,
    rootDelay: NTPShortFormat(rawValue: 0x0000_0010), rootDispersion: NTPShortFormat(rawValue: 0x0000_0020),
    referenceID: 0x4C4F_434C,
    referenceTimestamp: NTPTimestamp(seconds: 3_900_000_000, fraction: 1),
    originTimestamp: NTPTimestamp(seconds: 3_900_000_001, fraction: 0x8000_0000),
    receiveTimestamp: NTPTimestamp(seconds: 3_900_000_001, fraction: 0x8000_1000),
    transmitTimestamp: NTPTimestamp(seconds: 3_900_000_001, fraction: 0x8000_2000))

let fixture = TimeServerFixture()

let benchmarks: @Sendable () -> Void = {
    let micro = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo,
        maxDuration: .seconds(3), maxIterations: 10_000)

    Benchmark("NTPPacket encode", configuration: micro) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(samplePacket.encoded())
        }
    }

    let bytes = samplePacket.encoded()
    Benchmark("NTPPacket decode", configuration: micro) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try NTPPacket(bytes: bytes))
        }
    }

    // A full window (128 samples, the TimeClient default), then one more sample and a fresh
    // estimate per scaled iteration: what every poll costs once the client has been running.
    Benchmark(
        "SampleFilter add + estimate (full 128-sample window)",
        configuration: .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo,
            maxDuration: .seconds(5), maxIterations: 1_000)
    ) { benchmark in
        var filter = SampleFilter()
        var next = SampleStream()
        for _ in 0..<filter.configuration.capacity { filter.add(next()) }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            filter.add(next())
            blackHole(filter.estimate())
        }
        benchmark.stopMeasurement()
    }

    Benchmark(
        "TimeServer round trip (UDP, loopback)",
        configuration: .init(
            metrics: [.wallClock, .throughput], warmupIterations: 10, maxDuration: .seconds(5), maxIterations: 2_000,
            setup: { try await fixture.start() },
            teardown: { await fixture.stop() })
    ) { benchmark in
        guard let exchange = try await fixture.exchange() else {
            return benchmark.error("no response from the time server within a second")
        }
        blackHole(exchange)
    }
}
