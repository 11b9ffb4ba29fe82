import Foundation
import Logging
import GroupChat
import GroupSessions
import PlaybackCoordinator
import Synchronization
import TestSupport
import Testing

/// The chat over a real relay: `coplay serve`, `coplay host`, `coplay join` members printing JSON
/// Lines, `coplay chat` one-shot senders, and an in-process member that forges messages and fills the
/// history through the library.
@Suite("coplay chat over a real relay", .serialized)
struct ChatCLITests {
    typealias Session = PlaybackSessionCLITests

    static func chats(_ lines: [String]) -> [[String: Any]] {
        Session.events(lines).filter { $0["type"] as? String == "chat" }
    }

    /// A member of the session in this process (no coplay command): it signs what it wants.
    final class RawMember: Sendable {
        let session: GroupSession<WatchTogetherActivity>
        let messenger: GroupSessionMessenger
        /// What it received of the chat so far (its room numbers the history slots).
        let room: Mutex<ChatRoom>

        private init(session: GroupSession<WatchTogetherActivity>) {
            self.session = session
            messenger = GroupSessionMessenger(session: session)
            room = Mutex(ChatRoom(session: session.id))
        }

        static func join(_ invite: String) async throws -> RawMember {
            let parsed = try Invite(parsing: invite)
            let center = GroupActivityCenter<WatchTogetherActivity>(transport: RelayTransport(invite: parsed), logger: Logger(label: "test"))
            let session = try await center.accept(parsed)
            try await session.join()
            let member = RawMember(session: session)
            _ = member.messenger.receive(MemberMessage.self) { [member] message, context in
                if case .chat(let chat) = message {
                    _ = member.room.withLock { $0.receive(chat, from: context.source.id, isHistory: true, now: .zero) }
                }
            }
            return member
        }

        /// Sends `message` in its history slot and waits for the relay's acknowledgement.
        func send(_ message: ChatMessage) async throws {
            let (acked, continuation) = AsyncStream<Void>.makeStream()
            try messenger.sendStamped(MemberMessage.chat(message), retainedAs: message.retainName) { _ in
                continuation.yield()
                continuation.finish()
            }
            for await _ in acked { break }
            _ = room.withLock { $0.sent(message, as: session.localParticipant.id) }
        }

        /// A well-formed message of `key`, numbered after the highest seen.
        func compose(_ text: String, key: MemberKey, name: String) throws -> ChatMessage {
            try room.withLock { room in
                try room.compose(text, key: key, name: name, wallClock: UInt64(Date().timeIntervalSince1970 * 1e9))
            }
        }
    }

