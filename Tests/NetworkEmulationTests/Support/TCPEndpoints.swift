import NIOCore
import NIOPosix

/// Splits a byte stream into fixed-size records, stamps each record's sequence number (first 8 bytes)
/// on receipt, checks the padding is intact, and optionally echoes the bytes.
final class TCPRecordStamper: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer
    static let recordSize = 64
    let stamps: Stamps
    let corrupt: Stamps
    let echo: Bool
    private var pending = ByteBuffer()

    init(stamps: Stamps, corrupt: Stamps, echo: Bool) {
        self.stamps = stamps
        self.corrupt = corrupt
        self.echo = echo
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let now = NIODeadline.now().uptimeNanoseconds
        var buffer = unwrapInboundIn(data)
        if echo { context.writeAndFlush(wrapOutboundOut(buffer), promise: nil) }
        pending.writeBuffer(&buffer)
        while pending.readableBytes >= Self.recordSize, var record = pending.readSlice(length: Self.recordSize) {
            let sequence = record.readInteger(as: UInt64.self)!
            let padding = record.readBytes(length: record.readableBytes)!
            if padding.contains(where: { $0 != UInt8(truncatingIfNeeded: sequence) }) { corrupt.record(sequence) }
            stamps.record(sequence, at: now)
        }
    }
}

/// A record of `TCPRecordStamper.recordSize` bytes: the sequence number, then its low byte repeated.
func record(_ sequence: UInt64) -> ByteBuffer {
    var buffer = ByteBuffer()
    buffer.writeInteger(sequence)
    buffer.writeRepeatingByte(UInt8(truncatingIfNeeded: sequence), count: TCPRecordStamper.recordSize - 8)
    return buffer
}

/// A TCP server on 127.0.0.1 whose connections stamp (and echo) records.
func bindStampingTCPServer(stamps: Stamps, corrupt: Stamps) async throws -> any Channel {
    try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    TCPRecordStamper(stamps: stamps, corrupt: corrupt, echo: true))
            }
        }
        .bind(host: "127.0.0.1", port: 0)
        .get()
}

/// A TCP client connected to `port` that stamps the echoed records.
func connectStampingTCPClient(port: Int, stamps: Stamps, corrupt: Stamps) async throws -> any Channel {
    try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelOption(.socketOption(.tcp_nodelay), value: 1)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(
                    TCPRecordStamper(stamps: stamps, corrupt: corrupt, echo: false))
            }
        }
        .connect(host: "127.0.0.1", port: port)
        .get()
}
