import ClockSync
import Logging
import Testing

@Suite("TimeClient")
struct TimeClientTests {
    static func setup(offset: Double = 0) -> (ManualClock, SimulatedNetwork, TimeClient<ManualClock>) {
        let clock = ManualClock()
        let timescale = LocalTimescale(clock: clock, anchorTime: NTPTimestamp(unixSeconds: 1_800_000_000))
        let network = SimulatedNetwork(timescale: timescale, offset: offset, driftPPM: 0, path: ConvergenceTests.lan)
        let client = TimeClient(transport: network, syncedClock: SyncedClock(timescale: timescale, logger: Logger(label: "test")))
        return (clock, network, client)
    }

    @Test("DENY and RSTR stop the client with an error", arguments: [KissCode.deny, .restrict])
    func refusal(code: KissCode) async throws {
        let (_, network, client) = Self.setup()
        network.kiss.withLock { $0 = code }
        await #expect(throws: TimeClientError.refused(code)) { try await client.run() }
        #expect(network.requests.withLock { $0.count } == 1)
        #expect(!client.syncedClock.isSynchronized)
    }

    @Test("RATE backs the poll interval off instead of retrying at the burst pace")
    func rateBacksOff() async throws {
        let (clock, network, client) = Self.setup()
        network.kiss.withLock { $0 = .rate }
        try await runSimulated(client, clock: clock, for: .seconds(600))
        let times = network.requests.withLock { $0 }
        let gaps = zip(times.dropFirst(), times).map { $0.0.offset - $0.1.offset }
        #expect(client.statistics.rateLimited == times.count)
        #expect(gaps.first == .seconds(8), "the first back-off is at least 4x the minimum interval")
        #expect(zip(gaps.dropFirst(), gaps).allSatisfy { $0.0 >= $0.1 }, "intervals never shrink: \(gaps)")
        #expect(times.count < 10, "\(times.count) requests in 10 minutes")
        #expect(!client.syncedClock.isSynchronized)
    }

    @Test("measure() returns the estimate of a burst; no response at all is an error")
    func measure() async throws {
        let (clock, _, client) = Self.setup(offset: -0.125)
        async let measured = client.measure(samples: 8, interval: .milliseconds(200))
        for _ in 0..<7 {   // seven gaps between eight samples
            await clock.waitForSleepers(1)
            clock.advance(by: .milliseconds(200))
        }
        let result = try await measured
        #expect(abs(result.offset - -0.125) < 10e-6)
        #expect(result.totalSamples == 8)

        struct Silent: NTPTransport {
            func exchange(_ request: NTPPacket, timeout: Duration) async throws -> NTPExchange? { nil }
        }
        let silent = TimeClient(transport: Silent(), syncedClock: SyncedClock(clock: ManualClock()))
        await #expect(throws: TimeClientError.noResponse(attempts: 1)) { try await silent.measure(samples: 1, interval: .zero) }
    }

    @Test("responses that do not answer our request are dropped")
    func bogusResponses() async throws {
        struct Replay: NTPTransport {
            func exchange(_ request: NTPPacket, timeout: Duration) async throws -> NTPExchange? {
                let response = NTPPacket(
                    mode: .server, stratum: 1, originTimestamp: NTPTimestamp(rawValue: 12345),
                    receiveTimestamp: NTPTimestamp(unixSeconds: 1), transmitTimestamp: NTPTimestamp(unixSeconds: 1)
                )
                return NTPExchange(response: response, sent: NTPTimestamp(unixSeconds: 1), received: NTPTimestamp(unixSeconds: 1))
            }
        }
        let client = TimeClient(transport: Replay(), syncedClock: SyncedClock(clock: ManualClock()))
        #expect(try await client.poll() == .timeout)
        #expect(client.statistics.invalid == 1)
        #expect(client.estimate == nil)
    }

