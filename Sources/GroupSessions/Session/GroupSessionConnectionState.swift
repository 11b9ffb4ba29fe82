/// Whether a joined (or waiting) session is currently connected to the relay.
///
/// A lost connection does not end a session: the member reconnects (``ReconnectPolicy``) and
/// resumes as the same participant, with no reliable message lost or repeated. Meanwhile
/// reliable sends are kept and sent on resume; unreliable ones are dropped.
public enum GroupSessionConnectionState: Hashable, Sendable, CustomStringConvertible {
    /// Connected and admitted by the relay.
    case connected
    /// The connection was lost; reconnecting (`attempt` attempts made so far).
    case reconnecting(attempt: Int)

    public var description: String {
        switch self {
        case .connected: "connected"
        case .reconnecting(let attempt): "reconnecting (attempt \(attempt))"
        }
    }
}
