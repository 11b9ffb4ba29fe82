import Crypto
import Foundation

/// A member's signing key: Ed25519 (RFC 8032), the key a member signs its identity and its chat
/// messages with.
///
/// Each member has one. The command line keeps it per name in its state directory
/// (`coplay chat --name alice` and `coplay join --name alice` sign as the same person); the web page
/// keeps a non-extractable WebCrypto key per name. The public half (``publicKey``) is what the
/// others see; the seed never leaves the member.
///
/// ```swift
/// let key = MemberKey()
/// let signature = try key.signature(for: Array("hello".utf8))
/// key.publicKey.isValidSignature(signature, for: Array("hello".utf8))   // true
/// ```
public struct MemberKey: Sendable {
    /// The seed (swift-crypto's private key type is not `Sendable`; it is made from this to sign).
    private let seedBytes: [UInt8]
    /// The public key the others verify with.
    public let publicKey: MemberPublicKey

    /// A fresh random key.
    public init() {
        let key = Curve25519.Signing.PrivateKey()
        seedBytes = Array(key.rawRepresentation)
        publicKey = MemberPublicKey(uncheckedBytes: Array(key.publicKey.rawRepresentation))
    }

    /// The key with this 32-byte seed (RFC 8032's private key).
    ///
    /// - Throws: when `seed` is not 32 bytes.
    public init(seed: [UInt8]) throws {
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        seedBytes = seed
        publicKey = MemberPublicKey(uncheckedBytes: Array(key.publicKey.rawRepresentation))
    }

    /// The 32-byte seed: what a key file holds. Keep it secret.
    public var seed: [UInt8] { seedBytes }

    /// An Ed25519 signature (64 bytes) of `message`.
    public func signature(for message: [UInt8]) throws -> [UInt8] {
        Array(try Curve25519.Signing.PrivateKey(rawRepresentation: seedBytes).signature(for: message))
    }
}

/// A member's public Ed25519 key (32 bytes): how the others recognize the member's identity and
/// chat messages, whatever name it uses.
public struct MemberPublicKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 32 bytes (RFC 8032's encoding).
    public let bytes: [UInt8]

    /// The key from its 32 bytes, or `nil` for another length.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    init(uncheckedBytes: [UInt8]) { bytes = uncheckedBytes }

    /// The key from its text form (unpadded base64url of the 32 bytes), or `nil`.
    public init?(text: some StringProtocol) {
        guard let bytes = Base64URLText.decode(text) else { return nil }
        self.init(bytes: bytes)
    }

    /// Unpadded base64url of the 32 bytes: the key as messages carry it.
    public var text: String { Base64URLText.encode(bytes) }

    /// A short tag for people: the first 6 hex digits of the key's SHA-256. Labels add it to a
    /// name that more than one key uses (`alice#3f9a2c`). 24 bits tell people apart; they are no
    /// defence against someone who grinds keys for a look-alike tag (the key itself is).
    public var tag: String {
        SHA256.hash(data: bytes).prefix(3).map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `signature` is a valid Ed25519 signature of `message` by this key.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    public var description: String { text }

    public static func < (lhs: MemberPublicKey, rhs: MemberPublicKey) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
}

/// Unpadded base64url (RFC 4648 section 5), strict: other characters, padding or a length of
/// 4k+1 are not base64url.
enum Base64URLText {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        guard text.count % 4 != 1,
            text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        guard let bytes = Data(base64Encoded: base64).map(Array.init) else { return nil }
        // One text per byte string: a non-canonical final character decodes to the same bytes.
        return encode(bytes) == String(text) ? bytes : nil
    }
}

/// The signed bytes' writer: big-endian integers, length-prefixed UTF-8.
struct CanonicalWriter {
    private(set) var bytes: [UInt8] = []

    init(domain: String) {
        bytes = Array(domain.utf8) + [0]
    }

    mutating func raw(_ data: [UInt8]) { bytes += data }

    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func u16(_ value: Int) {
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        bytes.append(UInt8(truncatingIfNeeded: value))
    }

    mutating func u32(_ value: Int) {
        for shift in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }

    /// `length u16 | UTF-8` (names).
    mutating func shortText(_ text: String) {
        let utf8 = Array(text.utf8.prefix(0xffff))
        u16(utf8.count)
        raw(utf8)
    }

    /// `length u32 | UTF-8` (message texts).
    mutating func longText(_ text: String) {
        let utf8 = Array(text.utf8)
        u32(utf8.count)
        raw(utf8)
    }
}
