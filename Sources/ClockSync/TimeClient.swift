import Logging
import Synchronization

/// An NTP client: polls a server through an ``NTPTransport``, filters the samples and keeps a
/// ``SyncedClock`` up to date.
///
/// ``run()`` polls forever on the schedule of a ``PollScheduler`` (a burst, then an adaptive
/// interval), sleeping on the synced clock's own (injectable) local clock; ``measure(samples:interval:)``
/// does a one-off burst, as `coplay time query` does, and ``converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)``
/// a burst that lasts until the estimate is good (a playback member's start). Kiss-o'-death codes are honoured: RATE backs the
/// poll interval off, DENY and RSTR stop the client with ``TimeClientError/refused(_:)``. Responses that
/// fail validation (wrong origin, unsynchronized server, ...) are dropped.
///
/// Given several servers (``init(sources:syncedClock:configuration:logger:)``: the nodes of one
/// relay service), the client polls the first and moves to the next when the one it polls stops
/// answering, as ``TimeSourceFailover`` decides, cycling through the list; a refusal (DENY, RSTR)
/// or a transport error moves it on as well. The synced clock is kept, so the new server's offset
/// is slewed in; each move is logged (notice) and published on ``sourceChanges``.
///
/// ```swift
/// let timescale = LocalTimescale(clock: ContinuousClock())
/// let synced = SyncedClock(timescale: timescale)
/// let transport = try await UDPTimeTransport.connect(host: "relay.example", port: 7000, timescale: timescale)
/// let client = TimeClient(transport: transport, syncedClock: synced, logger: logger)
/// try await client.run()   // in a task group; cancel to stop
/// ```
public final class TimeClient<C: Clock>: Sendable where C.Duration == Duration {
    /// Polling and filtering settings.
    public struct Configuration: Sendable, Hashable {
        /// The poll schedule.
        public var poll: PollScheduler.Configuration = .init()
        /// The sample filter.
        public var filter: SampleFilter.Configuration = .init()
        /// How long to wait for each response.
        public var timeout: Duration = .seconds(1)
        /// When to give up on a server and poll the next (only with several sources).
        public var failover: TimeSourceFailover.Configuration = .init()

        /// Creates the default configuration.
        public init() {}

        /// Settings for a client whose clock schedules playback against other machines.
        ///
        /// Polls every 125 ms (8 requests/s, well below the relay's time server limit of 64/s per
        /// address) for as long as most samples are not clean (their delay more than 50% above the best
        /// one, i.e. the path is queueing), since under delay jitter accuracy comes only from many
        /// samples; on a quiet path the interval still doubles up to 32 s. The filter keeps up to 1024
        /// samples and 10 minutes, so after two minutes of jitter it has about 1000 samples to take the
        /// envelope of, and it estimates drift as soon as its samples span 1 s, so a member whose clock
        /// runs 100 ppm off on a quiet path does not lag while it waits for a longer span (on a noisy
        /// path the filter's drift prior keeps a short span's noisy slope from being believed).
        /// Start with ``TimeClient/converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)`` and pair it
        /// with ``SyncedClock/Configuration/playback``.
        ///
        /// ```swift
        /// var configuration = TimeClient<ContinuousClock>.Configuration.playback
        /// configuration.timeout = .milliseconds(500)
        /// ```
        public static var playback: Configuration {
            var configuration = Configuration()
            configuration.poll.minimumInterval = .milliseconds(125)
            configuration.filter.capacity = 1024
            configuration.filter.maximumAge = 600
            configuration.filter.minimumDriftSpan = 1
            return configuration
        }
    }

    /// Counters of what the client did.
    public struct Statistics: Sendable, Hashable {
        /// Requests sent.
        public var sent = 0
        /// Valid responses turned into samples.
        public var samples = 0
        /// Requests that got no (matching) response in time.
        public var timeouts = 0
        /// Responses dropped by validation.
        public var invalid = 0
        /// RATE kiss-o'-death responses received.
        public var rateLimited = 0
        /// Moves from one server to another.
        public var sourceChanges = 0
    }

