import ClockSync
import Logging
import TestSupport
import Testing

/// Manual-clock tests of a playback member's start: ``TimeClient/converge(target:minimumSamples:maximumSamples:interval:)``
/// (a burst that lasts until the estimate is good, then adopted at once) followed by the playback
/// polling policy, and of the drift prior that keeps a short, noisy span from tilting the estimate.
@Suite("Initial burst and early accuracy")
struct InitialBurstTests {
    typealias Setup = ConvergenceTests.Setup

    static func playbackSetup(offset: Double, driftPPM: Double, path: SimulatedNetwork.Path, seed: UInt64) -> Setup {
        Setup(offset: offset, driftPPM: driftPPM, path: path, configuration: .playback, synced: .playback, seed: seed)
    }

    @Test("on a quiet path the burst stops after the minimum of 8 requests, the clock within 20 µs")
    func quietBurst() async throws {
        let setup = Self.playbackSetup(offset: -12.5, driftPPM: 0, path: ConvergenceTests.lan, seed: 5)
        let estimate = try await simulate(clock: setup.clock) { try await setup.client.converge() }
        #expect(setup.network.requests.withLock { $0.count } == 8)
        #expect(estimate.typicalError <= 250e-6)
        #expect(abs(setup.error()) < 20e-6, "error \(setup.error())")
    }

    @Test("under 20 ms ± 10 ms of jitter the burst goes on until the typical error is small, then the clock adopts it",
          arguments: JitterConvergenceTests.seeds)
    func jitteryBurst(seed: UInt64) async throws {
        let setup = Self.playbackSetup(offset: 42.25, driftPPM: 0, path: JitterConvergenceTests.jittery, seed: seed)
        let estimate = try await simulate(clock: setup.clock) { try await setup.client.converge() }
        let requests = setup.network.requests.withLock { $0.count }
        #expect(requests > 8 && requests <= 128, "\(requests) requests")
        #expect(estimate.typicalError <= 250e-6 || requests == 128)
        // Adopted, not slewed toward: the clock reads the estimate now, with no residual left.
        #expect(setup.synced.status.residual == 0)
        #expect(abs(setup.synced.status.offset - estimate.offset(atLocal: setup.timescale.now())) < 1e-9)
        // One raw sample's offset error is uniform in ±10 ms; the burst's is a fraction of a millisecond.
        #expect(abs(setup.error()) < 1e-3, "error \(setup.error() * 1e3) ms after \(requests) requests (seed \(seed))")
        print("burst seed \(seed): \(requests) requests, error \(setup.error() * 1e3) ms, typical \(estimate.typicalError * 1e3) ms")
    }

    /// Each member within 1 ms means any two within 2 ms: issue 6's goal under this jitter.
    @Test("under the same jitter, with and without ±100 ppm of drift, a member is within 1 ms from the end of its burst on",
          arguments: [0.0, 100.0, -100.0])
    func earlyAccuracy(ppm: Double) async throws {
        var worst = 0.0
        for seed in JitterConvergenceTests.seeds {
            let setup = Self.playbackSetup(offset: 7.5, driftPPM: ppm, path: JitterConvergenceTests.jittery, seed: seed)
            _ = try await simulate(clock: setup.clock) { try await setup.client.converge() }
            worst = max(worst, abs(setup.error()))
            try await runSimulated(setup.client, clock: setup.clock, for: .seconds(45), checkingEvery: .milliseconds(250)) { _ in
                worst = max(worst, abs(setup.error()))
            }
            #expect(setup.synced.status.steps == 0)
        }
        #expect(worst < 1e-3, "worst error \(worst * 1e3) ms in the first 45 s at \(ppm) ppm")
        print("early accuracy at \(ppm) ppm: worst error over 8 seeds x 45 s \(worst * 1e3) ms")
    }

    @Test("the burst does not wait for each answer: with 200 ms round trips it keeps 8 requests in flight")
    func pipelinedBurst() async throws {
        let clock = ManualClock()
        let timescale = LocalTimescale(clock: clock, anchorTime: NTPTimestamp(unixSeconds: 1_800_000_000))
        let slow = SimulatedNetwork.Path { rng in
            (100e-3 + Double.random(in: -10e-3...10e-3, using: &rng), 100e-3 + Double.random(in: -10e-3...10e-3, using: &rng))
        }
        let network = SimulatedNetwork(
            timescale: timescale, offset: 3, driftPPM: 0, path: slow, seed: 9, waitsForRoundTrip: true)
        let synced = SyncedClock(timescale: timescale, configuration: .playback, logger: Logger(label: "test"))
        let client = TimeClient(transport: network, syncedClock: synced, configuration: .playback)
        let start = clock.now
        _ = try await simulate(clock: clock) { try await client.converge() }
        let elapsed = start.duration(to: clock.now)
        let requests = network.requests.withLock { $0 }
        // One at a time, each request would take 20 ms plus its 200 ms round trip; with 8 in flight
        // the round trips overlap, so a request goes every 25 ms (200 ms / 8) or every 20 ms.
        #expect(requests.count > 8)
        #expect(elapsed < .milliseconds(26) * requests.count + .milliseconds(300), "\(requests.count) requests took \(elapsed)")
        let gaps = zip(requests, requests.dropFirst()).map { $0.duration(to: $1) }
        // Paced, never bunched (a request task may start a simulated millisecond or two late).
        #expect(gaps.allSatisfy { $0 >= .milliseconds(15) }, "smallest gap \(gaps.min() ?? .zero)")
        #expect(requests.first!.duration(to: requests.last!) >= .milliseconds(20) * (requests.count - 1) - .milliseconds(5))
        #expect(abs(timescale.now().seconds(since: timescale.anchorTime) + 3 - synced.now().seconds(since: timescale.anchorTime)) < 1e-3)
    }

