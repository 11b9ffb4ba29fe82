import GroupSessions
import NIOCore
import NIOEmbedded
import Testing

@testable import SessionRelay

/// The writer's presence tick and presence batches, on an embedded channel whose clock the test
/// moves (no real time passes).
@Suite("ChannelWriter: presence waits for the tick or for something urgent, and goes out batched")
struct ChannelWriterTests {
    let session = SessionID(high: 1, low: 2)

    func joined(_ id: UInt64) -> Frame {
        Frame(type: .joined, session: session, sender: ParticipantID(rawValue: id), sequence: id)
    }

    func written(_ channel: EmbeddedChannel) throws -> [Frame] {
        var frames: [Frame] = []
        while let frame = try channel.readOutbound(as: Frame.self) { frames.append(frame) }
        return frames
    }

    func makeWriter() throws -> (EmbeddedChannel, EmbeddedEventLoop, ChannelWriter) {
        let loop = EmbeddedEventLoop()
        let channel = EmbeddedChannel(loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        let writer = ChannelWriter(channel: channel, softLimit: 1 << 20, hardLimit: 1 << 22, latency: { _ in })
        return (channel, loop, writer)
    }

    @Test("deferrable presence waits for the tick, then goes out as one presence frame")
    func tick() throws {
        let (channel, loop, writer) = try makeWriter()
        writer.batchPresence()
        for id in 1...3 { writer.enqueue(joined(UInt64(id)), deferrable: true) }
        loop.run()
        #expect(try written(channel).isEmpty)
        loop.advanceTime(by: LoopDrains.presenceDelay)
        let frames = try written(channel)
        #expect(frames.map(\.type) == [.presence])
        #expect(try frames.flatMap { try PresencePayload.frames(of: $0) } == [joined(1), joined(2), joined(3)])
        _ = try channel.finish()
    }

    @Test("an urgent frame takes the waiting presence with it, in order, before the tick")
    func urgentFlushes() throws {
        let (channel, loop, writer) = try makeWriter()
        writer.batchPresence()
        writer.enqueue(joined(1), deferrable: true)
        writer.enqueue(joined(2), deferrable: true)
        let data = Frame(type: .data, session: session, sender: ParticipantID(rawValue: 9), sequence: 3)
        writer.enqueue(data)
        loop.run()
        let frames = try written(channel)
        #expect(frames.map(\.type) == [.presence, .data])
        #expect(try frames.flatMap { try PresencePayload.frames(of: $0) } == [joined(1), joined(2), data])
        loop.advanceTime(by: LoopDrains.presenceDelay)  // the tick finds nothing left
        #expect(try written(channel).isEmpty)
        _ = try channel.finish()
    }

    @Test("a client that did not ask for presence frames gets every joined frame as it is")
    func legacyClient() throws {
        let (channel, loop, writer) = try makeWriter()
        for id in 1...3 { writer.enqueue(joined(UInt64(id)), deferrable: true) }
        loop.advanceTime(by: LoopDrains.presenceDelay)
        #expect(try written(channel) == [joined(1), joined(2), joined(3)])
        _ = try channel.finish()
    }
}
