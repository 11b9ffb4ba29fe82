import Foundation
import NIOCore

/// One reply on mpv's JSON IPC, stamped with the CLOCK_REALTIME instant its bytes were read.
struct MPVReply: Sendable {
    var error: String
    var data: MPVValue
    var received: Double
}

/// The `data` of an mpv reply, reduced to what the benchmark reads.
enum MPVValue: Sendable, Decodable {
    case number(Double)
    case bool(Bool)
    case string(String)
    case none

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .none
        }
    }
}

/// Splits mpv's IPC stream into JSON lines and completes the promise waiting for each `request_id`;
/// event lines (no `request_id`) are ignored. Lives on its channel's event loop.
final class MPVIPCHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var pending = ByteBuffer()
    private var waiting: [Int: EventLoopPromise<MPVReply>] = [:]
    private var closed = false

    /// Registers a promise for `requestID`; fails it at once if the channel is gone.
    func register(_ requestID: Int, promise: EventLoopPromise<MPVReply>) {
        if closed {
            promise.fail(BenchError.ipc("the player's IPC connection is closed"))
        } else {
            waiting[requestID] = promise
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let received = RealtimeClock.now()
        var buffer = unwrapInboundIn(data)
        pending.writeBuffer(&buffer)
        while let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - pending.readerIndex
            guard let line = pending.readBytes(length: length) else { break }
            pending.moveReaderIndex(forwardBy: 1)
            handle(line: line, received: received)
        }
        pending.discardReadBytes()
    }

    private func handle(line: [UInt8], received: Double) {
        guard let message = try? JSONDecoder().decode(Message.self, from: Data(line)),
            let requestID = message.request_id, let promise = waiting.removeValue(forKey: requestID)
        else { return }
        promise.succeed(MPVReply(error: message.error ?? "", data: message.data ?? .none, received: received))
    }

    /// A line of mpv's IPC: a reply (with `request_id`) or an event.
    private struct Message: Decodable {
        var request_id: Int?
        var error: String?
        var data: MPVValue?
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        for promise in waiting.values {
            promise.fail(BenchError.ipc("the player closed its IPC connection"))
        }
        waiting.removeAll()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
