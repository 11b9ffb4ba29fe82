import NIOCore
import NIOPosix

/// Stamps every datagram's sequence number (first 8 bytes) on receipt and echoes it to its sender.
final class UDPStampingEcho: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>
    let stamps: Stamps
    let echo: Bool

    init(stamps: Stamps, echo: Bool) {
        self.stamps = stamps
        self.echo = echo
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = NIODeadline.now().uptimeNanoseconds
        let envelope = unwrapInboundIn(data)
        guard let sequence = envelope.data.getInteger(at: envelope.data.readerIndex, as: UInt64.self) else { return }
        stamps.record(sequence, at: now)
        if echo {
            context.writeAndFlush(wrapOutboundOut(envelope), promise: nil)
        }
    }
}

/// Binds a UDP socket on 127.0.0.1 that stamps (and optionally echoes) datagrams.
func bindStampingUDP(stamps: Stamps, echo: Bool) async throws -> any Channel {
    try await DatagramBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(UDPStampingEcho(stamps: stamps, echo: echo))
            }
        }
        .bind(host: "127.0.0.1", port: 0)
        .get()
}

/// A datagram carrying `sequence` in its first 8 bytes, padded to `size`.
func datagram(_ sequence: UInt64, size: Int = 64) -> ByteBuffer {
    var buffer = ByteBuffer()
    buffer.writeInteger(sequence)
    buffer.writeRepeatingByte(0xAB, count: max(0, size - 8))
    return buffer
}
