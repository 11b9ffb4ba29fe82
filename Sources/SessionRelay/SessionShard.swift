import Dispatch
import GroupSessions
import Logging
import Synchronization

/// One session's share of the relay: its own ``SessionHub``, the outboxes of its members and its
/// own lock, so frames of one session never wait for another session's work.
///
/// Everything a session's frames cause (stamps, acks, fan-out, presence) happens under this
/// shard's lock, so every member's outbox follows the session's stamped order. With a data
/// directory the hub's store events are written *before* the actions of the same call are
/// carried out (nothing is acknowledged or forwarded unstored), on the shard's own serial queue:
/// off the lock and off Swift's cooperative pool, so a slow disk stalls only its own session.
/// Events that arrive while a commit is under way go into the next one together (group commit).
///
/// A shard the relay creates for a session it does not hold first asks the store for it
/// (``opened()``): a store shared by several nodes loads the session, or names the node that
/// serves it. Under a ``SessionLease`` the shard stops ordering the moment the lease is no
/// longer held, and a commit the store refuses (a lost lease, an unreachable database) fails
/// the shard: its members' connections are closed, nothing more is carried out, and the members
/// resume from what the store holds.
final class SessionShard: Sendable {
    /// What opening the shard's session came to.
    enum Opening: Sendable {
        case serving
        /// Another node serves the session (its address).
        case redirect(String)
        /// The store could not be asked (why).
        case unavailable(String)
    }
    /// Store events and the actions that must wait for them.
    struct Pending: Sendable {
        var events: [SessionStoreEvent]
        var actions: [HubAction<Int>]
    }

    struct State: ~Copyable {
        var hub: SessionHub<Int>
        var outboxes: [Int: ChannelWriter] = [:]
        /// Set once the shard is empty and leaves the relay's table; a retired shard takes no one.
        var retired = false
        /// Work waiting for the store, oldest first; while not empty, later actions queue behind it.
        var pending: [Pending] = []
        var writing = false
        var slowConsumers: UInt64 = 0
        var errorsSent: [RelayErrorCode: UInt64] = [:]
        /// Whether the store has been asked for the session (shards restored at start have been).
        var opened: Bool
        var opening: Task<Opening, Never>?
        /// The session's lease, under a store shared by several nodes.
        var lease: SessionLease?
        /// Set once a commit failed or the lease was lost: the shard carries nothing out any more.
        var failed = false
        /// Commits started and finished (the watchdog compares them).
        var commitsStarted = 0
        var commitsFinished = 0
    }

    /// A commit the store has not answered this long fails the shard: its members resume from the
    /// store, here or on another node, instead of waiting behind it for ever (seen when PostgreSQL
    /// restarted under load: a commit that never returned held the session while the node kept its
    /// lease).
    static let commitTimeout: Duration = .seconds(5)

    let session: SessionID
    let state: Mutex<State>
    private let store: (any SessionPersistence)?
    private let queue: DispatchQueue?
    private let logger: Logger
    private let now: @Sendable () -> Duration
    /// Called once when the shard fails (the relay takes it out of its table).
    private let onFailure: @Sendable (SessionShard) -> Void

    /// - Parameters:
    ///   - opened: whether the store has already been asked for the session (restored at start,
    ///     or the lobby); otherwise ``opened()`` asks it first.
    init(
        session: SessionID, hub: SessionHub<Int>, store: (any SessionPersistence)?, logger: Logger, opened: Bool = true,
        now: @escaping @Sendable () -> Duration = { .zero }, onFailure: @escaping @Sendable (SessionShard) -> Void = { _ in }
    ) {
        self.session = session
        var hub = hub
        hub.recordsStoreEvents = store != nil
        state = Mutex(State(hub: hub, opened: opened || store == nil))
        self.store = store
        queue = store.map { _ in DispatchQueue(label: "coplay.relay.store.\(session)") }
        self.logger = logger
        self.now = now
        self.onFailure = onFailure
    }

    /// Asks the store for the session once (later callers wait for the same answer): restores
    /// what it holds, or says which node serves it. A shard that is not serving has failed.
    func opened() async -> Opening {
        let task = state.withLock { state -> Task<Opening, Never>? in
            if state.failed { return Task { .unavailable("the session's state on this node was given up") } }
            if state.opened { return nil }
            if let opening = state.opening { return opening }
            let task = Task { await self.open() }
            state.opening = task
            return task
        }
        return await task?.value ?? .serving
    }