    @Test("against the real UDP server: the offset is found within the error bound")
    func realServer() async throws {
        try await TimeServerTests.withServer(offset: -3600.75) { server, port in
            let timescale = LocalTimescale(clock: ContinuousClock())
            let synced = SyncedClock(timescale: timescale, logger: Logger(label: "test"))
            let transport = try await UDPTimeTransport.connect(host: "127.0.0.1", port: port, timescale: timescale)
            let client = TimeClient(transport: transport, syncedClock: synced)
            let estimate = try await client.measure(samples: 8, interval: .milliseconds(50))
            await transport.close()
            // The server's timescale and ours are both the monotonic clock anchored to UTC at start; the
            // anchors differ by what passed between their two real-time clock reads (milliseconds on a
            // loaded machine), so the truth is the offset plus that difference, read at one instant.
            let instant = ContinuousClock.now
            let anchors = server.timescale.time(at: instant).seconds(since: timescale.time(at: instant))
            // Within what the exchanges themselves bound: a sample's offset is off by at most half its
            // round trip (the worst asymmetry), so the estimate is within half the longest round trip
            // it used; 2 ms when that is shorter. A loaded machine lengthens the round trips, not the
            // error of a right computation; a wrong one (sign, era, anchors) is off by far more.
            let bound = max(0.002, estimate.worstUsedDelay / 2 + 0.0005)
            #expect(abs(estimate.offset - (-3600.75 + anchors)) < bound,
                    "offset \(estimate.offset), anchors \(anchors), bound \(bound) (longest round trip used \(estimate.worstUsedDelay))")
            #expect(synced.isSynchronized)
            #expect(estimate.bestDelay < 0.1)
            #expect(client.statistics.samples == 8)
        }
    }
}

@Suite("PollScheduler")
struct PollSchedulerTests {
    @Test("a burst, then the minimum interval, doubling while samples are good, halving on trouble")
    func schedule() {
        var scheduler = PollScheduler()
        #expect(scheduler.start() == .zero)
        for _ in 0..<7 { #expect(scheduler.next(after: .goodSample) == .milliseconds(200)) }
        var waits: [Duration] = []
        for _ in 0..<24 { waits.append(scheduler.next(after: .goodSample)) }
        #expect(waits.first == .seconds(2))
        #expect(waits.last == .seconds(32))
        #expect(zip(waits.dropFirst(), waits).allSatisfy { $0.0 >= $0.1 })
        #expect(scheduler.next(after: .timeout) == .seconds(16))
        #expect(scheduler.next(after: .badSample) == .seconds(8))
    }

    @Test("RATE ends the burst and backs off up to the cap")
    func rate() {
        var scheduler = PollScheduler()
        _ = scheduler.next(after: .goodSample)
        #expect(scheduler.next(after: .rateLimited) == .seconds(8))
        #expect(scheduler.burstRemaining == 0)
        #expect(scheduler.next(after: .rateLimited) == .seconds(16))
        for _ in 0..<20 { _ = scheduler.next(after: .rateLimited) }
        #expect(scheduler.interval == .seconds(1024))
    }
}

@Suite("RateLimiter")
struct RateLimiterTests {
    @Test("a burst, then the sustained rate, one kiss per second, per client")
    func buckets() {
        var limiter = RateLimiter<Int>(configuration: .init(burst: 4, rate: 2))
        #expect((0..<4).allSatisfy { _ in limiter.decide(1, now: 0) == .allow })
        #expect(limiter.decide(1, now: 0) == .kiss)
        #expect(limiter.decide(1, now: 0.1) == .drop)
        #expect(limiter.decide(2, now: 0.1) == .allow)
        #expect(limiter.decide(1, now: 0.6) == .allow)
        #expect(limiter.decide(1, now: 1.2) == .allow)
        #expect(limiter.decide(1, now: 1.2) == .kiss)
    }

    @Test("the client table stays bounded")
    func bounded() {
        var limiter = RateLimiter<Int>(configuration: .init(burst: 4, rate: 1, maximumClients: 100))
        for client in 0..<10_000 { _ = limiter.decide(client, now: Double(client) * 0.001) }
        #expect(limiter.trackedClients <= 100)
    }
}

@Suite("ManualClock")
struct ManualClockTests {
    @Test("sleepers wake in deadline order when the clock reaches them")
    func order() async throws {
        let clock = ManualClock()
        let woken = AsyncStream<Int>.makeStream()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, seconds) in [3, 1, 2].enumerated() {
                group.addTask {
                    try await clock.sleep(for: .seconds(seconds))
                    woken.continuation.yield(index)
                }
            }
            await clock.waitForSleepers(3)
            clock.advance(by: .milliseconds(999))
            #expect(clock.sleeperCount == 3)
            clock.advance(by: .seconds(5))
            try await group.waitForAll()
        }
        woken.continuation.finish()
        var order: [Int] = []
        for await index in woken.stream { order.append(index) }
        #expect(Set(order) == [0, 1, 2])
        #expect(clock.now.offset == .milliseconds(5999))
    }

    @Test("a cancelled sleeper throws CancellationError at once")
    func cancel() async {
        let clock = ManualClock()
        let task = Task { try await clock.sleep(for: .seconds(60)) }
        await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("a deadline in the past returns immediately")
    func past() async throws {
        let clock = ManualClock()
        clock.advance(by: .seconds(10))
        try await clock.sleep(until: ManualClock.Instant(offset: .seconds(5)))
    }
}
