import Foundation
import GroupChat
import GroupSessions
import Testing
import TestSupport

/// The shared chat vectors `Tests/Vectors/chat/chat.json`, written here and read by
/// `Tests/Web/chat.test.mjs`: keys from fixed seeds, the signed bytes of identities and messages
/// with their Ed25519 signatures, text cleaning, and a scenario of received messages (names bound
/// to keys, labels, forgeries, replays, flooding) with what a member does with each.
///
/// After a deliberate change: `COPLAY_WRITE_VECTORS=1 swift test --filter ChatVectorTests`, review the
/// diff, then make the page pass `node --test Tests/Web/`.
@Suite struct ChatVectorTests {
    static let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/chat/chat.json")
    static var writing: Bool { ProcessInfo.processInfo.environment["COPLAY_WRITE_VECTORS"] == "1" }

    static let session = SessionID(hex: "0123456789abcdef0123456789abcdef")!
    static let otherSession = SessionID(hex: "fedcba9876543210fedcba9876543210")!
    static let seeds: [(name: String, seed: [UInt8])] = [
        ("alice", Array(1...32)), ("bob", Array(33...64)), ("mallory", Array(65...96)),
    ]
    static func key(_ index: Int) -> MemberKey { try! MemberKey(seed: seeds[index].seed) }
    static let alice = ParticipantID(rawValue: 0x1111_2222_3333_4444)
    static let bob = ParticipantID(rawValue: 0x5555_6666_7777_8888)
    static let mallory = ParticipantID(rawValue: 0x9999_aaaa_bbbb_cccc)
    static let oneShot = ParticipantID(rawValue: 0x0000_0000_0000_0042)
    static let t0: UInt64 = 1_790_000_000_950_000_000

    struct Vector: Codable, Equatable {
        var description: String
        var session: String
        var keys: [Key]
        var identities: [Signed]
        var messages: [Signed]
        var cleaning: [Cleaning]
        var scenario: [Step]
    }

    struct Key: Codable, Equatable {
        var name: String
        var seed: String
        var publicKey: String
        var tag: String
    }

    /// A signed statement: its wire body (JSON text), the bytes signed (hex) and the signature.
    struct Signed: Codable, Equatable {
        var name: String
        var key: Int
        var body: String
        var canonical: String
        var signature: String
    }

    struct Cleaning: Codable, Equatable {
        var input: String
        var cleaned: String
        var clean: Bool
        var length: Int
    }

    /// One received message: `from` is the frame's sender; `expect` is `accepted LABEL` or
    /// `ignored REASON` (for identities: `bound` or `ignored`).
    struct Step: Codable, Equatable {
        var name: String
        var body: String
        var from: String
        var history: Bool
        var nowMs: Int
        var expect: String
    }