    private func open() async -> Opening {
        guard let store else { return .serving }
        let outcome: Opening
        do {
            switch try await store.claim(session) {
            case .serve(let snapshot, let lease):
                let now = self.now()
                state.withLock { state in
                    if let snapshot { state.hub.restore(snapshot, now: now) }
                    state.lease = lease
                    state.opened = true
                }
                if let snapshot {
                    logger.info("took the session over from the store", metadata: [
                        "session": "\(session)", "sequence": "\(snapshot.sequence)", "epoch": "\(lease?.epoch ?? 0)",
                    ])
                }
                return .serving
            case .redirect(let address):
                outcome = .redirect(address)
            }
        } catch {
            logger.info("could not open the session in the store", metadata: ["session": "\(session)", "error": "\(error)"])
            outcome = .unavailable("\(error)")
        }
        fail(reason: nil)
        return outcome
    }

    /// Whether the shard may order its session now; a lease that is no longer held fails it.
    func mayOrder() -> Bool {
        let (lease, failed) = state.withLock { ($0.lease, $0.failed) }
        if failed { return false }
        guard let lease, !lease.isHeld else { return true }
        fail(reason: "this node no longer holds the session's lease")
        return false
    }

    /// Stops serving the session on this node: nothing pending is carried out, every member's
    /// connection is closed (they reconnect and resume from the store), the relay forgets the shard.
    func fail(reason: String?) {
        let (first, outboxes, lease) = state.withLock { state -> (Bool, [ChannelWriter], SessionLease?) in
            guard !state.failed else { return (false, [], nil) }
            state.failed = true
            state.retired = true
            state.opened = true
            state.pending = []
            let outboxes = Array(state.outboxes.values)
            state.outboxes = [:]
            return (true, outboxes, state.lease)
        }
        guard first else { return }
        if let reason {
            logger.info("stopped serving a session", metadata: [
                "session": "\(session)", "reason": "\(reason)", "members": "\(outboxes.count)",
            ])
        }
        lease?.lose()
        for outbox in outboxes { outbox.close() }
        // The relay takes the shard out of its table, which releases the session (``released()``).
        onFailure(self)
    }

    /// The shard left the relay's table (empty): the store may release the session.
    func released() {
        let lease = state.withLock { $0.lease }
        store?.release(session, lease: lease)
    }

    /// Runs `body` on the hub under the lock and carries out what it returns: at once, or after
    /// the store has written the events it recorded.
    ///
    /// - Returns: `body`'s second result.
    @discardableResult
    func withHub<R: Sendable>(_ body: (inout SessionHub<Int>) -> ([HubAction<Int>], R)) -> R {
        let (result, startWriter) = state.withLock { state -> (R, Bool) in
            let (actions, result) = body(&state.hub)
            guard !state.failed else { return (result, false) }
            return (result, carryOut(actions, in: &state))
        }
        if startWriter { scheduleWriter() }
        return result
    }

    /// Takes connection `id` in (the lobby: every new connection).
    func admit(_ id: Int, outbox: ChannelWriter, now: Duration) {
        withHub { hub in (hub.connect(id, now: now), ()) }
        state.withLock { $0.outboxes[id] = outbox }
    }

    /// Takes connection `id` in with its `hello`, unless the shard has retired.
    ///
    /// - Returns: `false` when the shard has retired (look the session up again).
    func admit(_ id: Int, outbox: ChannelWriter, now: Duration, hello: Frame) -> Bool {
        let (admitted, startWriter) = state.withLock { state -> (Bool, Bool) in
            guard !state.retired, state.opened else { return (false, false) }
            state.outboxes[id] = outbox
            let actions = state.hub.connect(id, now: now) + state.hub.receive(hello, from: id, now: now)
            return (true, carryOut(actions, in: &state))
        }
        if startWriter { scheduleWriter() }
        return admitted
    }

    /// Connection `id` is gone; returns whether the shard is now empty and has retired.
    @discardableResult
    func detach(_ id: Int) -> Bool {
        let (retired, startWriter) = state.withLock { state -> (Bool, Bool) in
            guard !state.failed else { return (false, false) }
            let startWriter = carryOut(state.hub.disconnect(id), in: &state)
            state.outboxes[id] = nil
            return (retireIfEmpty(&state), startWriter)
        }
        if startWriter { scheduleWriter() }
        return retired
    }

    /// Lets the hub expire what has timed out; returns whether the shard is now empty and has retired.
    func tick(now: Duration) -> Bool {
        guard mayOrder() else { return false }
        let (retired, startWriter) = state.withLock { state -> (Bool, Bool) in
            guard state.opened, !state.failed else { return (false, false) }
            let startWriter = carryOut(state.hub.tick(now: now), in: &state)
            return (retireIfEmpty(&state), startWriter)
        }
        if startWriter { scheduleWriter() }
        return retired
    }

