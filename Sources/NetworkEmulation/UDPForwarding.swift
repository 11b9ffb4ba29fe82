import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// One UDP client of the proxy: its own socket towards the target, so replies find their way back.
/// Lives on the proxy's event loop only.
final class UDPClientSession {
    var channel: (any Channel)?
    var pending: [ByteBuffer] = []
    var closed = false
}

/// The mutable state shared by the UDP handlers, confined to the proxy's event loop.
final class UDPLinkState {
    var upstream: LinkImpairment
    var downstream: LinkImpairment
    var sessions: [SocketAddress: UDPClientSession] = [:]

    init(upstream: LinkImpairment, downstream: LinkImpairment) {
        self.upstream = upstream
        self.downstream = downstream
    }
}

/// Receives datagrams from clients on the listening socket, impairs them, and forwards each to the
/// target through the client's own session socket.
final class UDPListenHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let state: NIOLoopBound<UDPLinkState>
    private let target: SocketAddress
    private let maxClients: Int
    private let statistics: NIOLockedValueBox<ImpairmentStatistics>
    private let channels: OpenChannels
    private let logger: Logger

    init(
        state: NIOLoopBound<UDPLinkState>, target: SocketAddress, maxClients: Int,
        statistics: NIOLockedValueBox<ImpairmentStatistics>, channels: OpenChannels, logger: Logger
    ) {
        self.state = state
        self.target = target
        self.maxClients = maxClients
        self.statistics = statistics
        self.channels = channels
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let arrival = NIODeadline.now().uptimeNanoseconds
        let links = state.value
        let session: UDPClientSession
        if let existing = links.sessions[envelope.remoteAddress] {
            session = existing
        } else {
            guard links.sessions.count < maxClients else {
                statistics.withLockedValue { $0.udpRejected += 1 }
                return
            }
            session = openSession(for: envelope.remoteAddress, listener: context.channel)
        }
        let decision = links.upstream.schedule(size: envelope.data.readableBytes, arrival: arrival)
        statistics.withLockedValue { $0.udpUpstream = links.upstream.counters }
        guard case .deliver(let at) = decision else { return }
        let payload = envelope.data
        let target = self.target
        let boundSession = NIOLoopBound(session, eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(deadline: .uptimeNanoseconds(at)) {
            let session = boundSession.value
            guard !session.closed else { return }
            if let channel = session.channel {
                channel.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: payload), promise: nil)
            } else {
                session.pending.append(payload)
            }
        }
    }

    private func openSession(for client: SocketAddress, listener: any Channel) -> UDPClientSession {
        let session = UDPClientSession()
        let links = state.value
        links.sessions[client] = session
        statistics.withLockedValue { $0.udpClients += 1 }
        let eventLoop = listener.eventLoop
        let boundState = state
        let statistics = self.statistics
        let target = self.target
        let logger = self.logger
        let channels = self.channels
        let bound = DatagramBootstrap(group: eventLoop)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        UDPReturnHandler(state: boundState, client: client, listener: listener, statistics: statistics))
                }
            }
            .bind(host: target.protocol == .inet6 ? "::1" : "127.0.0.1", port: 0)
        bound.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let channel):
                channels.insert(channel)
                session.channel = channel
                for payload in session.pending {
                    channel.write(AddressedEnvelope(remoteAddress: target, data: payload), promise: nil)
                }
                session.pending.removeAll()
                channel.flush()
            case .failure(let error):
                logger.info("impairment proxy: cannot open a UDP session socket", metadata: ["error": "\(error)"])
                session.closed = true
                boundState.value.sessions[client] = nil
            }
        }
        return session
    }
}

/// Receives the target's replies on a client's session socket, impairs them, and sends each to the
/// client from the listening socket.
final class UDPReturnHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let state: NIOLoopBound<UDPLinkState>
    private let client: SocketAddress
    private let listener: any Channel
    private let statistics: NIOLockedValueBox<ImpairmentStatistics>

    init(
        state: NIOLoopBound<UDPLinkState>, client: SocketAddress, listener: any Channel,
        statistics: NIOLockedValueBox<ImpairmentStatistics>
    ) {
        self.state = state
        self.client = client
        self.listener = listener
        self.statistics = statistics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        let arrival = NIODeadline.now().uptimeNanoseconds
        let links = state.value
        let decision = links.downstream.schedule(size: envelope.data.readableBytes, arrival: arrival)
        statistics.withLockedValue { $0.udpDownstream = links.downstream.counters }
        guard case .deliver(let at) = decision else { return }
        let reply = AddressedEnvelope(remoteAddress: client, data: envelope.data)
        let listener = self.listener
        context.eventLoop.scheduleTask(deadline: .uptimeNanoseconds(at)) {
            listener.writeAndFlush(reply, promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP port unreachable and the like: a datagram link just loses the packet.
    }
}
