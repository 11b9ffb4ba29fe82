import ClockSync
import TestSupport
import Testing

/// Manual-clock tests of the client under heavy delay jitter (issue 6: 20 ms ± 10 ms each way), of
/// drift under that jitter, and of early drift on a quiet path, with the playback polling policy.
@Suite("Convergence under delay jitter")
struct JitterConvergenceTests {
    typealias Setup = ConvergenceTests.Setup

    /// 20 ms ± 10 ms each way, uniform and independent in each direction (symmetric on average).
    static let jittery = SimulatedNetwork.Path { rng in
        (20e-3 + Double.random(in: -10e-3...10e-3, using: &rng), 20e-3 + Double.random(in: -10e-3...10e-3, using: &rng))
    }

    static let seeds: [UInt64] = [1, 2, 3, 4, 5, 6, 7, 8]

    @Test("20 ms ± 10 ms of jitter each way: the clock is within 0.5 ms after 30 s", arguments: seeds)
    func jitterAfter30Seconds(seed: UInt64) async throws {
        let setup = Setup(offset: 1234.5, driftPPM: 0, path: Self.jittery, configuration: .playback, seed: seed)
        try await runSimulated(setup.client, clock: setup.clock, for: .seconds(30))
        let error = setup.error()
        // One raw sample's offset error is uniform in ±10 ms (standard deviation 5.8 ms).
        #expect(abs(error) < 0.5e-3, "error \(error * 1e3) ms (seed \(seed))")
        #expect(abs(error) <= setup.synced.errorBound, "error \(error), bound \(setup.synced.errorBound)")
        #expect(setup.synced.status.steps == 0)
        // The playback policy keeps polling densely (8/s) on this path, and never faster.
        let requests = setup.network.requests.withLock { $0.count }
        #expect(requests > 200 && requests <= 8 * 30 + 8, "\(requests) requests in 30 s")
        print("jitter seed \(seed): error after 30 s \(error * 1e3) ms, bound \(setup.synced.errorBound * 1e3) ms")
    }

    @Test("±100 ppm of drift under the same jitter: the error stays bounded for 10 minutes", arguments: [100.0, -100.0, 50.0, -50.0])
    func jitterWithDrift(ppm: Double) async throws {
        let setup = Setup(offset: -77.25, driftPPM: ppm, path: Self.jittery, configuration: .playback, seed: 11)
        var worst = 0.0
        var worstAfterTwoMinutes = 0.0
        var worstBound = 0.0
        var outsideBound = 0
        var checks = 0
        try await runSimulated(setup.client, clock: setup.clock, for: .seconds(600), checkingEvery: .milliseconds(500)) {
            elapsed in
            guard elapsed >= .seconds(30) else { return }
            let error = setup.error()
            worstBound = max(worstBound, setup.synced.errorBound)
            worst = max(worst, abs(error))
            if elapsed >= .seconds(120) { worstAfterTwoMinutes = max(worstAfterTwoMinutes, abs(error)) }
            checks += 1
            if abs(error) > setup.synced.errorBound { outsideBound += 1 }
        }
        let estimate = try #require(setup.client.estimate)
        #expect(checks > 1000)
        #expect(worst < 1e-3, "worst error \(worst * 1e3) ms from 30 s to 10 min at \(ppm) ppm")
        #expect(worstAfterTwoMinutes < 0.5e-3, "worst error \(worstAfterTwoMinutes * 1e3) ms from 2 to 10 min")
        #expect(outsideBound == 0, "\(outsideBound) of \(checks) checks outside the error bound")
        #expect(abs(estimate.driftPPM - ppm) < 5, "drift \(estimate.driftPPM) ppm for \(ppm)")
        #expect(setup.synced.status.steps == 0)
        print("jitter + \(ppm) ppm: worst error \(worst * 1e3) ms over 30 s...10 min, \(worstAfterTwoMinutes * 1e3) ms after 2 min, largest bound \(worstBound * 1e3) ms, drift \(estimate.driftPPM) ppm")
    }

    @Test("two members at +100 and -100 ppm on a quiet path agree within 0.3 ms from 10 s on")
    func opposedDrift() async throws {
        let configuration = TimeClient<ManualClock>.Configuration.playback
        let fast = Setup(offset: 5, driftPPM: 100, path: ConvergenceTests.lan, configuration: configuration, seed: 3)
        let slow = Setup(offset: 5, driftPPM: -100, path: ConvergenceTests.lan, configuration: configuration, seed: 4)
        var fastErrors: [Double] = []
        var slowErrors: [Double] = []
        // Both run the same schedule on their own manual clocks; record each one's error at 10, 10.5, ... 20 s.
        try await runSimulated(fast.client, clock: fast.clock, for: .seconds(20), checkingEvery: .milliseconds(500)) {
            if $0 >= .seconds(10) { fastErrors.append(fast.error()) }
        }
        try await runSimulated(slow.client, clock: slow.clock, for: .seconds(20), checkingEvery: .milliseconds(500)) {
            if $0 >= .seconds(10) { slowErrors.append(slow.error()) }
        }
        #expect(fastErrors.count == slowErrors.count && fastErrors.count >= 20)
        let disagreement = zip(fastErrors, slowErrors).map { abs($0 - $1) }.max() ?? .infinity
        #expect(disagreement < 0.3e-3, "members disagree by up to \(disagreement * 1e3) ms")
        print("±100 ppm quiet: worst disagreement 10...20 s \(disagreement * 1e3) ms")
    }

    @Test("without drift the true offset lies within the envelope's half-width, whatever the asymmetry")
    func envelopeContainsTruth() {
        var rng = SplitMix64(seed: 99)
        let origin = NTPTimestamp(unixSeconds: 1_800_000_000)
        for _ in 0..<200 {
            var filter = SampleFilter()
            let truth = Double.random(in: -1...1, using: &rng)
            let base = (Double.random(in: 0...0.05, using: &rng), Double.random(in: 0...0.05, using: &rng))
            let count = Int.random(in: 1...40, using: &rng)
            for i in 0..<count {
                let forward = base.0 + Double.random(in: 0...0.02, using: &rng)
                let backward = base.1 + Double.random(in: 0...0.02, using: &rng)
                // Within 0.5 s: too short a span to estimate drift, so the envelope is exact.
                filter.add(NTPSample(
                    offset: truth + (forward - backward) / 2, delay: forward + backward,
                    localTime: origin.advanced(bySeconds: Double(i) * 0.01)))
            }
            let estimate = filter.estimate()!
            #expect(estimate.driftPPM == 0)
            #expect(abs(estimate.offset - truth) <= estimate.envelopeHalfWidth + 1e-9)
            #expect(estimate.envelopeHalfWidth <= estimate.bestDelay / 2 + 1e-9)
            #expect(abs(estimate.offset - truth) <= estimate.errorBound + 1e-9)
        }
    }

    @Test("samples older than the maximum age leave the window")
    func maximumAge() {
        var configuration = SampleFilter.Configuration()
        configuration.maximumAge = 10
        var filter = SampleFilter(configuration: configuration)
        let origin = NTPTimestamp(unixSeconds: 1_800_000_000)
        for i in 0..<30 {
            filter.add(NTPSample(offset: 0, delay: 1e-3, localTime: origin.advanced(bySeconds: Double(i))))
        }
        #expect(filter.samples.count == 11)
        #expect(filter.samples.first?.localTime == origin.advanced(bySeconds: 19))
    }
}
