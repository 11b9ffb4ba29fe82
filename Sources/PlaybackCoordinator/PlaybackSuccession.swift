import GroupSessions
import Synchronization

/// Where a member's playback continues when its session is replaced by a successor (a host removed
/// someone and moved everyone else, docs/protocol.md "Removing a member").
///
/// The app learns of the move in the old session (before its end) and calls ``expect(_:)`` with
/// the work that opens and joins the successor and makes the successor's ``CoordinationGate``
/// (where only hosts control: GroupChat's `RoleGate` over the successor, made before its join, so
/// that the statements retained there count from the start). Every session has its own gate: one
/// session's gate never decides another's commands, and a playback whose session had a gate does
/// not move to a successor without one (everyone would control there). When the old session ends,
/// ``GroupPlayback/run(_:localItem:canPresent:name:items:publishInitialState:queue:repeatMode:succession:onEvent:started:)``
/// takes the successor and carries on there with a new coordinator over the same player and the
/// same clock: the player keeps playing, and the new coordinator tells it only what differs from
/// what the old one told it (``CoordinatorHandOver``), so a successor that holds the group's state
/// unchanged costs the player nothing.
///
/// ```swift
/// let succession = PlaybackSuccession<WatchTogetherActivity>()
/// // in the old session, on learning the successor's invite:
/// succession.expect {
///     guard let session = try? await center.accept(invite) else { return nil }
///     let gate = RoleGate(session: session, invite: invite, memberKey: key)  // before joining
///     guard (try? await session.join()) != nil else { return nil }
///     return .init(session: session, gate: gate)
/// }
/// try await playback.run(player, localItem: clip.identifier, succession: succession)
/// ```
public final class PlaybackSuccession<Activity: GroupActivity>: Sendable {
    /// A successor session, joined, and the gate of its coordination channel.
    public struct Successor: Sendable {
        /// The successor session (joined).
        public let session: GroupSession<Activity>
        /// Its channel's gate: where only hosts control, the gate over this session (made before
        /// its join); `nil` where everyone controls.
        public let gate: (any CoordinationGate)?

        /// The successor `session` with its own `gate` (say `nil` explicitly where everyone controls).
        public init(session: GroupSession<Activity>, gate: (any CoordinationGate)?) {
            self.session = session
            self.gate = gate
        }
    }

    private struct State {
        var pending: Task<Successor?, Never>?
        var continuations: [AsyncStream<GroupSession<Activity>>.Continuation] = []
    }

    private let state = Mutex(State())

    /// A succession with no move expected.
    public init() {}

    /// The current session continues in the one `open` returns, with its gate (`nil`: it does not,
    /// and playback ends with the session). `open` starts now; the run waits for it when the
    /// current session ends.
    public func expect(_ open: @escaping @Sendable () async -> Successor?) {
        // Unstructured on purpose: a removal arrives in a message handler, outside any task that
        // outlives it, and the successor must be opening (its invite accepted, its gate made) while
        // the old session still runs. The playback's run awaits it in `take()` when the old session
        // ends; `open` is bounded by the session's own accept and join timeouts.
        let task = Task { await open() }
        state.withLock { $0.pending = task }
    }

    /// Whether a move is expected (``expect(_:)`` was called and not yet taken).
    public var isExpecting: Bool { state.withLock { $0.pending != nil } }

    /// Every session playback moved to, as it moves (a stream per call).
    public var moves: AsyncStream<GroupSession<Activity>> {
        let (stream, continuation) = AsyncStream.makeStream(of: GroupSession<Activity>.self)
        state.withLock { $0.continuations.append(continuation) }
        return stream
    }

    /// The successor, once opened; `nil` when no move was expected or it could not be opened.
    func take() async -> Successor? {
        guard let task = state.withLock({ state -> Task<Successor?, Never>? in
            defer { state.pending = nil }
            return state.pending
        }) else { return nil }
        return await task.value
    }

    /// Tells the ``moves`` readers.
    func moved(to session: GroupSession<Activity>) {
        for continuation in state.withLock({ $0.continuations }) { continuation.yield(session) }
    }

    /// Ends the ``moves`` streams.
    func finish() {
        for continuation in state.withLock({ state in
            defer { state.continuations = [] }
            return state.continuations
        }) { continuation.finish() }
    }
}

/// What a coordinator hands to the coordinator that continues its player in a successor session:
/// what it last told the player (so the new one repeats nothing the player already follows) and
/// the item the player has loaded.
public struct CoordinatorHandOver: Sendable {
    let announced: [TimelineSegment]
    /// The item the local player has loaded.
    public let localItem: String?
}

extension PlaybackCoordinator {
    /// What a coordinator continuing this one's player needs (``CoordinatorHandOver``).
    public func handOver() -> CoordinatorHandOver {
        CoordinatorHandOver(announced: core.announced, localItem: core.localItem)
    }

    /// Takes over from `handOver`: the player follows what it was told, and has its item loaded.
    func adopt(_ handOver: CoordinatorHandOver) {
        core.announced = handOver.announced
        core.localItem = handOver.localItem
    }
}

extension PlaybackCoordinator {
    /// The retained messages that start a successor session where this group is now: its state,
    /// unchanged (as a `restate`: the same timeline on the same shared clock, so players moving
    /// there need not jump), and its queue's retained copy. Send each, retained under its key,
    /// in the successor before anyone moves there.
    ///
    /// - Parameter sentAt: the reference time now.
    /// - Returns: nothing before the group has a state.
    public func successorMessages(sentAt: ReferenceTime) -> [(message: CoordinationMessage, retainKey: String)] {
        guard let state = core.state else { return [] }
        var messages: [(message: CoordinationMessage, retainKey: String)] = [
            (.state(StateProposal(state: state, command: .restate, sentAt: sentAt)), CoordinationMessage.stateKey)
        ]
        if core.hasQueue {
            let parts = QueueSnapshotPart.parts(
                of: core.queue, snapshot: "successor.\(sentAt.nanoseconds)", request: nil, through: 0, sentAt: sentAt)
            for part in parts { messages.append((.queueSnapshot(part), CoordinationMessage.queueSnapshotKey(part: part.part))) }
        }
        return messages
    }
}

extension PlaybackCoordinator {
    /// The members that said they only send a command or look (``PresenceReport/oneShot``).
    public var oneShotMembers: Set<PlaybackParticipantID> { core.oneShotMembers }
}
