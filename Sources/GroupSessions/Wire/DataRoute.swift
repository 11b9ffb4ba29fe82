import NIOCore

/// The clear-text routing prefix of a ``FrameType/data`` payload, followed by the sealed box.
///
/// Layout: `senderSequence u64 | recipientCount u16 | recipientCount × participant u64 |
/// retainKeyLength u8 | retainKey | sealed box (rest)`.
///
/// The relay reads only this prefix: who the frame is for and, if `retainKey` is not empty,
/// under which key to keep it for joiners. The retain key is an opaque keyed hash chosen by
/// the clients; the relay never learns the key's name.
public struct DataRoute: Hashable, Sendable {
    /// The sender's own counter: strictly increasing per sender, bound into the AEAD nonce and
    /// associated data, and the receivers' replay check.
    public var senderSequence: UInt64
    /// Recipients, or empty for every member.
    public var recipients: [ParticipantID]
    /// Non-empty: the relay keeps the latest frame under this key and replays it to joiners.
    public var retainKey: [UInt8]

    /// The largest retain key.
    public static let maximumRetainKeyLength = 32

    /// Creates a route.
    public init(senderSequence: UInt64, recipients: [ParticipantID] = [], retainKey: [UInt8] = []) {
        self.senderSequence = senderSequence
        self.recipients = recipients
        self.retainKey = retainKey
    }

    /// Bytes the prefix occupies.
    public var encodedLength: Int { 8 + 2 + 8 * recipients.count + 1 + retainKey.count }

    /// Appends the prefix to `buffer`.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(senderSequence)
        buffer.writeInteger(UInt16(clamping: recipients.count))
        for recipient in recipients.prefix(Int(UInt16.max)) { buffer.writeInteger(recipient.rawValue) }
        buffer.writeInteger(UInt8(clamping: retainKey.count))
        buffer.writeBytes(retainKey.prefix(Int(UInt8.max)))
    }

    /// Reads the prefix from the front of `buffer`, leaving the sealed box readable.
    public static func decode(from buffer: inout ByteBuffer) throws(PayloadDecodingError) -> DataRoute {
        guard let senderSequence = buffer.readInteger(as: UInt64.self), let count = buffer.readInteger(as: UInt16.self)
        else { throw .truncated(.data, "route") }
        guard buffer.readableBytes >= Int(count) * 8 else { throw .truncated(.data, "recipients") }
        var recipients: [ParticipantID] = []
        recipients.reserveCapacity(Int(count))
        for _ in 0..<count { recipients.append(ParticipantID(rawValue: buffer.readInteger(as: UInt64.self)!)) }
        guard let keyLength = buffer.readInteger(as: UInt8.self) else { throw .truncated(.data, "retain key") }
        guard Int(keyLength) <= maximumRetainKeyLength else { throw .invalid(.data, "retain key longer than 32 bytes") }
        guard let key = buffer.readBytes(length: Int(keyLength)) else { throw .truncated(.data, "retain key") }
        return DataRoute(senderSequence: senderSequence, recipients: recipients, retainKey: key)
    }
}
