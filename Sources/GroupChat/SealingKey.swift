import Crypto
import Foundation
import GroupSessions

/// A member's key for receiving sealed secrets: X25519, used with HPKE (RFC 9180, base mode,
/// DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM: swift-crypto's `HPKE`, which WebCrypto's
/// X25519, HKDF and AES-GCM can follow).
///
/// Each member makes a fresh one per session and announces its public half bound to its member
/// key (``SealingKeyStatement``). When a host removes someone (``Removal``), every remaining
/// member receives the successor session's invite sealed to its own sealing key; the removed member
/// has none of those keys.
///
/// ```swift
/// let key = SealingKey()
/// let box = try Sealing.seal(Array("secret".utf8), to: key.publicKey, info: Array("context".utf8))
/// try Sealing.open(box, with: key, info: Array("context".utf8))   // "secret"
/// ```
public struct SealingKey: Sendable {
    /// The private key's 32 bytes (swift-crypto's key type is not `Sendable`).
    private let rawBytes: [UInt8]
    /// The public half the others seal to.
    public let publicKey: SealingPublicKey

    /// A fresh random key.
    public init() {
        let key = Curve25519.KeyAgreement.PrivateKey()
        rawBytes = Array(key.rawRepresentation)
        publicKey = SealingPublicKey(uncheckedBytes: Array(key.publicKey.rawRepresentation))
    }

    /// The key with these 32 private bytes (test vectors).
    ///
    /// - Throws: when `rawRepresentation` is not 32 bytes.
    public init(rawRepresentation: [UInt8]) throws {
        let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: rawRepresentation)
        rawBytes = rawRepresentation
        publicKey = SealingPublicKey(uncheckedBytes: Array(key.publicKey.rawRepresentation))
    }

    var privateKey: Curve25519.KeyAgreement.PrivateKey {
        // The bytes came from a valid key.
        try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: rawBytes)
    }
}

/// A member's public X25519 sealing key (32 bytes).
public struct SealingPublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The 32 bytes (RFC 7748's encoding).
    public let bytes: [UInt8]

    /// The key from its 32 bytes, or `nil` for another length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32, (try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes)) != nil else { return nil }
        self.bytes = bytes
    }

    init(uncheckedBytes: [UInt8]) { bytes = uncheckedBytes }

    /// The key from its text form (unpadded base64url of the 32 bytes), or `nil`.
    public init?(text: some StringProtocol) {
        guard let bytes = Base64URLText.decode(text) else { return nil }
        self.init(bytes: bytes)
    }

    /// Unpadded base64url of the 32 bytes.
    public var text: String { Base64URLText.encode(bytes) }

    public var description: String { text }
}

/// A secret sealed to one sealing key: HPKE's encapsulated key and the ciphertext (with its 16-byte tag).
public struct SealedBox: Hashable, Sendable {
    /// The sender's ephemeral X25519 public key (HPKE's `enc`, 32 bytes).
    public var encapsulatedKey: [UInt8]
    /// The AEAD ciphertext followed by its tag.
    public var ciphertext: [UInt8]

    /// A box as received.
    public init(encapsulatedKey: [UInt8], ciphertext: [UInt8]) {
        self.encapsulatedKey = encapsulatedKey
        self.ciphertext = ciphertext
    }
}

/// HPKE single-shot sealing to a ``SealingPublicKey`` (RFC 9180 base mode, no associated data):
/// the one place coplay seals to a member's key.
public enum Sealing {
    /// DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-256-GCM (RFC 9180 ids 0x0020, 0x0001, 0x0002).
    static var ciphersuite: HPKE.Ciphersuite { HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_256) }

    /// Seals `plaintext` to `recipient`; `info` binds the box to its context (it must be the same to open it).
    public static func seal(_ plaintext: [UInt8], to recipient: SealingPublicKey, info: [UInt8]) throws -> SealedBox {
        let key = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: recipient.bytes)
        var sender = try HPKE.Sender(recipientKey: key, ciphersuite: ciphersuite, info: Data(info))
        let ciphertext = try sender.seal(plaintext)
        return SealedBox(encapsulatedKey: Array(sender.encapsulatedKey), ciphertext: Array(ciphertext))
    }

    /// Opens a box sealed to `key` with the same `info`.
    ///
    /// - Throws: when the box was sealed to another key, with another `info`, or altered.
    public static func open(_ box: SealedBox, with key: SealingKey, info: [UInt8]) throws -> [UInt8] {
        var recipient = try HPKE.Recipient(
            privateKey: key.privateKey, ciphersuite: ciphersuite, info: Data(info), encapsulatedKey: Data(box.encapsulatedKey))
        return Array(try recipient.open(box.ciphertext))
    }
}

/// A member's statement "my sealing key is S" (member message `sealingKey`), signed by its member
/// key, and, from a member holding the controller invite, the host key's attestation that the
/// member key is a controller's.
///
/// Signed bytes (docs/protocol.md, "Removing a member"):
///
/// ```
/// signature:  "coplay sealing key v1" 0x00 | session (16) | key (32) | sealingKey (32)   (by key)
/// controller: "coplay controller v1" 0x00 | session (16) | key (32)                      (by the host key)
/// ```
public struct SealingKeyStatement: Hashable, Sendable {
    /// The member's key.
    public var key: MemberPublicKey
    /// Its sealing key.
    public var sealingKey: SealingPublicKey
    /// Ed25519 by ``key`` over ``canonicalBytes(session:)``.
    public var signature: [UInt8]
    /// Ed25519 by the session's host key over ``controllerBytes(session:)``, from a member that
    /// holds the controller invite; `nil` otherwise.
    public var controller: [UInt8]?

    /// A statement as received (check it with ``isValid(in:)``).
    public init(key: MemberPublicKey, sealingKey: SealingPublicKey, signature: [UInt8], controller: [UInt8]? = nil) {
        self.key = key
        self.sealingKey = sealingKey
        self.signature = signature
        self.controller = controller
    }

    /// A statement signed by `key`, attested by `hostKey` when the member holds it.
    public init(signedBy key: MemberKey, sealingKey: SealingPublicKey, session: SessionID, hostKey: MemberKey? = nil) throws {
        self.init(key: key.publicKey, sealingKey: sealingKey, signature: [])
        signature = try key.signature(for: canonicalBytes(session: session))
        controller = try hostKey?.signature(for: controllerBytes(session: session))
    }

    /// The bytes the member's signature covers.
    public func canonicalBytes(session: SessionID) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay sealing key v1")
        writer.raw(session.bytes)
        writer.raw(key.bytes)
        writer.raw(sealingKey.bytes)
        return writer.bytes
    }

    /// The bytes the host key's attestation covers.
    public func controllerBytes(session: SessionID) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay controller v1")
        writer.raw(session.bytes)
        writer.raw(key.bytes)
        return writer.bytes
    }

    /// Whether the member's signature verifies in `session`.
    public func isValid(in session: SessionID) -> Bool {
        key.isValidSignature(signature, for: canonicalBytes(session: session))
    }

    /// Whether the statement is valid and attested by `hostKey` (the member holds the controller invite).
    public func isController(in session: SessionID, hostKey: MemberPublicKey) -> Bool {
        guard let controller, isValid(in: session) else { return false }
        return hostKey.isValidSignature(controller, for: controllerBytes(session: session))
    }
}
