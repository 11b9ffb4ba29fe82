import GroupSessions
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// The coplay relay: accepts member connections over TCP (optionally TLS) or a WebSocket on the
/// same port, routes sealed frames between the members of each session through a `SessionHub`,
/// and never sees a secret or a plaintext payload. The same port serves the browser client's
/// files over HTTP and answers in-band time requests (see `RelayServer+Pipeline.swift`).
///
/// Each connection is served on its event loop by a `MemberConnection` handler that reads its
/// frames into the hub of its session (`SessionShard`, one lock per session); what the hub sends is queued
/// in the connection's `ChannelWriter` under that lock, so every member's queue follows the
/// session's stamped order, and written on the connection's event loop, one flush per batch. A connection that
/// fails, floods or stops reading affects only itself. On graceful shutdown (SIGTERM through
/// ServiceLifecycle) the relay stops accepting, flushes and closes every connection.
///
/// ```swift
/// let relay = RelayServer(configuration: RelayConfiguration(port: 7000), logger: logger)
/// let group = ServiceGroup(services: [relay], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public final class RelayServer: Service, Sendable {
    /// What the relay shares across sessions; each session's routing lives in its ``SessionShard``.
    struct Core: ~Copyable {
        /// Sessions by id (a shard leaves once it holds neither members nor state).
        var shards: [SessionID: SessionShard] = [:]
        /// Every open connection's outbox (for shutdown).
        var outboxes: [Int: ChannelWriter] = [:]
        var connectionCount = 0
        var nextID = 1
        var shuttingDown = false
        /// Connections refused at the connection limit.
        var refusedConnections: UInt64 = 0
        /// Totals of shards that have left.
        var retired = RelayMetrics(connections: 0, sessions: 0, participants: 0, counters: HubCounters(), slowConsumers: 0)
        /// Where restored and new sessions are stored, with `--data-dir`.
        var store: (any SessionPersistence)?
    }

    /// The configuration in force.
    public let configuration: RelayConfiguration
    let logger: Logger
    let core: Mutex<Core>
    /// Connections that have not said `hello` yet: pings, refusals, undecodable bytes, idleness.
    let lobby: SessionShard
    /// The relay's store commits, journal I/O and bindings, run by ``run()``.
    let storage: RelayStorage
    let now: @Sendable () -> Duration
    private let bound = Mutex<(address: SocketAddress?, waiters: [CheckedContinuation<SocketAddress, any Error>])>((nil, []))
    private let eventLoopGroup: any EventLoopGroup
    private let timeLimiter = TimeRequestLimiter()
    let instruments: RelayInstruments

    /// Creates a relay; it listens when ``run()`` is called.
    ///
    /// - Parameters:
    ///   - configuration: Address, TLS and limits.
    ///   - clock: The clock for rate limiting (tests may inject a manual one).
    ///   - eventLoopGroup: NIO event loops (default: the shared singleton).
    ///   - logger: Where the relay logs (info and below; never payload bytes).
    public init<C: Clock<Duration>>(
        configuration: RelayConfiguration,
        clock: C = ContinuousClock(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.configuration = configuration
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
        instruments = RelayInstruments(factory: configuration.metricsFactory)
        storage = RelayStorage(journal: Self.journalStorage(for: configuration, logger: logger))
        core = Mutex(Core())
        lobby = SessionShard(
            session: SessionID(high: 0, low: 0), hub: SessionHub(limits: Self.shardLimits(configuration.limits)),
            store: nil, storage: storage, logger: logger)
        let start = clock.now
        now = { start.duration(to: clock.now) }
    }

    /// The address the relay listens on, once bound (waits for ``run()`` to bind).
    public func localAddress() async throws -> SocketAddress {
        try await withCheckedThrowingContinuation { continuation in
            let address = bound.withLock { state -> SocketAddress? in
                if let address = state.address { return address }
                state.waiters.append(continuation)
                return nil
            }
            if let address { continuation.resume(returning: address) }
        }
    }

    /// The TCP port the relay listens on, once bound.
    public func boundPort() async throws -> Int {
        try await localAddress().port ?? configuration.port
    }

    /// A snapshot of the relay's counters, summed over its sessions.
    public var metrics: RelayMetrics { totals().metrics }

    /// The relay's counters and the bytes of journal attachments of the sessions it serves.
    private func totals() -> (metrics: RelayMetrics, journalBytes: Int) {
        let (shards, connections, refused, retired) = core.withLock { core in
            (Array(core.shards.values), core.connectionCount, core.refusedConnections, core.retired)
        }
        var total = retired
        var journalBytes = 0
        total.connections = connections
        total.counters.framesRefused += refused
        for shard in shards + [lobby] {
            shard.state.withLock { state in
                journalBytes += state.hub.journalBytes
                total.sessions += state.hub.sessionCount
                total.participants += state.hub.participantCount
                total.counters += state.hub.counters
                total.slowConsumers += state.slowConsumers
                total.errorsSent.merge(state.errorsSent, uniquingKeysWith: +)
            }
        }
        return (total, journalBytes)
    }

    /// Brings the swift-metrics instruments up to date (the metrics endpoint calls it before each
    /// scrape; the relay also does every second).
    public func updateMetrics() {
        let (snapshot, journalBytes) = totals()
        instruments.update(from: snapshot, journalBytes: journalBytes)
    }

    /// Listens and serves until cancelled or gracefully shut down.
    ///
    /// The relay's storage work (store commits, journal reads and writes, asking a shared store
    /// about a session) runs in a child task of this method, off the event loops; on a graceful
    /// shutdown what it has queued is finished before this method returns.
    public func run() async throws {
        let storage = self.storage
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await storage.run() }
            defer { storage.finish() }
            try await serve()
        }
    }

    private func serve() async throws {
        let configuration = self.configuration
        if let store = configuration.store {
            try await restore(from: store)
        } else if let directory = configuration.dataDirectory {
            try await openStore(directory)
        }
        let server: NIOAsyncChannel<Void, Never>
        let settings = PipelineSettings(configuration: configuration, timeLimiter: timeLimiter, logger: logger, relay: self)
        do {
            server = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 1024)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                // Each channel keeps its last receive buffer for the next read; an idle member's
                // needs are a few small frames, so start at 128 bytes (NIO's default is 2 KiB per
                // connection held) and let a busy connection's buffer grow as it reads more.
                .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 128, maximum: 65_536))
                .bind(host: configuration.host, port: configuration.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try Self.configurePipeline(of: channel, settings: settings)
                    }
                }
        } catch {
            let waiters = bound.withLock { state in
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(throwing: error) }
            throw error
        }
        let address = server.channel.localAddress!
        let waiters = bound.withLock { state in
            state.address = address
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: address) }
        logger.info("relay listening", metadata: ["address": "\(address)", "tls": "\(configuration.tls != nil)"])

        do {
            try await withGracefulShutdownHandler {
                try await withThrowingDiscardingTaskGroup { group in
                    group.addTask { await self.tickLoop() }
                    // Each accepted connection's pipeline serves it on its event loop
                    // (`MemberConnection`); the accept loop only keeps the server going.
                    try await server.executeThenClose { inbound in
                        for try await _ in inbound {}
                    }
                }
            } onGracefulShutdown: {
                self.logger.info("relay shutting down")
                server.channel.close(promise: nil)
                let outboxes = self.core.withLock { core in
                    core.shuttingDown = true
                    return Array(core.outboxes.values)
                }
                for outbox in outboxes { outbox.close() }
            }
        } catch {
            await closeConnections()
            throw error
        }
        await closeConnections()
        logger.info("relay stopped")
    }

    /// Stops taking connections, flushes and closes every open one, and waits until they have closed.
    private func closeConnections() async {
        let outboxes = core.withLock { core in
            core.shuttingDown = true
            return Array(core.outboxes.values)
        }
        for outbox in outboxes { outbox.close() }
        for outbox in outboxes { await outbox.closed() }
    }

    // MARK: Connections

    /// A connection the relay took in: its id, its writer, and whether it is within the
    /// connection limit (one that is not gets a refusal and is closed).
    struct Admission {
        let id: Int
        let outbox: ChannelWriter
        let admitted: Bool
    }

    /// Takes a member connection in (on its event loop, when it becomes active): `nil` when the
    /// relay is shutting down (the caller closes it).
    func admit(_ channel: any Channel) -> Admission? {
        let latency = instruments.deliveryLatency
        let outbox = ChannelWriter(
            channel: channel, softLimit: configuration.outboxSoftLimit, hardLimit: configuration.outboxHardLimit,
            latency: { latency.recordNanoseconds($0.nanosecondsClamped) })
        let maximum = configuration.limits.maximumConnections
        let admission: Admission? = core.withLock { core in
            guard !core.shuttingDown else { return nil }
            let id = core.nextID
            core.nextID += 1
            core.outboxes[id] = outbox
            guard core.connectionCount < maximum else {
                core.refusedConnections += 1
                return Admission(id: id, outbox: outbox, admitted: false)
            }
            core.connectionCount += 1
            return Admission(id: id, outbox: outbox, admitted: true)
        }
        guard let admission else { return nil }
        logger.debug("connection opened", metadata: [
            "connection": "\(admission.id)", "peer": "\(channel.remoteAddress.map { "\($0)" } ?? "?")",
        ])
        if admission.admitted {
            lobby.admit(admission.id, outbox: outbox, now: now())
        } else {
            outbox.enqueue(Self.refusal(.tooManyConnections, "relay is at its connection limit"))
        }
        return admission
    }

    /// A connection closed: its hub forgets it (presence grace applies) and the relay stops counting it.
    func forget(_ admission: Admission, shard: SessionShard?) {
        if admission.admitted { leave(admission.id, shard: shard) }
        core.withLock { core in
            if core.outboxes.removeValue(forKey: admission.id) != nil, admission.admitted { core.connectionCount -= 1 }
        }
        logger.debug("connection closed", metadata: ["connection": "\(admission.id)"])
    }

    /// Moves connection `id` from the lobby to the shard of the session its `hello` names
    /// (created, and asked of the store, if this node does not hold the session), and lets that
    /// shard's hub answer the hello.
    ///
    /// - Returns: The shard, or `nil` when this node does not serve the session: the connection
    ///   got an error frame (`redirect` to the node that does, or `unavailable`) and is closed.
    func bind(_ id: Int, outbox: ChannelWriter, hello: Frame) async -> SessionShard? {
        lobby.detach(id)
        var attempts = 0
        while true {
            let shard = core.withLock { core in
                if let shard = core.shards[hello.session] { return shard }
                let shard = SessionShard(
                    session: hello.session, hub: SessionHub(limits: Self.shardLimits(configuration.limits)),
                    store: core.store, storage: storage, logger: logger, opened: false, now: now,
                    onFailure: { [weak self] shard in self?.retire(shard) })
                core.shards[hello.session] = shard
                return shard
            }
            let refusal: Frame
            switch await shard.opened() {
            case .serving:
                // A shard whose lease ran out (this node was paused or cut off) fails here and
                // leaves the table: the next round asks the store again.
                if shard.mayOrder(), shard.admit(id, outbox: outbox, now: now(), hello: hello) { return shard }
                // The shard retired (or failed) between the lookup and the admission: look again.
                attempts += 1
                guard attempts > 100 else { continue }
                refusal = Self.refusal(.unavailable, "the relay could not take session \(hello.session) in; try again")
            case .redirect(let address):
                refusal = Self.refusal(.redirect, address)
            case .unavailable(let reason):
                refusal = Self.refusal(.unavailable, "the relay cannot reach its session store (\(reason)); try again")
            }
            outbox.enqueue(refusal)
            return nil
        }
    }

    /// Connection `id` is gone: its hub forgets it (presence grace applies), and a shard left
    /// empty leaves the relay.
    private func leave(_ id: Int, shard: SessionShard?) {
        guard let shard else {
            lobby.detach(id)
            return
        }
        if shard.detach(id) { retire(shard) }
    }

    /// Takes an empty shard out of the table, keeping its totals.
    func retire(_ shard: SessionShard) {
        let totals = shard.state.withLock { state in
            (state.hub.counters, state.slowConsumers, state.errorsSent)
        }
        let removed = core.withLock { core -> Bool in
            guard core.shards[shard.session] === shard else { return false }
            core.shards[shard.session] = nil
            core.retired.counters += totals.0
            core.retired.slowConsumers += totals.1
            core.retired.errorsSent.merge(totals.2, uniquingKeysWith: +)
            return true
        }
        if removed { shard.released() }
    }

    /// The limits each session's hub enforces: the relay counts connections itself.
    static func shardLimits(_ limits: HubLimits) -> HubLimits {
        var limits = limits
        limits.maximumConnections = .max
        return limits
    }

    /// An error frame from the relay.
    static func refusal(_ code: RelayErrorCode, _ detail: String) -> Frame {
        Frame(type: .error, session: SessionID(high: 0, low: 0), sender: .relay,
              payload: ErrorPayload(code: code, detail: detail).encoded())
    }
}

extension Duration {
    /// Whole nanoseconds, clamped to `Int64`.
    var nanosecondsClamped: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000).overflow ? .max : product + attoseconds / 1_000_000_000
    }
}
