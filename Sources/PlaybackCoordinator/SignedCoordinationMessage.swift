import GroupSessions

/// A coordination message signed by a member's key: how commands travel in a session where only
/// hosts control (docs/protocol.md, "`signed`, version 1").
///
/// ```
/// {"kind":"signed","v":1,"key":"…43…","body":"<base64url of the inner message's JSON>","signature":"…86…"}
/// ```
///
/// The fields are kept as the text that travelled: the ``CoordinationGate`` of the channel (in
/// coplay, GroupChat's `RoleGate`) decodes and verifies them, and hands the coordinator the inner
/// message, or nothing. A coordinator without a gate ignores a signed message.
public struct SignedCoordinationMessage: Hashable, Sendable {
    /// The wire name of the kind.
    public static let kind = "signed"
    /// The version written and read.
    public static let version = 1

    /// The signer's Ed25519 public key, unpadded base64url (43 characters when well formed).
    public var key: String
    /// The inner message's JSON, unpadded base64url: the bytes the signature covers.
    public var body: String
    /// The Ed25519 signature, unpadded base64url (86 characters when well formed).
    public var signature: String

    /// A signed message from its three texts.
    public init(key: String, body: String, signature: String) {
        self.key = key
        self.body = body
        self.signature = signature
    }
}

extension SignedCoordinationMessage: Codable {
    private enum CodingKeys: String, CodingKey {
        case key, body, signature
    }
}

/// What decides, in a session where only some members control, which coordination messages
/// count: a filter between a ``GroupSessionCoordinationChannel`` and its coordinator.
///
/// The channel calls ``incoming(_:from:)`` for every message, the member's own included (when the
/// relay acknowledges it), synchronously on the session's read loop and in the relay's order, so
/// a gate that also takes other messages of the session in that order (role statements) decides
/// every command at its point of the order, as every member does. ``outgoing(_:from:)`` is called
/// for every message the coordinator sends, just before it goes, one at a time.
public protocol CoordinationGate: Sendable {
    /// The message to send in place of `message` (the same, or a signed one). A `state` it returns
    /// unsigned is a transition from a member without control (``StateProposal/isUnauthenticated``
    /// on the receivers' side): the channel retains it under
    /// ``CoordinationMessage/transitionKey``.
    ///
    /// - Parameters:
    ///   - message: the message the coordinator sends.
    ///   - participant: the local participant (what a signature binds).
    /// - Throws: ``PlaybackCoordinatorError/onlyHostsControl`` when this member may not send it:
    ///   the coordinator's command fails with it, and its own proposals are dropped.
    func outgoing(_ message: CoordinationMessage, from participant: ParticipantID) throws -> CoordinationMessage

    /// The message the coordinator receives for `message` from `sender` (the inner message of a
    /// signed one), or `nil` to drop it.
    ///
    /// - Parameters:
    ///   - message: the message as it arrived (the member's own too, when the relay acknowledged it).
    ///   - sender: the participant whose frame carried it.
    func incoming(_ message: CoordinationMessage, from sender: ParticipantID) -> CoordinationMessage?
}
