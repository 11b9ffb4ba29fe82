import GroupSessions
import Logging
import Synchronization

/// A ``CoordinationChannel`` over a joined `GroupSession`: playback messages travel as end-to-end
/// encrypted `GroupSessionMessenger` messages through the relay, in the relay's total order.
///
/// - Messages: every ``CoordinationMessage`` is sent reliably to all members, as the JSON of
///   docs/protocol.md ("Coordination messages"); a body that is no message is skipped, and one of
///   a kind or version this coplay cannot read arrives as
///   ``CoordinationMessage/unsupported(kind:version:)``. A retaining key becomes a retained
///   message, which the relay hands to late joiners. The relay does not echo a
///   member's own messages, so the channel reports each one back to its own coordinator when the
///   relay acknowledges it, with the relay's stamp as its sequence: every member, the sender
///   included, sees the same sequence number for the same message.
/// - Order: peers' messages and the acknowledgements of the member's own are both taken on the
///   session's read loop (`GroupSessionMessenger.receive(_:_:)` and `sendStamped`) and put into one
///   stream there, so messages arrive in strictly increasing sequence. A message that would not
///   (which the relay's order rules out) is dropped and logged rather than delivered out of order.
/// - Membership: changes of the session's active participants become `.joined` / `.left`.
/// - Roles: with a ``CoordinationGate`` (a session where only hosts control), every message, the
///   member's own included, passes the gate on the read loop, in the relay's order, before it
///   reaches the stream, and every message sent passes it first (signed, or refused with
///   ``PlaybackCoordinatorError/onlyHostsControl``).
/// - Participant identifiers are the session's 64-bit participant ids in hexadecimal.
/// - The event stream finishes when the session is invalidated (left, ended, refused, disconnected).
///
/// ```swift
/// let session = try await center.accept(invite)
/// try await session.join()
/// let channel = GroupSessionCoordinationChannel(session: session, logger: logger)
/// let coordinator = PlaybackCoordinator(channel: channel, reference: reference, delegate: player, logger: logger)
/// ```
public final class GroupSessionCoordinationChannel<Activity: GroupActivity>: CoordinationChannel {
    /// The group session carrying the messages.
    public let session: GroupSession<Activity>
    public let localParticipant: PlaybackParticipantID
    private let messenger: GroupSessionMessenger
    private let logger: Logger
    private let stream: AsyncStream<CoordinationChannelEvent>
    private let order: OrderedYield
    private let subscription: GroupSessionMessenger.Subscription
    private let started = Mutex(false)
    private let gate: (any CoordinationGate)?
    /// Held while a message is sealed by the gate and handed to the session, so that messages
    /// leave in the order they were signed.
    private let sending = Mutex(())

    /// Creates a channel over a session (joined, or about to be joined before ``events()`` is read).
    ///
    /// Messages are collected from here on (the retained ones at once), and buffered until
    /// ``events()`` is read.
    ///
    /// - Parameters:
    ///   - session: the group session.
    ///   - gate: where only hosts control, what signs the member's commands and decides whose
    ///     count (GroupChat's `RoleGate`); `nil` where everyone controls.
    ///   - logger: where sends that fail are logged (at info).
    public init(session: GroupSession<Activity>, gate: (any CoordinationGate)? = nil, logger: Logger) {
        self.session = session
        self.gate = gate
        self.localParticipant = Self.participant(session.localParticipant)
        self.messenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        self.logger = logger
        let (stream, continuation) = AsyncStream.makeStream(of: CoordinationChannelEvent.self, bufferingPolicy: .unbounded)
        self.stream = stream
        let order = OrderedYield(continuation: continuation, logger: logger)
        self.order = order
        self.subscription = messenger.receive(CoordinationMessage.self) { message, context in
            guard let message = gate.map({ $0.incoming(message, from: context.source.id) }) ?? message else { return }
            order.message(message, sender: Self.participant(context.source), sequence: context.sequence)
        }
    }

