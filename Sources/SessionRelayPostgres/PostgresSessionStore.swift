import Foundation
import GroupSessions
import Logging
import NIOCore
import PostgresNIO
import SessionRelay
import Synchronization

/// The relay's session state in PostgreSQL, shared by several relay nodes that act as one
/// service (`coplay serve --store postgresql://USER@HOST:PORT/DB --advertise HOST:PORT`).
///
/// Session records, the resume log, retained frames, the per-sender high-water marks and
/// journal attachments live in the database (tables `coplay_*`, created and migrated by the
/// relay itself: `schema_migrations` lists the versions applied). A session is served by one
/// node at a time, under a lease row (`coplay_leases`) with an expiry and a fencing epoch taken
/// from a sequence, so it only ever grows: every commit first checks, in its transaction, that
/// the node's epoch is still the session's, so a node that lost the lease never writes again.
/// The node renews its leases every ``Configuration/renewInterval``; a lease it could not renew
/// stops being held on this node before it expires in the database (SessionRelay's `SessionLease`), and the
/// relay then stops ordering the session.
///
/// A member that asks a node for a session another node holds is redirected there; when the
/// holder stops renewing (killed, frozen, cut off), the lease expires and the node asked takes
/// the session over and loads it.
///
/// The store works only inside ``run(_:)``, which runs the database client and lease renewal for
/// as long as its body (the relay) runs; every query the store makes is awaited by its caller (the
/// relay's storage task, inside that body) or by ``run(_:)`` itself, so none outlives the client:
///
/// ```swift
/// let store = try PostgresSessionStore(
///     configuration: .init(url: "postgresql://coplay@db:5432/coplay", advertise: "10.0.0.5:7000"), logger: logger)
/// var configuration = RelayConfiguration(host: "0.0.0.0", port: 7000)
/// configuration.store = store
/// try await store.run {
///     try await store.prepare()
///     try await RelayServer(configuration: configuration, logger: logger).run()
/// }
/// ```
public final class PostgresSessionStore: SessionPersistence, JournalProviding {
    /// Where the database is and how leases behave.
    public struct Configuration: Sendable {
        /// The database: `postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
        public var url: String
        /// The address members are redirected to for the sessions this node serves (`HOST:PORT`).
        public var advertise: String
        /// How long a lease lasts in the database without renewal: a killed node's sessions move
        /// to another node this long after its last renewal, at most.
        public var leaseDuration: Duration = .seconds(2)
        /// How often the node renews its leases.
        public var renewInterval: Duration = .milliseconds(500)
        /// How much earlier than the database's expiry this node stops ordering a session it
        /// could not renew (room for the difference between the clocks' rates and for delays).
        public var safetyMargin: Duration = .milliseconds(400)
        /// Database connections the node keeps at most.
        public var maximumConnections = 16

        /// A configuration for the database at `url`, this node reachable at `advertise`.
        public init(url: String, advertise: String) {
            self.url = url
            self.advertise = advertise
        }
    }

    /// A failure of the store (the database refused or could not be reached, or a bad URL).
    public struct StoreError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Why a commit was refused: another node holds the session now.
    struct Fenced: Error, CustomStringConvertible {
        var session: SessionID
        var epoch: Int64
        var description: String { "session \(session): epoch \(epoch) is no longer the session's lease" }
    }

