import NIOCore

/// The versioned plaintext inside every sealed data frame (`docs/protocol.md`, "Cryptography").
///
/// Layout: `version u8 | kind u8 | nameLength u16 | name | extensionLength u16 | extension | body`.
/// Readers skip extension bytes and ignore unknown kinds, so newer members can add fields
/// without breaking older ones.
struct Envelope: Hashable, Sendable {
    /// What an envelope carries.
    struct Kind: RawRepresentable, Hashable, Sendable {
        var rawValue: UInt8
        /// An application message: `name` is the message type, body JSON or raw bytes.
        static let message = Kind(rawValue: 1)
        /// The session's activity: `name` is the activity identifier, body JSON.
        static let activity = Kind(rawValue: 2)
    }

    static let version: UInt8 = 1
    /// The type name of raw `Data` messages.
    static let rawDataName = "coplay.data"

    var kind: Kind
    var name: String
    var body: [UInt8]

    func encoded() -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(6 + name.utf8.count + body.count)
        buffer.writeInteger(Self.version)
        buffer.writeInteger(kind.rawValue)
        buffer.writeInteger(UInt16(clamping: name.utf8.count))
        buffer.writeBytes(name.utf8.prefix(Int(UInt16.max)))
        buffer.writeInteger(UInt16(0))
        buffer.writeBytes(body)
        return Array(buffer.readableBytesView)
    }

    init(kind: Kind, name: String, body: [UInt8]) {
        self.kind = kind
        self.name = name
        self.body = body
    }

    init(decoding bytes: [UInt8]) throws(PayloadDecodingError) {
        var buffer = ByteBuffer(bytes: bytes)
        guard let version = buffer.readInteger(as: UInt8.self), let kind = buffer.readInteger(as: UInt8.self),
            let nameLength = buffer.readInteger(as: UInt16.self)
        else { throw .truncated(.data, "envelope header") }
        guard version >= 1 else { throw .invalid(.data, "envelope version 0") }
        guard let name = buffer.readString(length: Int(nameLength)) else { throw .truncated(.data, "envelope name") }
        guard let extensionLength = buffer.readInteger(as: UInt16.self),
            buffer.readSlice(length: Int(extensionLength)) != nil
        else { throw .truncated(.data, "envelope extension") }
        self.init(kind: Kind(rawValue: kind), name: name, body: Array(buffer.readableBytesView))
    }
}
