import GroupSessions
import NIOCore
import NIOEmbedded
import PropertyBased
import TestSupport
import Testing

@Suite("Frame codec")
struct FrameCodecTests {
    static func frame(type: UInt8, flags: UInt16, high: UInt64, low: UInt64, sender: UInt64, sequence: UInt64, payload: [UInt8]) -> Frame {
        Frame(
            type: FrameType(rawValue: type), flags: FrameFlags(rawValue: flags),
            session: SessionID(high: high, low: low), sender: ParticipantID(rawValue: sender), sequence: sequence,
            payload: ByteBuffer(bytes: payload))
    }

    @Test("any frame round-trips through encode and decode")
    func roundTrip() async {
        await propertyCheck(
            count: 300,
            input: Gen.uint8(), Gen.uint16(), Gen.uint64(), Gen.uint64(), Gen.uint64(), Gen.uint8().array(of: 0...300)
        ) { type, flags, high, sender, sequence, payload in
            let original = Self.frame(
                type: type, flags: flags, high: high, low: ~high, sender: sender, sequence: sequence, payload: payload)
            var buffer = ByteBuffer()
            FrameCodec.encode(original, into: &buffer)
            #expect(buffer.readableBytes == original.wireLength)
            let decoded = try FrameCodec.decode(from: &buffer)
            #expect(decoded == original)
            #expect(buffer.readableBytes == 0)
        }
    }

    @Test("a truncated frame needs more data and consumes nothing")
    func truncated() throws {
        let original = Self.frame(type: 6, flags: 0, high: 1, low: 2, sender: 3, sequence: 4, payload: Array(0..<50))
        var whole = ByteBuffer()
        FrameCodec.encode(original, into: &whole)
        for cut in 0..<whole.readableBytes {
            var partial = whole.getSlice(at: 0, length: cut)!
            #expect(try FrameCodec.decode(from: &partial) == nil)
            #expect(partial.readableBytes == cut)
        }
    }

    @Test("bad length and version are typed errors", arguments: [
        ([0, 0, 0, 0], RelayErrorCode.malformed),
        ([0, 0, 0, 35, 1], RelayErrorCode.malformed),
        ([0xFF, 0xFF, 0xFF, 0xFF], RelayErrorCode.frameTooLarge),
        ([0, 0, 0, 40, 2], RelayErrorCode.unsupportedVersion),
        ([0, 0, 0, 40, 0], RelayErrorCode.unsupportedVersion),
    ] as [([UInt8], RelayErrorCode)])
    func badHeaders(bytes: [UInt8], expected: RelayErrorCode) {
        var buffer = ByteBuffer(bytes: bytes)
        #expect {
            _ = try FrameCodec.decode(from: &buffer)
        } throws: { error in
            (error as? FrameDecodingError)?.relayErrorCode == expected
        }
    }

    @Test("an oversized announcement is refused before its bytes arrive")
    func oversizedEarly() {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(1000))
        #expect(throws: FrameDecodingError.self) {
            _ = try FrameCodec.decode(from: &buffer, maximumFrameLength: 999)
        }
    }

    @Test("the decoder is total: a million random inputs give a frame, nil or a typed error")
    func millionRandomInputs() {
        var rng = SplitMix64(seed: 0xC0FFEE)
        var frames = 0
        var errors = 0
        var incomplete = 0
        var violations = 0
        let clock = ContinuousClock()
        let start = clock.now
        var buffer = ByteBuffer()
        buffer.reserveCapacity(256)
        for i in 0..<1_000_000 {
            buffer.clear()
            let word = rng.next()
            if i % 2 == 1 {
                // A plausible prefix (small length, version 1) to reach the deeper paths.
                buffer.writeInteger(UInt32(30 + word % 50))
                buffer.writeInteger(UInt8(1))
            }
            // Then 0...88 bytes of noise, eight at a time.
            for _ in 0..<Int((word >> 32) % 12) { buffer.writeInteger(rng.next()) }
            let before = buffer.readableBytes
            do {
                if let frame = try FrameCodec.decode(from: &buffer, maximumFrameLength: 64) {
                    frames += 1
                    if before - buffer.readableBytes != frame.wireLength { violations += 1 }
                } else {
                    incomplete += 1
                    if buffer.readableBytes != before { violations += 1 }
                }
            } catch {
                errors += 1
            }
        }
        #expect(violations == 0)
        #expect(frames + errors + incomplete == 1_000_000)
        #expect(frames > 0 && errors > 0 && incomplete > 0)
        // Generous bound: only catches a pathological slowdown (e.g. quadratic buffering).
        #expect(clock.now - start < .seconds(300))
    }

    @Test("ByteToMessageHandler on EmbeddedChannel decodes frames split across reads")
    func embeddedChannel() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
        var rng = SplitMix64(seed: 7)
        var expected: [Frame] = []
        var stream = ByteBuffer()
        for i in 0..<50 {
            let payload = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let frame = Self.frame(type: 6, flags: 1, high: 9, low: 9, sender: UInt64(i + 1), sequence: UInt64(i), payload: payload)
            expected.append(frame)
            FrameCodec.encode(frame, into: &stream)
        }
        while stream.readableBytes > 0 {
            let chunk = stream.readSlice(length: min(stream.readableBytes, Int.random(in: 1...97, using: &rng)))!
            try channel.writeInbound(chunk)
        }
        var received: [Frame] = []
        while let frame = try channel.readInbound(as: Frame.self) { received.append(frame) }
        #expect(received == expected)

        // Outbound: frames are encoded with the length prefix.
        try channel.writeOutbound(expected[0])
        var out = try #require(try channel.readOutbound(as: ByteBuffer.self))
        #expect(try FrameCodec.decode(from: &out) == expected[0])
        _ = try channel.finish()
    }

    @Test("a malformed stream surfaces a FrameDecodingError in the pipeline")
    func embeddedChannelError() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder(maximumFrameLength: 100)))
        var bad = ByteBuffer()
        bad.writeInteger(UInt32(5000))
        #expect(throws: FrameDecodingError.self) { try channel.writeInbound(bad) }
        _ = try? channel.finish()
    }

    @Test("payloads round-trip and reject truncation")
    func payloads() throws {
        let welcome = WelcomePayload(
            sequence: 42, maximumPayload: 1000, ratePerSecond: 10, burst: 20,
            members: [ParticipantID(rawValue: 1), ParticipantID(rawValue: 2)])
        #expect(try WelcomePayload(decoding: welcome.encoded()) == welcome)
        let error = ErrorPayload(code: .rateLimited, senderSequence: 9, detail: "slow down")
        #expect(try ErrorPayload(decoding: error.encoded()) == error)
        let route = DataRoute(senderSequence: 5, recipients: [ParticipantID(rawValue: 3)], retainKey: [1, 2, 3])
        var buffer = ByteBuffer()
        route.encode(into: &buffer)
        buffer.writeString("rest")
        #expect(try DataRoute.decode(from: &buffer) == route)
        #expect(buffer.readableBytes == 4)
        var short = welcome.encoded()
        short.moveWriterIndex(to: short.writerIndex - 1)
        #expect(throws: PayloadDecodingError.self) { try WelcomePayload(decoding: short) }
    }
}
