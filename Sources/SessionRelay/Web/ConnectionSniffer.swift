import NIOCore

/// Tells the relay protocol from HTTP by a connection's first byte, then configures the pipeline
/// for the one it is and steps out.
///
/// A relay frame starts with its 4-byte big-endian length, whose first byte is 0 for every frame
/// under 16 MiB; an HTTP request starts with its method's first letter (`G`, `H`, ...). Anything
/// else is handed to the frame decoder, which refuses it as it refuses any undecodable stream.
/// A connection that sends nothing within ``firstByteTimeout`` is closed.
final class ConnectionSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// What the first byte says.
    enum Kind {
        /// The relay protocol (length-prefixed frames).
        case relay
        /// HTTP: the web client's files, or a WebSocket upgrade.
        case http
    }

    /// How long a new connection may stay silent.
    static let firstByteTimeout = TimeAmount.seconds(10)

    private let configure: (Channel, Kind) throws -> Void
    private var timeout: Scheduled<Void>?
    private var decided = false

    /// - Parameter configure: adds the handlers for the kind of connection (after this one, on the event loop).
    init(configure: @escaping (Channel, Kind) throws -> Void) {
        self.configure = configure
    }

    static func kind(ofFirstByte byte: UInt8) -> Kind {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? .http : .relay
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timeout = context.eventLoop.scheduleTask(in: Self.firstByteTimeout) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !decided else {
            context.fireChannelRead(data)
            return
        }
        let bytes = unwrapInboundIn(data)
        guard let first = bytes.getInteger(at: bytes.readerIndex, as: UInt8.self) else { return }
        decided = true
        timeout?.cancel()
        do {
            try configure(context.channel, Self.kind(ofFirstByte: first))
        } catch {
            context.fireErrorCaught(error)
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timeout?.cancel()
        context.fireChannelInactive()
    }
}
