import Foundation
import GroupSessions
import NIOCore
import Testing
import TestSupport

/// The shared vectors of the relay protocol's wire format (`Tests/Vectors/wire/frames.json`): frames
/// and payloads as Swift encodes them, and byte strings the decoder must refuse or wait on. The
/// page's `frame.js` reads the same file (`Tests/Web/wirevectors.test.mjs`) and must give the same
/// bytes, the same values and the same verdicts.
///
/// Written with `COPLAY_WRITE_VECTORS=1`; otherwise the file must equal what this build computes.
@Suite("Wire vectors shared with the page")
struct WireVectorTests {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/wire/frames.json")
    static let writing = ProcessInfo.processInfo.environment["COPLAY_WRITE_VECTORS"] == "1"

    /// Numbers above 2^53 travel as decimal strings; bytes as lowercase hex.
    struct Vectors: Codable, Equatable {
        var frames: [FrameCase]
        var streams: [StreamCase]
        var payloads: [PayloadCase]
    }

    /// A frame and its wire bytes (length prefix first).
    struct FrameCase: Codable, Equatable {
        var name: String
        var version: UInt8
        var type: UInt8
        var flags: UInt16
        var session: String
        var sender: String
        var sequence: String
        var payload: String
        var bytes: String
    }

    /// Bytes given to the decoder: `frame` (one frame decoded, `consumed` bytes taken), `needMore`, or
    /// the error (`tooShort`, `tooLarge`, `unsupportedVersion`) with the relay's answer code.
    struct StreamCase: Codable, Equatable {
        var name: String
        var bytes: String
        var maximumFrameLength: Int
        var outcome: String
        var consumed: Int?
        var relayErrorCode: UInt16?
    }

    /// A payload's fields (as strings) and bytes; `outcome` is `decoded` or `malformed` (bytes that
    /// must not decode; `fields` then empty).
    struct PayloadCase: Codable, Equatable {
        var name: String
        var kind: String
        var fields: [String: String]
        var bytes: String
        var outcome: String
    }

