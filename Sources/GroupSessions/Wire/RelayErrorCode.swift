/// The error codes an ``FrameType/error`` frame carries (see `docs/protocol.md`, "Error codes").
///
/// Codes are an open set: a client that receives a code it does not know treats it as a
/// generic refusal and shows the detail text.
public struct RelayErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 16-bit code on the wire.
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// The bytes did not form a valid frame or payload; the connection is closed.
    public static let malformed = RelayErrorCode(rawValue: 1)
    /// The frame's protocol version is not spoken here; the connection is closed.
    public static let unsupportedVersion = RelayErrorCode(rawValue: 2)
    /// The frame is larger than the relay accepts; the connection is closed.
    public static let frameTooLarge = RelayErrorCode(rawValue: 3)
    /// The join token does not match the session's; the connection is closed.
    public static let unauthorized = RelayErrorCode(rawValue: 4)
    /// The frame needs an admitted (or joined) connection first; the frame is dropped.
    public static let notJoined = RelayErrorCode(rawValue: 5)
    /// The sender exceeded its rate limit; the frame is dropped, the connection stays.
    public static let rateLimited = RelayErrorCode(rawValue: 6)
    /// The relay holds as many connections as it may; the connection is closed.
    public static let tooManyConnections = RelayErrorCode(rawValue: 7)
    /// Another live connection already uses this participant id in the session; closed.
    public static let duplicateParticipant = RelayErrorCode(rawValue: 8)
    /// The session has ended.
    public static let sessionEnded = RelayErrorCode(rawValue: 9)
    /// The frame type is not known to the relay; the frame is dropped.
    public static let unsupportedType = RelayErrorCode(rawValue: 10)
    /// A per-session quota (retained keys, members) is exhausted; the frame is dropped.
    public static let quotaExceeded = RelayErrorCode(rawValue: 11)
    /// The connection fell too far behind in reading; it is closed.
    public static let slowConsumer = RelayErrorCode(rawValue: 12)
    /// The frame names a different session than the one the connection was admitted to.
    public static let wrongSession = RelayErrorCode(rawValue: 13)
    /// A resuming hello cannot be honoured (session unknown, membership expired, or the frames
    /// after the member's last sequence are no longer held); the connection is closed.
    public static let cannotResume = RelayErrorCode(rawValue: 20)
    /// Another node of the relay service serves the session: the detail is that node's address
    /// (`HOST:PORT`); connect there (and resume) instead. The connection is closed.
    public static let redirect = RelayErrorCode(rawValue: 21)
    /// The relay cannot serve the session right now (its session store is unreachable); try
    /// again later, or another node. The connection is closed.
    public static let unavailable = RelayErrorCode(rawValue: 22)

    public var description: String {
        switch self {
        case .malformed: "malformed"
        case .unsupportedVersion: "unsupported version"
        case .frameTooLarge: "frame too large"
        case .unauthorized: "unauthorized"
        case .notJoined: "not joined"
        case .rateLimited: "rate limited"
        case .tooManyConnections: "too many connections"
        case .duplicateParticipant: "duplicate participant"
        case .sessionEnded: "session ended"
        case .unsupportedType: "unsupported frame type"
        case .quotaExceeded: "quota exceeded"
        case .slowConsumer: "slow consumer"
        case .wrongSession: "wrong session"
        case .cannotResume: "cannot resume"
        case .redirect: "redirect"
        case .unavailable: "unavailable"
        default: "error \(rawValue)"
        }
    }
}
