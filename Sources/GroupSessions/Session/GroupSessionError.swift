/// Errors from group sessions, messengers, journals and transports.
///
/// Match on the static factories' codes through ``isSameKind(as:)`` or inspect ``relayCode``;
/// ``description`` always reads as a sentence.
public struct GroupSessionError: Error, Sendable, CustomStringConvertible {
    enum Code: Hashable, Sendable {
        case messageTooLarge
        case rateLimited
        case notJoined
        case invalidated
        case connectionClosed
        case queueFull
        case refusedByRelay
        case noActivity
        case attachmentTooLarge
        case attachmentNotFound
        case timedOut
        case protocolViolation
    }

    let code: Code
    /// The relay's error code when the relay refused something.
    public let relayCode: RelayErrorCode?
    private let detail: String

    init(_ code: Code, relayCode: RelayErrorCode? = nil, _ detail: String) {
        self.code = code
        self.relayCode = relayCode
        self.detail = detail
    }

    /// A message (or attachment chunk) is larger than allowed.
    public static func messageTooLarge(size: Int, limit: Int) -> Self {
        Self(.messageTooLarge, "message of \(size) bytes exceeds the limit of \(limit) bytes")
    }
    /// The local sender exceeded its rate limit; the message was not sent.
    public static func rateLimited(ratePerSecond: Int, burst: Int) -> Self {
        Self(.rateLimited, "send rate limit exceeded (\(ratePerSecond) messages/s, burst \(burst)); message not sent")
    }
    /// The session is not joined.
    public static var notJoined: Self { Self(.notJoined, "the session is not joined") }
    /// The session is invalidated.
    public static func invalidated(_ reason: String) -> Self { Self(.invalidated, "the session is invalidated: \(reason)") }
    /// The connection to the relay is closed.
    public static var connectionClosed: Self { Self(.connectionClosed, "the connection to the relay is closed") }
    /// Too many frames are queued for sending.
    public static var queueFull: Self { Self(.queueFull, "the send queue is full") }
    /// The relay refused a request.
    public static func refusedByRelay(_ code: RelayErrorCode, _ detail: String) -> Self {
        Self(.refusedByRelay, relayCode: code, "the relay refused: \(code): \(detail)")
    }
    /// The session has no activity (nobody activated one).
    public static var noActivity: Self { Self(.noActivity, "the session has no activity yet") }
    /// An attachment is larger than allowed.
    public static func attachmentTooLarge(size: Int, limit: Int) -> Self {
        Self(.attachmentTooLarge, "attachment of \(size) bytes exceeds the limit of \(limit) bytes")
    }
    /// No attachment with that identifier.
    public static var attachmentNotFound: Self { Self(.attachmentNotFound, "no such attachment") }
    /// An operation did not complete in time.
    public static func timedOut(_ what: String) -> Self { Self(.timedOut, "timed out waiting for \(what)") }
    /// The peer broke the protocol.
    public static func protocolViolation(_ detail: String) -> Self { Self(.protocolViolation, "protocol violation: \(detail)") }

    /// Whether `other` is the same kind of error (ignoring details).
    public func isSameKind(as other: GroupSessionError) -> Bool { code == other.code }

    public var description: String { detail }
}
