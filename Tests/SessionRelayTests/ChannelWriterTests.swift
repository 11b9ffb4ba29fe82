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

    /// A writer on a channel with coplay's frame encoder, as the relay's TCP pipeline has it.
    func makeEncodingWriter() throws -> (EmbeddedChannel, EmbeddedEventLoop, ChannelWriter) {
        let (channel, loop, writer) = try makeWriter()
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
        return (channel, loop, writer)
    }

    func bytes(_ channel: EmbeddedChannel) throws -> ByteBuffer {
        var all = ByteBuffer()
        while var buffer = try channel.readOutbound(as: ByteBuffer.self) { all.writeBuffer(&buffer) }
        return all
    }

    func encoding(_ frames: Frame...) -> ByteBuffer {
        var buffer = ByteBuffer()
        for frame in frames { FrameCodec.encode(frame, into: &buffer) }
        return buffer
    }

    func data(_ sequence: UInt64, payload: String = "x") -> Frame {
        Frame(type: .data, session: session, sender: ParticipantID(rawValue: 9), sequence: sequence,
              payload: ByteBuffer(string: payload))
    }

    @Test("a frame drained alone goes out as the encoding its fan-out shared; with others, each is encoded")
    func sharedEncoding() throws {
        let (channel, loop, writer) = try makeEncodingWriter()
        // The writer trusts the bytes it is given: a marker shows they were written as they are.
        let marker = encoding(data(7, payload: "shared"))
        writer.enqueue(data(7), encoded: marker)
        loop.run()
        #expect(try bytes(channel) == marker)

        writer.enqueue(data(8), encoded: marker)
        writer.enqueue(data(9))
        loop.run()
        #expect(try bytes(channel) == encoding(data(8), data(9)))
        _ = try channel.finish()
    }

    @Test("a fan-out encodes a stamped data frame once, from its second recipient on; other frames never")
    func fanOutEncoding() {
        var fanOut = FanOutEncoding()
        #expect(fanOut.encoding(data(5)) == nil)
        let shared = fanOut.encoding(data(5))
        #expect(shared == encoding(data(5)))
        #expect(fanOut.encoding(data(5)) == shared)
        var replayed = data(5)
        replayed.flags.insert(.replayed)
        #expect(fanOut.encoding(replayed) == nil)  // another frame: flags differ
        #expect(fanOut.encoding(data(6)) == nil)
        #expect(fanOut.encoding(joined(6)) == nil)
        #expect(fanOut.encoding(joined(6)) == nil)
        #expect(fanOut.encoding(data(0)) == nil && fanOut.encoding(data(0)) == nil)  // unstamped
    }
}
