import GroupSessions
import NIOCore
import NIOWebSocket

/// Turns a WebSocket into a stream of relay frames, so a browser member's connection runs through
/// exactly the same hub code as a TCP member's (`docs/protocol.md`, "WebSocket transport").
///
/// - Each binary message carries exactly one frame, length prefix included. A message that is not
///   one well-formed frame is a ``FrameDecodingError`` fired down the pipeline: the relay answers
///   it as it answers undecodable TCP bytes (one `error` frame to the offender, then close), and
///   the close goes out with status 1002 (protocol error).
/// - A text message closes the connection with status 1003 (unsupported data).
/// - Pings are answered with pongs; a close from the browser is echoed and the connection closes.
/// - Every relay frame leaves as one unmasked binary message; when the relay closes the
///   connection, a close message (1000, or the error's status) goes first.
///
/// Fragmented messages are joined by `NIOWebSocketFrameAggregator` in front of this handler.
final class WebSocketFrameBridge: ChannelDuplexHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = Frame
    typealias OutboundIn = Frame
    typealias OutboundOut = WebSocketFrame

    private let maximumFrameLength: Int
    private var closeCode: WebSocketErrorCode = .normalClosure
    private var closeSent = false
    private var failed = false

    /// - Parameter maximumFrameLength: the relay's frame length limit (the TCP decoder's).
    init(maximumFrameLength: Int) {
        self.maximumFrameLength = maximumFrameLength
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let message = unwrapInboundIn(data)
        guard !failed else { return }
        switch message.opcode {
        case .binary:
            var bytes = message.unmaskedData
            let length = bytes.readableBytes
            do {
                guard let frame = try FrameCodec.decode(from: &bytes, maximumFrameLength: maximumFrameLength),
                    bytes.readableBytes == 0
                else { throw FrameDecodingError.notOneFrame(messageLength: length) }
                context.fireChannelRead(wrapInboundOut(frame))
            } catch {
                // The relay sends its error frame and closes; the close carries 1002.
                failed = true
                closeCode = .protocolError
                context.fireErrorCaught(error)
            }
        case .text:
            failed = true
            closeCode = .unacceptableData
            // context.close would start below this handler and skip its close message.
            context.channel.close(promise: nil)
        case .ping:
            var pong = message.unmaskedData
            let payload = pong.readSlice(length: pong.readableBytes) ?? ByteBuffer()
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: payload)), promise: nil)
        case .connectionClose:
            // Echo the browser's close (RFC 6455 section 5.5.1), then close.
            closeSent = true
            var payload = message.unmaskedData
            let code = payload.readWebSocketErrorCode() ?? .normalClosure
            var echo = context.channel.allocator.buffer(capacity: 2)
            echo.write(webSocketErrorCode: code)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: echo)))
                .whenComplete { _ in channel.close(promise: nil) }
        default:
            break  // pong and reserved opcodes: nothing to do
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let frame = unwrapOutboundIn(data)
        var buffer = context.channel.allocator.buffer(capacity: frame.wireLength)
        FrameCodec.encode(frame, into: &buffer)
        context.write(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .binary, data: buffer)), promise: promise)
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all, !closeSent, context.channel.isActive else {
            context.close(mode: mode, promise: promise)
            return
        }
        closeSent = true
        var payload = context.channel.allocator.buffer(capacity: 2)
        payload.write(webSocketErrorCode: closeCode)
        // The close message first; the channel's close then passes this handler (closeSent).
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)))
            .whenComplete { _ in channel.close(mode: mode, promise: promise) }
    }
}
