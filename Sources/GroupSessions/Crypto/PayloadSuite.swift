/// The AEAD algorithm that seals a session's payloads, fixed when the session is created and
/// carried in its invite (`?aead=aes-256-gcm`; no query means ChaCha20-Poly1305).
///
/// Keys are derived per suite (`docs/protocol.md`, "Cryptography"), so no key is ever used with
/// two algorithms. Both suites share the nonce (`0x00000000 || senderSequence`), the associated
/// data and the sealed-box layout (`ciphertext || 16-byte tag`); only the algorithm and the key
/// differ. AES-256-GCM is the suite browsers can speak: every WebCrypto has it, Firefox has no
/// ChaCha20-Poly1305.
///
/// ```swift
/// let invite = Invite.generate(host: "127.0.0.1", port: 7000, suite: .aes256GCM)
/// invite.description   // coplay://127.0.0.1:7000/0f3c…?aead=aes-256-gcm#Qk9…
/// ```
public enum PayloadSuite: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// ChaCha20-Poly1305 (RFC 8439): the default, what an invite without `?aead=` means.
    case chaCha20Poly1305 = "chacha20-poly1305"
    /// AES-256-GCM (NIST SP 800-38D).
    case aes256GCM = "aes-256-gcm"

    /// The suite of invites that do not name one.
    public static let `default` = PayloadSuite.chaCha20Poly1305

    /// The name used in invites (`aead=` value).
    public var description: String { rawValue }

    /// The HKDF info prefix of a sender's payload key under this suite (followed by the sender id).
    var payloadKeyInfo: String {
        switch self {
        case .chaCha20Poly1305: "coplay v1 payload"
        case .aes256GCM: "coplay v1 payload aes-256-gcm"
        }
    }
}
