import Crypto
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// The network transport: one TCP (optionally TLS) connection per session member to a coplay
/// relay (`coplay serve`), speaking `docs/protocol.md`.
///
/// ```swift
/// let transport = RelayTransport(host: invite.host, port: invite.port)
/// let center = GroupActivityCenter<Movie>(transport: transport, logger: logger)
/// let session = try await center.accept(invite)
/// ```
public struct RelayTransport: SessionTransport {
    /// The relay's host.
    public var host: String
    /// The relay's TCP port.
    public var port: Int
    /// Further nodes of the same relay service (an invite's other addresses): a connection
    /// tries the node that last answered (or that a `redirect` named) first, then the others
    /// in turn.
    public var otherRelays: [RelayAddress] = []
    /// Which node to try first; shared by copies of this transport.
    private let directory = RelayDirectory()
    /// TLS settings, or `nil` for plain TCP.
    public var tls: TLSConfiguration?
    /// The SHA-256 of the relay certificate's SubjectPublicKeyInfo: when set (with ``tls``), the
    /// relay is accepted by this key alone, instead of by the trust store.
    public var relayKeyPin: [UInt8]?
    /// The largest frame accepted from the relay.
    public var maximumFrameLength: Int
    /// Event loops the connections run on.
    public var eventLoopGroup: any EventLoopGroup

    /// Creates a transport for the relay at `host:port`.
    ///
    /// - Parameters:
    ///   - host: Relay host name or address.
    ///   - port: Relay TCP port.
    ///   - tls: `nil` for plain TCP, or a client TLS configuration (e.g. trusting the relay's certificate).
    ///   - maximumFrameLength: Largest frame accepted from the relay.
    ///   - eventLoopGroup: Event loops to use (default: NIO's shared singleton).
    public init(
        host: String, port: Int, tls: TLSConfiguration? = nil,
        maximumFrameLength: Int = FrameCodec.defaultMaximumFrameLength,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.maximumFrameLength = maximumFrameLength
        self.eventLoopGroup = eventLoopGroup
    }

    /// Creates a transport for the relay an invite names: TLS when the invite says `coplays://`
    /// (verified against the system's trust store unless `tls` says otherwise, or by the invite's
    /// key pin), plain TCP otherwise.
    ///
    /// - Parameters:
    ///   - invite: the session's invite; its host, port, scheme and key pin say how to connect.
    ///   - tls: client TLS settings (e.g. a private CA's trust roots); the default for a
    ///     `coplays://` invite is `TLSConfiguration.makeClientConfiguration()`.
    public init(invite: Invite, tls: TLSConfiguration? = nil) {
        self.init(
            host: invite.host, port: invite.port,
            tls: tls ?? (invite.usesTLS ? TLSConfiguration.makeClientConfiguration() : nil))
        relayKeyPin = invite.relayKeyPin
        otherRelays = invite.otherRelays
    }

    /// The SHA-256 of a certificate's SubjectPublicKeyInfo: what an invite's `pin` holds.
    public static func keyPin(of certificate: NIOSSLCertificate) throws -> [UInt8] {
        Array(SHA256.hash(data: try certificate.extractPublicKey().toSPKIBytes()))
    }

    /// Opens a connection that runs on its own: its I/O runs in a task the connection owns until it closes.
    public func connect(logger: Logger) async throws -> any TransportConnection {
        let connection = try await makeRelayConnection(logger: logger)
        // The one task left in the transport: a connection opened with `connect` has no owner to
        // run its I/O (the benchmarks' raw members, probes, tests), so it runs it itself and ends
        // with it. Sessions use `makeConnection(logger:)` and run the I/O in their own `run()`.
        Task { await connection.run() }
        return connection
    }

    /// Opens a connection whose I/O the caller runs (``TransportConnection/run()``): a session's
    /// engine runs it beside its read loop, so no task outlives the session.
    public func makeConnection(logger: Logger) async throws -> any TransportConnection {
        try await makeRelayConnection(logger: logger)
    }

    private func makeRelayConnection(logger: Logger) async throws -> RelayClientConnection {
        let relays = directory.order([RelayAddress(host: host, port: port)] + otherRelays)
        var lastError: (any Error)?
        for relay in relays {
            do {
                return try await connect(to: relay, logger: logger)
            } catch {
                if relays.count > 1 {
                    logger.debug("relay node unreachable; trying the next", metadata: ["relay": "\(relay)", "error": "\(error)"])
                }
                lastError = error
            }
        }
        throw lastError ?? GroupSessionError.connectionClosed
    }

