import Foundation
import GroupChat
import GroupSessions
import PropertyBased
import Testing

@Suite struct ChatRoomTests {
    static let session = SessionID(hex: "00112233445566778899aabbccddeeff")!
    var session: SessionID { Self.session }

    @Test func composeCleansSignsAndNumbersAfterTheHighestSeen() throws {
        var room = ChatRoom(session: session)
        let key = MemberKey()
        let first = try room.compose("  hi\nthere\u{07} ", key: key, name: "ana", wallClock: 5)
        #expect(first.text == "hi there")
        #expect(first.ordinal == 0)
        #expect(first.isValid(in: session))
        _ = room.sent(first, as: ParticipantID(rawValue: 1))
        let other = MemberKey()
        let theirs = try ChatMessage(signedBy: other, session: session, name: "bo", sentAt: 9, text: "x", ordinal: 41)
        #expect(throws: Never.self) { try room.receive(theirs, from: ParticipantID(rawValue: 2), isHistory: false, now: .zero).get() }
        let next = try room.compose("again", key: key, name: "ana", wallClock: 1)
        #expect(next.ordinal == 42)
        #expect(next.sentAt == 6, "sentAt stays unique per key when the wall clock steps back")
        #expect(next.retainName == "coplay.chat.42")
        #expect(try ChatMessage(signedBy: key, session: session, name: "a", sentAt: 1, text: "b", ordinal: 50).retainName == "coplay.chat.0")
    }

    @Test func composeRefusesEmptyTooLongAndTooFast() throws {
        var room = ChatRoom(session: session)
        let key = MemberKey()
        #expect(throws: ChatError.emptyMessage()) { try room.compose(" \n\u{200B} ", key: key, name: "a", wallClock: 1) }
        #expect(throws: ChatError.tooLong(501)) {
            try room.compose(String(repeating: "🍕", count: 501), key: key, name: "a", wallClock: 1)
        }
        for index in 0..<ChatLimits.sendBurst {
            _ = try room.compose("m\(index)", key: key, name: "a", wallClock: 1)
        }
        do {
            _ = try room.compose("one too many", key: key, name: "a", wallClock: 1)
            Issue.record("the sixth message in 10 ms went out")
        } catch {
            #expect(error == .rateLimited(wait: 0))
            #expect(error.description == "chat: at most 5 messages in 10 s: wait 10.0 s", "\(error)")
        }
        // 10 s after the first, the window holds four.
        _ = try room.compose("later", key: key, name: "a", wallClock: 10_000_000_001)

        // A `coplay chat` run counts the runs before it: its own key's messages in the history.
        var next = ChatRoom(session: session)
        let start: UInt64 = 1_790_000_000_000_000_000
        for index in 0..<5 {
            let earlier = try ChatMessage(signedBy: key, session: session, name: "a", sentAt: start + UInt64(index) * 1_000_000_000, text: "m", ordinal: UInt64(index))
            _ = next.receive(earlier, from: ParticipantID(rawValue: 9), isHistory: true, now: .zero)
        }
        do {
            _ = try next.compose("sixth", key: key, name: "a", wallClock: start + 6_000_000_000)
            Issue.record("the sixth message within 10 s went out")
        } catch {
            #expect(error.description == "chat: at most 5 messages in 10 s: wait 4.0 s", "\(error)")
        }
        _ = try next.compose("sixth", key: key, name: "a", wallClock: start + 10_000_000_001)
    }

    @Test func namesThatLookTheSameAreTheSameName() {
        var directory = MemberDirectory()
        let first = MemberKey().publicKey
        let second = MemberKey().publicKey
        directory.record(name: "Zo\u{EB}", key: first)
        #expect(directory.label(name: "Zo\u{EB}", key: first) == "Zo\u{EB}")
        directory.record(name: "Zoe\u{308}", key: second)
        #expect(directory.label(name: "Zo\u{EB}", key: first) == "Zo\u{EB}#\(first.tag)")
        #expect(directory.label(name: "Zoe\u{308}", key: second) == "Zoe\u{308}#\(second.tag)")
    }

    @Test func unknownKindsAndNewerVersionsAreUnsupported() throws {
        let decoder = JSONDecoder()
        #expect(try decoder.decode(MemberMessage.self, from: Data(#"{"kind":"grant","v":1,"x":2}"#.utf8)) == .unsupported(kind: "grant", version: 1))
        #expect(try decoder.decode(MemberMessage.self, from: Data(#"{"kind":"chat","v":2}"#.utf8)) == .unsupported(kind: "chat", version: 2))
        #expect(throws: DecodingError.self) { try decoder.decode(MemberMessage.self, from: Data(#"{"kind":"chat","v":0}"#.utf8)) }
        #expect(throws: DecodingError.self) {
            try decoder.decode(
                MemberMessage.self, from: Data(#"{"kind":"chat","v":1,"name":"a","key":"AAAA","sentAt":1,"text":"b","n":0,"signature":"AAAA"}"#.utf8))
        }
    }

    @Test func messagesRoundTripThroughJSON() async {
        let session = Self.session
        await propertyCheck(input: Gen.int(in: 0...499), Gen.uint64(in: 0...UInt64.max)) { length, sentAt in
            let key = MemberKey()
            let text = ChatText.cleaned(String(repeating: "é🍕 ", count: length / 3 + 1))
            let message = try! ChatMessage(
                signedBy: key, session: session, name: "n", sentAt: sentAt, text: String(text.unicodeScalars.prefix(500)), ordinal: sentAt / 3)
            let data = try! JSONEncoder().encode(MemberMessage.chat(message))
            let decoded = try! JSONDecoder().decode(MemberMessage.self, from: data)
            #expect(decoded == .chat(message))
            #expect(message.isValid(in: session))
        }
    }

    @Test func cleaningIsIdempotentAndLeavesNoControls() async {
        await propertyCheck(input: Gen.uint32(in: 0...0x2FFFF).array(of: 0...40)) { values in
            var text = String.UnicodeScalarView()
            text.append(contentsOf: values.compactMap(Unicode.Scalar.init))
            let cleaned = ChatText.cleaned(String(text))
            #expect(ChatText.cleaned(cleaned).unicodeScalars.elementsEqual(cleaned.unicodeScalars))
            #expect(ChatText.isClean(cleaned))
            #expect(!cleaned.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        }
    }
}
