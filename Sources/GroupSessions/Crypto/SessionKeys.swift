import Crypto
import NIOCore

/// Keys derived from an invite's secret with HKDF-SHA256 (`docs/protocol.md`, "Cryptography").
///
/// - The **join token** admits a connection to the session at the relay. The relay keeps
///   only its SHA-256 (``joinTokenHash(_:)``), registered by the first connection.
/// - A **payload key per sender** seals every data payload with the session's ``PayloadSuite``
///   (its own HKDF info per suite). Per-sender keys make the nonce simply the sender's own
///   sequence number, unique per key.
/// - A **retain-key hasher** turns retained-message names into opaque 16-byte keys.
///
/// The salt is the session identifier, so two sessions sharing a secret still get distinct keys.
///
/// ```swift
/// let keys = SessionKeys(invite: invite)
/// let token = keys.joinToken          // sent in hello
/// let box = try keys.seal(plaintext, header: aad, senderSequence: 1, sender: me)
/// ```
public struct SessionKeys: Sendable {
    /// The session these keys belong to.
    public let session: SessionID
    /// The algorithm that seals the session's payloads.
    public let suite: PayloadSuite
    // Raw key bytes: swift-crypto's SymmetricKey is not Sendable on every platform.
    private let secret: [UInt8]
    /// The 32-byte join token sent in ``FrameType/hello``.
    public let joinToken: [UInt8]
    private let retainKey: [UInt8]

    /// Derives the keys for `invite`'s session.
    public init(invite: Invite) {
        self.init(secret: invite.secret, session: invite.session, suite: invite.suite)
    }

    /// Derives the keys for `session` from a raw secret.
    public init(secret: [UInt8], session: SessionID, suite: PayloadSuite = .default) {
        self.session = session
        self.suite = suite
        self.secret = secret
        let key = SymmetricKey(data: secret)
        let salt = session.bytes
        joinToken = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, salt: salt, info: Array("coplay v1 join token".utf8), outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
        retainKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key, salt: salt, info: Array("coplay v1 retain key".utf8), outputByteCount: 32
        ).withUnsafeBytes { Array($0) }
    }

    /// The SHA-256 of a join token: all the relay keeps to admit members.
    public static func joinTokenHash(_ token: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: token)) }

    /// The payload key of `sender` under the session's suite.
    public func payloadKey(for sender: ParticipantID) -> SymmetricKey {
        var info = Array(suite.payloadKeyInfo.utf8)
        withUnsafeBytes(of: sender.rawValue.bigEndian) { info.append(contentsOf: $0) }
        return HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: session.bytes, info: info, outputByteCount: 32)
    }

    /// The opaque 16-byte relay key for a retained-message name.
    public func retainKey(for name: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(name.utf8), using: SymmetricKey(data: retainKey)).prefix(16))
    }
}
