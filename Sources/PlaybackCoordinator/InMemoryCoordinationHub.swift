/// An in-process coordination channel hub: a total order, retained messages and membership,
/// like the relay but within one process (for tests, demos and benchmarks on one machine).
///
/// ```swift
/// let hub = InMemoryCoordinationHub()
/// let alice = await hub.connect("alice")
/// let bob = await hub.connect("bob")
/// try await alice.send(message, retainingUnder: CoordinationMessage.stateKey)
/// ```
public actor InMemoryCoordinationHub {
    private var sequence: UInt64 = 0
    private var members: [PlaybackParticipantID: AsyncStream<CoordinationChannelEvent>.Continuation] = [:]
    private var memberOrder: [PlaybackParticipantID] = []
    private var retained: [String: (CoordinationMessage, PlaybackParticipantID, UInt64)] = [:]
    private var retainedOrder: [String] = []

    /// Creates an empty hub.
    public init() {}

    /// Adds `participant` to the group and returns its channel. Existing members are announced to
    /// it, then every retained message, then it is announced to everyone (itself included).
    ///
    /// - Parameter participant: the new member (replaces a previous connection with the same id).
    public func connect(_ participant: PlaybackParticipantID) -> InMemoryCoordinationChannel {
        let (stream, continuation) = AsyncStream<CoordinationChannelEvent>.makeStream()
        if let old = members.removeValue(forKey: participant) {
            old.finish()
            memberOrder.removeAll { $0 == participant }
        }
        for member in memberOrder { continuation.yield(.joined(member)) }
        for key in retainedOrder {
            if let (message, sender, sequence) = retained[key] {
                continuation.yield(.message(message, sender: sender, sequence: sequence))
            }
        }
        members[participant] = continuation
        memberOrder.append(participant)
        for member in memberOrder { members[member]?.yield(.joined(participant)) }
        return InMemoryCoordinationChannel(localParticipant: participant, hub: self, stream: stream)
    }

    /// Removes `participant`; the others receive `.left`, and its stream finishes.
    public func disconnect(_ participant: PlaybackParticipantID) {
        guard let continuation = members.removeValue(forKey: participant) else { return }
        memberOrder.removeAll { $0 == participant }
        continuation.finish()
        for member in memberOrder { members[member]?.yield(.left(participant)) }
    }

    func deliver(_ message: CoordinationMessage, from sender: PlaybackParticipantID, retainingUnder key: String?) throws {
        guard members[sender] != nil else { throw PlaybackCoordinatorError.notConnected(sender) }
        sequence += 1
        if let key {
            if retained[key] == nil { retainedOrder.append(key) }
            retained[key] = (message, sender, sequence)
        }
        for member in memberOrder {
            members[member]?.yield(.message(message, sender: sender, sequence: sequence))
        }
    }
}

/// One member's channel on an ``InMemoryCoordinationHub``.
public struct InMemoryCoordinationChannel: CoordinationChannel {
    public let localParticipant: PlaybackParticipantID
    private let hub: InMemoryCoordinationHub
    private let stream: AsyncStream<CoordinationChannelEvent>

    init(localParticipant: PlaybackParticipantID, hub: InMemoryCoordinationHub, stream: AsyncStream<CoordinationChannelEvent>) {
        self.localParticipant = localParticipant
        self.hub = hub
        self.stream = stream
    }

    public func send(_ message: CoordinationMessage, retainingUnder key: String?) async throws {
        try await hub.deliver(message, from: localParticipant, retainingUnder: key)
    }

    public func events() -> AsyncStream<CoordinationChannelEvent> { stream }

    /// Leaves the hub.
    public func leave() async { await hub.disconnect(localParticipant) }
}
