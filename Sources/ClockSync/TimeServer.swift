import Logging
import NIOCore
import NIOPosix
import Synchronization

/// An NTPv4 server over UDP (SwiftNIO): serves this process's monotonic clock, anchored to UTC once at
/// start, to NTP clients (chrony, ntpd, ``TimeClient``).
///
/// The timescale is a ``LocalTimescale`` over the injected clock plus an optional fixed offset, so it
/// never steps, whatever happens to the system clock. The protocol logic is ``TimeServerCore``; this
/// type adds the socket. Timestamps are taken on the channel's event loop: the receive timestamp is the
/// first thing done when NIO hands over a datagram, and the transmit timestamp is written into the
/// already-encoded response just before the write. On Linux the receive timestamp is refined with the
/// kernel's arrival time of the datagram (`SIOCGSTAMPNS`, see ``Configuration/kernelTimestamps``), which
/// removes the event-loop wake-up and NIO read path from the measured asymmetry.
///
/// `run()` binds and serves until ``shutdown()`` is called or the task is cancelled, so the type fits
/// ServiceLifecycle (`run()` is its `Service` requirement; call ``shutdown()`` on graceful shutdown).
///
/// ```swift
/// let server = TimeServer(configuration: .init(host: "127.0.0.1", port: 12123), logger: logger)
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { try await server.run() }
///     print("serving on", try await server.boundAddress())
///     // ... later:
///     server.shutdown()
/// }
/// ```
public final class TimeServer<C: Clock>: Sendable where C.Duration == Duration {
    /// Where to listen and what to serve.
    public struct Configuration: Sendable {
        /// The address to bind.
        public var host: String
        /// The UDP port (0 picks a free one; see ``TimeServer/boundAddress()``).
        public var port: Int
        /// A fixed offset added to the served time, in seconds (for tests and benchmarks).
        public var offset: Double
        /// The protocol settings (stratum, rate limit, ...).
        public var core: TimeServerCore.Configuration
        /// The event loops to run on (the channel uses one of them, i.e. one core).
        public var eventLoopGroup: any EventLoopGroup
        /// Whether to take receive timestamps from the kernel (Linux `SIOCGSTAMPNS`) when available.
        public var kernelTimestamps: Bool = true

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - host: The address to bind.
        ///   - port: The UDP port (0 for any free one).
        ///   - offset: A fixed offset added to the served time, in seconds.
        ///   - core: The protocol settings.
        ///   - eventLoopGroup: The event loops to use; NIO's shared singleton by default.
        public init(
            host: String = "127.0.0.1",
            port: Int = 123,
            offset: Double = 0,
            core: TimeServerCore.Configuration = .init(),
            eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
        ) {
            self.host = host
            self.port = port
            self.offset = offset
            self.core = core
            self.eventLoopGroup = eventLoopGroup
        }
    }

    /// Counters of what the server did.
    public typealias Statistics = TimeServerStatistics

    private enum Lifecycle {
        case idle
        case running(any Channel)
        case shutDown
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The served timescale before the fixed offset.
    public let timescale: LocalTimescale<C>
    private let logger: Logger
    private let lifecycle = Mutex<Lifecycle>(.idle)
    private let address: EventLoopPromise<SocketAddress>
    private let addressSettled = Atomic<Bool>(false)
    let counters = TimeServerCounters()

    /// Creates a server over `clock`; nothing happens until ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and what to serve.
    ///   - clock: The monotonic clock the timescale follows.
    ///   - logger: Where lifecycle events are logged (info and below).
    public convenience init(configuration: Configuration, clock: C, logger: Logger) {
        self.init(configuration: configuration, timescale: LocalTimescale(clock: clock), logger: logger)
    }

    /// Creates a server on an existing timescale, so that it serves the same clock as another
    /// service of the process (the relay answers in-band time requests on its timescale).
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and what to serve.
    ///   - timescale: The timescale to serve (plus the configuration's fixed offset).
    ///   - logger: Where lifecycle events are logged (info and below).
    public init(configuration: Configuration, timescale: LocalTimescale<C>, logger: Logger) {
        self.configuration = configuration
        self.timescale = timescale
        self.logger = logger
        self.address = configuration.eventLoopGroup.any().makePromise(of: SocketAddress.self)
    }

