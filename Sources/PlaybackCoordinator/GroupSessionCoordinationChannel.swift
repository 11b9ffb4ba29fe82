import GroupSessions
import Logging
import Synchronization

/// A ``CoordinationChannel`` over a joined `GroupSession`: playback messages travel as end-to-end
/// encrypted `GroupSessionMessenger` messages through the relay, in the relay's total order.
///
/// - Messages: every ``CoordinationMessage`` is sent reliably to all members; a retaining key
///   becomes a retained message, which the relay hands to late joiners. The relay does not echo a
///   member's own messages, so the channel reports each one back to its own coordinator when the
///   relay acknowledges it, with the relay's stamp as its sequence: every member, the sender
///   included, sees the same sequence number for the same message.
/// - Membership: changes of the session's active participants become `.joined` / `.left`.
/// - Participant identifiers are the session's 64-bit participant ids in hexadecimal.
/// - The event stream finishes when the session is invalidated (left, ended, refused, disconnected).
///
/// ```swift
/// let session = try await center.accept(invite)
/// try await session.join()
/// let channel = GroupSessionCoordinationChannel(session: session)
/// let coordinator = PlaybackCoordinator(channel: channel, reference: reference, delegate: player)
/// ```
public final class GroupSessionCoordinationChannel<Activity: GroupActivity>: CoordinationChannel {
    /// The group session carrying the messages.
    public let session: GroupSession<Activity>
    public let localParticipant: ParticipantID
    private let messenger: GroupSessionMessenger
    private let logger: Logger
    private let stream: AsyncStream<CoordinationChannelEvent>
    private let continuation: AsyncStream<CoordinationChannelEvent>.Continuation
    private let started = Mutex(false)

    /// Creates a channel over a session (joined, or about to be joined before ``events()`` is read).
    ///
    /// - Parameters:
    ///   - session: the group session.
    ///   - logger: where sends that fail are logged (at info).
    public init(session: GroupSession<Activity>, logger: Logger = Logger(label: "coplay.playback.channel")) {
        self.session = session
        self.localParticipant = Self.participant(session.localParticipant)
        self.messenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        self.logger = logger
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// The coordinator's identifier for a group-session participant.
    public static func participant(_ participant: Participant) -> ParticipantID {
        ParticipantID(participant.id.description)
    }

    public func send(_ message: CoordinationMessage, retainingUnder key: String?) async throws {
        let continuation = self.continuation
        let local = localParticipant
        try messenger.sendStamped(message, retainedAs: key) { context in
            continuation.yield(.message(message, sender: local, sequence: context.sequence))
        }
    }

    /// The channel's events. The first call starts forwarding (the retained messages first, then
    /// live ones); later calls return the same single-consumer stream.
    public func events() -> AsyncStream<CoordinationChannelEvent> {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return stream }
        let continuation = self.continuation
        let messages = messenger.messages(of: CoordinationMessage.self)
        let participants = session.activeParticipantsUpdates
        let states = session.states
        let initial = session.activeParticipants
        let logger = self.logger
        let forward = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await (message, context) in messages {
                        continuation.yield(.message(message, sender: Self.participant(context.source), sequence: context.sequence))
                    }
                }
                group.addTask {
                    var known = Set<ParticipantID>()
                    func update(_ members: Set<Participant>) {
                        let now = Set(members.map(Self.participant))
                        for joined in now.subtracting(known).sorted() { continuation.yield(.joined(joined)) }
                        for left in known.subtracting(now).sorted() { continuation.yield(.left(left)) }
                        known = now
                    }
                    update(initial)
                    for await members in participants { update(members) }
                }
                group.addTask {
                    for await state in states {
                        if case .invalidated(let reason) = state {
                            logger.info("group session invalidated; coordination channel ends", metadata: ["reason": "\(reason)"])
                            break
                        }
                    }
                }
                // The session ending ends the channel: stop the other forwarders.
                await group.next()
                group.cancelAll()
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in forward.cancel() }
        return stream
    }
}