    private func connect(to address: RelayAddress, logger: Logger) async throws -> RelayClientConnection {
        let sslContext = try tls.map { try NIOSSLContext(configuration: $0) }
        let host = address.host
        let port = address.port
        let directory = self.directory
        let maximumFrameLength = self.maximumFrameLength
        let pin = relayKeyPin
        let pinFailure = PinFailure()
        let tlsFailure = TLSFailure()
        let channel = try await ClientBootstrap(group: eventLoopGroup)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(30))
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        let serverName = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
                        if let pin {
                            // The pinned key replaces the trust store: a self-signed relay is fine.
                            try channel.pipeline.syncOperations.addHandler(
                                try NIOSSLClientHandler(context: sslContext, serverHostname: serverName) { certificates, promise in
                                    let presented = certificates.first.flatMap { try? Self.keyPin(of: $0) }
                                    if presented == pin {
                                        promise.succeed(.certificateVerified)
                                    } else {
                                        pinFailure.set(
                                            "pinned \(Self.base64URL(pin)), presented \(presented.map(Self.base64URL) ?? "no key")")
                                        promise.succeed(.failed)
                                    }
                                })
                        } else {
                            try channel.pipeline.syncOperations.addHandler(
                                try NIOSSLClientHandler(context: sslContext, serverHostname: serverName))
                        }
                        // The handshake's own error: the session may otherwise see only its consequence
                        // ("I/O on closed channel" from a write racing the close).
                        try channel.pipeline.syncOperations.addHandler(TLSFailureRecorder(failure: tlsFailure))
                    }
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(FrameDecoder(maximumFrameLength: maximumFrameLength)))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                    return try NIOAsyncChannel<Frame, Frame>(wrappingChannelSynchronously: channel)
                }
            }
        logger.debug("connected to relay", metadata: ["relay": "\(host):\(port)"])
        let relay = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        let usesTLS = sslContext != nil
        let firstFrame = FirstFrame()
        directory.connected(address)  // before any frame can be read
        return RelayClientConnection(channel: channel, logger: logger, observe: { frame in
            // A node counts as answering once it sends a frame, not when its kernel accepts the
            // connection (a frozen node's still does).
            if firstFrame.take() { directory.answered(address) }
            // A node that does not serve the session names the one that does: try it next.
            guard frame.type == .error, let payload = try? ErrorPayload(decoding: frame.payload), payload.code == .redirect,
                let target = try? RelayAddress(parsing: payload.detail)
            else { return }
            logger.info("the relay redirected this member", metadata: ["from": "\(relay)", "to": "\(target)"])
            directory.redirected(to: target)
        }) { error in
            // A failed pin check closes the connection without an error on the channel: report it anyway.
            if let pinned = pinFailure.get() { return RelayTransportError(code: .pinMismatch, relay: relay, detail: pinned) }
            guard let cause = tlsFailure.get() ?? error else { return nil }
            return RelayTransportError.classify(cause, relay: relay, usesTLS: usesTLS, pinFailure: nil)
        }
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Base64URL.encode(bytes)
    }
}

/// The first TLS error on a connection (the handshake's), kept for the error message.
final class TLSFailure: Sendable {
    private let error = Mutex<NIOSSLError?>(nil)
    func set(_ value: NIOSSLError) { error.withLock { if $0 == nil { $0 = value } } }
    func get() -> (any Error)? { error.withLock { $0 } }
}

/// Records the TLS errors that pass it and hands them on.
final class TLSFailureRecorder: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    let failure: TLSFailure

    init(failure: TLSFailure) { self.failure = failure }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? NIOSSLError { failure.set(error) }
        context.fireErrorCaught(error)
    }
}

/// What a failed pin check saw, for the error message.
final class PinFailure: Sendable {
    private let detail = Mutex<String?>(nil)
    func set(_ text: String) { detail.withLock { $0 = text } }
    func get() -> String? { detail.withLock { $0 } }
}

/// How one side of a relay connection's I/O ended.
private enum Side: Sendable {
    case reader((any Error)?)
    case writer((any Error)?)
}

/// One client connection to the relay: a reader and a writer over an `NIOAsyncChannel`, run by
/// ``run()`` (in its owner's task, or in the task ``RelayTransport/connect(logger:)`` starts).
final class RelayClientConnection: TransportConnection {
    let inbound: AsyncThrowingStream<Frame, any Error>
    private let continuation: AsyncThrowingStream<Frame, any Error>.Continuation
    private let outbox = FrameOutbox(softLimit: 4 << 20, hardLimit: 256 << 20)
    private let channel: NIOAsyncChannel<Frame, Frame>
    private let logger: Logger
    private let observe: @Sendable (Frame) -> Void
    private let explain: @Sendable ((any Error)?) -> (any Error)?
    /// Opened once ``run()`` has returned (the socket is closed).
    private let finished = Latch()

    /// - Parameter explain: turns a transport failure (or, given `nil`, a clean close) into the
    ///   error the session reports; `nil` for a clean close that is one.
    ///   `observe` sees every frame received before the session does.
    init(
        channel: NIOAsyncChannel<Frame, Frame>, logger: Logger, observe: @escaping @Sendable (Frame) -> Void = { _ in },
        explain: @escaping @Sendable ((any Error)?) -> (any Error)? = { $0 }
    ) {
        (inbound, continuation) = AsyncThrowingStream.makeStream(of: Frame.self)
        self.channel = channel
        self.logger = logger
        self.observe = observe
        self.explain = explain
    }

