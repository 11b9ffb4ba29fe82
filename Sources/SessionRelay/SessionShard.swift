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
final class SessionShard: Sendable {
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
    }

    let session: SessionID
    let state: Mutex<State>
    private let store: (any SessionPersistence)?
    private let queue: DispatchQueue?
    private let logger: Logger

    init(session: SessionID, hub: SessionHub<Int>, store: (any SessionPersistence)?, logger: Logger) {
        self.session = session
        var hub = hub
        hub.recordsStoreEvents = store != nil
        state = Mutex(State(hub: hub))
        self.store = store
        queue = store.map { _ in DispatchQueue(label: "coplay.relay.store.\(session)") }
        self.logger = logger
    }

    /// Runs `body` on the hub under the lock and carries out what it returns: at once, or after
    /// the store has written the events it recorded.
    ///
    /// - Returns: `body`'s second result.
    @discardableResult
    func withHub<R: Sendable>(_ body: (inout SessionHub<Int>) -> ([HubAction<Int>], R)) -> R {
        let (result, startWriter) = state.withLock { state -> (R, Bool) in
            let (actions, result) = body(&state.hub)
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
            guard !state.retired else { return (false, false) }
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
            let startWriter = carryOut(state.hub.disconnect(id), in: &state)
            state.outboxes[id] = nil
            return (retireIfEmpty(&state), startWriter)
        }
        if startWriter { scheduleWriter() }
        return retired
    }

    /// Lets the hub expire what has timed out; returns whether the shard is now empty and has retired.
    func tick(now: Duration) -> Bool {
        let (retired, startWriter) = state.withLock { state -> (Bool, Bool) in
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

    /// The store writer: writes each pending item's events, then carries out its actions, in order.
    private func drain() {
        guard let store else { return }
        while true {
            guard let work = state.withLock({ state -> Pending? in
                guard let first = state.pending.first else {
                    state.writing = false
                    return nil
                }
                return first
            }) else { return }
            var compact: Set<SessionID> = []
            for event in work.events {
                store.apply(event)
                if case .logged(let session, _) = event, store.needsCompaction(session) { compact.insert(session) }
            }
            let snapshots = state.withLock { state -> [SessionSnapshot] in
                state.pending.removeFirst()
                let more = Self.apply(work.actions, in: &state, logger: logger)
                if !more.isEmpty { state.pending.insert(Pending(events: more, actions: []), at: 0) }
                return compact.compactMap { state.hub.snapshot(of: $0) }
            }
            for snapshot in snapshots {
                do { try store.compact(snapshot) } catch {
                    logger.info("could not compact session state", metadata: ["error": "\(error)"])
                }
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
                switch outbox.enqueue(frame, droppable: droppable) {
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

/// What the relay needs of a session store (``SessionStore``; tests and benchmarks inject slow
/// or failing ones). Calls for one session come from that session's writer queue, one at a time;
/// calls for different sessions may run concurrently.
public protocol SessionPersistence: AnyObject, Sendable {
    /// Writes one hub event (errors are the store's to log).
    func apply(_ event: SessionStoreEvent)
    /// Whether `session`'s log has grown enough to be rewritten from a snapshot.
    func needsCompaction(_ session: SessionID) -> Bool
    /// Rewrites the session from `snapshot`.
    func compact(_ snapshot: SessionSnapshot) throws
    /// Every stored session (at start).
    func load() throws -> [SessionSnapshot]
}