    deinit { subscription.cancel() }

    /// The coordinator's identifier for a group-session participant.
    public static func participant(_ participant: Participant) -> PlaybackParticipantID {
        PlaybackParticipantID(participant.id.description)
    }

    public func send(_ message: CoordinationMessage, retainingUnder key: String?) async throws {
        let order = self.order
        let local = localParticipant
        guard let gate else {
            try messenger.sendStamped(message, retainedAs: key, evictable: message.retainedSlotIsEvictable) { context in
                order.message(message, sender: local, sequence: context.sequence)
            }
            return
        }
        let participant = session.localParticipant.id
        try sending.withLock { _ in
            let sealed = try gate.outgoing(message, from: participant)
            // A state the gate let through unsigned is a transition from a member without control:
            // retained apart, so that it never replaces the last signed state a joiner reads.
            var key = key
            if case .state = sealed { key = CoordinationMessage.transitionKey }
            try messenger.sendStamped(sealed, retainedAs: key, evictable: message.retainedSlotIsEvictable) { context in
                // The member's own message counts for it as for the others: at its place in the order.
                guard let delivered = gate.incoming(sealed, from: participant) else { return }
                order.message(delivered, sender: local, sequence: context.sequence)
            }
        }
    }

    /// The channel's events. The first call starts forwarding membership changes and watching the
    /// session's end; later calls return the same single-consumer stream.
    public func events() -> AsyncStream<CoordinationChannelEvent> {
        let first = started.withLock { started in
            defer { started = true }
            return !started
        }
        guard first else { return stream }
        let order = self.order
        let logger = self.logger
        let local = localParticipant
        let known = Mutex(Set<PlaybackParticipantID>())
        // Membership and the session's end come synchronously, in the session's order with its
        // messages (no forwarding task): the session calls these one at a time, never under its lock.
        let observation = session.observe(participants: { members in
            known.withLock { known in
                let now = Set(members.map(Self.participant))
                // The members already there before the local one: the core takes its own
                // `joined` as "everyone present is known" (a joiner asks them for the queue;
                // alone, it starts from the retained copy).
                let joined = now.subtracting(known).sorted()
                for member in joined where member != local { order.yield(.joined(member)) }
                if joined.contains(local) { order.yield(.joined(local)) }
                for left in known.subtracting(now).sorted() { order.yield(.left(left)) }
                known = now
            }
        }, ended: { reason in
            logger.info("group session invalidated; coordination channel ends", metadata: ["reason": "\(reason)"])
            order.finish()
        })
        let subscription = self.subscription
        // Directly: the session never calls its handlers under its state lock, which cancelling takes.
        order.onTermination {
            observation.cancel()
            subscription.cancel()
        }
        return stream
    }
}

/// The one way into a channel's stream: messages only in strictly increasing sequence.
private final class OrderedYield: Sendable {
    private struct State {
        var lastSequence: UInt64?
    }
    private let state = Mutex(State())
    private let continuation: AsyncStream<CoordinationChannelEvent>.Continuation
    private let logger: Logger

    init(continuation: AsyncStream<CoordinationChannelEvent>.Continuation, logger: Logger) {
        self.continuation = continuation
        self.logger = logger
    }

    func message(_ message: CoordinationMessage, sender: PlaybackParticipantID, sequence: UInt64) {
        let accepted = state.withLock { state -> Bool in
            if let last = state.lastSequence, sequence <= last { return false }
            state.lastSequence = sequence
            continuation.yield(.message(message, sender: sender, sequence: sequence))
            return true
        }
        if !accepted {
            logger.warning("dropped a coordination message out of the relay's order", metadata: ["sequence": "\(sequence)"])
        }
    }

    func yield(_ event: CoordinationChannelEvent) {
        state.withLock { _ in _ = continuation.yield(event) }
    }

    func finish() { continuation.finish() }

    func onTermination(_ handler: @escaping @Sendable () -> Void) {
        continuation.onTermination = { _ in handler() }
    }
}
