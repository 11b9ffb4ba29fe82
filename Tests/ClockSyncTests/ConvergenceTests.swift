import ClockSync
import Logging
import Testing

/// Manual-clock tests of the whole client loop (poll schedule, filter, SyncedClock) against a
/// simulated server with a known offset, drift and path.
@Suite("Convergence on a manual clock")
struct ConvergenceTests {
    /// A clean LAN-like path: 100 µs each way with ±5 µs of symmetric noise.
    static let lan = SimulatedNetwork.Path { rng in
        (100e-6 + Double.random(in: -5e-6...5e-6, using: &rng), 100e-6 + Double.random(in: -5e-6...5e-6, using: &rng))
    }

    struct Setup {
        let clock = ManualClock()
        let timescale: LocalTimescale<ManualClock>
        let network: SimulatedNetwork
        let synced: SyncedClock<ManualClock>
        let client: TimeClient<ManualClock>

        init(
            offset: Double,
            driftPPM: Double,
            path: SimulatedNetwork.Path,
            configuration: TimeClient<ManualClock>.Configuration = .init(),
            synced syncedConfiguration: SyncedClock<ManualClock>.Configuration = .init(),
            seed: UInt64 = 42
        ) {
            timescale = LocalTimescale(clock: clock, anchorTime: NTPTimestamp(unixSeconds: 1_800_000_000))
            network = SimulatedNetwork(timescale: timescale, offset: offset, driftPPM: driftPPM, path: path, seed: seed)
            synced = SyncedClock(timescale: timescale, configuration: syncedConfiguration, logger: Logger(label: "test"))
            client = TimeClient(transport: network, syncedClock: synced, configuration: configuration)
        }

        /// Reference-time error of the synced clock now, in seconds.
        func error() -> Double {
            let local = timescale.now()
            return synced.referenceTime(atLocalTime: local).seconds(since: network.trueReference(atLocal: local))
        }
    }

    @Test("large offsets are found at once, with no drift", arguments: [3600.0, -3600.0, 0.000_25, -86_400 * 365.0])
    func offsets(offset: Double) async throws {
        let setup = Setup(offset: offset, driftPPM: 0, path: Self.lan)
        try await runSimulated(setup.client, clock: setup.clock, for: .seconds(3))
        #expect(setup.synced.isSynchronized)
        #expect(abs(setup.error()) < 10e-6, "error \(setup.error())")
        #expect(setup.synced.errorBound < 200e-6)
        #expect(abs(setup.error()) <= setup.synced.errorBound)
    }

    @Test("drift converges and the clock stays within a few microseconds", arguments: [100.0, -100.0, 500.0, -500.0])
    func drift(ppm: Double) async throws {
        let setup = Setup(offset: 3600, driftPPM: ppm, path: Self.lan)
        try await runSimulated(setup.client, clock: setup.clock, for: .seconds(1200))
        let estimate = try #require(setup.client.estimate)
        // The reference runs (1 + d) times as fast as the local clock: drift ≈ d in ppm.
        #expect(abs(estimate.driftPPM - ppm) < 0.5, "estimated \(estimate.driftPPM) ppm for \(ppm)")
        #expect(abs(setup.error()) < 20e-6, "error \(setup.error())")
        #expect(abs(setup.error()) <= setup.synced.errorBound)
        // Sample midway between polls too, where extrapolation matters most.
        setup.clock.advance(by: .seconds(10))
        #expect(abs(setup.error()) < 50e-6, "error between polls \(setup.error())")
        #expect(setup.synced.status.steps == 0)
    }

    @Test("symmetric jitter of several milliseconds leaves a much tighter estimate")
    func symmetricJitter() async throws {
        let jitter = 5e-3
        let path = SimulatedNetwork.Path { rng in
            (200e-6 + Double.random(in: 0...jitter, using: &rng), 200e-6 + Double.random(in: 0...jitter, using: &rng))
        }
        let setup = Setup(offset: -42.5, driftPPM: 20, path: path)
        try await runSimulated(setup.client, clock: setup.clock, for: .seconds(600))
        // One raw sample's offset error has a standard deviation of jitter / sqrt(24) ≈ 1 ms here.
        #expect(abs(setup.error()) < jitter / 20, "error \(setup.error()) with \(jitter) s of jitter")
        #expect(abs(setup.error()) <= setup.synced.errorBound)
    }

    @Test("asymmetric delay biases the offset by (forward - backward) / 2, inside the error bound",
          arguments: [(3e-3, 1e-3), (0.5e-3, 4.5e-3), (10e-3, 0.2e-3)])
    func asymmetry(forward: Double, backward: Double) async throws {
        let path = SimulatedNetwork.Path { rng in
            (forward + Double.random(in: 0...2e-6, using: &rng), backward + Double.random(in: 0...2e-6, using: &rng))
        }
        let setup = Setup(offset: 7.25, driftPPM: 0, path: path)
        try await runSimulated(setup.client, clock: setup.clock, for: .seconds(60))
        let expected = (forward - backward) / 2
        #expect(abs(setup.error() - expected) < 20e-6, "error \(setup.error()), expected bias \(expected)")
        #expect(abs(setup.error()) <= setup.synced.errorBound, "bound \(setup.synced.errorBound)")
    }

    @Test("the synced clock never steps or runs backwards while corrections are slewed in")
    func monotonic() async throws {
        let path = SimulatedNetwork.Path { rng in
            (100e-6 + Double.random(in: 0...2e-3, using: &rng), 100e-6 + Double.random(in: 0...2e-3, using: &rng))
        }
        let setup = Setup(offset: 12, driftPPM: -300, path: path)
        try await runSimulated(setup.client, clock: setup.clock, for: .seconds(5))
        var previous = setup.synced.now()
        for _ in 0..<2000 {
            setup.clock.advance(by: .milliseconds(50))
            _ = try await setup.client.poll()
            let now = setup.synced.now()
            let step = now.seconds(since: previous)
            // 50 ms of local time maps to 50 ms ± (drift + slew) of reference time, never a jump.
            #expect(step > 0.05 * (1 - 0.001) && step < 0.05 * (1 + 0.001), "step \(step)")
            previous = now
        }
        #expect(setup.synced.status.steps == 0)
    }
}
