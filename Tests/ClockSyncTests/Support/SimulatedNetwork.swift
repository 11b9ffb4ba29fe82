import ClockSync
import Synchronization
import TestSupport

/// A simulated NTP server and network path for manual-clock tests.
///
/// The "true" reference time at local elapsed time `l` (seconds on the `ManualClock`) is
/// `anchor + offset + l * (1 + drift)`. Each exchange draws a forward and a backward delay; the server
/// stamps T2/T3 on the true reference scale and the client's T1/T4 come from the local timescale. The
/// exchange completes without moving the manual clock (delays are tiny next to poll intervals).
final class SimulatedNetwork: NTPTransport, Sendable {
    struct Path: Sendable {
        /// Returns (forward, backward) delays in seconds.
        var delays: @Sendable (inout any RandomNumberGenerator & Sendable) -> (Double, Double)
    }

    let timescale: LocalTimescale<ManualClock>
    let offset: Double
    let drift: Double
    let path: Path
    /// A kiss code to answer with instead of a time, if set.
    let kiss = Mutex<KissCode?>(nil)
    let requests = Mutex<[ManualClock.Instant]>([])
    /// Whether `exchange` waits out the round trip on the manual clock (otherwise it answers at once,
    /// with timestamps as if it had waited).
    let waitsForRoundTrip: Bool
    private let rng: Mutex<any RandomNumberGenerator & Sendable>

    init(
        timescale: LocalTimescale<ManualClock>, offset: Double, driftPPM: Double, path: Path, seed: UInt64 = 42,
        waitsForRoundTrip: Bool = false
    ) {
        self.waitsForRoundTrip = waitsForRoundTrip
        self.timescale = timescale
        self.offset = offset
        self.drift = driftPPM * 1e-6
        self.path = path
        self.rng = Mutex(SplitMix64(seed: seed))
    }

    /// The true reference time at local elapsed seconds `l`.
    func trueReference(atElapsed l: Double) -> NTPTimestamp {
        timescale.anchorTime.advanced(bySeconds: offset + l * (1 + drift))
    }

    /// The true reference time at a local time on the timescale.
    func trueReference(atLocal local: NTPTimestamp) -> NTPTimestamp {
        trueReference(atElapsed: local.seconds(since: timescale.anchorTime))
    }

    func exchange(_ request: NTPPacket, timeout: Duration) async throws -> NTPExchange? {
        let now = timescale.clock.now
        requests.withLock { $0.append(now) }
        let l1 = timescale.anchorInstant.duration(to: now).seconds
        let (forward, backward) = rng.withLock { path.delays(&$0) }
        let processing = 10e-6
        let t2 = trueReference(atElapsed: l1 + forward)
        let t3 = t2.advanced(bySeconds: processing)
        let l4 = l1 + forward + processing + backward
        if waitsForRoundTrip {
            try await timescale.clock.sleep(until: now.advanced(by: .seconds(l4 - l1)), tolerance: nil)
        }
        var response = NTPPacket(
            mode: .server, stratum: 1, precision: -20, referenceID: KissCode("SIM").rawValue,
            referenceTimestamp: t2, originTimestamp: request.transmitTimestamp,
            receiveTimestamp: t2, transmitTimestamp: t3
        )
        if let code = kiss.withLock({ $0 }) {
            response.stratum = 0
            response.leap = .unsynchronized
            response.referenceID = code.rawValue
        }
        return NTPExchange(
            response: response,
            sent: timescale.anchorTime.advanced(bySeconds: l1),
            received: timescale.anchorTime.advanced(bySeconds: l4)
        )
    }
}

extension Duration {
    /// The duration in seconds as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}

/// Runs `client.run()` on the manual clock for `duration` of simulated time, advancing the clock from
/// one sleep deadline to the next, then cancels the client.
func runSimulated(
    _ client: TimeClient<ManualClock>,
    clock: ManualClock,
    for duration: Duration
) async throws {
    try await runSimulated(client, clock: clock, for: duration, checkingEvery: duration) { _ in }
}

/// Runs `client.run()` on the manual clock for `duration` of simulated time like
/// ``runSimulated(_:clock:for:)``, stopping the clock every `interval` to call `check` (with the
/// simulated time elapsed so far), without restarting the client's poll schedule.
///
/// The client runs on a ``SimulationExecutor``; the clock moves only when every task of the client
/// waits, straight to the earliest deadline, so the simulation is the same however loaded the machine.
func runSimulated(
    _ client: TimeClient<ManualClock>,
    clock: ManualClock,
    for duration: Duration,
    checkingEvery interval: Duration,
    check: (Duration) -> Void
) async throws {
    let start = clock.now
    let end = start.advanced(by: duration)
    var nextCheck = start.advanced(by: interval)
    let executor = SimulationExecutor()
    defer { executor.shutdown() }
    let finished = Mutex(false)
    let task = Task(executorPreference: executor) {
        defer { finished.withLock { $0 = true } }
        try await client.run()
    }
    while true {
        await executor.waitUntilIdle()
        while clock.now >= nextCheck, nextCheck <= end {
            check(start.duration(to: clock.now))
            nextCheck = nextCheck.advanced(by: interval)
        }
        if clock.now >= end || finished.withLock({ $0 }) { break }
        // Nothing asleep on the clock: the client waits for nothing that time brings; move on anyway.
        clock.advance(to: min(clock.nextDeadline ?? end, nextCheck, end))
    }
    task.cancel()
    do {
        try await task.value
    } catch is CancellationError {
    }
}

/// Runs `body` to completion while moving the manual clock forward, and returns its result.
///
/// `body` and every task it starts run on a ``SimulationExecutor``; the clock moves only when all of
/// them wait (the executor is idle), and then straight to the earliest sleeper's deadline. Simulated
/// time is therefore a function of the code alone: a loaded machine only makes the simulation slower.
func simulate<T: Sendable>(
    clock: ManualClock,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let executor = SimulationExecutor()
    defer { executor.shutdown() }
    let finished = Mutex(false)
    let task = Task(executorPreference: executor) {
        defer { finished.withLock { $0 = true } }
        return try await body()
    }
    while true {
        await executor.waitUntilIdle()
        if finished.withLock({ $0 }) { break }
        if let deadline = clock.nextDeadline {
            clock.advance(to: deadline)
        } else {
            // Idle with no sleeper: `body` waits for something other than the clock.
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
    return try await task.value
}
