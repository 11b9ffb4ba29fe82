import Foundation
import Logging
import GroupSessions
import Testing
import TestSupport

@Suite("Group sessions on the in-memory transport")
struct InMemorySessionTests {
    @Test("activate, accept, join, message, activity, end")
    func lifecycle() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "local", port: 1)
        let host = try await center.activate(WatchMovie(movie: "A"), invite: invite)
        #expect(host.state == .waiting)
        try await host.join()
        #expect(host.state == .joined)
        #expect(host.activeParticipants == [host.localParticipant])

        let guest = try await center.accept(invite)
        #expect(guest.activity == WatchMovie(movie: "A"))
        #expect(guest.state == .waiting)
        let hostMessages = Collector(GroupSessionMessenger(session: host).messages(of: Chat.self))
        try await guest.join()
        await eventually("host sees guest") { host.activeParticipants.count == 2 }
        #expect(guest.activeParticipants == [host.localParticipant, guest.localParticipant])

        try GroupSessionMessenger(session: guest).send(Chat(sender: 2, index: 1))
        await eventually("host gets the chat") { hostMessages.values.count == 1 }
        #expect(hostMessages.values.first?.0 == Chat(sender: 2, index: 1))
        #expect(hostMessages.values.first?.1.source == guest.localParticipant)

        try guest.setActivity(WatchMovie(movie: "B"))
        await eventually("host sees B") { host.activity.movie == "B" }
        #expect(guest.activity.movie == "B")

        try host.end()
        await eventually("both invalidated") {
            if case .invalidated(.ended) = guest.state, case .invalidated(.ended) = host.state { return true }
            return false
        }
    }

    /// An activity that declares no identifier of its own.
    struct Unnamed: GroupActivity, Equatable {
        var value = 1
        var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "unnamed", type: .generic) }
    }

    @Test("GroupActivities' spellings: Identifiable sessions, the invite read back to rejoin, a default activityIdentifier, State and Participants")
    func appleSpellings() async throws {
        #expect(Unnamed.activityIdentifier == "GroupSessionsTests.InMemorySessionTests.Unnamed")
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<Unnamed>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "local", port: 1)
        let host = try await center.activate(Unnamed(), invite: invite)
        try await host.join()
        let state: GroupSession<Unnamed>.State = host.state
        #expect(state == .joined)
        // The invite read back from a session is enough to join it again.
        let again = try await center.accept(host.invite)
        #expect(again.id == host.id)
        #expect(again.activity == Unnamed())
        let recipients: GroupSessionMessenger.Participants = .only([host.localParticipant])
        try await again.join()
        try GroupSessionMessenger(session: again).send(Data([1]), to: recipients)
        let sessions: [GroupSession<Unnamed>.ID] = [host.id, again.id]
        #expect(Set(sessions).count == 1)
        host.leave()
        again.leave()
    }

    @Test("a wrong secret is refused")
    func wrongSecret() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "local", port: 1)
        let host = try await center.activate(WatchMovie(movie: "A"), invite: invite)
        try await host.join()
        var wrong = invite
        wrong.secret[5] ^= 1
        await #expect(throws: GroupSessionError.self) { _ = try await center.accept(wrong) }
        #expect(host.activeParticipants.count == 1)
    }

    struct Ping: Codable, Sendable { var n: Int }
    struct Reply: Codable, Sendable { var n: Int }

    @Test("a handler may send and cancel its own subscription: handlers never run under the session's lock")
    func handlerCallsBack() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "local", port: 1)
        let host = try await center.activate(WatchMovie(movie: "A"), invite: invite)
        try await host.join()
        let guest = try await center.accept(invite)
        try await guest.join()
        let hostMessenger = GroupSessionMessenger(session: host)
        let guestMessenger = GroupSessionMessenger(session: guest)
        let replies = Collector(hostMessenger.messages(of: Reply.self))
        let own = LockedBox<GroupSessionMessenger.Subscription?>(nil)
        let subscription = guestMessenger.receive(Ping.self) { ping, _ in
            try? guestMessenger.send(Reply(n: ping.n))  // back into the session, from its read loop
            own.value?.cancel()  // and off: the next ping is not answered
        }
        own.mutate { $0 = subscription }
        // Registered second, so it runs after the first for the same message: a marker behind
        // whatever the first handler sent for the second ping.
        let marker = guestMessenger.receive(Ping.self) { ping, _ in
            if ping.n == 2 { try? guestMessenger.send(Reply(n: -1)) }
        }
        try hostMessenger.send(Ping(n: 1))
        try hostMessenger.send(Ping(n: 2))
        await eventually("the marker") { replies.values.contains { $0.0.n == -1 } }
        #expect(replies.values.map(\.0.n) == [1, -1])
        marker.cancel()
        host.leave()
        guest.leave()
    }
}