    @Test("samples that arrive out of order are kept in time order")
    func outOfOrderSamples() {
        let origin = NTPTimestamp(unixSeconds: 1_800_000_000)
        var filter = SampleFilter()
        for t in [0.0, 0.2, 0.1, 0.3, 0.25, 0.05] {
            filter.add(NTPSample(offset: 1, delay: 1e-3, localTime: origin.advanced(bySeconds: t)))
        }
        let times = filter.samples.map { $0.localTime.seconds(since: origin) }
        #expect(times == times.sorted())
        #expect(filter.estimate()!.latestSampleTime == origin.advanced(bySeconds: 0.3))
    }

    @Test("the drift of a short, noisy span is not believed: under 20 ms ± 10 ms of jitter 2 s of samples tilt the estimate little")
    func noisySpanShrunk() {
        var rng = SplitMix64(seed: 17)
        let origin = NTPTimestamp(unixSeconds: 1_800_000_000)
        var configuration = SampleFilter.Configuration()
        configuration.minimumDriftSpan = 1
        var small = 0
        for _ in 0..<50 {
            var filter = SampleFilter(configuration: configuration)
            for i in 0..<100 {
                let forward = 20e-3 + Double.random(in: -10e-3...10e-3, using: &rng)
                let backward = 20e-3 + Double.random(in: -10e-3...10e-3, using: &rng)
                filter.add(NTPSample(
                    offset: (forward - backward) / 2, delay: forward + backward,
                    localTime: origin.advanced(bySeconds: Double(i) * 0.02)))
            }
            let estimate = filter.estimate()!
            // The slope of 2 s of such samples is measured to hundreds of ppm; believed, it would move
            // the offset by a millisecond or so. 50 ppm tilts it by 0.1 ms over the window.
            if abs(estimate.driftPPM) < 50 { small += 1 }
            #expect(estimate.driftErrorPPM <= configuration.driftPriorPPM + 1e-9)
        }
        #expect(small >= 45, "\(small) of 50 windows with |drift| < 50 ppm")
    }

    @Test("a drift that stands out of the noise is believed whatever the prior", arguments: [1000.0, -1500.0])
    func largeDriftBelieved(ppm: Double) {
        var rng = SplitMix64(seed: 23)
        let origin = NTPTimestamp(unixSeconds: 1_800_000_000)
        var configuration = SampleFilter.Configuration()
        configuration.minimumDriftSpan = 1
        var quiet = SampleFilter(configuration: configuration)
        var noisy = SampleFilter(configuration: configuration)
        for i in 0..<200 {
            let t = Double(i) * 0.1
            let quietPath = (100e-6 + Double.random(in: 0...5e-6, using: &rng), 100e-6 + Double.random(in: 0...5e-6, using: &rng))
            let noisyPath = (1e-3 + Double.random(in: 0...2e-3, using: &rng), 1e-3 + Double.random(in: 0...2e-3, using: &rng))
            for (path, index) in [(quietPath, 0), (noisyPath, 1)] {
                let sample = NTPSample(
                    offset: ppm * 1e-6 * t + (path.0 - path.1) / 2, delay: path.0 + path.1,
                    localTime: origin.advanced(bySeconds: t))
                if index == 0 { quiet.add(sample) } else { noisy.add(sample) }
            }
        }
        let quietDrift = quiet.estimate()!.driftPPM
        let noisyDrift = noisy.estimate()!.driftPPM
        #expect(abs(quietDrift - ppm) < 1, "quiet: \(quietDrift) ppm for \(ppm)")
        #expect(abs(noisyDrift - ppm) < 0.1 * abs(ppm), "2 ms of jitter: \(noisyDrift) ppm for \(ppm)")
    }

    @Test("the typical error is unknown with fewer than four samples and falls as samples accumulate")
    func typicalErrorFalls() {
        var rng = SplitMix64(seed: 3)
        let origin = NTPTimestamp(unixSeconds: 1_800_000_000)
        var filter = SampleFilter()
        var figures: [Double] = []
        for i in 0..<128 {
            let forward = 20e-3 + Double.random(in: -10e-3...10e-3, using: &rng)
            let backward = 20e-3 + Double.random(in: -10e-3...10e-3, using: &rng)
            filter.add(NTPSample(
                offset: (forward - backward) / 2, delay: forward + backward,
                localTime: origin.advanced(bySeconds: Double(i) * 0.02)))
            figures.append(filter.estimate()!.typicalError)
        }
        #expect(figures.prefix(3).allSatisfy { $0 == .infinity })
        #expect(figures[7] > figures[127] * 4, "8 samples: \(figures[7]), 128: \(figures[127])")
        #expect(figures[127] < 0.5e-3)
    }
}
