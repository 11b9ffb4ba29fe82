import Logging
import Synchronization

/// An NTP client: polls one server through an ``NTPTransport``, filters the samples and keeps a
/// ``SyncedClock`` up to date.
///
/// ``run()`` polls forever on the schedule of a ``PollScheduler`` (a burst, then an adaptive
/// interval), sleeping on the synced clock's own (injectable) local clock; ``measure(samples:interval:)``
/// does a one-off burst, as `coplay time query` does, and ``converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)``
/// a burst that lasts until the estimate is good (a playback member's start). Kiss-o'-death codes are honoured: RATE backs the
/// poll interval off, DENY and RSTR stop the client with ``TimeClientError/refused(_:)``. Responses that
/// fail validation (wrong origin, unsynchronized server, ...) are dropped.
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
    }

    private struct State: Sendable {
        var filter: SampleFilter
        var statistics = Statistics()
    }

    /// The settings in use.
    public let configuration: Configuration
    /// The clock this client disciplines.
    public let syncedClock: SyncedClock<C>
    private let transport: any NTPTransport
    private let logger: Logger
    private let state: Mutex<State>

    /// Creates a client; nothing is sent until ``run()`` or ``measure(samples:interval:)``.
    ///
    /// - Parameters:
    ///   - transport: How to reach the server (its timestamps must be on `syncedClock.timescale`).
    ///   - syncedClock: The clock to keep up to date.
    ///   - configuration: Polling and filtering settings.
    ///   - logger: Where progress is logged (info and below).
    public init(
        transport: any NTPTransport,
        syncedClock: SyncedClock<C>,
        configuration: Configuration = .init(),
        logger: Logger = Logger(label: "coplay.clocksync.timeclient")
    ) {
        self.transport = transport
        self.syncedClock = syncedClock
        self.configuration = configuration
        self.logger = logger
        self.state = Mutex(State(filter: SampleFilter(configuration: configuration.filter)))
    }

    /// The filter's current estimate, if any sample has arrived.
    public var estimate: ClockEstimate? { state.withLock { $0.filter.estimate() } }

    /// What the client has done so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Polls the server until cancelled, updating the synced clock after every sample.
    ///
    /// - Throws: ``TimeClientError/refused(_:)`` on DENY or RSTR; `CancellationError` when cancelled.
    public func run() async throws {
        var scheduler = PollScheduler(configuration: configuration.poll)
        var wait = scheduler.start()
        let clock = syncedClock.timescale.clock
        while true {
            if wait > .zero { try await clock.sleep(for: wait) }
            try Task.checkCancellation()
            let outcome = try await poll()
            wait = scheduler.next(after: outcome)
            if outcome == .rateLimited {
                logger.info("time server asked us to slow down (RATE)", metadata: ["interval": "\(wait)"])
            }
        }
    }

    /// Sends `samples` requests `interval` apart and returns the resulting estimate.
    ///
    /// A RATE kiss-o'-death doubles the interval for the remaining requests.
    ///
    /// - Parameters:
    ///   - samples: How many requests to send.
    ///   - interval: The gap between requests.
    /// - Returns: The filter's estimate over every sample so far.
    /// - Throws: ``TimeClientError`` on DENY/RSTR or when no response arrived at all.
    public func measure(samples: Int, interval: Duration) async throws -> ClockEstimate {
        let clock = syncedClock.timescale.clock
        var gap = interval
        for index in 0..<max(1, samples) {
            if index > 0 { try await clock.sleep(for: gap) }
            if try await poll() == .rateLimited { gap *= 2 }
        }
        guard let estimate else { throw TimeClientError.noResponse(attempts: max(1, samples)) }
        return estimate
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
    /// - Throws: ``TimeClientError`` on DENY/RSTR or when no response arrived at all.
    public func converge(
        target: Double = 250e-6,
        minimumSamples: Int = 8,
        maximumSamples: Int = 128,
        interval: Duration = .milliseconds(20),
        maximumInFlight: Int = 8
    ) async throws -> ClockEstimate {
        let clock = syncedClock.timescale.clock
        let maximum = max(1, minimumSamples, maximumSamples)
        let samplesBefore = statistics.samples
        var sent = 0
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
        guard let estimate else { throw TimeClientError.noResponse(attempts: sent) }
        syncedClock.adopt(estimate)
        logger.info("reference clock measured", metadata: [
            "requests": "\(sent)", "typicalError": "\(estimate.typicalError)", "offset": "\(estimate.offset)",
        ])
        return estimate
    }

    /// Sends one request and folds the answer into the filter and the synced clock.
    ///
    /// - Returns: The outcome, for the poll scheduler.
    /// - Throws: ``TimeClientError/refused(_:)`` on DENY or RSTR, or a transport error.
    @discardableResult
    public func poll() async throws -> PollScheduler.Outcome {
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
}
