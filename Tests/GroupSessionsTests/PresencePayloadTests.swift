import GroupSessions
import NIOCore
import Testing

@Suite("Presence batches: the payload, and how runs of presence frames become one")
struct PresencePayloadTests {
    let session = SessionID(high: 1, low: 2)
    let other = SessionID(high: 3, low: 4)

    func joined(_ id: UInt64, _ sequence: UInt64, in session: SessionID? = nil) -> Frame {
        Frame(type: .joined, session: session ?? self.session, sender: ParticipantID(rawValue: id), sequence: sequence)
    }

    @Test("a payload survives encoding, entry by entry")
    func roundTrip() throws {
        let payload = PresencePayload(entries: [
            .init(type: .joined, participant: ParticipantID(rawValue: 7), sequence: 10),
            .init(type: .left, participant: ParticipantID(rawValue: 8), sequence: 11),
        ])
        let encoded = payload.encoded()
        #expect(encoded.readableBytes == 2 + 2 * PresencePayload.entryLength)
        #expect(try PresencePayload(decoding: encoded) == payload)
    }

    @Test("a truncated payload or an entry of another type is refused with the field named")
    func malformed() {
        var truncated = ByteBuffer()
        truncated.writeInteger(UInt16(2))
        truncated.writeBytes([UInt8](repeating: 0, count: PresencePayload.entryLength))
        #expect(throws: PayloadDecodingError.truncated(.presence, "entries")) { try PresencePayload(decoding: truncated) }
        #expect(throws: PayloadDecodingError.truncated(.presence, "count")) { try PresencePayload(decoding: ByteBuffer()) }
        var wrongType = ByteBuffer()
        wrongType.writeInteger(UInt16(1))
        wrongType.writeInteger(FrameType.data.rawValue)
        wrongType.writeInteger(UInt64(1))
        wrongType.writeInteger(UInt64(1))
        #expect(throws: PayloadDecodingError.invalid(.presence, "entry of type data")) { try PresencePayload(decoding: wrongType) }
    }

    @Test("runs of two or more plain joined/left frames of one session become presence frames; nothing else moves")
    func batching() throws {
        let data = Frame(type: .data, session: session, sender: ParticipantID(rawValue: 9), sequence: 4)
        var replayed = joined(5, 6)
        replayed.flags = .replayed
        let left = Frame(type: .left, session: session, sender: ParticipantID(rawValue: 1), sequence: 3)
        let frames = [joined(1, 1), joined(2, 2), left, data, joined(3, 5), replayed, joined(4, 7), joined(6, 8, in: other)]
        let batched = PresencePayload.batching(frames)
        #expect(batched.map(\.type) == [.presence, .data, .joined, .joined, .joined, .joined])
        #expect(batched[0].sequence == 3)
        #expect(batched[0].sender == .relay)
        #expect(try PresencePayload.frames(of: batched[0]) == [joined(1, 1), joined(2, 2), left])
        #expect(Array(batched[1...]) == Array(frames[3...]))
        // Read back, the batched stream is the original one.
        #expect(try batched.flatMap { try PresencePayload.frames(of: $0) } == frames)
    }

    @Test("a run longer than a payload holds is split; a single presence frame stays as it is")
    func limits() throws {
        let run = (1...UInt64(PresencePayload.maximumEntries + 5)).map { joined($0, $0) }
        let batched = PresencePayload.batching(run)
        #expect(batched.count == 2)
        #expect(try PresencePayload(decoding: batched[0].payload).entries.count == PresencePayload.maximumEntries)
        #expect(try PresencePayload(decoding: batched[1].payload).entries.count == 5)
        #expect(PresencePayload.batching([joined(1, 1)]) == [joined(1, 1)])
        #expect(PresencePayload.batching([joined(1, 1), Frame(type: .ack, session: session, sender: .relay)]).map(\.type) == [.joined, .ack])
    }
}
