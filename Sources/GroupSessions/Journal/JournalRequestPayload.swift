import NIOCore

/// The payload of ``FrameType/journalFetch``, ``FrameType/journalRemove`` and
/// ``FrameType/journalRemoved``: `token u64 | id (16) | first u32 | count u32`.
///
/// `first` and `count` name a range of chunks for a fetch; a remove and a removed
/// announcement carry 0 (and a removed announcement token 0). Trailing bytes are ignored; a
/// payload that stops after the id reads as `first = count = 0`.
public struct JournalRequestPayload: Hashable, Sendable {
    /// The request token (top bit set), echoed in error frames; 0 from the relay.
    public var token: UInt64
    /// The attachment.
    public var id: AttachmentID
    /// First chunk requested (fetch only).
    public var first: UInt32
    /// Chunks requested (fetch only).
    public var count: UInt32

    /// Creates a request payload.
    public init(token: UInt64, id: AttachmentID, first: UInt32 = 0, count: UInt32 = 0) {
        self.token = token
        self.id = id
        self.first = first
        self.count = count
    }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(token)
        id.write(to: &buffer)
        buffer.writeInteger(first)
        buffer.writeInteger(count)
        return buffer
    }

    /// Parses a request payload.
    public init(decoding buffer: ByteBuffer, type: FrameType) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let token = buffer.readInteger(as: UInt64.self), let id = AttachmentID.read(from: &buffer)
        else { throw .truncated(type, "token and id") }
        let first = buffer.readInteger(as: UInt32.self) ?? 0
        let count = buffer.readInteger(as: UInt32.self) ?? 0
        self.init(token: token, id: id, first: first, count: count)
    }
}
