import GroupSessions
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket
import TestSupport

/// A WebSocket client that speaks raw WebSocket messages to the relay's `/ws`, as a browser (or
/// a broken or hostile page) would: relay frames as binary messages, or anything else.
final class WebSocketTestClient: Sendable {
    /// Every message received, in order (close messages included).
    let received = LockedBox<[WebSocketFrame]>([])
    /// Whether the connection has ended.
    let closed = LockedBox(false)
    private let writer: AsyncStream<WebSocketFrame>.Continuation
    private let task: Task<Void, Never>

    private enum Upgrade: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case refused
    }

    private init(channel: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>) {
        let (stream, writer) = AsyncStream<WebSocketFrame>.makeStream()
        self.writer = writer
        let received = self.received
        let closed = self.closed
        task = Task {
            try? await channel.executeThenClose { inbound, outbound in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await message in stream { try await outbound.write(message) }
                    }
                    for try await message in inbound { received.mutate { $0.append(message) } }
                    group.cancelAll()
                }
            }
            closed.mutate { $0 = true }
        }
    }

    /// Opens `ws://127.0.0.1:PORT/ws`.
    static func connect(port: Int, path: String = "/ws") async throws -> WebSocketTestClient {
        let upgrade: EventLoopFuture<Upgrade> = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let upgrader = NIOTypedWebSocketClientUpgrader<Upgrade>(
                        maxFrameSize: 1 << 21,
                        upgradePipelineHandler: { channel, _ in
                            channel.eventLoop.makeCompletedFuture {
                                .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                            }
                        })
                    var headers = HTTPHeaders()
                    headers.add(name: "Host", value: "127.0.0.1:\(port)")
                    let head = HTTPRequestHead(version: .http1_1, method: .GET, uri: path, headers: headers)
                    let configuration = NIOTypedHTTPClientUpgradeConfiguration(
                        upgradeRequestHead: head, upgraders: [upgrader],
                        notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.refused) })
                    return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                        configuration: .init(upgradeConfiguration: configuration))
                }
            }
        guard case .websocket(let channel) = try await upgrade.get() else { throw WebSocketTestError.refused }
        return WebSocketTestClient(channel: channel)
    }

    /// Sends a message (masked, as a client must).
    func send(_ opcode: WebSocketOpcode, _ bytes: [UInt8]) {
        writer.yield(WebSocketFrame(fin: true, opcode: opcode, maskKey: .random(), data: ByteBuffer(bytes: bytes)))
    }

    /// Sends a relay frame as one binary message.
    func send(_ frame: Frame) {
        var buffer = ByteBuffer()
        FrameCodec.encode(frame, into: &buffer)
        send(.binary, Array(buffer.readableBytesView))
    }

    /// The relay frames received (binary messages decoded).
    var frames: [Frame] {
        received.value.filter { $0.opcode == .binary }.compactMap { message in
            var data = message.unmaskedData
            return try? FrameCodec.decode(from: &data)
        }
    }

    /// The close status the relay sent, if it closed.
    var closeCode: WebSocketErrorCode? {
        guard var data = received.value.first(where: { $0.opcode == .connectionClose })?.unmaskedData else { return nil }
        return data.readWebSocketErrorCode()
    }

    func close() {
        writer.finish()
        task.cancel()
    }
}

enum WebSocketTestError: Error {
    case refused
}
