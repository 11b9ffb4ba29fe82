import NIOCore

/// The control message that hands a session's members its successor (`docs/protocol.md`,
/// "Successor sessions").
///
/// It travels as an ordinary sealed reliable message under the reserved name
/// ``messageName`` (application type names never contain a dot), so the relay only ever sees a
/// sealed data frame. Layout of the body:
/// `version u8 (1) | session (16) | secretLength u8 | secret | identifierLength u16 | activityIdentifier`.
/// Readers reject version 0 and ignore bytes after the fields they know, so a newer member can
/// append fields.
struct SuccessorAnnouncement: Hashable, Sendable {
    /// The reserved envelope name the announcement travels under.
    static let messageName = "coplay.successor"
    static let version: UInt8 = 1

    /// The successor session.
    var session: SessionID
    /// The successor's secret.
    var secret: [UInt8]
    /// The successor's activity identifier.
    var activityIdentifier: String

    init(session: SessionID, secret: [UInt8], activityIdentifier: String) {
        self.session = session
        self.secret = secret
        self.activityIdentifier = activityIdentifier
    }

    func encoded() -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeInteger(Self.version)
        buffer.writeBytes(session.bytes)
        buffer.writeInteger(UInt8(clamping: secret.count))
        buffer.writeBytes(secret.prefix(Int(UInt8.max)))
        let identifier = Array(activityIdentifier.utf8.prefix(Int(UInt16.max)))
        buffer.writeInteger(UInt16(identifier.count))
        buffer.writeBytes(identifier)
        return Array(buffer.readableBytesView)
    }

    init(decoding bytes: [UInt8]) throws(PayloadDecodingError) {
        var buffer = ByteBuffer(bytes: bytes)
        guard let version = buffer.readInteger(as: UInt8.self) else { throw .truncated(.data, "successor version") }
        guard version >= 1 else { throw .invalid(.data, "successor version 0") }
        guard let high = buffer.readInteger(as: UInt64.self), let low = buffer.readInteger(as: UInt64.self) else {
            throw .truncated(.data, "successor session")
        }
        guard let secretLength = buffer.readInteger(as: UInt8.self),
            let secret = buffer.readBytes(length: Int(secretLength))
        else { throw .truncated(.data, "successor secret") }
        guard secret.count == Invite.secretLength else { throw .invalid(.data, "successor secret length") }
        guard let identifierLength = buffer.readInteger(as: UInt16.self),
            let identifier = buffer.readString(length: Int(identifierLength))
        else { throw .truncated(.data, "successor activity identifier") }
        self.init(session: SessionID(high: high, low: low), secret: secret, activityIdentifier: identifier)
    }
}
