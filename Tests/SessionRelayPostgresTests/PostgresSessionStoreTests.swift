import GroupSessions
import Logging
import SessionRelay
import SessionRelayPostgres
import Testing
import TestSupport

/// PostgresSessionStore against a real PostgreSQL 15 (skipped, with a message, without it).
@Suite("PostgreSQL session store", .serialized)
struct PostgresSessionStoreTests {
    static func commit(
        _ store: PostgresSessionStore, _ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?
    ) async throws {
        try await store.commit(events, of: session, lease: lease)
    }

    static func store(_ url: String, _ address: String) throws -> PostgresSessionStore {
        var configuration = PostgresSessionStore.Configuration(url: url, advertise: address)
        configuration.leaseDuration = .seconds(2)
        configuration.renewInterval = .milliseconds(200)
        return try PostgresSessionStore(configuration: configuration, logger: Logger(label: "test.store"))
    }

    @Test("two nodes migrate once; a live holder's session is a redirect; an expired one is taken over with its state and a higher epoch; the old epoch's writes are refused")
    func leasesAndFencing() async throws {
        guard let postgres = try await TemporaryPostgres.startIfAvailable() else { return }
        defer { postgres.stop() }
        let a = try Self.store(postgres.url, "a.example:7001")
        let b = try Self.store(postgres.url, "b.example:7002")
        let session = SessionID.random()
        let member = ParticipantID(rawValue: 5)
        try await b.run {
            // `a` runs until it has written the session, then stops renewing (as if killed).
            let leaseA: SessionLease? = try await a.run {
                async let preparedA: Void = a.prepare()
                async let preparedB: Void = b.prepare()
                _ = try await (preparedA, preparedB)
                #expect(try await postgres.psql("SELECT string_agg(version::text, ',') FROM schema_migrations") == "1\n")

                guard case .serve(nil, let leaseA?) = try await a.claim(session) else {
                    Issue.record("a new session is not served by the first node that asks")
                    return nil
                }
                let snapshot = SessionSnapshot(
                    session: session, tokenHash: Array(repeating: 7, count: 32), sequence: 0, logFloor: 0, joined: [member],
                    senderHigh: [:])
                let joined = Frame(type: .joined, session: session, sender: member, sequence: 1)
                try await Self.commit(a, [.updated(snapshot), .logged(session, joined)], of: session, lease: leaseA)

                guard case .redirect(let address) = try await b.claim(session) else {
                    Issue.record("a session held by a live node is not a redirect")
                    return nil
                }
                #expect(address == "a.example:7001")
                return leaseA
            }
            guard let leaseA else { return }

            // The holder stopped renewing: its lease expires and the other node takes over.
            guard case .serve(let loaded?, let leaseB?) = try await b.claim(session) else {
                Issue.record("an expired lease is not taken over")
                return
            }
            #expect(leaseB.epoch > leaseA.epoch)
            #expect(loaded.joined == [member])
            #expect(loaded.log.map(\.sequence) == [1])
            #expect(loaded.tokenHash == Array(repeating: 7, count: 32))

            // The old epoch can no longer write.
            let late = Frame(type: .left, session: session, sender: member, sequence: 2)
            await #expect(throws: (any Error).self) {
                try await Self.commit(b, [.logged(session, late)], of: session, lease: leaseA)
            }
            #expect(try await postgres.psql("SELECT count(*) FROM coplay_log") == "1\n")
            try await Self.commit(b, [.logged(session, late)], of: session, lease: leaseB)
            #expect(try await postgres.psql("SELECT count(*) FROM coplay_log") == "2\n")
        }
    }

    @Test("a store URL that is not postgresql://USER@HOST:PORT/DB is refused with a clear message")
    func badURL() {
        for url in ["mysql://u@h/db", "postgresql://h:5432/db", "postgresql://u@h:5432/", "postgresql://u@h/db?sslmode=bogus"] {
            #expect(throws: PostgresSessionStore.StoreError.self, "\(url)") {
                try PostgresSessionStore(configuration: .init(url: url, advertise: "h:1"), logger: Logger(label: "test"))
            }
        }
    }
}
