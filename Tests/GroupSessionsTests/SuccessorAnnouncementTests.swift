@testable import GroupSessions
import PropertyBased
import Testing

@Suite("The successor announcement's wire format")
struct SuccessorAnnouncementTests {
    @Test("any announcement round-trips, with appended bytes from a newer member ignored")
    func roundTrip() async {
        await propertyCheck(
            count: 200,
            input: Gen.uint64(), Gen.uint64(), Gen.uint8().array(of: 32...32), Gen.uint8().array(of: 0...40)
        ) { high, low, secret, trailer in
            let original = SuccessorAnnouncement(
                session: SessionID(high: high, low: low), secret: secret, activityIdentifier: "org.example.\(high)")
            let bytes = original.encoded()
            let decoded = try SuccessorAnnouncement(decoding: bytes)
            let extended = try SuccessorAnnouncement(decoding: bytes + trailer)
            #expect(decoded == original)
            #expect(extended == original)
        }
    }

    @Test("every truncation, version 0 and a wrong secret length are rejected")
    func rejects() throws {
        let original = SuccessorAnnouncement(
            session: .random(), secret: Array(repeating: 7, count: 32), activityIdentifier: "org.example.movie")
        let bytes = original.encoded()
        for length in 0..<bytes.count {
            let truncated = Array(bytes.prefix(length))
            #expect(throws: PayloadDecodingError.self) { try SuccessorAnnouncement(decoding: truncated) }
        }
        var versionZero = bytes
        versionZero[0] = 0
        #expect(throws: PayloadDecodingError.self) { try SuccessorAnnouncement(decoding: versionZero) }
        let shortSecret = SuccessorAnnouncement(session: .random(), secret: [1, 2, 3], activityIdentifier: "x")
        #expect(throws: PayloadDecodingError.self) { try SuccessorAnnouncement(decoding: shortSecret.encoded()) }
    }
}
