import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A client of mpv's JSON IPC (`--input-ipc-server`) on a Unix socket: commands, and position samples
/// stamped with CLOCK_REALTIME.
///
/// mpv accepts several clients on one socket, so this client works beside Syncplay's own connection.
///
/// ```swift
/// let mpv = try await MPVIPCClient.connect(path: "/tmp/a.sock", player: "a")
/// let sample = try await mpv.sample()
/// try await mpv.command(["set_property", "pause", false])
/// ```
public final class MPVIPCClient: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<MPVIPCHandler>
    private let nextID = NIOLockedValueBox(0)
    /// The player's name in samples.
    public let player: String

    private init(channel: any Channel, handler: NIOLoopBound<MPVIPCHandler>, player: String) {
        self.channel = channel
        self.handler = handler
        self.player = player
    }

    /// Connects to mpv's IPC socket.
    ///
    /// - Parameters:
    ///   - path: the socket's path.
    ///   - player: the name samples carry.
    public static func connect(
        path: String, player: String, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> MPVIPCClient {
        let channel = try await ClientBootstrap(group: group)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(MPVIPCHandler())
                }
            }
            .connect(unixDomainSocketPath: path)
            .get()
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: MPVIPCHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return MPVIPCClient(channel: channel, handler: handler, player: player)
    }

    /// Sends one command (mpv's `command` array) and waits for its reply.
    ///
    /// - Returns: the reply's `data`, with the realtime instant the request was written and the reply read.
    /// - Throws: ``BenchError`` when mpv answers with an error or the connection closes.
    @discardableResult
    func command(_ arguments: [any Sendable]) async throws -> (reply: MPVReply, sent: Double) {
        let id = nextID.withLockedValue { value -> Int in
            value += 1
            return value
        }
        var object: [String: Any] = ["command": arguments, "request_id": id]
        object["async"] = false
        var line = try JSONSerialization.data(withJSONObject: object)
        line.append(UInt8(ascii: "\n"))
        let buffer = ByteBuffer(bytes: line)
        let handler = self.handler
        let channel = self.channel
        let (future, sent) = try await channel.eventLoop.submit { () -> (EventLoopFuture<MPVReply>, Double) in
            let promise = channel.eventLoop.makePromise(of: MPVReply.self)
            handler.value.register(id, promise: promise)
            let sent = RealtimeClock.now()
            channel.writeAndFlush(buffer, promise: nil)
            return (promise.futureResult, sent)
        }.get()
        let reply = try await future.get()
        return (reply, sent)
    }

    /// Sends a command and fails unless mpv answers `success`.
    public func run(_ arguments: [any Sendable]) async throws {
        let (reply, _) = try await command(arguments)
        guard reply.error == "success" else {
            throw BenchError.ipc("mpv answered \(reply.error) to \(arguments.first ?? "")")
        }
    }

    /// Reads a numeric property, or nil when mpv says it is unavailable.
    public func number(_ property: String) async throws -> Double? {
        let (reply, _) = try await command(["get_property", property])
        if case .number(let value) = reply.data, reply.error == "success" { return value }
        return nil
    }

    /// Samples the playback position (`audio-pts`, else `time-pos`) and the pause state.
    ///
    /// The position request is written first and its reply attributed to the midpoint of request and
    /// reply; the pause state is read right after.
    public func sample() async throws -> PositionSample {
        var (reply, sent) = try await command(["get_property", "audio-pts"])
        if reply.error != "success" {
            (reply, sent) = try await command(["get_property", "time-pos"])
        }
        var position: Double?
        if case .number(let value) = reply.data, reply.error == "success" { position = value }
        let (pauseReply, _) = try await command(["get_property", "pause"])
        var paused: Bool?
        if case .bool(let value) = pauseReply.data { paused = value }
        return PositionSample(player: player, sent: sent, received: reply.received, position: position, paused: paused)
    }

    /// Closes the connection.
    public func close() async {
        try? await channel.close()
    }
}