    private struct State: Sendable {
        var filter: SampleFilter
        var statistics = Statistics()
        var failover: TimeSourceFailover
        /// The transports made so far, by source index.
        var transports: [Int: any NTPTransport] = [:]
        /// Incremented at every move: an answer from before a move is not folded in.
        var generation = 0
    }

    /// The settings in use.
    public let configuration: Configuration
    /// The clock this client disciplines.
    public let syncedClock: SyncedClock<C>
    /// The servers, in the order they are tried.
    public let sources: [TimeSource]
    /// Every move from one server to another, as it happens (one reader; the newest 16 are kept
    /// while nobody reads). Finishes when the client is deinitialised.
    public let sourceChanges: AsyncStream<TimeSourceChange>
    private let changes: AsyncStream<TimeSourceChange>.Continuation
    private let logger: Logger
    private let state: Mutex<State>

    /// Creates a client of one server; nothing is sent until ``run()`` or ``measure(samples:interval:)``.
    ///
    /// - Parameters:
    ///   - transport: How to reach the server (its timestamps must be on `syncedClock.timescale`).
    ///   - syncedClock: The clock to keep up to date.
    ///   - configuration: Polling and filtering settings.
    ///   - logger: Where progress is logged (info and below).
    public convenience init(
        transport: any NTPTransport,
        syncedClock: SyncedClock<C>,
        configuration: Configuration = .init(),
        logger: Logger = .current
    ) {
        self.init(
            sources: [TimeSource(name: "server", transport: transport)], syncedClock: syncedClock,
            configuration: configuration, logger: logger)
    }

    /// Creates a client of several servers that serve the same time (the nodes of one relay
    /// service): it polls the first and moves to the next when one stops answering
    /// (``Configuration/failover``). Nothing is sent until ``run()``, ``converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)``
    /// or ``measure(samples:interval:)``.
    ///
    /// - Parameters:
    ///   - sources: The servers, in order (at least one).
    ///   - syncedClock: The clock to keep up to date.
    ///   - configuration: Polling, filtering and failover settings.
    ///   - logger: Where progress is logged (notice and below).
    public init(
        sources: [TimeSource],
        syncedClock: SyncedClock<C>,
        configuration: Configuration = .init(),
        logger: Logger
    ) {
        precondition(!sources.isEmpty, "a TimeClient needs at least one time source")
        self.sources = sources
        self.syncedClock = syncedClock
        self.configuration = configuration
        self.logger = logger
        (self.sourceChanges, self.changes) = AsyncStream<TimeSourceChange>.makeStream(bufferingPolicy: .bufferingNewest(16))
        self.state = Mutex(State(
            filter: SampleFilter(configuration: configuration.filter),
            failover: TimeSourceFailover(sourceCount: sources.count, configuration: configuration.failover)))
    }

    deinit {
        changes.finish()
    }

    /// The filter's current estimate (from the server polled now), if any sample has arrived.
    public var estimate: ClockEstimate? { state.withLock { $0.filter.estimate() } }

    /// What the client has done so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The server polled now.
    public var currentSource: TimeSource { sources[state.withLock { $0.failover.current }] }

