import Benchmark
import GroupSessions
import SessionRelay
import Synchronization

// Issue 4's relay figures, measured against a relay in a child process (`RelayProcess`) over
// loopback TCP: messages forwarded per second, fan-out latency in a 1,000-member session,
// connections held and memory per idle connection. `coplay bench relay` measures the same things
// from the command line; docs/benchmarks.md compares the two.

/// Receivers in the forwarding session (as `coplay bench relay --receivers`).
let forwardingReceivers = 10
/// Frames the sender sends per forwarding iteration.
let forwardingBatch = 1_000
/// Members in the fan-out session (issue 4: a 1,000-member session).
let fanOutMembers = 1_000
/// Time from one stamped fan-out frame to the next (the last session's CLI figure used 200 ms).
let fanOutSpacingMilliseconds = 200
let fanOutSpacing: Duration = .milliseconds(fanOutSpacingMilliseconds)
/// Idle connections opened for the memory measurement (the last session's CLI figure used 5,000).
let idleConnections = 5_000

/// Custom metrics are shown as exact numbers (bytes, microseconds), not scaled to K or M.
func exact(_ metrics: [BenchmarkMetric]) -> [BenchmarkMetric: BenchmarkUnits] {
    Dictionary(uniqueKeysWithValues: metrics.map { ($0, .count) })
}

let fixtures = RelayFixtures()

/// What the idle-connection benchmark reports.
let idleMetrics = [
    RelayMetric.connectionsHeld, RelayMetric.bytesPerConnection, RelayMetric.heapBytesPerConnection,
    RelayMetric.heapAllocationsPerConnection, RelayMetric.relayResident,
]

let benchmarks: @Sendable () -> Void = {
    // In the relay child process this serves the relay and never returns.
    RelayProcess.serveIfChild()

    Benchmark(
        "Forwarding: 1 sender, \(forwardingReceivers) receivers, \(forwardingBatch) x 64 B frames",
        configuration: .init(
            metrics: [.wallClock, RelayMetric.forwardedPerSecond], units: exact([RelayMetric.forwardedPerSecond]),
            warmupIterations: 2, maxDuration: .seconds(20), maxIterations: 100,
            setup: {
                let relay = try await fixtures.startRelay()
                let session = try await ForwardingSession.open(port: relay.port, receivers: forwardingReceivers)
                fixtures.forwarding.withLock { $0 = session }
            },
            teardown: { fixtures.tearDown() })
    ) { benchmark in
        guard let session = fixtures.forwarding.withLock({ $0 }) else { return benchmark.error("no forwarding session") }
        let clock = ContinuousClock()
        let start = clock.now
        let delivered = try await session.forward(batch: forwardingBatch)
        let elapsed = start.duration(to: clock.now)
        guard delivered == forwardingBatch * forwardingReceivers else {
            return benchmark.error("only \(delivered) of \(forwardingBatch * forwardingReceivers) frames arrived")
        }
        benchmark.measurement(RelayMetric.forwardedPerSecond, Int(Double(delivered) / seconds(elapsed)))
    }

    Benchmark(
        "Fan-out: \(fanOutMembers)-member session, one 64 B frame every \(fanOutSpacingMilliseconds) ms",
        configuration: .init(
            metrics: [.wallClock, RelayMetric.fanOutLatency, RelayMetric.assembly],
            units: exact([RelayMetric.fanOutLatency, RelayMetric.assembly]),
            // No warmup: assembling the session is warmup enough, and the assembly time is
            // reported from the first measured iteration.
            warmupIterations: 0, maxDuration: .seconds(30), maxIterations: 50,
            setup: {
                let relay = try await fixtures.startRelay()
                let session = try await FanOutSession.open(port: relay.port, members: fanOutMembers)
                fixtures.fanOut.withLock { $0 = session }
            },
            teardown: { fixtures.tearDown() })
    ) { benchmark in
        guard let session = fixtures.fanOut.withLock({ $0 }) else { return benchmark.error("no fan-out session") }
        let clock = ContinuousClock()
        let sent = clock.now
        benchmark.startMeasurement()
        let latencies = try await session.fanOut()
        benchmark.stopMeasurement()
        guard latencies.count == session.receivers.count else {
            return benchmark.error("only \(latencies.count) of \(session.receivers.count) receivers got the frame")
        }
        for latency in latencies { benchmark.measurement(RelayMetric.fanOutLatency, latency) }
        if session.takeAssemblyReport() {
            benchmark.measurement(RelayMetric.assembly, Int(seconds(session.assembly) * 1_000))
        }
        try await Task.sleep(until: sent + fanOutSpacing, clock: clock)
    }

    Benchmark(
        "Idle connections: \(idleConnections), each joined to a session of its own",
        configuration: .init(
            metrics: idleMetrics, units: exact(idleMetrics),
            warmupIterations: 0, maxDuration: .seconds(120), maxIterations: 1,
            setup: { _ = try await fixtures.startRelay() },
            teardown: { fixtures.tearDown() })
    ) { benchmark in
        guard let relay = fixtures.relay.withLock({ $0 }) else { return benchmark.error("no relay") }
        let held = try await IdleConnections.open(relay: relay, count: idleConnections)
        defer { held.close() }
        benchmark.measurement(RelayMetric.connectionsHeld, held.welcomed)
        benchmark.measurement(RelayMetric.relayResident, held.residentAfter / 1024)
        let count = max(held.welcomed, 1)
        benchmark.measurement(RelayMetric.bytesPerConnection, (held.residentAfter - held.residentBefore) / count)
        benchmark.measurement(RelayMetric.heapBytesPerConnection, (held.heapAfter.bytes - held.heapBefore.bytes) / count)
        benchmark.measurement(
            RelayMetric.heapAllocationsPerConnection, (held.heapAfter.allocations - held.heapBefore.allocations) / count)
    }
}

/// `duration` in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}
