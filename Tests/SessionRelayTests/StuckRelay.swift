import GroupSessions
import NIOCore
import NIOPosix
import Synchronization

/// A TCP server on loopback that speaks just enough of the relay protocol to leave a client
/// waiting: it accepts connections, reads every frame and answers only what its ``Mode`` says
/// (never a `pong`). It never closes a connection itself.
final class StuckRelay: Sendable {
    enum Mode: Sendable {
        /// Answers nothing, not even `hello`.
        case silent
        /// Answers `hello` with a `welcome`, then nothing (no `joined`).
        case welcomeOnly
        /// Answers `hello` and `join`, but never acks data (the creator's activity is never stored).
        case noAcks
    }

    let port: Int
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)
    private let open = Mutex(0)
    private let accepted = Mutex(0)

    private init(port: Int) { self.port = port }

    /// Connections currently open (a client's close is seen here once its socket is closed).
    var openConnections: Int { open.withLock { $0 } }
    /// Connections accepted so far.
    var acceptedConnections: Int { accepted.withLock { $0 } }

    static func start(_ mode: Mode) async throws -> StuckRelay {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                    try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                    return try NIOAsyncChannel<Frame, Frame>(wrappingChannelSynchronously: channel)
                }
            }
        let relay = StuckRelay(port: server.channel.localAddress!.port!)
        relay.task.withLock {
            $0 = Task {
                try? await withThrowingDiscardingTaskGroup { group in
                    try await server.executeThenClose { inbound in
                        for try await connection in inbound {
                            group.addTask { await relay.serve(connection, mode: mode) }
                        }
                    }
                }
            }
        }
        return relay
    }

    private func serve(_ connection: NIOAsyncChannel<Frame, Frame>, mode: Mode) async {
        open.withLock { $0 += 1 }
        accepted.withLock { $0 += 1 }
        defer { open.withLock { $0 -= 1 } }
        try? await connection.executeThenClose { inbound, outbound in
            for try await frame in inbound {
                switch (frame.type, mode) {
                case (.hello, .welcomeOnly), (.hello, .noAcks):
                    let welcome = WelcomePayload(
                        sequence: 0, maximumPayload: 300 * 1024, ratePerSecond: 2_000, burst: 20_000, members: [])
                    try await outbound.write(
                        Frame(type: .welcome, session: frame.session, sender: .relay, payload: welcome.encoded()))
                case (.join, .noAcks):
                    try await outbound.write(Frame(type: .joined, session: frame.session, sender: frame.sender, sequence: 1))
                default:
                    break
                }
            }
        }
    }

    /// Stops accepting and closes every connection.
    func stop() {
        task.withLock { $0?.cancel() }
    }
}