    static func hex(_ buffer: ByteBuffer) -> String { hex(Array(buffer.readableBytesView)) }
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map {
            let start = hex.index(hex.startIndex, offsetBy: $0)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16)!
        }
    }

    static let session = SessionID(high: 0x0011_2233_4455_6677, low: 0x8899_aabb_ccdd_eeff)

    static func frameCase(_ name: String, _ frame: Frame) -> FrameCase {
        var buffer = ByteBuffer()
        FrameCodec.encode(frame, into: &buffer)
        return FrameCase(
            name: name, version: frame.version, type: frame.type.rawValue, flags: frame.flags.rawValue, session: frame.session.description,
            sender: String(frame.sender.rawValue), sequence: String(frame.sequence), payload: hex(frame.payload), bytes: hex(buffer))
    }

    static func streamCase(_ name: String, _ bytes: [UInt8], limit: Int = FrameCodec.defaultMaximumFrameLength) -> StreamCase {
        var buffer = ByteBuffer(bytes: bytes)
        do {
            guard try FrameCodec.decode(from: &buffer, maximumFrameLength: limit) != nil else {
                return StreamCase(name: name, bytes: hex(bytes), maximumFrameLength: limit, outcome: "needMore")
            }
            return StreamCase(
                name: name, bytes: hex(bytes), maximumFrameLength: limit, outcome: "frame", consumed: bytes.count - buffer.readableBytes)
        } catch {
            // decode(from:) answers a byte stream: a short length is `malformed`, never `notOneFrame`.
            let kind = switch error.relayErrorCode {
            case .malformed: "tooShort"
            case .frameTooLarge: "tooLarge"
            case .unsupportedVersion: "unsupportedVersion"
            default: "other"
            }
            return StreamCase(
                name: name, bytes: hex(bytes), maximumFrameLength: limit, outcome: kind, relayErrorCode: error.relayErrorCode.rawValue)
        }
    }

    static func payloadCase(_ name: String, _ kind: String, _ fields: [String: String], _ buffer: ByteBuffer) -> PayloadCase {
        PayloadCase(name: name, kind: kind, fields: fields, bytes: hex(buffer), outcome: "decoded")
    }

    static func malformed(_ name: String, _ kind: String, _ bytes: [UInt8]) throws -> PayloadCase {
        let buffer = ByteBuffer(bytes: bytes)
        var decoded = true
        switch kind {
        case "hello": decoded = (try? HelloPayload(decoding: buffer)) != nil
        case "welcome": decoded = (try? WelcomePayload(decoding: buffer)) != nil
        case "presence": decoded = (try? PresencePayload(decoding: buffer)) != nil
        case "error": decoded = (try? ErrorPayload(decoding: buffer)) != nil
        case "route":
            var copy = buffer
            decoded = (try? DataRoute.decode(from: &copy)) != nil
        case "timeRequest": decoded = (try? TimeExchangePayload(decoding: buffer, reply: false)) != nil
        case "timeReply": decoded = (try? TimeExchangePayload(decoding: buffer, reply: true)) != nil
        default: Issue.record("no kind \(kind)")
        }
        #expect(!decoded, "\(name) decodes in Swift")
        return PayloadCase(name: name, kind: kind, fields: [:], bytes: hex(bytes), outcome: "malformed")
    }

    static func make() throws -> Vectors {
        let big: UInt64 = 0xfedc_ba98_7654_3210  // above 2^53: BigInt in the page
        var frames: [FrameCase] = []
        frames.append(frameCase("hello, empty header fields", Frame(type: .hello, session: session, sender: ParticipantID(rawValue: 0), sequence: 0, payload: ByteBuffer(bytes: [UInt8](repeating: 0xab, count: 32)))))
        frames.append(frameCase("data with every flag and a large sender and sequence", Frame(type: .data, flags: FrameFlags(rawValue: 0x0007), session: session, sender: ParticipantID(rawValue: big), sequence: big - 1, payload: ByteBuffer(bytes: [1, 2, 3]))))
        frames.append(frameCase("ping, no payload", Frame(type: .ping, session: session, sender: ParticipantID(rawValue: 42), sequence: 7, payload: ByteBuffer())))
        frames.append(frameCase("a type this build does not know", Frame(type: FrameType(rawValue: 0x7F), session: session, sender: ParticipantID(rawValue: 1), sequence: 1, payload: ByteBuffer(bytes: [0xff]))))

        func wire(_ index: Int) -> [UInt8] { bytes(frames[index].bytes) }
        var streams: [StreamCase] = []
        streams.append(streamCase("one whole frame", wire(1)))
        streams.append(streamCase("a frame and the start of the next: one frame taken", wire(2) + Array(wire(0).prefix(10))))
        streams.append(streamCase("the length prefix only", Array(wire(1).prefix(4))))
        streams.append(streamCase("three bytes", Array(wire(1).prefix(3))))
        streams.append(streamCase("all but the last byte", Array(wire(1).dropLast())))
        streams.append(streamCase("a length below the header", [0, 0, 0, 35] + [UInt8](repeating: 1, count: 35)))
        streams.append(streamCase("a length above the limit, refused before its bytes", [0, 0, 0x10, 0x25, 1], limit: FrameCodec.defaultMaximumFrameLength))
        streams.append(streamCase("above a small limit", wire(1), limit: 38))
        var version2 = wire(2)
        version2[4] = 2
        streams.append(streamCase("version 2, refused as soon as the byte is there", Array(version2.prefix(5))))
        streams.append(streamCase("version 0 in a whole frame", { var b = wire(2); b[4] = 0; return b }()))

        var payloads: [PayloadCase] = []
        let token = [UInt8](0..<32)
        payloads.append(payloadCase("hello, new admission", "hello", ["token": hex(token)], HelloPayload(token: token).encoded()))
        payloads.append(payloadCase("hello, resuming", "hello", ["token": hex(token), "resumeAfter": String(big)], HelloPayload(token: token, resumeAfter: big).encoded()))
        let welcome = WelcomePayload(sequence: big, maximumPayload: 262_144, ratePerSecond: 200, burst: 400, members: [ParticipantID(rawValue: 1), ParticipantID(rawValue: big)], retainedCount: 3)
        payloads.append(payloadCase("welcome with two members", "welcome", [
            "sequence": String(big), "maximumPayload": "262144", "ratePerSecond": "200", "burst": "400", "members": "1,\(big)", "retainedCount": "3",
        ], welcome.encoded()))
        let presence = PresencePayload(entries: [
            .init(type: .joined, participant: ParticipantID(rawValue: 5), sequence: 10), .init(type: .left, participant: ParticipantID(rawValue: big), sequence: 11),
        ])
        payloads.append(payloadCase("presence: a join and a leave", "presence", ["entries": "4:5:10;5:\(big):11"], presence.encoded()))
        payloads.append(payloadCase("error with a detail", "error", ["code": "6", "senderSequence": "9", "detail": "rate limited: 200 frames/s (é)"], ErrorPayload(code: .rateLimited, senderSequence: 9, detail: "rate limited: 200 frames/s (é)").encoded()))
        var route = ByteBuffer()
        DataRoute(senderSequence: big, recipients: [ParticipantID(rawValue: 3), ParticipantID(rawValue: 4)], retainKey: [UInt8](repeating: 0xee, count: 16)).encode(into: &route)
        payloads.append(payloadCase("route to two members, retained", "route", ["senderSequence": String(big), "recipients": "3,4", "retainKey": hex([UInt8](repeating: 0xee, count: 16))], route))
        var plainRoute = ByteBuffer()
        DataRoute(senderSequence: 1).encode(into: &plainRoute)
        payloads.append(payloadCase("route to everyone, not retained", "route", ["senderSequence": "1", "recipients": "", "retainKey": ""], plainRoute))
        payloads.append(payloadCase("time request", "timeRequest", ["t1": String(big)], TimeExchangePayload(clientTransmit: big).encoded()))
        payloads.append(payloadCase("time reply", "timeReply", ["t1": String(big), "t2": String(big + 1), "t3": String(big + 2)], TimeExchangePayload(clientTransmit: big, relayReceive: big + 1, relayTransmit: big + 2).encoded()))

        payloads.append(try malformed("hello with a short token", "hello", [UInt8](repeating: 1, count: 31)))
        payloads.append(try malformed("welcome cut in its members", "welcome", Array(bytes(payloads[2].bytes).dropLast(6))))
        payloads.append(try malformed("welcome without its fixed fields", "welcome", [0, 0, 0]))
        payloads.append(try malformed("presence cut in an entry", "presence", Array(bytes(payloads[3].bytes).dropLast(1))))
        payloads.append(try malformed("presence entry of another type", "presence", [0, 1, 6] + [UInt8](repeating: 0, count: 16)))
        payloads.append(try malformed("error without its sender sequence", "error", [0, 1, 0, 0]))
        payloads.append(try malformed("route cut in its recipients", "route", [0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3]))
        payloads.append(try malformed("route with a 33-byte retain key", "route", [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 33] + [UInt8](repeating: 0, count: 33)))
        payloads.append(try malformed("time request of 7 bytes", "timeRequest", [UInt8](repeating: 0, count: 7)))
        payloads.append(try malformed("time reply without the relay's times", "timeReply", [UInt8](repeating: 0, count: 16)))
        return Vectors(frames: frames, streams: streams, payloads: payloads)
    }

    @Test func sharedVectors() throws {
        let vector = try Self.make()
        guard let stored = try VectorFile.writeOrRead(vector, at: Self.file, writing: Self.writing) else { return }
        #expect(stored == vector, "the file differs from the Swift values; run with COPLAY_WRITE_VECTORS=1 after a deliberate change")
    }

    @Test("every frame in the file decodes back to its fields, and every payload to its fields")
    func decodesBack() throws {
        let vector = try Self.make()
        for frame in vector.frames {
            var buffer = ByteBuffer(bytes: Self.bytes(frame.bytes))
            let decoded = try #require(try FrameCodec.decode(from: &buffer))
            #expect(decoded.type.rawValue == frame.type && decoded.flags.rawValue == frame.flags, "\(frame.name)")
            #expect(String(decoded.sender.rawValue) == frame.sender && String(decoded.sequence) == frame.sequence, "\(frame.name)")
            #expect(Self.hex(decoded.payload) == frame.payload, "\(frame.name)")
        }
        #expect(vector.streams.contains { $0.outcome == "tooShort" } && vector.streams.contains { $0.outcome == "tooLarge" })
        #expect(vector.streams.contains { $0.outcome == "unsupportedVersion" } && vector.streams.contains { $0.outcome == "needMore" })
        #expect(!vector.streams.contains { $0.outcome == "other" })
        let welcome = try WelcomePayload(decoding: ByteBuffer(bytes: Self.bytes(vector.payloads[2].bytes)))
        #expect(welcome.members.map { String($0.rawValue) }.joined(separator: ",") == vector.payloads[2].fields["members"])
    }
}
