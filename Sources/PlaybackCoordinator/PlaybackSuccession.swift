import GroupSessions
import Synchronization

/// Where a member's playback continues when its session is replaced by a successor (a host removed
/// someone and moved everyone else, docs/protocol.md "Removing a member").
///
/// The app learns of the move in the old session (before its end) and calls ``expect(_:)`` with
/// the work that opens and joins the successor. When the old session ends,
/// ``GroupPlayback/run(_:localItem:canPresent:name:items:publishInitialState:queue:repeatMode:succession:onEvent:started:)``
/// takes the successor and carries on there with a new coordinator over the same player and the
/// same clock: the player keeps playing, and the new coordinator tells it only what differs from
/// what the old one told it (``CoordinatorHandOver``), so a successor that holds the group's state
/// unchanged costs the player nothing.
///
/// ```swift
/// let succession = PlaybackSuccession<WatchTogetherActivity>()
/// // in the old session, on learning the successor's invite:
/// succession.expect { try? await openAndJoin(invite) }
/// try await playback.run(player, localItem: clip.identifier, succession: succession)
/// ```
public final class PlaybackSuccession<Activity: GroupActivity>: Sendable {
    private struct State {
        var pending: Task<GroupSession<Activity>?, Never>?
        var continuations: [AsyncStream<GroupSession<Activity>>.Continuation] = []
    }

    private let state = Mutex(State())

    /// A succession with no move expected.
    public init() {}

    /// The current session continues in the one `open` returns (`nil`: it does not, and playback
    /// ends with the session). `open` starts now; the run waits for it when the current session ends.
    public func expect(_ open: @escaping @Sendable () async -> GroupSession<Activity>?) {
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
    func take() async -> GroupSession<Activity>? {
        guard let task = state.withLock({ state -> Task<GroupSession<Activity>?, Never>? in
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