    deinit {
        // A server that never ran must not leak its unfulfilled promise (NIO traps on that in debug).
        settleAddress(.failure(CancellationError()))
    }

    /// Completes the bound-address promise once (later calls do nothing, so no task is scheduled on
    /// an event loop that may have shut down since).
    private func settleAddress(_ result: Result<SocketAddress, any Error>) {
        guard !addressSettled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        address.completeWith(result)
    }

    /// The served reference time now (the timescale plus the fixed offset).
    public func now() -> NTPTimestamp {
        timescale.now().advanced(bySeconds: configuration.offset)
    }

    /// What the server has done so far.
    public var statistics: Statistics { counters.snapshot() }

    /// The address the server is bound to, once ``run()`` has bound it.
    ///
    /// - Throws: The bind error if binding failed, or if the server was shut down first.
    public func boundAddress() async throws -> SocketAddress {
        try await address.futureResult.get()
    }

    /// Binds the socket and serves until ``shutdown()`` or cancellation.
    ///
    /// - Throws: When the socket cannot be bound.
    public func run() async throws {
        let timescale = self.timescale
        let offset = configuration.offset
        let core = configuration.core
        let counters = self.counters
        let logger = self.logger
        let channel: any Channel
        do {
            let bindAddress = try SocketAddress.makeAddressResolvingHost(configuration.host, port: configuration.port)
            let fd = try KernelTimestamps.makeBoundSocket(bindAddress)
            let kernel = configuration.kernelTimestamps
            channel = try await DatagramBootstrap(group: configuration.eventLoopGroup)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            TimeServerHandler(core: core, timescale: timescale, offset: offset,
                                              socket: kernel ? fd : nil, counters: counters, logger: logger)
                        )
                    }
                }
                .withBoundSocket(fd)
                .get()
        } catch {
            settleAddress(.failure(error))
            throw error
        }
        let stopNow = lifecycle.withLock { state -> Bool in
            if case .shutDown = state { return true }
            state = .running(channel)
            return false
        }
        if stopNow {
            settleAddress(.failure(CancellationError()))
            try? await channel.close()
            return
        }
        if let local = channel.localAddress {
            settleAddress(.success(local))
        } else {
            settleAddress(.failure(ChannelError.unknownLocalAddress))
        }
        logger.info("time server listening", metadata: [
            "address": "\(channel.localAddress.map { "\($0)" } ?? "?")", "offset": "\(offset)",
            "anchorUncertainty": "\(timescale.anchorUncertainty)",
        ])
        await withTaskCancellationHandler {
            try? await channel.closeFuture.get()
        } onCancel: {
            self.shutdown()
        }
        logger.info("time server stopped", metadata: ["answered": "\(counters.snapshot().answered)"])
    }

    /// Stops the server: closes the socket so ``run()`` returns. Safe to call at any time, repeatedly.
    public func shutdown() {
        let channel: (any Channel)? = lifecycle.withLock { state in
            defer { state = .shutDown }
            if case .running(let channel) = state { return channel }
            return nil
        }
        channel?.close(promise: nil)
    }
}

extension TimeServer where C == ContinuousClock {
    /// Creates a server over the system's continuous (monotonic) clock.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen and what to serve.
    ///   - logger: Where lifecycle events are logged.
    public convenience init(configuration: Configuration, logger: Logger) {
        self.init(configuration: configuration, clock: ContinuousClock(), logger: logger)
    }
}

/// Atomic counters shared between the event-loop handler and readers.
final class TimeServerCounters: Sendable {
    let answered = Atomic<Int>(0)
    let kissesSent = Atomic<Int>(0)
    let invalid = Atomic<Int>(0)
    let rateLimited = Atomic<Int>(0)

    func snapshot() -> TimeServerStatistics {
        .init(
            answered: answered.load(ordering: .relaxed),
            kissesSent: kissesSent.load(ordering: .relaxed),
            invalid: invalid.load(ordering: .relaxed),
            rateLimited: rateLimited.load(ordering: .relaxed)
        )
    }
}
