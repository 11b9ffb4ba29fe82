import Foundation
import Logging
import GroupSessions
import Testing
import TestSupport

@Suite("Successor sessions: a new activity as a clean barrier (in-memory transport)")
struct SuccessorSessionTests {
    /// One member: its own center and the sessions that center delivered.
    struct Member {
        let center: GroupActivityCenter<WatchMovie>
        let delivered: Collector<GroupSession<WatchMovie>>

        init(_ transport: InMemoryTransport) {
            center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
            delivered = Collector(center.sessions)
        }
    }

    @Test("members get the successor with its activity; the old session ends everywhere; messages do not cross")
    func successorReplacesSession() async throws {
        let transport = InMemoryTransport()
        let (a, b, c, gone) = (Member(transport), Member(transport), Member(transport), Member(transport))
        let invite = Invite.generate(host: "local", port: 1)
        let oldA = try await a.center.activate(WatchMovie(movie: "A"), invite: invite)
        try await oldA.join()
        let oldB = try await b.center.accept(invite)
        let oldC = try await c.center.accept(invite)
        let oldGone = try await gone.center.accept(invite)
        let oldMessagesB = Collector(GroupSessionMessenger(session: oldB).messages(of: Chat.self))
        try await oldB.join()
        try await oldC.join()
        try await oldGone.join()
        await eventually("four members") { oldA.activeParticipants.count == 4 }
        oldGone.leave()
        await eventually("three members") { oldA.activeParticipants.count == 3 }

        try GroupSessionMessenger(session: oldA).send(Chat(sender: 1, index: 1, text: "old"))
        await eventually("b got the old message") { oldMessagesB.values.count == 1 }

        let newA = try await a.center.activate(WatchMovie(movie: "B"), replacing: oldA)
        #expect(newA.id != oldA.id)
        #expect(newA.state == .joined)
        #expect(newA.activity == WatchMovie(movie: "B"))

        await eventually("b and c got the successor") { b.delivered.values.count == 2 && c.delivered.values.count == 2 }
        let newB = try #require(b.delivered.values.last)
        let newC = try #require(c.delivered.values.last)
        #expect(newB.id == newA.id && newC.id == newA.id)
        #expect(newB.activity == WatchMovie(movie: "B"))
        #expect(newC.activity == WatchMovie(movie: "B"))
        #expect(newB.state == .waiting)
        await eventually("a's center delivered the successor too") { a.delivered.values.count == 2 }
        #expect(a.delivered.values.map(\.id) == [oldA.id, newA.id])

        for old in [oldA, oldB, oldC] {
            await eventually("old session ended") {
                if case .invalidated(.ended) = old.state { return true }
                return false
            }
        }

        let newMessages = [newA, newB, newC].map {
            Collector(GroupSessionMessenger(session: $0).messages(of: Chat.self))
        }
        try await newB.join()
        try await newC.join()
        await eventually("three members in the successor") {
            [newA, newB, newC].allSatisfy { $0.activeParticipants.count == 3 }
        }
        for (index, session) in [newA, newB, newC].enumerated() {
            try GroupSessionMessenger(session: session).send(Chat(sender: index, index: 2, text: "new"))
        }
        await eventually("each member got the two others' messages") { newMessages.allSatisfy { $0.values.count == 2 } }
        for (index, messages) in newMessages.enumerated() {
            #expect(messages.values.allSatisfy { $0.0.text == "new" && $0.0.sender != index })
        }
        #expect(oldMessagesB.values.map(\.0) == [Chat(sender: 1, index: 1, text: "old")])

        // The member that had left before the announcement got nothing new (b and c got theirs
        // long ago; give a wrong delivery time to show up anyway).
        try await Task.sleep(for: .milliseconds(200))
        #expect(gone.delivered.values.map(\.id) == [oldGone.id])
    }

    @Test("replacing a session that is not joined throws and leaves it alone")
    func replacingRequiresJoined() async throws {
        let transport = InMemoryTransport()
        let a = Member(transport)
        let invite = Invite.generate(host: "local", port: 1)
        let old = try await a.center.activate(WatchMovie(movie: "A"), invite: invite)
        await #expect(throws: GroupSessionError.self) {
            _ = try await a.center.activate(WatchMovie(movie: "B"), replacing: old)
        }
        #expect(old.state == .waiting)
        try await old.join()
        old.leave()
        await #expect(throws: GroupSessionError.self) {
            _ = try await a.center.activate(WatchMovie(movie: "B"), replacing: old)
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(a.delivered.values.map(\.id) == [old.id])
    }

    @Test("a member that received a successor can replace it in turn")
    func successorOfSuccessor() async throws {
        let transport = InMemoryTransport()
        let (a, b) = (Member(transport), Member(transport))
        let invite = Invite.generate(host: "local", port: 1)
        let first = try await a.center.activate(WatchMovie(movie: "A"), invite: invite)
        try await first.join()
        let firstB = try await b.center.accept(invite)
        try await firstB.join()
        await eventually("two members") { first.activeParticipants.count == 2 }

        let second = try await a.center.activate(WatchMovie(movie: "B"), replacing: first)
        await eventually("b got the second session") { b.delivered.values.count == 2 }
        let secondB = try #require(b.delivered.values.last)
        try await secondB.join()
        await eventually("two members in the second session") { second.activeParticipants.count == 2 }

        let third = try await b.center.activate(WatchMovie(movie: "C"), replacing: secondB)
        await eventually("a got the third session") { a.delivered.values.count == 3 }
        let thirdA = try #require(a.delivered.values.last)
        #expect(thirdA.id == third.id)
        #expect(thirdA.activity == WatchMovie(movie: "C"))
        await eventually("the second session ended for a") {
            if case .invalidated(.ended) = second.state { return true }
            return false
        }
    }
}
