import GroupSessions
import Logging
import Synchronization

/// One session's share of the relay: its own ``SessionHub``, the outboxes of its members and its
/// own lock, so frames of one session never wait for another session's work.
///
/// Everything a session's frames cause (stamps, acks, fan-out, presence) happens under this
/// shard's lock, so every member's outbox follows the session's stamped order. Nothing under the
/// lock touches a disk or a database: the hub's store events and journal operations
/// (``HubAction/journal(_:)``) are queued, and the relay's storage task (``RelayStorage``) carries
/// them out in ``drain()``, in order, off the lock and off the event loops, so a slow disk or
/// database stalls only its own session. The actions of a hub call that recorded store events, or
/// that announce a journal attachment, are carried out only once those are written (nothing is
/// acknowledged, forwarded or announced unstored), and later actions queue behind them; events
/// that arrive while a commit is under way go into the next one together (group commit).
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
    /// Storage work of one or more hub calls, and the actions that wait for it.
    struct Pending: Sendable {
        var journal: [JournalOperation<Int>] = []
        var events: [SessionStoreEvent] = []
        /// Sends and closes, carried out once `journal` and `events` are written.
        var actions: [HubAction<Int>] = []
    }

    struct State: ~Copyable {
        var hub: SessionHub<Int>
        var outboxes: [Int: ChannelWriter] = [:]
        /// Set once the shard is empty and leaves the relay's table; a retired shard takes no one.
        var retired = false
        /// Storage work, oldest first.
        var pending: [Pending] = []
        /// Entries of `pending` with actions: while there are any, later actions queue behind them.
        var waiting = 0
        /// Whether ``drain()`` is scheduled or running.
        var writing = false
        var slowConsumers: UInt64 = 0
        var errorsSent: [RelayErrorCode: UInt64] = [:]
        /// Whether the store has been asked for the session (shards restored at start have been).
        var opened: Bool
        /// Set while a caller of ``opened()`` asks the store; later callers wait here.
        var opening: [CheckedContinuation<Opening, Never>]?
        /// The session's lease, under a store shared by several nodes.
        var lease: SessionLease?
        /// Set once a commit failed or the lease was lost: the shard carries nothing out any more.
        var failed = false
        /// When the commit under way started (the relay's clock), for the watchdog in ``tick(now:)``.
        var commitStarted: Duration?
    }

    /// A commit the store has not answered this long fails the shard: its members resume from the
    /// store, here or on another node, instead of waiting behind it for ever (seen when PostgreSQL
    /// restarted under load: a commit that never returned held the session while the node kept its
    /// lease).
    static let commitTimeout: Duration = .seconds(5)

    let session: SessionID
    let state: Mutex<State>
    private let store: (any SessionPersistence)?
    private let storage: RelayStorage
    private let logger: Logger
    private let now: @Sendable () -> Duration
    /// Called once when the shard fails (the relay takes it out of its table).
    private let onFailure: @Sendable (SessionShard) -> Void

    /// - Parameters:
    ///   - storage: carries out the shard's store commits and journal I/O.
    ///   - opened: whether the store has already been asked for the session (restored at start,
    ///     or the lobby); otherwise ``opened()`` asks it first.
    init(
        session: SessionID, hub: SessionHub<Int>, store: (any SessionPersistence)?, storage: RelayStorage, logger: Logger,
        opened: Bool = true, now: @escaping @Sendable () -> Duration = { .zero },
        onFailure: @escaping @Sendable (SessionShard) -> Void = { _ in }
    ) {
        self.session = session
        var hub = hub
        hub.recordsStoreEvents = store != nil
        state = Mutex(State(hub: hub, opened: opened || store == nil))
        self.store = store
        self.storage = storage
        self.logger = logger
        self.now = now
        self.onFailure = onFailure
    }

    /// Asks the store for the session once (later callers wait for the same answer): restores
    /// what it holds, with its journal's attachments, or says which node serves it. A shard that
    /// is not serving has failed.
    func opened() async -> Opening {
        enum Step { case answered(Opening), ask, wait }
        let step = state.withLock { state -> Step in
            if state.failed { return .answered(.unavailable("the session's state on this node was given up")) }
            if state.opened { return .answered(.serving) }
            if state.opening != nil { return .wait }
            state.opening = []
            return .ask
        }
        switch step {
        case .answered(let opening):
            return opening
        case .wait:
            return await withCheckedContinuation { continuation in
                let answer = state.withLock { state -> Opening? in
                    guard state.opening != nil else {
                        return state.failed ? .unavailable("the session's state on this node was given up") : .serving
                    }
                    state.opening?.append(continuation)
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        case .ask:
            let opening = await open()
            let waiters = state.withLock { state in
                defer { state.opening = nil }
                return state.opening ?? []
            }
            for waiter in waiters { waiter.resume(returning: opening) }
            return opening
        }
    }

    private func open() async -> Opening {
        guard let store else { return .serving }
        let outcome: Opening
        do {
            switch try await store.claim(session) {
            case .serve(let snapshot, let lease):
                let attachments = try await storage.journal.attachments(in: session)
                let now = self.now()
                state.withLock { state in
                    if let snapshot { state.hub.restore(snapshot, now: now) }
                    state.hub.restoreJournal(attachments, of: session)
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
            state.waiting = 0
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
        guard let store else { return }
        let (session, lease) = (self.session, state.withLock { $0.lease })
        storage.schedule(.work { await store.release(session, lease: lease) })
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
        if let started = state.withLock({ $0.commitStarted }), now - started > Self.commitTimeout {
            fail(reason: "the store did not answer a commit within \(Self.commitTimeout)")
            return false
        }
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

    /// Queues or performs `actions` (lock held); returns whether ``drain()`` must be scheduled.
    private func carryOut(_ actions: [HubAction<Int>], in state: inout State) -> Bool {
        var sends = actions
        var journal: [JournalOperation<Int>] = []
        var announces = false
        // Most calls have no journal operation: their actions go on as they are, uncopied.
        if actions.contains(where: { if case .journal = $0 { true } else { false } }) {
            sends = []
            for action in actions {
                guard case .journal(let operation) = action else {
                    sends.append(action)
                    continue
                }
                if case .commit = operation { announces = true }
                journal.append(operation)
            }
        }
        let events = state.hub.takeStoreEvents()
        if events.isEmpty, !announces, state.waiting == 0 {
            let (moreJournal, moreEvents) = Self.apply(sends, in: &state, logger: logger)
            journal += moreJournal
            if journal.isEmpty, moreEvents.isEmpty { return false }
            state.pending.append(Pending(journal: journal, events: moreEvents))
        } else {
            state.pending.append(Pending(journal: journal, events: events, actions: sends))
            if !sends.isEmpty { state.waiting += 1 }
        }
        guard !state.writing else { return false }
        state.writing = true
        return true
    }

    private func scheduleWriter() {
        storage.schedule(.drain(self))
    }

    /// The shard's storage writer (run by ``RelayStorage``, off the lock): carries out the journal
    /// operations of everything pending, in order, commits its store events in one go (group
    /// commit), then carries out the actions that waited for them and hands the journal's outcomes
    /// to the hub; again while more is pending.
    func drain() async {
        while let (batch, lease) = state.withLock({ state -> ([Pending], SessionLease?)? in
            guard !state.pending.isEmpty, !state.failed else {
                state.writing = false
                return nil
            }
            return (state.pending, state.lease)
        }) {
            var outcomes: [(JournalOperation<Int>, JournalOutcome)] = []
            for work in batch {
                for operation in work.journal {
                    let outcome = await storage.journal.perform(operation)
                    outcomes.append((operation, outcome))
                }
            }
            let events = batch.flatMap(\.events)
            var compact = false
            if let store, !events.isEmpty {
                let started = now()
                state.withLock { $0.commitStarted = started }
                do {
                    try await store.commit(events, of: session, lease: lease)
                } catch {
                    state.withLock { $0.commitStarted = nil }
                    fail(reason: "the store refused a commit: \(error)")
                    return
                }
                for case .logged(let session, _) in events where !compact { compact = store.needsCompaction(session) }
            }
            let snapshot = state.withLock { state -> SessionSnapshot? in
                state.commitStarted = nil
                guard !state.failed else { return nil }
                state.pending.removeFirst(batch.count)
                var more = Pending()
                for work in batch {
                    if !work.actions.isEmpty { state.waiting -= 1 }
                    let (journal, events) = Self.apply(work.actions, in: &state, logger: self.logger)
                    more.journal += journal
                    more.events += events
                }
                if !more.journal.isEmpty || !more.events.isEmpty { state.pending.insert(more, at: 0) }
                if !outcomes.isEmpty {
                    var completions: [HubAction<Int>] = []
                    for (operation, outcome) in outcomes { completions += state.hub.journalCompleted(operation, outcome) }
                    _ = carryOut(completions, in: &state)  // the writer is running: no second one
                }
                return compact ? state.hub.snapshot(of: self.session) : nil
            }
            if let store, let snapshot {
                do { try await store.compact(snapshot) } catch {
                    logger.info("could not compact session state", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Carries out sends and closes with the lock held; returns the journal operations and store
    /// events that their consequences recorded (a slow consumer's disconnection).
    static func apply(
        _ actions: [HubAction<Int>], in state: inout State, logger: Logger
    ) -> (journal: [JournalOperation<Int>], events: [SessionStoreEvent]) {
        var pending = actions[...]
        var journal: [JournalOperation<Int>] = []
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
            case .journal(let operation):
                journal.append(operation)
            }
        }
        return (journal, state.hub.takeStoreEvents())
    }
}
