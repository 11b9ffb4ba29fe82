import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Forwards the bytes read on one TCP connection to its peer connection, chunked and impaired by one
/// link direction in stream mode (order preserved). When the connection closes, the peer is closed
/// after the last scheduled chunk has been written.
final class TCPForwardHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var link: LinkImpairment
    private let upstream: Bool
    private let chunkSize: Int
    private let statistics: NIOLockedValueBox<ImpairmentStatistics>
    /// The connection the bytes go to; nil until the outbound connection is up.
    var peer: (any Channel)?

    init(
        link: LinkImpairment, upstream: Bool, chunkSize: Int, statistics: NIOLockedValueBox<ImpairmentStatistics>,
        peer: (any Channel)?
    ) {
        self.link = link
        self.upstream = upstream
        self.chunkSize = chunkSize
        self.statistics = statistics
        self.peer = peer
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard let peer else { return }
        let arrival = NIODeadline.now().uptimeNanoseconds
        var delta = LinkCounters()
        while buffer.readableBytes > 0, let chunk = buffer.readSlice(length: min(chunkSize, buffer.readableBytes)) {
            let before = link.counters
            guard case .deliver(let at) = link.schedule(size: chunk.readableBytes, arrival: arrival) else { continue }
            delta = delta + LinkCounters.difference(link.counters, before)
            context.eventLoop.scheduleTask(deadline: .uptimeNanoseconds(at)) {
                peer.writeAndFlush(chunk, promise: nil)
            }
        }
        let upstream = self.upstream
        statistics.withLockedValue {
            if upstream { $0.tcpUpstream = $0.tcpUpstream + delta } else { $0.tcpDownstream = $0.tcpDownstream + delta }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        closePeerAfterPendingWrites(eventLoop: context.eventLoop)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func closePeerAfterPendingWrites(eventLoop: any EventLoop) {
        guard let peer else { return }
        let last = max(link.latestDelivery, NIODeadline.now().uptimeNanoseconds) + 1
        eventLoop.scheduleTask(deadline: .uptimeNanoseconds(last)) {
            peer.close(promise: nil)
        }
    }
}

/// On an accepted connection: connects to the target, then starts reading and forwarding both ways.
final class TCPAcceptHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let configuration: ImpairmentConfiguration
    private let target: SocketAddress
    private let connection: UInt64
    private let statistics: NIOLockedValueBox<ImpairmentStatistics>
    private let channels: OpenChannels
    private let forward: TCPForwardHandler
    private let logger: Logger

    init(
        configuration: ImpairmentConfiguration, target: SocketAddress, connection: UInt64,
        statistics: NIOLockedValueBox<ImpairmentStatistics>, channels: OpenChannels, forward: TCPForwardHandler,
        logger: Logger
    ) {
        self.configuration = configuration
        self.target = target
        self.connection = connection
        self.statistics = statistics
        self.channels = channels
        self.forward = forward
        self.logger = logger
    }

    func channelActive(context: ChannelHandlerContext) {
        let inbound = context.channel
        let downstream = LinkImpairment(
            profile: configuration.downstream, mode: .stream,
            seed: configuration.seed(upstream: false, stream: connection))
        let chunkSize = configuration.chunkSize
        let statistics = self.statistics
        let connect = ClientBootstrap(group: context.eventLoop)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        TCPForwardHandler(
                            link: downstream, upstream: false, chunkSize: chunkSize, statistics: statistics,
                            peer: inbound))
                }
            }
            .connect(to: target)
        let forward = self.forward
        let channels = self.channels
        let logger = self.logger
        connect.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let outbound):
                channels.insert(outbound)
                forward.peer = outbound
                inbound.setOption(.autoRead, value: true).whenComplete { _ in inbound.read() }
            case .failure(let error):
                logger.info("impairment proxy: cannot reach the target", metadata: ["error": "\(error)"])
                inbound.close(promise: nil)
            }
        }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
    }
}

extension LinkCounters {
    static func difference(_ a: LinkCounters, _ b: LinkCounters) -> LinkCounters {
        var result = LinkCounters()
        result.forwarded = a.forwarded - b.forwarded
        result.bytes = a.bytes - b.bytes
        result.dropped = a.dropped - b.dropped
        result.penalized = a.penalized - b.penalized
        return result
    }
}