    /// Polls the server until cancelled, updating the synced clock after every sample.
    ///
    /// With several sources, a server that stops answering is given up for the next
    /// (``TimeSourceFailover``), and so is one that refuses service or whose transport fails; the
    /// new server's schedule starts with a burst.
    ///
    /// - Throws: ``TimeClientError/refused(_:)`` on DENY or RSTR (with a single source);
    ///   `CancellationError` when cancelled.
    public func run() async throws {
        var scheduler = PollScheduler(configuration: configuration.poll)
        var wait = scheduler.start()
        let clock = syncedClock.timescale.clock
        let several = sources.count > 1
        while true {
            if wait > .zero { try await clock.sleep(for: wait) }
            try Task.checkCancellation()
            let outcome: PollScheduler.Outcome
            do {
                outcome = try await poll()
            } catch let error as TimeClientError where several && error.refusalCode != nil {
                moveOn(reason: "\(error)")
                scheduler = PollScheduler(configuration: configuration.poll)
                wait = scheduler.start()
                continue
            } catch where several && !(error is CancellationError) && !Task.isCancelled {
                logger.debug("time server unreachable", metadata: ["error": "\(error)"])
                outcome = .timeout
            }
            wait = scheduler.next(after: outcome)
            if outcome == .rateLimited {
                logger.info("time server asked us to slow down (RATE)", metadata: ["interval": "\(wait)"])
            }
            switch record(outcome, duringBurst: false) {
            case .keep:
                break
            case .retrySoon(let retry):
                wait = min(wait, retry)
            case .moveOn:
                scheduler = PollScheduler(configuration: configuration.poll)
                wait = scheduler.start()
            }
        }
    }

    /// Sends `samples` requests `interval` apart and returns the resulting estimate.
    ///
    /// A RATE kiss-o'-death doubles the interval for the remaining requests. With several sources,
    /// a server that leaves ``TimeSourceFailover/Configuration/maximumUnansweredAtStart`` requests in
    /// a row unanswered, or gives no answer at all, refuses or cannot be reached, is given up for the
    /// next, each server at most once.
    ///
    /// - Parameters:
    ///   - samples: How many requests to send.
    ///   - interval: The gap between requests.
    /// - Returns: The filter's estimate over every sample so far (from the server that answered).
    /// - Throws: ``TimeClientError`` on DENY/RSTR or when no response arrived at all (from any server).
    public func measure(samples: Int, interval: Duration) async throws -> ClockEstimate {
        let clock = syncedClock.timescale.clock
        var failure: any Error = TimeClientError.noResponse(attempts: max(1, samples))
        for _ in sources.indices {
            let generation = state.withLock { $0.generation }
            var gap = interval
            do {
                for index in 0..<max(1, samples) {
                    if index > 0 { try await clock.sleep(for: gap) }
                    let outcome = try await poll()
                    if outcome == .rateLimited { gap *= 2 }
                    if case .moveOn = record(outcome, duringBurst: true) { break }
                }
            } catch where sources.count > 1 && !(error is CancellationError) && !Task.isCancelled {
                failure = error
                moveOn(reason: "\(error)")
                continue
            }
            let moved = state.withLock { $0.generation != generation }
            if !moved, let estimate { return estimate }
            failure = TimeClientError.noResponse(attempts: max(1, samples))
            if sources.count == 1 { break }
            if !moved { moveOn(reason: "no answer") }
        }
        throw failure
    }

