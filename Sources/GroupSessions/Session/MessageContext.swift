/// Where a received message came from and where it sits in the session's order.
public struct MessageContext: Hashable, Sendable {
    /// Who sent it.
    public var source: Participant
    /// The relay-stamped session sequence number: one total order across all senders.
    public var sequence: UInt64
    /// The sender's own counter (strictly increasing per sender).
    public var senderSequence: UInt64
    /// Whether the message was sent as retained (and may be a replay handed to a joiner).
    public var isRetained: Bool

    /// Creates a context.
    public init(source: Participant, sequence: UInt64, senderSequence: UInt64, isRetained: Bool) {
        self.source = source
        self.sequence = sequence
        self.senderSequence = senderSequence
        self.isRetained = isRetained
    }
}
