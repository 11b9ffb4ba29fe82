import ClockSync
import Logging
import Synchronization
import Testing

/// The failover policy on its own (no clock at all), then a ``TimeClient`` of several simulated
/// servers on a manual clock: a dead first node at the start, a node that dies while the client
/// polls it, every node dead.
@Suite("Time server failover")
struct TimeSourceFailoverTests {
    // MARK: The policy (sans-IO)

    @Test("regular polling: 4 unanswered in a row move on, retrying within 250 ms meanwhile")
    func movesAfterFourUnanswered() {
        var policy = TimeSourceFailover(sourceCount: 3)
        #expect(policy.record(.timeout) == .retrySoon(.milliseconds(250)))
        #expect(policy.record(.timeout) == .retrySoon(.milliseconds(250)))
        #expect(policy.record(.timeout) == .retrySoon(.milliseconds(250)))
        #expect(policy.unansweredInARow == 3)
        #expect(policy.record(.timeout) == .moveOn(to: 1))
        #expect(policy.current == 1)
        #expect(policy.unansweredInARow == 0)
    }

    @Test("any answer resets the count: a sample (good or bad) or a RATE kiss-o'-death",
          arguments: [PollScheduler.Outcome.goodSample, .badSample, .rateLimited])
    func answerResets(answer: PollScheduler.Outcome) {
        var policy = TimeSourceFailover(sourceCount: 2)
        for _ in 0..<3 { _ = policy.record(.timeout) }
        #expect(policy.record(answer) == .keep)
        #expect(policy.unansweredInARow == 0)
        for _ in 0..<3 { #expect(policy.record(.timeout) == .retrySoon(.milliseconds(250))) }
        #expect(policy.current == 0)
        #expect(policy.record(.timeout) == .moveOn(to: 1))
    }

    @Test("it cycles through the invite's nodes: after the last comes the first")
    func cycles() {
        var policy = TimeSourceFailover(sourceCount: 3)
        var visited: [Int] = []
        for _ in 0..<4 {
            var decision = TimeSourceFailover.Decision.keep
            while case .keep = decision { decision = policy.record(.timeout) }
            while case .retrySoon = decision { decision = policy.record(.timeout) }
            if case .moveOn(let index) = decision { visited.append(index) }
        }
        #expect(visited == [1, 2, 0, 1])
        #expect(policy.moveOn() == 2)
        #expect(policy.moveOn() == 0)
    }

    @Test("a single server is never given up and its polls are not hurried")
    func singleSource() {
        var policy = TimeSourceFailover(sourceCount: 1)
        for _ in 0..<100 { #expect(policy.record(.timeout) == .keep) }
        for _ in 0..<100 { #expect(policy.recordDuringBurst(.timeout) == .keep) }
        #expect(policy.current == 0)
    }

    @Test("an initial burst gives a server up after 8 unanswered requests in a row, without hurrying")
    func burst() {
        var policy = TimeSourceFailover(sourceCount: 2)
        for _ in 0..<7 { #expect(policy.recordDuringBurst(.timeout) == .keep) }
        #expect(policy.recordDuringBurst(.goodSample) == .keep)
        for _ in 0..<7 { #expect(policy.recordDuringBurst(.timeout) == .keep) }
        #expect(policy.recordDuringBurst(.timeout) == .moveOn(to: 1))
    }

    @Test("the thresholds are configurable")
    func configured() {
        var configuration = TimeSourceFailover.Configuration()
        configuration.maximumUnanswered = 2
        configuration.retryInterval = .milliseconds(100)
        configuration.maximumUnansweredAtStart = 1
        var policy = TimeSourceFailover(sourceCount: 2, configuration: configuration)
        #expect(policy.record(.timeout) == .retrySoon(.milliseconds(100)))
        #expect(policy.record(.timeout) == .moveOn(to: 1))
        #expect(policy.recordDuringBurst(.timeout) == .moveOn(to: 0))
    }

    // MARK: A client of several simulated servers (manual clock)

    /// A server that can be killed: while dead, a request waits out its timeout on the manual clock
    /// and gets no answer (as a SIGKILLed node's port does: ICMP errors count as timeouts).
    final class KillableServer: NTPTransport, Sendable {
        let network: SimulatedNetwork
        let alive = Mutex(true)
        /// When each request was sent, and whether the server was alive then.
        let requests = Mutex<[(ManualClock.Instant, Bool)]>([])

        init(_ network: SimulatedNetwork) { self.network = network }

        func exchange(_ request: NTPPacket, timeout: Duration) async throws -> NTPExchange? {
            let clock = network.timescale.clock
            let alive = alive.withLock { $0 }
            requests.withLock { $0.append((clock.now, alive)) }
            if alive { return try await network.exchange(request, timeout: timeout) }
            try await clock.sleep(until: clock.now.advanced(by: timeout), tolerance: nil)
            return nil
        }

        var firstRequest: ManualClock.Instant? { requests.withLock { $0.first?.0 } }
        var firstUnanswered: ManualClock.Instant? { requests.withLock { $0.first { !$0.1 }?.0 } }
    }

    struct Fleet {
        let clock = ManualClock()
        let timescale: LocalTimescale<ManualClock>
        let servers: [KillableServer]
        let synced: SyncedClock<ManualClock>
        let client: TimeClient<ManualClock>

        /// Nodes whose timescales are `offsets` seconds from this machine's; the playback settings
        /// GroupPlayback uses (125 ms minimum interval, 500 ms timeout, slewing at 5 ms/s).
        init(offsets: [Double]) {
            let timescale = LocalTimescale(clock: clock, anchorTime: NTPTimestamp(unixSeconds: 1_800_000_000))
            let servers = offsets.enumerated().map { index, offset in
                KillableServer(SimulatedNetwork(
                    timescale: timescale, offset: offset, driftPPM: 0, path: ConvergenceTests.lan, seed: UInt64(index + 1)))
            }
            self.timescale = timescale
            self.servers = servers
            synced = SyncedClock(timescale: timescale, configuration: .playback, logger: Logger(label: "test"))
            var configuration = TimeClient<ManualClock>.Configuration.playback
            configuration.timeout = .milliseconds(500)
            client = TimeClient(
                sources: servers.enumerated().map { index, server in TimeSource(name: "n\(index + 1)", transport: server) }, syncedClock: synced,
                configuration: configuration, logger: Logger(label: "test"))
        }

        /// The synced clock's reading minus node `index`'s true time, now, in seconds.
        func error(against index: Int) -> Double {
            let local = timescale.now()
            return synced.referenceTime(atLocalTime: local).seconds(since: servers[index].network.trueReference(atLocal: local))
        }
    }

    @Test("a dead first node costs the initial sync about 0.65 s, not 8 s; the clock adopts the second node's time")
    func deadFirstNodeAtStart() async throws {
        let fleet = Fleet(offsets: [3.0, 3.000_5, 3.001])
        fleet.servers[0].alive.withLock { $0 = false }
        let start = fleet.clock.now
        let estimate = try await simulate(clock: fleet.clock) { try await fleet.client.converge() }
        let elapsed = start.duration(to: fleet.clock.now)
        #expect(fleet.client.currentSource.name == "n2")
        #expect(fleet.client.statistics.sourceChanges == 1)
        #expect(elapsed < .milliseconds(900), "took \(elapsed)")
        #expect(abs(fleet.error(against: 1)) < 20e-6, "error \(fleet.error(against: 1))")
        #expect(abs(estimate.offset(atLocal: fleet.timescale.now()) - 3.000_5) < 20e-6)
        #expect(fleet.servers[2].firstRequest == nil)
        var changes = fleet.client.sourceChanges.makeAsyncIterator()
        #expect(await changes.next() == TimeSourceChange(from: "n1", to: "n2", reason: "no answer"))
        print("initial sync past a dead first node: \(elapsed)")
    }

    @Test("when the polled node dies, the client moves to the next within about 3 s of its first unanswered poll and slews over",
          arguments: [0.002, -0.002, 0.000_03])
    func nodeDiesWhilePolled(difference: Double) async throws {
        let fleet = Fleet(offsets: [7.0, 7.0 + difference, 7.0])
        _ = try await simulate(clock: fleet.clock) { try await fleet.client.converge() }
        let killAt = Duration.seconds(60)
        var worstAgainstNew = 0.0
        var previous: (elapsed: Duration, correction: Double)?
        var largestRateChange = 0.0
        var settledWithin: Duration?
        var movedAt: Duration?
        var updatesAtKill: Int?
        try await runSimulated(fleet.client, clock: fleet.clock, for: .seconds(180), checkingEvery: .milliseconds(50)) { elapsed in
            if elapsed >= killAt, updatesAtKill == nil {
                fleet.servers[0].alive.withLock { $0 = false }
                updatesAtKill = fleet.synced.status.updates
            }
            let correction = fleet.synced.status.offset
            // Reference time stays continuous: it never moves faster than the slew (5 ms/s) against local time.
            if let previous {
                let rate = abs(correction - previous.correction) / (elapsed - previous.elapsed).seconds
                largestRateChange = max(largestRateChange, rate)
            }
            previous = (elapsed, correction)
            if fleet.client.currentSource.name == "n2" {
                if movedAt == nil { movedAt = elapsed }
                let error = abs(fleet.error(against: 1))
                worstAgainstNew = max(worstAgainstNew, error)
                if error < 20e-6 { settledWithin = settledWithin ?? elapsed } else { settledWithin = nil }
            }
        }
        let firstUnanswered = try #require(fleet.servers[0].firstUnanswered)
        let firstToNew = try #require(fleet.servers[1].firstRequest)
        let detection = firstUnanswered.duration(to: firstToNew)
        // One 500 ms timeout, then three retries 250 ms after each unanswered poll (each waits 500 ms).
        #expect(detection <= .milliseconds(2_760), "moved \(detection) after the first unanswered poll")
        #expect(fleet.client.statistics.sourceChanges == 1)
        #expect(fleet.synced.status.steps == 0)
        #expect(largestRateChange < 0.0051, "the correction moved at \(largestRateChange * 1e3) ms/s")
        #expect(worstAgainstNew <= abs(difference) + 20e-6)
        let moved = try #require(movedAt)
        let settled = try #require(settledWithin, "never within 20 µs of the new node")
        // 2 ms at 5 ms/s is 0.4 s, plus the new node's burst.
        #expect(settled - moved < .seconds(3), "settled \(settled - moved) after the move")
        #expect(abs(fleet.error(against: 1)) < 20e-6)
        // The clock keeps being updated after the kill (it froze before the change).
        #expect(fleet.synced.status.updates > (updatesAtKill ?? .max))
        print("node died: moved \(detection) after the first unanswered poll, within 20 µs of the new node \(settled - moved) later")
    }

    @Test("a node refusing service (DENY) is given up at once when there is another")
    func refusalMovesOn() async throws {
        let fleet = Fleet(offsets: [1.0, 1.0])
        _ = try await simulate(clock: fleet.clock) { try await fleet.client.converge() }
        fleet.servers[0].network.kiss.withLock { $0 = .deny }
        try await runSimulated(fleet.client, clock: fleet.clock, for: .seconds(40))
        #expect(fleet.client.currentSource.name == "n2")
        #expect(fleet.client.statistics.sourceChanges == 1)
        #expect(abs(fleet.error(against: 1)) < 20e-6)
    }

    @Test("with every node dead the initial sync tries each once and fails in about 2 s")
    func allDead() async throws {
        let fleet = Fleet(offsets: [1.0, 1.0, 1.0])
        for server in fleet.servers { server.alive.withLock { $0 = false } }
        let start = fleet.clock.now
        await #expect(throws: TimeClientError.self) {
            _ = try await simulate(clock: fleet.clock) { try await fleet.client.converge() }
        }
        #expect(start.duration(to: fleet.clock.now) < .milliseconds(2_500))
        #expect(fleet.client.statistics.sourceChanges == 3)
        #expect(fleet.servers.allSatisfy { $0.requests.withLock { $0.count } >= 8 })
        #expect(!fleet.synced.isSynchronized)
    }

    @Test("a client of one server keeps it, as before: no move, no hurried polls")
    func oneServerKept() async throws {
        let fleet = Fleet(offsets: [1.0])
        _ = try await simulate(clock: fleet.clock) { try await fleet.client.converge() }
        fleet.servers[0].alive.withLock { $0 = false }
        let before = fleet.servers[0].requests.withLock { $0.count }
        try await runSimulated(fleet.client, clock: fleet.clock, for: .seconds(60))
        #expect(fleet.client.statistics.sourceChanges == 0)
        #expect(fleet.client.currentSource.name == "n1")
        // The burst (8 at 200 ms), then the scheduler's own pace: at least 125 ms apart.
        let requests = fleet.servers[0].requests.withLock { $0.dropFirst(before).map(\.0) }
        let gaps = zip(requests, requests.dropFirst()).map { $0.duration(to: $1) }
        #expect(gaps.dropFirst(8).allSatisfy { $0 >= .milliseconds(125) + .milliseconds(500) })
    }
}
