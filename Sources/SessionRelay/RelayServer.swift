import GroupSessions
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// The coplay relay: accepts member connections over TCP (optionally TLS) or a WebSocket on the
/// same port, routes sealed frames between the members of each session through a ``SessionHub``,
/// and never sees a secret or a plaintext payload. The same port serves the browser client's
/// files over HTTP and answers in-band time requests (see `RelayServer+Pipeline.swift`).
///
/// Each connection runs as a child task of a discarding task group: one reader feeding the
/// hub, one writer draining the connection's ``FrameOutbox``. The hub and all outboxes sit
/// behind one lock so frames are queued in the session's stamped order. A connection that
/// fails, floods or stops reading affects only itself. On graceful shutdown (SIGTERM through
/// ServiceLifecycle) the relay stops accepting, flushes and closes every connection.
///
/// ```swift
/// let relay = RelayServer(configuration: RelayConfiguration(port: 7000), logger: logger)
/// let group = ServiceGroup(services: [relay], gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public final class RelayServer: Service, Sendable {
    struct Core: ~Copyable {
        var hub: SessionHub<Int>
        var outboxes: [Int: FrameOutbox] = [:]
        var nextID = 1
        var slowConsumers: UInt64 = 0
        var errorsSent: [RelayErrorCode: UInt64] = [:]
        var shuttingDown = false
        var store: SessionStore?
    }

    /// The configuration in force.
    public let configuration: RelayConfiguration
    let logger: Logger
    let core: Mutex<Core>
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
        core = Mutex(
            Core(hub: SessionHub(limits: configuration.limits, journal: Self.journalStorage(for: configuration, logger: logger))))
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

    /// A snapshot of the relay's counters.
    public var metrics: RelayMetrics {
        core.withLock { core in
            RelayMetrics(
                connections: core.hub.connectionCount, sessions: core.hub.sessionCount,
                participants: core.hub.participantCount, counters: core.hub.counters, slowConsumers: core.slowConsumers,
                errorsSent: core.errorsSent)
        }
    }

    /// Brings the swift-metrics instruments up to date (the metrics endpoint calls it before each
    /// scrape; the relay also does every second).
    public func updateMetrics() {
        let snapshot = metrics
        let journalBytes = core.withLock { $0.hub.journalStorage }.totalStoredBytes()
        instruments.update(from: snapshot, journalBytes: journalBytes)
    }

    /// Listens and serves until cancelled or gracefully shut down.
    public func run() async throws {
        let configuration = self.configuration
        if let directory = configuration.dataDirectory { try openStore(directory) }
        let server: NIOAsyncChannel<PendingConnection, Never>
        let settings = PipelineSettings(configuration: configuration, timeLimiter: timeLimiter, logger: logger)
        do {
            server = try await ServerBootstrap(group: eventLoopGroup)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 1024)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
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

        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await self.tickLoop() }
                try await server.executeThenClose { inbound in
                    for try await pending in inbound {
                        group.addTask {
                            // HTTP connections that only fetch the page end here with nil.
                            if let connection = try? await pending.get() { await self.handle(connection) }
                        }
                    }
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
        logger.info("relay stopped")
    }

    // MARK: Connections

    private func handle(_ channel: NIOAsyncChannel<Frame, Frame>) async {
        let outbox = FrameOutbox(softLimit: configuration.outboxSoftLimit, hardLimit: configuration.outboxHardLimit)
        let peer = channel.channel.remoteAddress.map { "\($0)" } ?? "?"
        let id: Int? = core.withLock { core in
            guard !core.shuttingDown else { return nil }
            let id = core.nextID
            core.nextID += 1
            core.outboxes[id] = outbox
            apply(core.hub.connect(id, now: now()), to: &core)
            return id
        }
        guard let id else {
            try? await channel.executeThenClose { _, _ in }
            return
        }
        let logger = {
            var logger = self.logger
            logger[metadataKey: "connection"] = "\(id)"
            return logger
        }()
        logger.debug("connection opened", metadata: ["peer": "\(peer)"])
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        let latency = self.instruments.deliveryLatency
                        while let batch = await outbox.next() {
                            try await outbound.write(contentsOf: batch)
                            if let queued = outbox.lastBatchQueuedAt {
                                latency.recordNanoseconds(queued.duration(to: .now).nanosecondsClamped)
                            }
                            outbox.written(batch.reduce(0) { $0 + $1.wireLength })
                        }
                        outbound.finish()
                        return true
                    }
                    group.addTask {
                        do {
                            for try await frame in inbound {
                                self.core.withLock { core in
                                    self.apply(core.hub.receive(frame, from: id, now: self.now()), to: &core)
                                }
                            }
                        } catch let error as FrameDecodingError {
                            logger.info("closing a connection that sent undecodable bytes", metadata: ["error": "\(error)"])
                            self.core.withLock { core in
                                self.apply(core.hub.decodingFailed(error, on: id), to: &core)
                            }
                        }
                        self.core.withLock { core in self.apply(core.hub.disconnect(id), to: &core) }
                        outbox.close()
                        return false
                    }
                    if try await group.next() == true {
                        group.cancelAll()  // The hub closed this connection: stop reading.
                    } else {
                        _ = try await group.next()  // Peer is done: let the writer flush.
                    }
                }
            }
        } catch {
            logger.debug("connection failed", metadata: ["error": "\(error)"])
        }
        outbox.close()
        core.withLock { core in
            apply(core.hub.disconnect(id), to: &core)
            core.outboxes[id] = nil
        }
        logger.debug("connection closed")
    }

    /// Carries out hub actions; called with the lock held so queues follow the hub's order.
    /// Store events are written first, so no `ack` leaves before its frame is on disk.
    func apply(_ actions: [HubAction<Int>], to core: inout Core) {
        persist(&core)
        defer { persist(&core) }
        var pending = actions[...]
        while let action = pending.popFirst() {
            switch action {
            case .send(let id, let frame, let droppable):
                guard let outbox = core.outboxes[id] else { continue }
                if frame.type == .error, let code = frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt16.self) {
                    core.errorsSent[RelayErrorCode(rawValue: code), default: 0] += 1
                }
                switch outbox.enqueue(frame, droppable: droppable) {
                case .queued, .closed:
                    break
                case .dropped:
                    core.hub.recordDropped(1)
                case .overflow:
                    core.slowConsumers += 1
                    logger.info("closing a slow consumer", metadata: ["connection": "\(id)"])
                    outbox.close()
                    pending.append(contentsOf: core.hub.disconnect(id))
                }
            case .close(let id):
                core.outboxes[id]?.close()
            }
        }
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
