/// Where a ``GroupSession`` is in its life: `waiting -> joined -> invalidated(reason)`.
public enum GroupSessionState: Hashable, Sendable, CustomStringConvertible {
    /// Admitted by the relay, not yet joined: the activity and retained state are known.
    case waiting
    /// A full member: presence announced, messages flowing.
    case joined
    /// Over for this member; the session object cannot be used again.
    case invalidated(reason: GroupSessionInvalidationReason)

    public var description: String {
        switch self {
        case .waiting: "waiting"
        case .joined: "joined"
        case .invalidated(let reason): "invalidated(\(reason))"
        }
    }
}

/// Why a ``GroupSession`` was invalidated.
public enum GroupSessionInvalidationReason: Hashable, Sendable, CustomStringConvertible {
    /// The local member left.
    case left
    /// A member ended the session for everyone.
    case ended(by: Participant)
    /// The relay refused the member (wrong secret, limits).
    case refused(String)
    /// The connection to the relay was lost.
    case connectionLost(String)

    public var description: String {
        switch self {
        case .left: "left"
        case .ended(let participant): "ended by \(participant.id)"
        case .refused(let detail): "refused: \(detail)"
        case .connectionLost(let detail): "connection lost: \(detail)"
        }
    }
}
