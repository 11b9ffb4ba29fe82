/// One thing the coordination channel delivers: a message in the group's total order, or a
/// membership change.
public enum CoordinationChannelEvent: Hashable, Sendable {
    /// A message, with its sender and the channel's per-session sequence number.
    ///
    /// Sequence numbers are stamped by one authority (the relay) and strictly increase in delivery
    /// order for every member, so every member sees the same order.
    case message(CoordinationMessage, sender: PlaybackParticipantID, sequence: UInt64)
    /// A participant joined (also delivered for members already present when the local one joins).
    case joined(PlaybackParticipantID)
    /// A participant left.
    case left(PlaybackParticipantID)
}

/// The group channel the coordinator sends its messages through.
///
/// In production this is a thin adapter over GroupSessions' `GroupSessionMessenger`
/// (`CoordinationMessage` is `Codable`) and the session's participant stream. Requirements:
///
/// - **One total order.** Every member receives every message, *including its own*, in the same
///   order, each stamped with a strictly increasing `sequence`. The coordinator applies its own
///   commands only when they come back, so concurrent commands resolve identically everywhere.
/// - **Retained messages.** `send(_:retainingUnder:)` with a key makes the relay keep the latest
///   message under that key and hand it (with its original sender and sequence) to every member
///   that joins later, before any newer message.
/// - **Reliable, FIFO** delivery for members present when a message was sent.
///
/// ```swift
/// let hub = InMemoryCoordinationHub()
/// let channel = await hub.connect("alice")
/// for await event in channel.events() { ... }
/// ```
public protocol CoordinationChannel: Sendable {
    /// The local participant.
    var localParticipant: PlaybackParticipantID { get }

    /// Sends `message` to the whole group (the sender included).
    ///
    /// - Parameters:
    ///   - message: the message.
    ///   - key: when not `nil`, the relay retains this message as the latest under `key`.
    func send(_ message: CoordinationMessage, retainingUnder key: String?) async throws

    /// The channel's events in delivery order. Called once; the stream finishes when the local
    /// participant leaves or the channel closes.
    func events() -> AsyncStream<CoordinationChannelEvent>
}
