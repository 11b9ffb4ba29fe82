/// Rejects replayed data frames: per sender, sender sequences must strictly increase.
///
/// Reliable delivery is FIFO per sender, so a sequence at or below the last accepted one from
/// that sender is a replay (or a retained frame already seen) and is dropped.
public struct ReplayGuard: Sendable {
    private var last: [ParticipantID: UInt64] = [:]

    /// Creates an empty guard.
    public init() {}

    /// Accepts `sequence` from `sender` if it is newer than anything accepted from them.
    /// - Returns: `true` if accepted (and recorded), `false` for a replay.
    public mutating func accept(_ sequence: UInt64, from sender: ParticipantID) -> Bool {
        if let previous = last[sender], sequence <= previous { return false }
        last[sender] = sequence
        return true
    }

    /// The highest sequence accepted from `sender`, if any.
    public func lastAccepted(from sender: ParticipantID) -> UInt64? { last[sender] }
}