    static func body(_ message: MemberMessage) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(message), as: UTF8.self)
    }



    static func chat(_ key: Int, name: String? = nil, text: String, at offset: UInt64, ordinal: UInt64 = 0, session: SessionID = session)
        throws -> ChatMessage
    {
        try ChatMessage(signedBy: Self.key(key), session: session, name: name ?? seeds[key].name, sentAt: t0 + offset, text: text, ordinal: ordinal)
    }

    static func identity(_ key: Int, participant: ParticipantID, name: String? = nil) throws -> MemberIdentity {
        try MemberIdentity(signedBy: Self.key(key), session: session, participant: participant, name: name ?? seeds[key].name)
    }

    static func make() throws -> Vector {
        let keys = seeds.enumerated().map { index, entry in
            Key(name: entry.name, seed: base64url(entry.seed), publicKey: key(index).publicKey.text, tag: key(index).publicKey.tag)
        }
        let identities = try [(0, alice, "alice"), (1, bob, "bob"), (2, mallory, "Zoë 🎬")].map { index, participant, name in
            let identity = try identity(index, participant: participant, name: name)
            return Signed(
                name: "identity of \(name)", key: index, body: try body(.identity(identity)),
                canonical: hex(identity.canonicalBytes(session: session)), signature: base64url(identity.signature))
        }
        let texts: [(Int, String, String)] = [
            (0, "plain", "hello"),
            (1, "emoji with joiners and a variation selector", "👩‍👩‍👧 ❤️ 🍕"),
            (0, "quotes, backslash and a slash", "she said \"hi\" \\ back/forth"),
            (2, "right-to-left script and combining marks", "שלום é"),
        ]
        let messages = try texts.enumerated().map { index, entry in
            let message = try chat(entry.0, text: entry.2, at: UInt64(index), ordinal: UInt64(index))
            return Signed(
                name: entry.1, key: entry.0, body: try body(.chat(message)), canonical: hex(message.canonicalBytes(session: session)),
                signature: base64url(message.signature))
        }
        let cleaning = [
            "hello", "  padded\u{3000} ", "two\nlines\r\nand\ttab", "bell\u{07}and\u{7F}del\u{85}nel", "bidi \u{202E}evil\u{202C} \u{2066}x\u{2069}",
            "zero\u{200B}width\u{FEFF}", "👩‍👩‍👧 keeps its joiners", "e\u{301} stays decomposed", "", " \n\t ", "line\u{2028}sep",
        ].map { input in
            let cleaned = ChatText.cleaned(input)
            return Cleaning(input: input, cleaned: cleaned, clean: ChatText.isClean(input), length: ChatText.length(input))
        }
        return Vector(
            description: "Member keys and chat (docs/protocol.md, \"Member messages\"), written by Tests/GroupChatTests/ChatVectorTests.swift, read by Tests/Web/chat.test.mjs. keys: Ed25519 from fixed seeds (base64url), tag = first 3 bytes of SHA-256(public key) in hex. identities/messages: body is the MemberMessage JSON as sent; canonical the signed bytes (hex); signature base64url (Ed25519 is deterministic: signing canonical with the key's seed gives it). cleaning: ChatText.cleaned / isClean / length in Unicode scalars. scenario: a member of session `session` receives each body from participant `from` in order, at nowMs (monotonic, for the flooding limit), history = from the relay's slots at joining; expect is `bound`/`ignored` for identities, `accepted LABEL` or `ignored REASON` for chat.",
            session: hex(session.bytes), keys: keys, identities: identities, messages: messages, cleaning: cleaning,
            scenario: try scenario())
    }

    /// Received messages, with what a member makes of each (computed by ChatRoom).
    static func scenario() throws -> [Step] {
        var steps: [(name: String, message: MemberMessage, from: ParticipantID, history: Bool, nowMs: Int)] = []
        func add(_ name: String, _ message: MemberMessage, from: ParticipantID, history: Bool = false, nowMs: Int = 0) {
            steps.append((name, message, from, history, nowMs))
        }
        // History first, as at joining: bob's old message (bob has left since).
        add("history: bob's message from before", .chat(try chat(1, text: "earlier", at: 1, ordinal: 7)), from: bob, history: true)
        add("alice announces herself", .identity(try identity(0, participant: alice)), from: alice)
        add("alice's identity replayed by another participant", .identity(try identity(0, participant: alice)), from: mallory)
        add("alice chats", .chat(try chat(0, text: "hello", at: 10, ordinal: 8)), from: alice, nowMs: 10)
        add("the same message again (replay)", .chat(try chat(0, text: "hello", at: 10, ordinal: 8)), from: alice, nowMs: 20)
        var altered = try chat(0, text: "hello", at: 11, ordinal: 9)
        altered.text = "send me the invite"
        add("altered text", .chat(altered), from: alice, nowMs: 30)
        add("signed for another session", .chat(try chat(0, text: "hi", at: 12, ordinal: 9, session: otherSession)), from: alice, nowMs: 40)
        var forged = try chat(2, name: "alice", text: "I am alice", at: 13, ordinal: 9)
        forged.key = key(0).publicKey
        add("alice's key, signed by mallory", .chat(forged), from: mallory, nowMs: 50)
        var unsigned = try chat(0, text: "unsigned", at: 14, ordinal: 9)
        unsigned.signature = Array(repeating: 0, count: 64)
        add("zero signature", .chat(unsigned), from: mallory, nowMs: 60)
        add("mallory announces herself as alice", .identity(try identity(2, participant: mallory, name: "alice")), from: mallory)
        add("alice's participant signs with mallory's key", .chat(try chat(2, name: "alice", text: "me again", at: 15, ordinal: 9)), from: alice, nowMs: 70)
        add("mallory chats as alice: shown with her tag", .chat(try chat(2, name: "alice", text: "I am alice", at: 16, ordinal: 9)), from: mallory, nowMs: 80)
        add("alice chats again: now with her tag too", .chat(try chat(0, text: "that is not me", at: 17, ordinal: 10)), from: alice, nowMs: 90)
        add("a one-shot sender (no identity) named bob, bob's key", .chat(try chat(1, text: "hi from the command line", at: 18, ordinal: 11)), from: oneShot, nowMs: 100)
        add("a name with a hash always shows a tag", .chat(try chat(1, name: "bob#123456", text: "x", at: 19, ordinal: 12)), from: oneShot, nowMs: 110)
        add("control character in the text", .chat(try chat(1, text: "ding\u{07}", at: 20, ordinal: 13)), from: oneShot, nowMs: 120)
        add("line break in the text", .chat(try chat(1, text: "a\nb", at: 21, ordinal: 13)), from: oneShot, nowMs: 130)
        add("501 characters", .chat(try chat(1, text: String(repeating: "x", count: 501), at: 22, ordinal: 13)), from: oneShot, nowMs: 140)
        add("500 characters", .chat(try chat(1, text: String(repeating: "é", count: 500), at: 23, ordinal: 13)), from: oneShot, nowMs: 150)
        // Flooding: bob's key sent 3 live messages within 150 ms (the malformed ones spend nothing;
        // 10 are allowed at once, then 1 per second): 7 of these 9 pass.
        for index in 0..<9 {
            add("flood \(index + 1)", .chat(try chat(1, text: "spam \(index)", at: 100 + UInt64(index), ordinal: 14 + UInt64(index))), from: oneShot, nowMs: 200)
        }
        add("a second later one more passes", .chat(try chat(1, text: "calm", at: 200, ordinal: 30)), from: oneShot, nowMs: 1250)
        var room = ChatRoom(session: session)
        return try steps.map { step in
            let expect: String
            switch step.message {
            case .identity(let identity):
                expect = room.receive(identity: identity, from: step.from) ? "bound" : "ignored"
            case .chat(let message):
                switch room.receive(message, from: step.from, isHistory: step.history, now: .milliseconds(step.nowMs)) {
                case .success(let entry): expect = "accepted \(entry.label)"
                case .failure(let reason): expect = "ignored \(reason.rawValue)"
                }
            case .role, .unsupported, .sealingKey, .removal: expect = "ignored"
            }
            return Step(name: step.name, body: try body(step.message), from: step.from.description, history: step.history, nowMs: step.nowMs, expect: expect)
        }
    }

    @Test func sharedVectors() throws {
        let vector = try Self.make()
        guard let stored = try VectorFile.writeOrRead(vector, at: Self.file, writing: Self.writing) else { return }
        #expect(stored == vector, "the file differs from the Swift values; run with COPLAY_WRITE_VECTORS=1 after a deliberate change")
    }

    @Test func theScenarioShowsEachRule() throws {
        let steps = try Self.scenario()
        func expect(_ name: String) -> String? { steps.first { $0.name == name }?.expect }
        #expect(expect("history: bob's message from before") == "accepted bob")
        #expect(expect("alice announces herself") == "bound")
        #expect(expect("alice's identity replayed by another participant") == "ignored")
        #expect(expect("alice chats") == "accepted alice")
        #expect(expect("the same message again (replay)") == "ignored replay")
        #expect(expect("altered text") == "ignored badSignature")
        #expect(expect("signed for another session") == "ignored badSignature")
        #expect(expect("alice's key, signed by mallory") == "ignored badSignature")
        #expect(expect("zero signature") == "ignored badSignature")
        #expect(expect("mallory announces herself as alice") == "bound")
        #expect(expect("alice's participant signs with mallory's key") == "ignored notTheSendersKey")
        let malloryTag = Self.key(2).publicKey.tag
        let aliceTag = Self.key(0).publicKey.tag
        #expect(expect("mallory chats as alice: shown with her tag") == "accepted alice#\(malloryTag)")
        #expect(expect("alice chats again: now with her tag too") == "accepted alice#\(aliceTag)")
        #expect(expect("a one-shot sender (no identity) named bob, bob's key") == "accepted bob")
        #expect(expect("a name with a hash always shows a tag") == "accepted bob#123456#\(Self.key(1).publicKey.tag)")
        #expect(expect("control character in the text") == "ignored malformed")
        #expect(expect("line break in the text") == "ignored malformed")
        #expect(expect("501 characters") == "ignored malformed")
        #expect(expect("500 characters") == "accepted bob")
        // 10 at once per key: bob's key sent 3 live messages before the flood (the malformed ones
        // spend nothing), so 7 of the 9 pass and the last 2 are ignored.
        let flood = steps.filter { $0.name.hasPrefix("flood") }.map(\.expect)
        #expect(flood.prefix(7).allSatisfy { $0.hasPrefix("accepted") }, "\(flood)")
        #expect(flood.suffix(2).allSatisfy { $0 == "ignored flooding" }, "\(flood)")
        #expect(expect("a second later one more passes")?.hasPrefix("accepted") == true)
    }

    @Test func signaturesAreDeterministicAndVerify() throws {
        for index in Self.seeds.indices {
            let key = Self.key(index)
            let message = Array("coplay".utf8)
            let signature = try key.signature(for: message)
            #expect(try key.signature(for: message) == signature)
            #expect(key.publicKey.isValidSignature(signature, for: message))
            #expect(!key.publicKey.isValidSignature(signature, for: message + [0]))
        }
    }
}
