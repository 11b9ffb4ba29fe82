import Logging
import NIOCore

/// The channel handler that stamps, answers and sends NTP datagrams on the event loop.
///
/// It lives on one event loop and is never shared, so it needs no locking.
final class TimeServerHandler<C: Clock>: ChannelInboundHandler where C.Duration == Duration {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private var core: TimeServerCore
    private let timescale: LocalTimescale<C>
    private let offset: Double
    private let socket: NIOBSDSocket.Handle?
    private let counters: TimeServerCounters
    private let logger: Logger

    init(core: TimeServerCore.Configuration, timescale: LocalTimescale<C>, offset: Double,
         socket: NIOBSDSocket.Handle?, counters: TimeServerCounters, logger: Logger) {
        self.core = TimeServerCore(configuration: core)
        self.timescale = timescale
        self.offset = offset
        self.socket = socket
        self.counters = counters
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // T2 first: every microsecond spent before this line is asymmetric error.
        var received = timescale.now()
        if let socket, let latency = KernelTimestamps.receiveLatency(socket) {
            // The kernel saw the datagram `latency` seconds ago (NIO reads one datagram per recvmsg
            // and hands it over before reading the next, so this stamp belongs to this datagram).
            received = received.advanced(bySeconds: -latency)
        }
        let envelope = unwrapInboundIn(data)
        let action = core.handle(
            datagram: envelope.data.readableBytesView,
            from: ClientKey(envelope.remoteAddress),
            receivedAt: received.advanced(bySeconds: offset),
            now: received.seconds(since: timescale.anchorTime)
        )
        switch action {
        case .respond(let response):
            // Counted before sending, so a client that has its answer also sees it counted.
            if response.stratum == 0 {
                counters.kissesSent.add(1, ordering: .relaxed)
            } else {
                counters.answered.add(1, ordering: .relaxed)
            }
            var bytes = response.encoded()
            let offset = self.offset
            let timescale = self.timescale
            // T3 last: stamp the encoded packet immediately before it is handed to the kernel.
            func stamp(_ bytes: inout [UInt8]) {
                let transmit = timescale.now().advanced(bySeconds: offset).rawValue
                for i in 0..<8 {
                    bytes[40 + i] = UInt8(truncatingIfNeeded: transmit >> UInt64(56 - 8 * i))
                }
            }
            if let socket, KernelTimestamps.send(socket, to: envelope.remoteAddress, bytes: &bytes, stamp: stamp) {
                // Sent directly (see KernelTimestamps.send).
            } else {
                stamp(&bytes)
                var buffer = context.channel.allocator.buffer(capacity: NTPPacket.headerSize)
                buffer.writeBytes(bytes)
                context.writeAndFlush(
                    wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: buffer)),
                    promise: nil
                )
            }
        case .drop(.invalid):
            counters.invalid.add(1, ordering: .relaxed)
        case .drop(.rateLimited):
            counters.rateLimited.add(1, ordering: .relaxed)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A UDP error (e.g. ICMP port unreachable from one client) must not stop the server.
        logger.debug("time server socket error ignored", metadata: ["error": "\(error)"])
    }
}
