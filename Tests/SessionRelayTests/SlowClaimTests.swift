import GroupSessions
import Logging
import SessionRelay
import Synchronization
import Testing
import TestSupport

/// A shared store that takes its time to say who serves a session (a loaded database): claims
/// wait until the test lets them go.
final class SlowClaimStore: SessionPersistence {
    private let released = Mutex<[CheckedContinuation<Void, Never>]?>([])

    func commit(_ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?) async throws {}
    func needsCompaction(_ session: SessionID) -> Bool { false }
    func compact(_ snapshot: SessionSnapshot) async throws {}
    func load() async throws -> [SessionSnapshot] { [] }
    func release(_ session: SessionID, lease: SessionLease?) async {}

    func claim(_ session: SessionID) async throws -> SessionClaim {
        await withCheckedContinuation { continuation in
            let waiting = released.withLock { waiters -> Bool in
                guard waiters != nil else { return false }
                waiters?.append(continuation)
                return true
            }
            if !waiting { continuation.resume() }
        }
        return .serve(nil, lease: nil)
    }

    /// Lets every claim, present and future, go.
    func letClaimsGo() {
        let waiters = released.withLock { waiters in
            defer { waiters = nil }
            return waiters ?? []
        }
        for waiter in waiters { waiter.resume() }
    }
}

@Suite("A hello whose session the store is slow to claim")
struct SlowClaimTests {
    @Test("pings are answered while the store is asked; the welcome and the frames sent meanwhile follow in order")
    func pingsAnsweredWhileBinding() async throws {
        let store = SlowClaimStore()
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.store = store
        try await withRelay(configuration) { _, port in
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let id = ParticipantID.random()
            let connection = try await RelayTransport(host: "127.0.0.1", port: port).connect(logger: Logger(label: "raw"))
            let received = Collector(connection.inbound)
            try connection.send(
                Frame(type: .hello, session: invite.session, sender: id,
                      payload: HelloPayload(token: SessionKeys(invite: invite).joinToken).encoded()))
            try connection.send(Frame(type: .join, session: invite.session, sender: id))
            try connection.send(Frame(type: .ping, session: invite.session, sender: id, sequence: 42))
            await eventually("the ping answered while the claim waits") {
                received.values.contains { $0.type == .pong && $0.sequence == 42 }
            }
            #expect(!received.values.contains { $0.type == .welcome }, "no welcome before the store answered")
            store.letClaimsGo()
            await eventually("welcomed and joined once the store answered") {
                received.values.contains { $0.type == .joined && $0.sender == id }
            }
            let types = received.values.map(\.type)
            // Unwrapped with #require: a relay that never answered fails this test, not the test process.
            let welcome = try #require(types.firstIndex(of: .welcome), "no welcome: \(types)")
            let joined = try #require(types.firstIndex(of: .joined), "no joined: \(types)")
            #expect(welcome < joined)
            connection.close()
        }
    }
}
