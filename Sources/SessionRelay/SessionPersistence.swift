import GroupSessions
import Synchronization

/// What the relay needs of a session store: `SessionStore` (files, `--data-dir`), the
/// PostgreSQL store of `SessionRelayPostgres` (a fleet of nodes), or one of the application's own
/// (tests and benchmarks inject slow or failing ones).
///
/// Every method that may touch a disk or a database is `async`: the relay calls them from its
/// own storage task (started by ``RelayServer/run()``), never on an event loop nor under a
/// session's lock, and waits for each. A store that does blocking I/O runs it on threads of its
/// own (`SessionStore` hands its file writes to Dispatch), so a slow disk delays only the sessions
/// whose calls wait for it.
///
/// The relay writes a session's hub events with ``commit(_:of:lease:)`` *before* it carries out
/// the actions of the same hub calls: nothing is acknowledged or forwarded before the store said
/// it is written. Events that arrive while a commit is under way are committed together in the
/// next one (group commit). Calls for one session come one at a time, in order; calls for
/// different sessions may run concurrently.
///
/// A store that loads everything at start answers ``load()``; a store shared by several relay
/// nodes loads a session when a member first asks a node for it (``claim(_:)``), and may answer
/// that another node serves it.
public protocol SessionPersistence: AnyObject, Sendable {
    /// Writes `events` of `session` (oldest first) and returns once they are durable, or throws
    /// the error that kept them from being written (the relay then stops serving the session on
    /// this node: its members reconnect and resume from what is stored).
    func commit(_ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?) async throws
    /// Whether `session`'s log has grown enough to be rewritten from a snapshot (an answer from
    /// the store's own counts: no I/O).
    func needsCompaction(_ session: SessionID) -> Bool
    /// Rewrites the session from `snapshot`.
    func compact(_ snapshot: SessionSnapshot) async throws
    /// Every stored session the relay restores at start (a store that loads sessions on demand
    /// returns none).
    func load() async throws -> [SessionSnapshot]
    /// Claims `session` for this node when a member asks for a session the node does not hold:
    /// its stored state to serve, or the address of the node that serves it.
    func claim(_ session: SessionID) async throws -> SessionClaim
    /// The node stopped serving `session` (its last member left, or it failed): the store may
    /// release the session's lease and forget what it cached.
    func release(_ session: SessionID, lease: SessionLease?) async
}

extension SessionPersistence {
    /// Serve it: everything was loaded at start (``load()``), a session not loaded is new.
    public func claim(_ session: SessionID) async throws -> SessionClaim { .serve(nil, lease: nil) }

    /// Nothing to release.
    public func release(_ session: SessionID, lease: SessionLease?) async {}
}

/// A store's answer to ``SessionPersistence/claim(_:)``.
public enum SessionClaim: Sendable {
    /// This node serves the session: its stored state (`nil`: nothing stored, a new session),
    /// under `lease` (`nil`: the store has no leases, one node serves everything).
    case serve(SessionSnapshot?, lease: SessionLease?)
    /// Another node serves the session; members are redirected to its advertised `address`
    /// (`HOST:PORT`).
    case redirect(String)
}

/// This node's right to order one session, from a store shared by several nodes: a fencing
/// `epoch` (every write of the session is conditional on it) and a deadline on this node's
/// monotonic clock before which the lease cannot have passed to another node.
///
/// The store extends the deadline as it renews the lease; the relay stops ordering the session
/// (closes its members' connections, stamps nothing more) once ``isHeld`` is false.
public final class SessionLease: Sendable {
    /// The fencing token: strictly greater than any epoch an earlier owner of the session held.
    public let epoch: Int64
    private let state: Mutex<(deadline: ContinuousClock.Instant, lost: Bool)>

    /// A lease valid on this node until `deadline`.
    public init(epoch: Int64, deadline: ContinuousClock.Instant) {
        self.epoch = epoch
        state = Mutex((deadline, false))
    }

    /// Whether this node may still order the session now.
    public var isHeld: Bool {
        state.withLock { !$0.lost && ContinuousClock.now < $0.deadline }
    }

    /// The lease was renewed: valid until `deadline` (never moved back).
    public func extend(until deadline: ContinuousClock.Instant) {
        state.withLock { if !$0.lost, deadline > $0.deadline { $0.deadline = deadline } }
    }

    /// The lease is gone (another node took the session, or the store refused a renewal).
    public func lose() {
        state.withLock { $0.lost = true }
    }
}