    private func retireIfEmpty(_ state: inout State) -> Bool {
        guard session != SessionID(high: 0, low: 0), state.hub.isEmpty, state.pending.isEmpty, !state.writing else {
            return false
        }
        state.retired = true
        return true
    }

    /// Queues or performs `actions` (lock held); returns whether the store writer must start.
    private func carryOut(_ actions: [HubAction<Int>], in state: inout State) -> Bool {
        let events = state.hub.takeStoreEvents()
        if events.isEmpty && state.pending.isEmpty {
            let more = Self.apply(actions, in: &state, logger: logger)
            if more.isEmpty { return false }
            state.pending.append(Pending(events: more, actions: []))
        } else {
            state.pending.append(Pending(events: events, actions: actions))
        }
        guard !state.writing else { return false }
        state.writing = true
        return true
    }

    private func scheduleWriter() {
        queue?.async { self.drain() }
    }

    /// The store writer: commits the events of everything pending in one go (group commit),
    /// then carries out the actions that waited for them, in order; again while more is pending.
    private func drain() {
        guard let store, let queue else { return }
        guard let (batch, lease) = state.withLock({ state -> ([Pending], SessionLease?)? in
            guard !state.pending.isEmpty, !state.failed else {
                state.writing = false
                return nil
            }
            return (state.pending, state.lease)
        }) else { return }
        let events = batch.flatMap(\.events)
        let started = state.withLock { state -> Int in
            state.commitsStarted += 1
            return state.commitsStarted
        }
        let timeout = Self.commitTimeout.components
        queue.asyncAfter(deadline: .now() + .seconds(Int(timeout.seconds))) { [self] in
            let finished = state.withLock { $0.commitsFinished >= started || $0.failed }
            if !finished { fail(reason: "the store did not answer a commit within \(Self.commitTimeout)") }
        }
        store.commit(events, of: session, lease: lease) { error in
            self.state.withLock { $0.commitsFinished = max($0.commitsFinished, started) }
            if let error {
                self.fail(reason: "the store refused a commit: \(error)")
                return
            }
            var compact = false
            for case .logged(let session, _) in events where !compact { compact = store.needsCompaction(session) }
            let snapshot = self.state.withLock { state -> SessionSnapshot? in
                guard !state.failed else { return nil }
                state.pending.removeFirst(batch.count)
                var more: [SessionStoreEvent] = []
                for work in batch { more += Self.apply(work.actions, in: &state, logger: self.logger) }
                if !more.isEmpty { state.pending.insert(Pending(events: more, actions: []), at: 0) }
                return compact ? state.hub.snapshot(of: self.session) : nil
            }
            queue.async {
                if let snapshot {
                    do { try store.compact(snapshot) } catch {
                        self.logger.info("could not compact session state", metadata: ["error": "\(error)"])
                    }
                }
                self.drain()
            }
        }
    }

    /// Carries out hub actions with the lock held; returns store events that the actions'
    /// consequences recorded (a slow consumer's disconnection).
    static func apply(_ actions: [HubAction<Int>], in state: inout State, logger: Logger) -> [SessionStoreEvent] {
        var pending = actions[...]
        while let action = pending.popFirst() {
            switch action {
            case .send(let id, let frame, let droppable):
                guard let outbox = state.outboxes[id] else { continue }
                if frame.type == .error, let code = frame.payload.getInteger(at: frame.payload.readerIndex, as: UInt16.self) {
                    state.errorsSent[RelayErrorCode(rawValue: code), default: 0] += 1
                }
                // Presence about someone else may wait for the writer's presence tick (a mass
                // join would otherwise cost a write per member and joiner); the joiner's own
                // `joined`, which it waits for, goes at once.
                let deferrable = (frame.type == .joined || frame.type == .left) && state.hub.participant(of: id) != frame.sender
                switch outbox.enqueue(frame, droppable: droppable, deferrable: deferrable) {
                case .queued, .closed:
                    break
                case .dropped:
                    state.hub.recordDropped(1)
                case .overflow:
                    state.slowConsumers += 1
                    logger.info("closing a slow consumer", metadata: ["connection": "\(id)"])
                    outbox.close()
                    pending.append(contentsOf: state.hub.disconnect(id))
                }
            case .close(let id):
                state.outboxes[id]?.close()
            }
        }
        return state.hub.takeStoreEvents()
    }
}