    /// The schema, one migration per version, applied in order.
    static let migrations: [(version: Int32, sql: [String])] = [
        (1, [
            """
            CREATE TABLE coplay_sessions (
                session bytea PRIMARY KEY, token_hash bytea NOT NULL, sequence bigint NOT NULL,
                log_floor bigint NOT NULL, joined bigint[] NOT NULL, sender_ids bigint[] NOT NULL,
                sender_high bigint[] NOT NULL, updated_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE TABLE coplay_log (session bytea NOT NULL, sequence bigint NOT NULL, frame bytea NOT NULL, PRIMARY KEY (session, sequence))",
            """
            CREATE TABLE coplay_retained (
                session bytea NOT NULL, retain_key bytea NOT NULL, sequence bigint NOT NULL, frame bytea NOT NULL,
                PRIMARY KEY (session, retain_key))
            """,
            "CREATE SEQUENCE coplay_lease_epoch",
            """
            CREATE TABLE coplay_leases (
                session bytea PRIMARY KEY, node text NOT NULL, address text NOT NULL, epoch bigint NOT NULL,
                expires_at timestamptz NOT NULL)
            """,
            "CREATE INDEX coplay_leases_node ON coplay_leases (node)",
            """
            CREATE TABLE coplay_journal (
                session bytea NOT NULL, attachment bytea NOT NULL, header bytea NOT NULL, uploader bigint NOT NULL,
                sequence bigint NOT NULL, PRIMARY KEY (session, attachment))
            """,
            """
            CREATE TABLE coplay_journal_chunks (
                session bytea NOT NULL, attachment bytea NOT NULL, index integer NOT NULL, chunk bytea NOT NULL,
                PRIMARY KEY (session, attachment, index))
            """,
        ]),
    ]

    /// This node's identity in the lease table (random per process).
    public let node = UUID().uuidString
    /// The configuration in force.
    public let configuration: Configuration
    let client: PostgresClient
    private let logger: Logger
    private let journal = PostgresJournal()
    private let leases = Mutex<[SessionID: (lease: SessionLease, registered: ContinuousClock.Instant)]>([:])
    private let logged = Mutex<[SessionID: Int]>([:])
    /// Log rows written per session between two compactions.
    static let compactionInterval = 10_000

    package var journalStorage: any JournalStorage { journal }

    /// Connects nothing yet: the store works inside ``run(_:)``; call ``prepare()`` there before serving.
    ///
    /// - Throws: ``StoreError`` for a URL that is not `postgresql://USER@HOST[:PORT]/DATABASE`.
    public init(configuration: Configuration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        client = PostgresClient(configuration: try Self.clientConfiguration(configuration), backgroundLogger: logger)
    }

    /// Runs the store's background work, the database client (postgres-nio's `PostgresClient.run()`)
    /// and lease renewal, while `body` runs; both stop when it returns or throws (the connections
    /// close, leases are no longer renewed and run out). Call it once.
    ///
    /// The client's `run()` begins before `body` does: it is started as an immediate child task,
    /// which runs synchronously up to its first suspension, after `run()` has marked the client
    /// running. A query issued first would wait for the pool and make postgres-nio log "Trying to
    /// lease connection from `PostgresClient`, but `PostgresClient.run()` hasn't been called yet"
    /// (the unstructured task that ran `client.run()` before lost that race in 5 of 35
    /// starts of `coplay serve --store` here).
    ///
    /// - Parameter body: the work that uses the store (``prepare()``, then the relay).
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw.
    public func run<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        let client = self.client
        return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
            if #available(macOS 26, *) {
                group.addImmediateTask { await client.run() }
            } else {
                group.addTask { await client.run() }  // may start after body's first query: a warning only
            }
            group.addTask { await self.renewLoop() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    package static func clientConfiguration(_ configuration: Configuration) throws -> PostgresClient.Configuration {
        let url = configuration.url
        guard let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "postgresql" || scheme == "postgres"
        else { throw StoreError(description: "the store must be a postgresql://USER@HOST:PORT/DATABASE URL, not \(url)") }
        guard let host = components.host, !host.isEmpty else {
            throw StoreError(description: "the store URL names no host: \(url)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw StoreError(description: "the store URL names no user (postgresql://USER@HOST:PORT/DATABASE): \(url)")
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw StoreError(description: "the store URL names no database (postgresql://USER@HOST:PORT/DATABASE): \(url)")
        }
        let password = components.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"]
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "prefer", "allow": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-full", "verify-ca": tls = .require(.makeClientConfiguration())
        default: throw StoreError(description: "unknown sslmode \(mode) (disable, prefer or require)")
        }
        var client = PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: password, database: database, tls: tls)
        client.options.maximumConnections = configuration.maximumConnections
        client.options.connectTimeout = .seconds(3)
        // A node frozen (SIGSTOP) or cut off in the middle of a commit keeps its transaction open, and
        // its row locks with it: the server ends such a transaction after a lease's length, and a
        // statement waits for a lock no longer than that, so the frozen node cannot keep another
        // from taking an expired lease over (seen: a takeover blocked for good behind the frozen
        // owner's `FOR SHARE`).
        let milliseconds = max(1, Int(seconds(configuration.leaseDuration) * 1000))
        client.options.additionalStartupParameters = [
            ("idle_in_transaction_session_timeout", "\(milliseconds)"),
            ("lock_timeout", "\(milliseconds)"),
        ]
        return client
    }

    // MARK: Schema

    /// Creates or migrates the schema (once per database, whichever node comes first). Call it
    /// inside ``run(_:)``.
    ///
    /// - Throws: When the database cannot be reached or refuses a migration.
    public func prepare() async throws {
        let logger = self.logger
        let applied = try await client.withTransaction(logger: logger) { connection -> [Int32] in
            // One node migrates at a time: the others wait here, then find the work done. The wait
            // may be longer than the connection's lock timeout (a lease's length, see `makeClient`):
            // another node's migration on a loaded machine took longer than a short test lease,
            // and the timeout aborted this transaction.
            try await connection.query("SET LOCAL lock_timeout = '120s'", logger: logger)
            try await connection.query("SELECT pg_advisory_xact_lock(7011956)", logger: logger)
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
                logger: logger)
            var current: Int32 = 0
            for try await version in try await connection.query(
                "SELECT coalesce(max(version), 0) FROM schema_migrations", logger: logger
            ).decode(Int32.self) { current = version }
            var applied: [Int32] = []
            for migration in Self.migrations where migration.version > current {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version) VALUES (\(migration.version))", logger: logger)
                applied.append(migration.version)
            }
            return applied
        }
        if !applied.isEmpty { logger.info("migrated the store's schema", metadata: ["versions": "\(applied)"]) }
    }

    // MARK: Leases

    private var leaseSeconds: Double { Self.seconds(configuration.leaseDuration) }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    public func load() async throws -> [SessionSnapshot] { [] }

    public func claim(_ session: SessionID) async throws -> SessionClaim {
        let id = Self.bytes(session)
        var observedExpiry: Date?
        while true {
            let sent = ContinuousClock.now
            var epoch: Int64?
            for try await value in try await client.query(
                """
                INSERT INTO coplay_leases (session, node, address, epoch, expires_at)
                VALUES (\(id), \(node), \(configuration.advertise), nextval('coplay_lease_epoch'),
                        now() + make_interval(secs => \(leaseSeconds)))
                ON CONFLICT (session) DO UPDATE SET node = EXCLUDED.node, address = EXCLUDED.address,
                    epoch = EXCLUDED.epoch, expires_at = EXCLUDED.expires_at
                WHERE coplay_leases.expires_at < now() OR coplay_leases.node = EXCLUDED.node
                RETURNING epoch
                """, logger: logger
            ).decode(Int64.self) { epoch = value }
            if let epoch {
                let lease = SessionLease(epoch: epoch, deadline: sent + configuration.leaseDuration - configuration.safetyMargin)
                leases.withLock { $0[session] = (lease, sent) }
                do {
                    let snapshot = try await loadSession(session, id: id)
                    return .serve(snapshot, lease: lease)
                } catch {
                    await release(session, lease: lease)
                    throw error
                }
            }
            // Held by another node: redirect there if it is alive (it renews), take over once it expires.
            var holder: (address: String, expires: Date, remaining: Double)?
            for try await row in try await client.query(
                """
                SELECT address, expires_at, extract(epoch FROM expires_at - now())::float8
                FROM coplay_leases WHERE session = \(id)
                """, logger: logger
            ).decode((String, Date, Double).self) { holder = (row.0, row.1, row.2) }
            guard let holder else { continue }  // released meanwhile: claim again
            if let observed = observedExpiry, holder.expires > observed { return .redirect(holder.address) }
            observedExpiry = holder.expires
            let wait = min(max(holder.remaining, 0) + 0.02, Self.seconds(configuration.renewInterval) * 1.5)
            try await Task.sleep(for: .milliseconds(Int(wait * 1000)))
        }
    }

    public func release(_ session: SessionID, lease: SessionLease?) async {
        lease?.lose()
        // The relay releases after the shard left its table: a member may have brought the session
        // back to this node meanwhile, under a newer lease, whose state must stay.
        let reclaimed = leases.withLock { leases -> Bool in
            if let held = leases[session]?.lease, held !== lease { return true }
            leases[session] = nil
            return false
        }
        guard !reclaimed else { return }
        journal.forget(session)
        _ = logged.withLock { $0.removeValue(forKey: session) }
        guard let lease else { return }
        // A row that cannot be deleted now (the database is down) runs out at its expiry.
        _ = try? await client.query(
            "DELETE FROM coplay_leases WHERE session = \(Self.bytes(session)) AND epoch = \(lease.epoch)", logger: logger)
    }

    /// Renews every lease this node holds, every ``Configuration/renewInterval``: one statement
    /// for all of them. A lease the database no longer has for this node is lost at once; one
    /// that could not be renewed (the database unreachable) runs out at its deadline.
    private func renewLoop() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: configuration.renewInterval) } catch { return }
            let sent = ContinuousClock.now
            let held = leases.withLock { $0 }
            guard !held.isEmpty else { continue }
            var renewed: [SessionID: Int64] = [:]
            // Only the leases held now, by epoch (each lease's own): a row whose release could not be
            // deleted (the database was down then) must run out, not be renewed for ever while no
            // shard here serves its session (other nodes would redirect its members here for good).
            let epochs = held.values.map(\.lease.epoch)
            do {
                for try await (session, epoch) in try await client.query(
                    """
                    UPDATE coplay_leases SET expires_at = now() + make_interval(secs => \(leaseSeconds))
                    WHERE node = \(node) AND epoch = ANY(\(epochs)) RETURNING session, epoch
                    """, logger: logger
                ).decode((ByteBuffer, Int64).self) {
                    if let id = Self.session(from: session) { renewed[id] = epoch }
                }
            } catch {
                logger.info("could not renew leases", metadata: ["error": "\(String(reflecting: error))"])
                continue
            }
            let deadline = sent + configuration.leaseDuration - configuration.safetyMargin
            for (session, entry) in held {
                if renewed[session] == entry.lease.epoch {
                    entry.lease.extend(until: deadline)
                } else if entry.registered < sent {
                    logger.info("lost a session's lease", metadata: ["session": "\(session)", "epoch": "\(entry.lease.epoch)"])
                    entry.lease.lose()
                    leases.withLock { leases in
                        if leases[session]?.lease === entry.lease { leases[session] = nil }
                    }
                }
            }
        }
    }

    // MARK: Loading

    /// What the database holds of `session` (`nil`: nothing, a new session); its attachments
    /// go into the journal.
    private func loadSession(_ session: SessionID, id: ByteBuffer) async throws -> SessionSnapshot? {
        var snapshot: SessionSnapshot?
        for try await row in try await client.query(
            """
            SELECT token_hash, sequence, log_floor, joined, sender_ids, sender_high
            FROM coplay_sessions WHERE session = \(id)
            """, logger: logger
        ).decode((ByteBuffer, Int64, Int64, [Int64], [Int64], [Int64]).self) {
            var senderHigh: [ParticipantID: UInt64] = [:]
            for (sender, high) in zip(row.4, row.5) { senderHigh[ParticipantID(rawValue: UInt64(bitPattern: sender))] = UInt64(bitPattern: high) }
            snapshot = SessionSnapshot(
                session: session, tokenHash: Array(row.0.readableBytesView), sequence: UInt64(bitPattern: row.1),
                logFloor: UInt64(bitPattern: row.2), joined: row.3.map { ParticipantID(rawValue: UInt64(bitPattern: $0)) },
                senderHigh: senderHigh)
        }
        guard var snapshot else {
            journal.forget(session)
            return nil
        }
        for try await frame in try await client.query(
            "SELECT frame FROM coplay_retained WHERE session = \(id) ORDER BY sequence", logger: logger
        ).decode(ByteBuffer.self) {
            snapshot.retained.append(try Self.frame(from: frame))
        }
        for try await frame in try await client.query(
            "SELECT frame FROM coplay_log WHERE session = \(id) AND sequence > \(Int64(bitPattern: snapshot.logFloor)) ORDER BY sequence",
            logger: logger
        ).decode(ByteBuffer.self) {
            let frame = try Self.frame(from: frame)
            snapshot.log.append(frame)
            // Joins and leaves after the last metadata write are replayed from the log.
            if frame.type == .joined, !snapshot.joined.contains(frame.sender) { snapshot.joined.append(frame.sender) }
            if frame.type == .left { snapshot.joined.removeAll { $0 == frame.sender } }
        }
        var attachments: [(StoredAttachment, [ByteBuffer])] = []
        for try await (attachment, header, uploader, sequence) in try await client.query(
            "SELECT attachment, header, uploader, sequence FROM coplay_journal WHERE session = \(id) ORDER BY sequence",
            logger: logger
        ).decode((ByteBuffer, ByteBuffer, Int64, Int64).self) {
            var headerBytes = header
            let decoded = try JournalHeader.decode(from: &headerBytes, type: .journalAdded)
            var chunks: [ByteBuffer] = []
            for try await chunk in try await client.query(
                "SELECT chunk FROM coplay_journal_chunks WHERE session = \(id) AND attachment = \(attachment) ORDER BY index",
                logger: logger
            ).decode(ByteBuffer.self) { chunks.append(chunk) }
            guard chunks.count == decoded.chunkCount else {
                throw StoreError(description: "attachment \(decoded.id) of session \(session) has \(chunks.count) of \(decoded.chunkCount) chunks")
            }
            attachments.append((
                StoredAttachment(header: decoded, uploader: ParticipantID(rawValue: UInt64(bitPattern: uploader)),
                                 sequence: UInt64(bitPattern: sequence)), chunks))
        }
        try journal.load(session, attachments: attachments)
        return snapshot
    }

    // MARK: Writing

    /// Writes `events` and the journal changes recorded since the last commit of `session` in one
    /// transaction, fenced by `lease`.
    public func commit(_ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?) async throws {
        try await write(events, journal: journal.takePending(session), of: session, lease: lease)
    }

    /// One transaction: the lease check, the journal changes, then the events in order.
    func write(
        _ events: [SessionStoreEvent], journal operations: [PostgresJournal.Operation], of session: SessionID,
        lease: SessionLease?
    ) async throws {
        let id = Self.bytes(session)
        let logger = self.logger
        var loggedCount = 0
        try await client.withTransaction(logger: logger) { connection in
            if let lease {
                var held = false
                for try await _ in try await connection.query(
                    "SELECT 1 FROM coplay_leases WHERE session = \(id) AND epoch = \(lease.epoch) FOR SHARE",
                    logger: logger
                ) { held = true }
                guard held else { throw Fenced(session: session, epoch: lease.epoch) }
            }
            for operation in operations {
                switch operation {
                case .commit(let attachment, let chunks):
                    let attachmentID = ByteBuffer(bytes: attachment.header.id.bytes)
                    try await connection.query(
                        """
                        INSERT INTO coplay_journal (session, attachment, header, uploader, sequence)
                        VALUES (\(id), \(attachmentID), \(attachment.header.encoded()),
                                \(Int64(bitPattern: attachment.uploader.rawValue)), \(Int64(bitPattern: attachment.sequence)))
                        ON CONFLICT (session, attachment) DO UPDATE SET header = EXCLUDED.header,
                            uploader = EXCLUDED.uploader, sequence = EXCLUDED.sequence
                        """, logger: logger)
                    try await connection.query(
                        "DELETE FROM coplay_journal_chunks WHERE session = \(id) AND attachment = \(attachmentID)",
                        logger: logger)
                    if !chunks.isEmpty {
                        try await connection.query(
                            """
                            INSERT INTO coplay_journal_chunks (session, attachment, index, chunk)
                            SELECT \(id), \(attachmentID), * FROM unnest(\(Array(0..<Int32(chunks.count)))::integer[], \(chunks)::bytea[])
                            """, logger: logger)
                    }
                case .discard(let attachment):
                    let attachmentID = ByteBuffer(bytes: attachment.bytes)
                    try await connection.query(
                        "DELETE FROM coplay_journal_chunks WHERE session = \(id) AND attachment = \(attachmentID)", logger: logger)
                    try await connection.query(
                        "DELETE FROM coplay_journal WHERE session = \(id) AND attachment = \(attachmentID)", logger: logger)
                case .deleteSession:
                    try await connection.query("DELETE FROM coplay_journal_chunks WHERE session = \(id)", logger: logger)
                    try await connection.query("DELETE FROM coplay_journal WHERE session = \(id)", logger: logger)
                }
            }
            var batch = LogBatch()
            for event in events {
                switch event {
                case .logged(_, let frame):
                    batch.add(frame)
                    loggedCount += 1
                case .updated(let snapshot):
                    try await batch.flush(id, connection, logger)
                    let joined = snapshot.joined.map { Int64(bitPattern: $0.rawValue) }
                    let senders = snapshot.senderHigh.sorted { $0.key.rawValue < $1.key.rawValue }
                    let senderIDs = senders.map { Int64(bitPattern: $0.key.rawValue) }
                    let senderHigh = senders.map { Int64(bitPattern: $0.value) }
                    try await connection.query(
                        """
                        INSERT INTO coplay_sessions (session, token_hash, sequence, log_floor, joined, sender_ids, sender_high)
                        VALUES (\(id), \(ByteBuffer(bytes: snapshot.tokenHash)), \(Int64(bitPattern: snapshot.sequence)),
                                \(Int64(bitPattern: snapshot.logFloor)), \(joined), \(senderIDs), \(senderHigh))
                        ON CONFLICT (session) DO UPDATE SET token_hash = EXCLUDED.token_hash,
                            sequence = greatest(coplay_sessions.sequence, EXCLUDED.sequence),
                            log_floor = greatest(coplay_sessions.log_floor, EXCLUDED.log_floor), joined = EXCLUDED.joined,
                            sender_ids = EXCLUDED.sender_ids, sender_high = EXCLUDED.sender_high, updated_at = now()
                        """, logger: logger)
                case .deleted:
                    batch = LogBatch()
                    for table in ["coplay_log", "coplay_retained", "coplay_sessions"] {
                        try await connection.query(
                            PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE session = $1", binds: Self.binds(id)),
                            logger: logger)
                    }
                }
            }
            try await batch.flush(id, connection, logger)
        }
        if loggedCount > 0 { logged.withLock { $0[session, default: 0] += loggedCount } }
    }

    /// Stamped frames of one commit, written with one statement (and one for the retained ones).
    struct LogBatch {
        var sequences: [Int64] = []
        var frames: [ByteBuffer] = []
        var retained: [[UInt8]: (sequence: Int64, frame: ByteBuffer)] = [:]

        mutating func add(_ frame: Frame) {
            let encoded = PostgresSessionStore.encode(frame)
            sequences.append(Int64(bitPattern: frame.sequence))
            frames.append(encoded)
            guard frame.type == .data else { return }
            var payload = frame.payload
            if let route = try? DataRoute.decode(from: &payload), !route.retainKey.isEmpty {
                var clean = frame
                clean.flags.remove(.replayed)
                retained[route.retainKey] = (Int64(bitPattern: frame.sequence), PostgresSessionStore.encode(clean))
            }
        }

        mutating func flush(_ id: ByteBuffer, _ connection: PostgresConnection, _ logger: Logger) async throws {
            defer { self = LogBatch() }
            if !sequences.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO coplay_log (session, sequence, frame)
                    SELECT \(id), * FROM unnest(\(sequences)::bigint[], \(frames)::bytea[])
                    """, logger: logger)
            }
            if !retained.isEmpty {
                let keys = retained.keys.map { ByteBuffer(bytes: $0) }
                let values = Array(retained.values)
                try await connection.query(
                    """
                    INSERT INTO coplay_retained (session, retain_key, sequence, frame)
                    SELECT \(id), * FROM unnest(\(keys)::bytea[], \(values.map(\.sequence))::bigint[], \(values.map(\.frame))::bytea[])
                    ON CONFLICT (session, retain_key) DO UPDATE SET sequence = EXCLUDED.sequence, frame = EXCLUDED.frame
                    WHERE coplay_retained.sequence < EXCLUDED.sequence
                    """, logger: logger)
            }
        }
    }

    // MARK: Compaction

    public func needsCompaction(_ session: SessionID) -> Bool {
        logged.withLock { ($0[session] ?? 0) >= Self.compactionInterval }
    }

    /// Drops the log rows the hub no longer holds (at or below the snapshot's floor) and writes
    /// its metadata; fenced like every write.
    public func compact(_ snapshot: SessionSnapshot) async throws {
        logged.withLock { $0[snapshot.session] = 0 }
        let lease = leases.withLock { $0[snapshot.session]?.lease }
        try await commit([.updated(snapshot)], of: snapshot.session, lease: lease)
        guard let lease else { return }
        let id = Self.bytes(snapshot.session)
        let floor = Int64(bitPattern: snapshot.logFloor)
        let logger = self.logger
        try await client.withTransaction(logger: logger) { connection in
            var held = false
            for try await _ in try await connection.query(
                "SELECT 1 FROM coplay_leases WHERE session = \(id) AND epoch = \(lease.epoch) FOR SHARE", logger: logger
            ) { held = true }
            guard held else { return }
            try await connection.query("DELETE FROM coplay_log WHERE session = \(id) AND sequence <= \(floor)", logger: logger)
        }
    }

    // MARK: Encoding

    static func bytes(_ session: SessionID) -> ByteBuffer { ByteBuffer(bytes: session.bytes) }

    static func session(from buffer: ByteBuffer) -> SessionID? {
        guard buffer.readableBytes == 16, let high = buffer.getInteger(at: buffer.readerIndex, as: UInt64.self),
            let low = buffer.getInteger(at: buffer.readerIndex + 8, as: UInt64.self)
        else { return nil }
        return SessionID(high: high, low: low)
    }

    static func encode(_ frame: Frame) -> ByteBuffer {
        var buffer = ByteBuffer()
        FrameCodec.encode(frame, into: &buffer)
        return buffer
    }

    static func frame(from buffer: ByteBuffer) throws -> Frame {
        var buffer = buffer
        do {
            return try FrameCodec.decode(from: &buffer, maximumFrameLength: Int(UInt32.max))
                ?? { throw StoreError(description: "a stored frame is truncated") }()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(description: "a stored frame cannot be decoded: \(error)")
        }
    }

    static func binds(_ id: ByteBuffer) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(id)
        return binds
    }
}
