import Foundation

/// One member's handle on a group session for an activity of type `Activity`.
///
/// A session starts `waiting` (admitted by the relay: the activity and retained state are
/// known), becomes `joined` after ``join(timeout:)``, and ends `invalidated` after ``leave()``,
/// ``end()`` (for everyone), or a lost connection. Sessions come from a
/// ``GroupActivityCenter``.
///
/// ```swift
/// let session = try await center.accept(invite)
/// try await session.join()
/// for await members in session.activeParticipantsUpdates { print(members.count) }
/// ```
public final class GroupSession<Activity: GroupActivity>: Sendable, Identifiable {
    let engine: SessionEngine
    /// The invite this member opened the session with: give it to someone (or keep it) to join
    /// again (`center.accept(invite)`). It holds the session secret; a successor is opened on the
    /// same relay.
    public let invite: Invite

    /// GroupActivities' name for the session's state (``GroupSessionState``).
    public typealias State = GroupSessionState

    init(engine: SessionEngine, invite: Invite) {
        self.engine = engine
        self.invite = invite
    }

    /// The session's identifier.
    public var id: SessionID { engine.session }
    /// This member.
    public var localParticipant: Participant { Participant(id: engine.local) }
    /// The current state.
    public var state: GroupSessionState { engine.state }
    /// The current state, then every change; finishes after `invalidated`.
    public var states: AsyncStream<GroupSessionState> { engine.stateUpdates() }
    /// Members that have joined (the local one included once joined).
    public var activeParticipants: Set<Participant> { engine.participants }
    /// The current set of active participants, then the whole set again after every join or leave.
    public var activeParticipantsUpdates: AsyncStream<Set<Participant>> { engine.participantUpdates() }
    /// Data frames this member rejected: failed to open (tampered, wrong key, spoofed sender)
    /// or replayed. Such frames are never delivered.
    public var rejectedFrameCount: Int { engine.rejectedFrames }
    /// Relay refusals that did not end the session (a rate-limited or oversized frame).
    public var relayErrors: AsyncStream<GroupSessionError> { engine.errorUpdates() }
    /// Whether the member is connected to the relay or reconnecting after a lost connection.
    public var connectionState: GroupSessionConnectionState { engine.connectionState }
    /// The connection state now, then every change (`reconnecting` after a loss, `connected`
    /// once resumed); finishes after `invalidated`.
    public var connectionStates: AsyncStream<GroupSessionConnectionState> { engine.connectionStateUpdates() }

    /// The current activity: the one the relay ordered last among all members' updates.
    public var activity: Activity {
        // The center only hands out sessions whose activity decodes.
        try! Self.decode(engine.activity ?? [])
    }

    /// The current activity, then every change.
    public var activityUpdates: AsyncStream<Activity> {
        engine.activityUpdates { try? Self.decode($0) }
    }

    /// Calls `participants` with the active participants now and after every join or leave, and
    /// `ended` once when the session is invalidated (at once if it already is): synchronously, in
    /// the session's order with its messages (``GroupSessionMessenger/receive(_:_:)``), never under
    /// its lock. For adapters that forward membership without a task of their own.
    ///
    /// - Returns: The registration; cancel it to stop.
    package func observe(
        participants: @escaping @Sendable (Set<Participant>) -> Void,
        ended: @escaping @Sendable (GroupSessionInvalidationReason) -> Void
    ) -> GroupSessionMessenger.Subscription {
        let engine = self.engine
        let members = engine.subscribe(\.participants, initial: { $0.participants }, yield: participants, finish: {})
        let states = engine.subscribe(\.states, initial: { $0.state }, yield: { state in
            if case .invalidated(let reason) = state { ended(reason) }
        }, finish: {})
        return GroupSessionMessenger.Subscription {
            if let members { engine.unsubscribe(\.participants, members) }
            if let states { engine.unsubscribe(\.states, states) }
        }
    }

    /// Replaces the activity for every member.
    ///
    /// Members converge on one value: when two members set it at the same moment, the update
    /// the relay ordered last wins everywhere, the setter included.
    ///
    /// - Throws: ``GroupSessionError`` if not joined.
    public func setActivity(_ activity: Activity) throws {
        try engine.setActivity(Self.encode(activity))
    }

    /// Joins: announces this member and starts receiving messages.
    ///
    /// The member that activated the session also waits here until the relay has stored its
    /// activity, so anyone who accepts the invite afterwards finds it.
    ///
    /// ```swift
    /// try await session.join(timeout: .seconds(10))
    /// ```
    ///
    /// - Parameter timeout: How long to wait for each answer from the relay (the join
    ///   confirmation, then the activity's ack).
    /// - Throws: ``GroupSessionError`` if the session is invalidated, the relay refuses, or
    ///   ``GroupSessionError/timedOut(_:)`` if it does not answer within `timeout` (the session
    ///   is then not invalidated: still `waiting` if the join was never confirmed).
    public func join(timeout: Duration = .seconds(30)) async throws { try await engine.join(timeout: timeout) }

    /// Leaves locally; the others see this member go. The session object is invalidated.
    public func leave() { engine.leave() }

    /// Leaves, and returns once the relay has been told (the `leave` frame written and the
    /// connection closed) or `timeout` has passed: what a process about to exit should call, so the
    /// other members see it leave now rather than after the relay's presence grace period.
    public func leave(waitingUpTo timeout: Duration) async { await engine.leave(waitingUpTo: timeout) }

    /// Ends the session for every member.
    ///
    /// - Throws: ``GroupSessionError/notJoined`` if not joined.
    public func end() throws { try engine.end() }

    static func encode(_ activity: Activity) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array(try encoder.encode(activity))
    }

    static func decode(_ bytes: [UInt8]) throws -> Activity {
        try JSONDecoder().decode(Activity.self, from: Data(bytes))
    }
}
