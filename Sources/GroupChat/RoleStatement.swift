import Crypto
import GroupSessions

/// The host's signed statement "key K controls (or no longer controls) session S", in a session
/// where only hosts control (docs/protocol.md, "`role`, version 1"). Sent by `coplay control
/// CONTROLLER_INVITE grant NAME` / `revoke NAME` as ``MemberMessage/role(_:)``, retained under
/// ``retainName`` (the relay keeps each key's latest statement for joiners).
///
/// The signature, by the session's host key, covers:
///
/// ```
/// "coplay role v1" 0x00 | session (16) | action u8 (1 grant, 2 revoke) | key (32) | issuedAt u64 | nameLength u16 | name (UTF-8)
/// ```
///
/// ```swift
/// let statement = try RoleStatement(signedBy: hostKey, session: id, action: .grant, key: bob, name: "bob", issuedAt: now)
/// var book = RoleBook(session: id, hostKey: hostKey.publicKey)
/// book.receive(statement)   // .success: bob controls from here on
/// ```
public struct RoleStatement: Hashable, Sendable {
    /// Grant or revoke.
    public enum Action: String, Hashable, Sendable, CaseIterable, Codable {
        /// The key controls from this statement on.
        case grant
        /// The key no longer controls from this statement on.
        case revoke

        /// The byte the signature covers.
        var byte: UInt8 { self == .grant ? 1 : 2 }
    }

    /// Grant or revoke.
    public var action: Action
    /// The subject: the member key that gains or loses control.
    public var key: MemberPublicKey
    /// The subject's name when the statement was made (shown in notices).
    public var name: String
    /// The issuer's wall clock, nanoseconds since the Unix epoch: a statement counts only above the
    /// last one accepted about the same key.
    public var issuedAt: UInt64
    /// Ed25519 signature of ``canonicalBytes(session:)`` by the host key.
    public var signature: [UInt8]

    /// A statement as received (check it with ``isValid(in:hostKey:)``).
    public init(action: Action, key: MemberPublicKey, name: String, issuedAt: UInt64, signature: [UInt8]) {
        self.action = action
        self.key = key
        self.name = name
        self.issuedAt = issuedAt
        self.signature = signature
    }

    /// A statement signed by the host key.
    public init(signedBy hostKey: MemberKey, session: SessionID, action: Action, key: MemberPublicKey, name: String, issuedAt: UInt64) throws {
        self.init(action: action, key: key, name: name, issuedAt: issuedAt, signature: [])
        signature = try hostKey.signature(for: canonicalBytes(session: session))
    }

    /// The bytes the signature covers.
    public func canonicalBytes(session: SessionID) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay role v1")
        writer.raw(session.bytes)
        writer.raw([action.byte])
        writer.raw(key.bytes)
        writer.u64(issuedAt)
        writer.shortText(name)
        return writer.bytes
    }

    /// Whether the name follows ``ChatText``'s rules (clean, 1 to 64 characters).
    public var isWellFormed: Bool {
        ChatText.isClean(name) && !name.isEmpty && ChatText.length(name) <= ChatText.maximumNameLength
    }

    /// Whether the signature verifies under `hostKey` in `session`.
    public func isValid(in session: SessionID, hostKey: MemberPublicKey) -> Bool {
        hostKey.isValidSignature(signature, for: canonicalBytes(session: session))
    }

    /// The name the relay retains the statement under: `coplay.role.` and the first 8 bytes of the
    /// subject key's SHA-256 in hex (one slot per key: its latest statement).
    public var retainName: String {
        "coplay.role." + SHA256.hash(data: key.bytes).prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}