    /// The initial burst of a member about to schedule against the reference clock: sends a request
    /// every `interval` (without waiting for the previous answer, at most `maximumInFlight` at a time,
    /// so a long round trip does not slow the burst down) until the estimate's
    /// ``ClockEstimate/typicalError`` is at most `target` (after at least `minimumSamples` answers;
    /// at most `maximumSamples` requests), then has the synced clock adopt the estimate at once
    /// (``SyncedClock/adopt(_:)``) instead of slewing toward it, since nothing has read the clock yet.
    ///
    /// On a quiet path the minimum is enough (8 requests 20 ms apart: 0.14 s plus a round trip);
    /// under 20 ms ± 10 ms of jitter each way it takes about 80 (1.6 s) to reach 0.25 ms. A RATE
    /// kiss-o'-death doubles the interval for the remaining requests.
    ///
    /// With several sources, a server that leaves
    /// ``TimeSourceFailover/Configuration/maximumUnansweredAtStart`` requests in a row unanswered
    /// (about 0.65 s with a 500 ms timeout), refuses, or cannot be reached is given up and the burst
    /// starts again on the next, each server at most once.
    ///
    /// ```swift
    /// let estimate = try await client.converge()   // then run() in the background
    /// ```
    ///
    /// - Parameters:
    ///   - target: The typical error to reach, in seconds.
    ///   - minimumSamples: Answers to wait for whatever the error.
    ///   - maximumSamples: Requests after which the burst ends anyway.
    ///   - interval: The gap between requests.
    ///   - maximumInFlight: How many requests may await their answers at once.
    /// - Returns: The estimate the clock adopted.
    /// - Throws: ``TimeClientError`` on DENY/RSTR or when no response arrived at all (from any server).
    public func converge(
        target: Double = 250e-6,
        minimumSamples: Int = 8,
        maximumSamples: Int = 128,
        interval: Duration = .milliseconds(20),
        maximumInFlight: Int = 8
    ) async throws -> ClockEstimate {
        var failure: any Error = TimeClientError.noResponse(attempts: 0)
        for _ in sources.indices {
            let generation = state.withLock { $0.generation }
            let sent: Int
            do {
                sent = try await burst(
                    target: target, minimumSamples: minimumSamples, maximumSamples: maximumSamples, interval: interval,
                    maximumInFlight: maximumInFlight)
            } catch where sources.count > 1 && !(error is CancellationError) && !Task.isCancelled {
                failure = error
                moveOn(reason: "\(error)")
                continue
            }
            let moved = state.withLock { $0.generation != generation }
            if !moved, let estimate {
                syncedClock.adopt(estimate)
                logger.info("reference clock measured", metadata: [
                    "requests": "\(sent)", "typicalError": "\(estimate.typicalError)", "offset": "\(estimate.offset)",
                    "server": "\(currentSource)",
                ])
                return estimate
            }
            failure = TimeClientError.noResponse(attempts: sent)
            if sources.count == 1 { break }
            if !moved { moveOn(reason: "no answer") }
        }
        throw failure
    }

    /// One server's part of ``converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)``:
    /// returns the number of requests sent, when the estimate is good, the requests are used up, or
    /// the failover policy gave the server up.
    private func burst(
        target: Double, minimumSamples: Int, maximumSamples: Int, interval: Duration, maximumInFlight: Int
    ) async throws -> Int {
        let clock = syncedClock.timescale.clock
        let maximum = max(1, minimumSamples, maximumSamples)
        let samplesBefore = statistics.samples
        var sent = 0
        // Connect before the requests go out together.
        _ = try await currentTransport()
        try await withThrowingTaskGroup(of: PollScheduler.Outcome?.self) { group in
            var gap = interval
            var inFlight = 0
            var pacing = false  // a child is sleeping until the next request may go
            var nextSend = clock.now
            while true {
                if sent < maximum, inFlight < max(1, maximumInFlight), !pacing {
                    if clock.now >= nextSend {
                        group.addTask { try await self.poll() }
                        sent += 1
                        inFlight += 1
                        nextSend = clock.now.advanced(by: gap)
                        continue
                    }
                    let deadline = nextSend
                    pacing = true
                    group.addTask {
                        try await clock.sleep(until: deadline, tolerance: nil)
                        return nil
                    }
                }
                guard let finished = try await group.next() else { break }
                guard let outcome = finished else {
                    pacing = false
                    continue
                }
                inFlight -= 1
                if case .moveOn = record(outcome, duringBurst: true) { break }
                if outcome == .rateLimited {
                    gap *= 2
                    nextSend = clock.now.advanced(by: gap)
                }
                let answers = statistics.samples - samplesBefore
                if answers >= minimumSamples, let estimate, estimate.typicalError <= target { break }
                if sent >= maximum, inFlight == 0 { break }
            }
            group.cancelAll()
        }
        return sent
    }