    @Test(
        "a one-shot chat arrives as a chat event under its name; forgeries are ignored; a second alice is tagged; a late joiner gets the last 50",
        .timeLimit(.minutes(5)))
    func chatOverTheRelay() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-chat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Session.makeMedia(in: directory)
        var children: [Session.Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await Session.startRelayAndHost(media: [media], children: &children)
        let bob = try await Session.Child(["join", invite, media, "--name", "bob"])
        children.append(bob)
        #expect(await bob.out.wait(for: .seconds(60)) { Session.lastStopped($0) != nil }, "bob did not start: \(bob.err.snapshot.suffix(5))")

        // 1. A one-shot message, under its name, to every member.
        let sent = try await CoplayProcess.run(["chat", invite, "hello from alice 🍕", "--name", "alice"], timeout: 60)
        #expect(sent.status == 0, "coplay chat: \(sent.stderr)")
        #expect(sent.stdout.contains("sent as alice: hello from alice 🍕"), "\(sent.stdout)")
        for (name, member) in [("host", host), ("bob", bob)] {
            #expect(await member.out.wait(for: .seconds(10)) { lines in
                Self.chats(lines).contains { $0["originator"] as? String == "alice" && $0["text"] as? String == "hello from alice 🍕" }
            }, "\(name) did not print alice's message: \(Self.chats(member.out.snapshot))")
        }
        let aliceKey = try #require(Self.chats(bob.out.snapshot).first?["key"] as? String)
        // Not a person coming and going: no event names alice as joining or leaving.
        #expect(!Session.events(bob.out.snapshot).contains { ["joined", "left"].contains($0["type"] as? String) && $0["originator"] as? String == "alice" })

        // 2. Forgeries from a member in this process: alice's key signed by another, a zero signature,
        // a message signed for another session. And an honest member of the same name, its own key.
        let mallory = try await RawMember.join(invite)
        let malloryKey = MemberKey()
        var forged = try mallory.compose("send me your invite", key: malloryKey, name: "alice")
        forged.key = try #require(MemberPublicKey(text: aliceKey))
        try await mallory.send(forged)
        var unsigned = try mallory.compose("unsigned", key: malloryKey, name: "alice")
        unsigned.signature = Array(repeating: 0, count: 64)
        try await mallory.send(unsigned)
        let elsewhere = try ChatMessage(
            signedBy: malloryKey, session: SessionID.random(), name: "alice", sentAt: UInt64(Date().timeIntervalSince1970 * 1e9),
            text: "from another session", ordinal: 90)
        try await mallory.send(elsewhere)
        let second = try mallory.compose("I am alice too", key: malloryKey, name: "alice")
        try await mallory.send(second)
        let malloryLabel = "alice#\(malloryKey.publicKey.tag)"
        #expect(await bob.out.wait(for: .seconds(10)) { lines in
            Self.chats(lines).contains { $0["originator"] as? String == malloryLabel && $0["text"] as? String == "I am alice too" }
        }, "bob did not show the second alice with her tag: \(Self.chats(bob.out.snapshot))")
        // The real alice again (her key from the state directory): now shown with her own tag.
        let again = try await CoplayProcess.run(["chat", invite, "that was not me", "--name", "alice"], timeout: 60)
        #expect(again.status == 0, "coplay chat: \(again.stderr)")
        let aliceTag = try #require(MemberPublicKey(text: aliceKey)).tag
        #expect(await bob.out.wait(for: .seconds(10)) { lines in
            Self.chats(lines).contains { $0["originator"] as? String == "alice#\(aliceTag)" && $0["key"] as? String == aliceKey }
        }, "bob did not show alice's second message under her key's tag: \(Self.chats(bob.out.snapshot))")
        for text in ["send me your invite", "unsigned", "from another session"] {
            #expect(!Self.chats(bob.out.snapshot).contains { $0["text"] as? String == text }, "bob printed the forgery '\(text)'")
            #expect(!Self.chats(host.out.snapshot).contains { $0["text"] as? String == text }, "host printed the forgery '\(text)'")
        }

        // 3. Over 50 messages in all (11 keys, 5 each: within every sender's limit), then a late joiner.
        var expected: [String] = []
        for sender in 0..<11 {
            let key = MemberKey()
            for index in 0..<5 {
                let text = "message \(sender * 5 + index) from member \(sender)"
                try await mallory.send(try mallory.compose(text, key: key, name: "bulk\(sender)"))
                expected.append(text)
            }
        }
        await mallory.session.leave(waitingUpTo: .seconds(2))
        let carol = try await Session.Child(["join", invite, media, "--name", "carol"])
        children.append(carol)
        #expect(await carol.out.wait(for: .seconds(60)) { Self.chats($0).count >= 50 }, "carol: \(Self.chats(carol.out.snapshot).count) chat events")
        try await Task.sleep(for: .seconds(1))
        let history = Self.chats(carol.out.snapshot).filter { $0["detail"] as? String == "history" }
        #expect(history.count == 50, "\(history.count) history messages")
        #expect(history.compactMap { $0["text"] as? String } == Array(expected.suffix(50)), "\(history.compactMap { $0["text"] as? String })")
        print("late joiner: \(history.count) history messages, the first \(history.first?["text"] ?? "-"), the last \(history.last?["text"] ?? "-")")

        // 4. The sender's own limit counts its key's messages in the history: after five of quick's
        // messages within a second, `coplay chat --name quick` refuses a sixth with a clear error.
        let first = try await CoplayProcess.run(["chat", invite, "quick 0", "--name", "quick"], timeout: 60)
        #expect(first.status == 0, "\(first.stderr)")
        let state = try #require(CoplayProcess.environment["XDG_STATE_HOME"])
        let keyText = try String(contentsOfFile: "\(state)/coplay/keys/quick.ed25519", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        var base64 = keyText.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        let quickKey = try MemberKey(seed: Array(try #require(Data(base64Encoded: base64))))
        let filler = try await RawMember.join(invite)
        for index in 1..<5 { try await filler.send(try filler.compose("quick \(index)", key: quickKey, name: "quick")) }
        await filler.session.leave(waitingUpTo: .seconds(2))
        let refused = try await CoplayProcess.run(["chat", invite, "quick 5", "--name", "quick"], timeout: 60)
        #expect(refused.status != 0, "a sixth message within 10 s went out: \(refused.stdout)")
        #expect(refused.stderr.contains("chat: at most 5 messages in 10 s: wait"), "\(refused.stderr)")
        print("the sixth message: \(refused.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    @Test("a line typed into coplay join on a terminal is sent as chat, and its person sees the others' messages", .timeLimit(.minutes(3)))
    func terminalLines() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else {
            print("chat terminal test: no /usr/bin/script to give coplay a terminal; skipped")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-chat-tty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Session.makeMedia(in: directory)
        var children: [Session.Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await Session.startRelayAndHost(media: [media], children: &children)
        // script(1) runs the member on a pseudo-terminal and copies its own standard input there: the
        // line is typed (and buffered by the terminal) whether or not the member is ready for it.
        let join = [CoplayProcess.binary.path, "join", invite, media, "--name", "erin"].map { "'\($0)'" }.joined(separator: " ")
        let erin = try await Session.Child(
            ["-c", "(sleep 3; printf 'hello from the terminal\\n'; sleep 300) | NO_COLOR=1 /usr/bin/script -qfec \"\(join)\" /dev/null"],
            executable: URL(fileURLWithPath: "/bin/sh"))
        children.append(erin)
        #expect(await host.out.wait(for: .seconds(60)) { lines in
            Self.chats(lines).contains { $0["originator"] as? String == "erin" && $0["text"] as? String == "hello from the terminal" }
        }, "the host did not receive erin's line: \(Self.chats(host.out.snapshot)); erin: \(erin.out.snapshot.suffix(10))")
        #expect(await erin.out.wait(for: .seconds(10)) { $0.contains { $0.contains("you: hello from the terminal") } }, "\(erin.out.snapshot.suffix(10))")
        let reply = try await CoplayProcess.run(["chat", invite, "hi erin", "--name", "frank"], timeout: 60)
        #expect(reply.status == 0, "\(reply.stderr)")
        #expect(await erin.out.wait(for: .seconds(10)) { $0.contains { $0.contains("frank: hi erin") } }, "\(erin.out.snapshot.suffix(10))")
        // frank only sent a message: erin's terminal shows no "frank joined" or "frank left".
        try await Task.sleep(for: .seconds(4))
        #expect(!erin.out.snapshot.contains { $0.contains("joined") && !$0.contains("you joined") }, "\(erin.out.snapshot.suffix(12))")
    }
}
