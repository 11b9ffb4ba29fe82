import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ServiceLifecycle

/// A user-space network impairment proxy on loopback: it forwards UDP datagrams and TCP streams from a
/// listening port to a target, adding per-direction delay, jitter, loss and a bandwidth cap.
///
/// It stands in for `tc netem`, which needs privileges this project's machines do not have. Every
/// packet is scheduled on one NIO event loop at a precise deadline (`scheduleTask(deadline:)`, backed
/// by a timerfd), so the added delay is accurate to the event loop's wake-up latency, typically tens of
/// microseconds. See ``LinkImpairment`` for the per-packet rules and ``ImpairmentProfile`` for what loss
/// means on TCP.
///
/// The proxy is a ServiceLifecycle `Service`: ``run()`` starts it (if ``start()`` was not called) and
/// serves until graceful shutdown or cancellation, then closes every socket.
///
/// ```swift
/// let proxy = ImpairmentProxy(
///     configuration: .init(targetPort: relayPort, upstream: .init(delay: 0.02, jitter: 0.01),
///                          downstream: .init(delay: 0.02, jitter: 0.01)),
///     logger: logger)
/// let port = try await proxy.start()   // clients connect to 127.0.0.1:port
/// // ...
/// try await proxy.stop()
/// ```
package final class ImpairmentProxy: Service, Sendable {
    private struct State {
        var started = false
        var stopped = false
        var port: Int?
        var listeners: [any Channel] = []
    }

    /// The configuration.
    package let configuration: ImpairmentConfiguration
    private let eventLoop: any EventLoop
    private let logger: Logger
    private let state = NIOLockedValueBox(State())
    private let statisticsBox = NIOLockedValueBox(ImpairmentStatistics())
    private let channels = OpenChannels()
    private let connections = NIOLockedValueBox<UInt64>(0)

    /// Creates a proxy; nothing is bound until ``start()`` or ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: ports and impairments.
    ///   - eventLoopGroup: the proxy uses one event loop of it for everything.
    ///   - logger: logs at info and below.
    package init(
        configuration: ImpairmentConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.configuration = configuration
        self.eventLoop = eventLoopGroup.next()
        self.logger = logger
    }

    /// The port the proxy listens on, once started.
    package var port: Int? { state.withLockedValue { $0.port } }

    /// What the proxy has forwarded so far.
    package var statistics: ImpairmentStatistics { statisticsBox.withLockedValue { $0 } }

    /// Binds the listening sockets and starts forwarding.
    ///
    /// - Returns: the listening port (UDP and TCP share it when both are forwarded).
    /// - Throws: ``NetworkEmulationError`` for a bad configuration or a second start; NIO errors when a
    ///   port cannot be bound.
    @discardableResult
    package func start() async throws -> Int {
        try configuration.validate()
        try state.withLockedValue { state in
            guard !state.started else { throw NetworkEmulationError.alreadyStarted }
            state.started = true
        }
        let target = try SocketAddress.makeAddressResolvingHost(configuration.targetHost, port: configuration.targetPort)
        var listeners: [any Channel] = []
        do {
            var port = configuration.listenPort
            // Port 0 with both transports: TCP picks the port and UDP takes the same number, which
            // another socket may already hold for UDP (seen when tests ran in parallel). Then both
            // are given up and another port is tried.
            var attemptsLeft = configuration.listenPort == 0 && configuration.transports == .both ? 20 : 1
            while true {
                attemptsLeft -= 1
                port = configuration.listenPort
                if configuration.transports.contains(.tcp) {
                    let server = try await bindTCP(port: port, target: target)
                    listeners.append(server)
                    port = server.localAddress?.port ?? port
                }
                if configuration.transports.contains(.udp) {
                    do {
                        let udp = try await bindUDP(port: port, target: target)
                        listeners.append(udp)
                        port = udp.localAddress?.port ?? port
                    } catch let error as IOError where error.errnoCode == EADDRINUSE && attemptsLeft > 0 {
                        for listener in listeners { try? await listener.close() }
                        listeners = []
                        continue
                    }
                }
                break
            }
            let boundPort = port
            let stored = listeners
            state.withLockedValue {
                $0.port = boundPort
                $0.listeners = stored
            }
            logger.info(
                "impairment proxy listening",
                metadata: [
                    "port": "\(boundPort)", "target": "\(configuration.targetHost):\(configuration.targetPort)",
                ])
            return boundPort
        } catch {
            for listener in listeners { try? await listener.close() }
            throw error
        }
    }

    /// Closes the listening sockets and every forwarded connection. Packets still scheduled are lost.
    package func stop() async throws {
        let listeners = state.withLockedValue { state -> [any Channel] in
            guard !state.stopped else { return [] }
            state.stopped = true
            return state.listeners
        }
        for listener in listeners { try? await listener.close() }
        await channels.closeAll()
    }

    /// Starts the proxy if needed and serves until graceful shutdown or cancellation; then stops it.
    package func run() async throws {
        if state.withLockedValue({ !$0.started }) { try await start() }
        try? await gracefulShutdown()
        try await stop()
    }

    private func bindTCP(port: Int, target: SocketAddress) async throws -> any Channel {
        let configuration = self.configuration
        let statistics = statisticsBox
        let channels = self.channels
        let connections = self.connections
        let logger = self.logger
        return try await ServerBootstrap(group: eventLoop)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let connection = connections.withLockedValue { value -> UInt64 in
                    value += 1
                    return value
                }
                statistics.withLockedValue { $0.tcpConnections += 1 }
                channels.insert(channel)
                return channel.eventLoop.makeCompletedFuture {
                    let forward = TCPForwardHandler(
                        link: LinkImpairment(
                            profile: configuration.upstream, mode: .stream,
                            seed: configuration.seed(upstream: true, stream: connection)),
                        upstream: true, chunkSize: configuration.chunkSize, statistics: statistics, peer: nil)
                    try channel.pipeline.syncOperations.addHandler(
                        TCPAcceptHandler(
                            configuration: configuration, target: target, connection: connection,
                            statistics: statistics, channels: channels, forward: forward, logger: logger))
                    try channel.pipeline.syncOperations.addHandler(forward)
                }
            }
            .bind(host: configuration.listenHost, port: port)
            .get()
    }

    private func bindUDP(port: Int, target: SocketAddress) async throws -> any Channel {
        let configuration = self.configuration
        let statistics = statisticsBox
        let channels = self.channels
        let logger = self.logger
        let eventLoop = self.eventLoop
        return try await DatagramBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let links = UDPLinkState(
                        upstream: LinkImpairment(
                            profile: configuration.upstream, mode: .datagram,
                            seed: configuration.seed(upstream: true, stream: 0)),
                        downstream: LinkImpairment(
                            profile: configuration.downstream, mode: .datagram,
                            seed: configuration.seed(upstream: false, stream: 0)))
                    try channel.pipeline.syncOperations.addHandler(
                        UDPListenHandler(
                            state: NIOLoopBound(links, eventLoop: channel.eventLoop), target: target,
                            maxClients: configuration.maxUDPClients, statistics: statistics, channels: channels,
                            logger: logger))
                }
            }
            .bind(host: configuration.listenHost, port: port)
            .get()
    }
}