    /// Sends one request and folds the answer into the filter and the synced clock.
    ///
    /// - Returns: The outcome, for the poll scheduler.
    /// - Throws: ``TimeClientError/refused(_:)`` on DENY or RSTR, or a transport error.
    @discardableResult
    public func poll() async throws -> PollScheduler.Outcome {
        let (transport, generation) = try await currentTransport()
        var nonce: UInt64 = 0
        while nonce == 0 { nonce = UInt64.random(in: .min ... .max) }
        let request = NTPPacket(mode: .client, poll: 6, transmitTimestamp: NTPTimestamp(rawValue: nonce))
        state.withLock { $0.statistics.sent += 1 }
        guard let exchange = try await transport.exchange(request, timeout: configuration.timeout) else {
            state.withLock { $0.statistics.timeouts += 1 }
            return .timeout
        }
        do {
            try exchange.response.validateResponse(origin: request.transmitTimestamp)
        } catch {
            if let code = error.kissCode {
                if code.demandsStop { throw TimeClientError.refused(code) }
                if code == .rate {
                    state.withLock { $0.statistics.rateLimited += 1 }
                    return .rateLimited
                }
            }
            state.withLock { $0.statistics.invalid += 1 }
            logger.debug("invalid NTP response dropped", metadata: ["reason": "\(error)"])
            return .timeout
        }
        let sample = exchange.sample
        let (estimate, good): (ClockEstimate?, Bool) = state.withLock { state in
            // An answer from a server given up on since it was asked: not on the new server's timescale.
            guard state.generation == generation else { return (nil, false) }
            state.statistics.samples += 1
            state.filter.add(sample)
            guard let estimate = state.filter.estimate() else { return (nil, false) }
            // Good: a low-delay sample that agrees with the fit. On a noisy path most samples are
            // not, which keeps the poll interval short so the filter sees enough clean exchanges.
            let residual = abs(sample.offset - estimate.offset(atLocal: sample.localTime))
            let lowDelay = sample.delay <= state.filter.delayLimit
            return (estimate, lowDelay && residual <= 3 * estimate.errorBound + 1e-6)
        }
        if let estimate { syncedClock.update(with: estimate) }
        logger.trace("NTP sample", metadata: ["offset": "\(sample.offset)", "delay": "\(sample.delay)"])
        return good ? .goodSample : .badSample
    }

    /// The transport to the server polled now (made on first use) and the move count it belongs to.
    private func currentTransport() async throws -> (any NTPTransport, Int) {
        let (index, generation, existing) = state.withLock { state in
            (state.failover.current, state.generation, state.transports[state.failover.current])
        }
        if let existing { return (existing, generation) }
        let made = try await sources[index].connect()
        let transport = state.withLock { state in
            if let raced = state.transports[index] { return raced }
            state.transports[index] = made
            return made
        }
        return (transport, generation)
    }

    /// Feeds the failover policy; on a move, starts the new server's filter and announces it.
    private func record(_ outcome: PollScheduler.Outcome, duringBurst: Bool) -> TimeSourceFailover.Decision {
        let (from, unanswered, decision) = state.withLock { state in
            let from = state.failover.current
            let unanswered = state.failover.unansweredInARow + 1
            let decision = duringBurst ? state.failover.recordDuringBurst(outcome) : state.failover.record(outcome)
            if case .moveOn = decision { startNewSource(&state) }
            return (from, unanswered, decision)
        }
        if case .moveOn(let to) = decision {
            announce(from: from, to: to, reason: "no answer", unanswered: unanswered)
        }
        return decision
    }

    /// Moves to the next server at once (the current one refused or could not be reached).
    private func moveOn(reason: String) {
        let (from, to) = state.withLock { state in
            let from = state.failover.current
            let to = state.failover.moveOn()
            startNewSource(&state)
            return (from, to)
        }
        announce(from: from, to: to, reason: reason, unanswered: nil)
    }

    private func startNewSource(_ state: inout State) {
        state.filter = SampleFilter(configuration: configuration.filter)
        state.generation += 1
        state.statistics.sourceChanges += 1
    }

    private func announce(from: Int, to: Int, reason: String, unanswered: Int?) {
        let change = TimeSourceChange(from: sources[from].name, to: sources[to].name, reason: reason)
        var metadata: Logger.Metadata = ["from": "\(change.from)", "to": "\(change.to)", "reason": "\(reason)"]
        if let unanswered { metadata["unanswered"] = "\(unanswered)" }
        logger.notice("time server changed", metadata: metadata)
        changes.yield(change)
    }
}
