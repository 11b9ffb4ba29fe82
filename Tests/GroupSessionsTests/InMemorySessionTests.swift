import Foundation
import GroupSessions
import Testing
import TestSupport

@Suite("Group sessions on the in-memory transport")
struct InMemorySessionTests {
    @Test("activate, accept, join, message, activity, end")
    func lifecycle() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<WatchMovie>(transport: transport)
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

    @Test("a wrong secret is refused")
    func wrongSecret() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<WatchMovie>(transport: transport)
        let invite = Invite.generate(host: "local", port: 1)
        let host = try await center.activate(WatchMovie(movie: "A"), invite: invite)
        try await host.join()
        var wrong = invite
        wrong.secret[5] ^= 1
        await #expect(throws: GroupSessionError.self) { _ = try await center.accept(wrong) }
        #expect(host.activeParticipants.count == 1)
    }
}