    /// The connection's I/O for its lifetime: writes the outbox, reads into ``inbound``; returns
    /// once the socket is closed (``close()``, the relay closing, a failure, or cancellation).
    /// Call it once.
    func run() async {
        defer { finished.open() }
        let outbox = self.outbox
        let continuation = self.continuation
        let observe = self.observe
        do {
            try await channel.executeThenClose { inbound, outbound in
                // Each side reports how it ended instead of throwing, so that the reader's error
                // is never lost: when the reader fails (a TLS alert read as a frame length, say),
                // its `defer` closes the outbox and the writer ends normally, often first; a
                // thrown reader error would then have been dropped with the group.
                let (reader, writer) = await withTaskGroup(of: Side.self) { group -> ((any Error)?, (any Error)?) in
                    group.addTask {
                        do {
                            while let batch = await outbox.next() {
                                try await outbound.write(contentsOf: batch)
                                outbox.written(batch.reduce(0) { $0 + $1.wireLength })
                            }
                            outbound.finish()
                            return .writer(nil)
                        } catch {
                            return .writer(error)
                        }
                    }
                    group.addTask {
                        defer { outbox.close() }
                        do {
                            for try await frame in inbound {
                                observe(frame)
                                // A `presence` frame is read as the `joined` / `left` frames it carries.
                                for frame in try PresencePayload.frames(of: frame) { continuation.yield(frame) }
                            }
                            return .reader(nil)
                        } catch is CancellationError {
                            return .reader(nil)
                        } catch {
                            return .reader(error)
                        }
                    }
                    var reader: (any Error)?? = nil
                    var writer: (any Error)?? = nil
                    while let side = await group.next() {
                        switch side {
                        case .writer(let error):
                            writer = .some(error)
                            // Closed here and flushed (or the write failed): stop reading so the
                            // socket is closed now, not whenever the relay closes its side (it
                            // may never, on a dead path). A reader that already failed has its
                            // error recorded.
                            if reader == nil { group.cancelAll() }
                        case .reader(let error):
                            reader = .some(error)
                        }
                    }
                    return (reader ?? nil, writer ?? nil)
                }
                if let error = reader ?? writer { throw error }
            }
            continuation.finish(throwing: explain(nil))
        } catch {
            outbox.close()
            logger.debug("relay connection failed", metadata: ["error": "\(error)"])
            continuation.finish(throwing: explain(error) ?? error)
        }
    }

    func send(_ frame: Frame) throws {
        switch outbox.enqueue(frame) {
        case .queued, .dropped: return
        case .overflow: throw GroupSessionError.queueFull
        case .closed: throw GroupSessionError.connectionClosed
        }
    }

    /// Closes the connection once the frames already queued are written.
    func close() {
        outbox.close()
    }

    func closeAndWait(timeout: Duration) async {
        outbox.close()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.finished.wait() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}

/// Which relay node a transport tries first: the one a `redirect` named, else the one that last
/// answered (sent a frame), then the rest in the invite's order; nodes whose last connection was
/// accepted but never answered come last (a node frozen with SIGSTOP, whose kernel still accepts
/// connections, would otherwise be tried first again and again).
final class RelayDirectory: Sendable {
    private struct State {
        var redirect: RelayAddress?
        var last: RelayAddress?
        /// Connected to, no frame received on that connection yet.
        var silent: Set<RelayAddress> = []
    }

    private let state = Mutex(State())

    func order(_ relays: [RelayAddress]) -> [RelayAddress] {
        let (redirect, last, silent) = state.withLock { state in
            defer { state.redirect = nil }
            return (state.redirect, state.last, state.silent)
        }
        var ordered: [RelayAddress] = []
        if let redirect { ordered.append(redirect) }
        if let last, relays.contains(last) {
            // The invite's order, rotated to start at the node that last answered.
            let start = relays.firstIndex(of: last)!
            ordered += relays[start...] + relays[..<start]
        } else {
            ordered += relays
        }
        var seen: Set<RelayAddress> = []
        let unique = ordered.filter { seen.insert($0).inserted }
        return unique.filter { !silent.contains($0) } + unique.filter { silent.contains($0) }
    }

    /// A connection to `relay` was accepted: silent until its first frame.
    func connected(_ relay: RelayAddress) { state.withLock { _ = $0.silent.insert(relay) } }

    /// `relay` sent a frame on its connection.
    func answered(_ relay: RelayAddress) {
        state.withLock { state in
            state.last = relay
            state.silent.remove(relay)
        }
    }

    func redirected(to relay: RelayAddress) { state.withLock { $0.redirect = relay } }
}

/// True exactly once: the first frame of a connection.
private final class FirstFrame: Sendable {
    private let seen = Atomic<Bool>(false)

    func take() -> Bool { !seen.exchange(true, ordering: .relaxed) }
}
