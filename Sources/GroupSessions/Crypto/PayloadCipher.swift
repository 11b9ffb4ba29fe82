import Crypto
import NIOCore

/// Seals and opens data-frame payloads with the session's ``PayloadSuite`` (ChaCha20-Poly1305 or
/// AES-256-GCM).
///
/// The nonce is `0x00000000 || senderSequence (u64, big-endian)` under the sender's own key,
/// so it never repeats while the sender's counter only increases. The associated data binds
/// the header and route fields the relay must not change (`docs/protocol.md`): version, type,
/// the `unreliable` flag, session, sender, sender sequence, and retain key. The relay-stamped
/// sequence number and recipient list are not bound: the relay is trusted to order and route,
/// not to read or forge.
///
/// A payload cipher caches per-sender keys; it is a value type, so each owner keeps its own cache.
public struct PayloadCipher: Sendable {
    private let keys: SessionKeys
    private var cache: [ParticipantID: [UInt8]] = [:]

    /// Creates a cipher for `keys`' session.
    public init(keys: SessionKeys) { self.keys = keys }

    /// Associated data for a data frame.
    static func associatedData(
        version: UInt8, flags: FrameFlags, session: SessionID, sender: ParticipantID, route: DataRoute
    ) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeInteger(version)
        buffer.writeInteger(FrameType.data.rawValue)
        buffer.writeInteger(flags.intersection(.unreliable).rawValue)
        buffer.writeInteger(session.high)
        buffer.writeInteger(session.low)
        buffer.writeInteger(sender.rawValue)
        buffer.writeInteger(route.senderSequence)
        buffer.writeInteger(UInt8(route.retainKey.count))
        buffer.writeBytes(route.retainKey)
        return Array(buffer.readableBytesView)
    }

    private mutating func key(for sender: ParticipantID) -> SymmetricKey {
        if let key = cache[sender] { return SymmetricKey(data: key) }
        let key = keys.payloadKey(for: sender)
        if cache.count > 4096 { cache.removeAll(keepingCapacity: true) }
        cache[sender] = key.withUnsafeBytes { Array($0) }
        return key
    }

    private static func nonce(_ sequence: UInt64) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: sequence.bigEndian) { bytes.replaceSubrange(4..<12, with: $0) }
        return bytes
    }

    /// Builds a sealed data frame.
    ///
    /// - Parameters:
    ///   - plaintext: The envelope bytes.
    ///   - route: Sender sequence, recipients, retain key.
    ///   - flags: Header flags (only `unreliable` is meaningful).
    ///   - sender: The local participant.
    /// - Returns: A ``Frame`` of type ``FrameType/data`` ready to send.
    public mutating func seal(
        _ plaintext: [UInt8], route: DataRoute, flags: FrameFlags, sender: ParticipantID
    ) throws -> Frame {
        let aad = Self.associatedData(
            version: Frame.version, flags: flags, session: keys.session, sender: sender, route: route)
        let sealed = try AEAD.seal(
            plaintext, suite: keys.suite, key: key(for: sender), nonce: Self.nonce(route.senderSequence), authenticating: aad)
        var payload = ByteBuffer()
        payload.reserveCapacity(route.encodedLength + sealed.count)
        route.encode(into: &payload)
        payload.writeBytes(sealed)
        return Frame(type: .data, flags: flags, session: keys.session, sender: sender, payload: payload)
    }

    /// Opens a data frame received from the relay.
    ///
    /// - Returns: The route and the plaintext envelope.
    /// - Throws: ``PayloadDecodingError`` for a malformed route, or a CryptoKit error if the
    ///   frame was tampered with or sealed under another key.
    public mutating func open(_ frame: Frame) throws -> (route: DataRoute, plaintext: [UInt8]) {
        var payload = frame.payload
        let route = try DataRoute.decode(from: &payload)
        guard payload.readableBytes >= 16 else { throw PayloadDecodingError.truncated(.data, "sealed box") }
        let sealed = payload.readBytes(length: payload.readableBytes)!
        let aad = Self.associatedData(
            version: frame.version, flags: frame.flags, session: frame.session, sender: frame.sender, route: route)
        let plaintext = try AEAD.open(
            sealed, suite: keys.suite, key: key(for: frame.sender), nonce: Self.nonce(route.senderSequence), authenticating: aad)
        return (route, plaintext)
    }
}
