import NIOCore

/// The payload of ``FrameType/journalChunk`` and ``FrameType/journalAck``:
/// `id (16) | index u32 | sealed chunk (rest; empty in an ack)`.
public struct JournalChunkPayload: Hashable, Sendable {
    /// The attachment.
    public var id: AttachmentID
    /// The chunk's index, from 0.
    public var index: UInt32
    /// The sealed chunk (ciphertext + tag); empty in an ack.
    public var sealed: ByteBuffer

    /// Creates a chunk payload.
    public init(id: AttachmentID, index: UInt32, sealed: ByteBuffer = ByteBuffer()) {
        self.id = id
        self.index = index
        self.sealed = sealed
    }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(20 + sealed.readableBytes)
        id.write(to: &buffer)
        buffer.writeInteger(index)
        var sealed = sealed
        buffer.writeBuffer(&sealed)
        return buffer
    }

    /// Parses a chunk payload; the sealed bytes are a slice of `buffer`, not a copy.
    public init(decoding buffer: ByteBuffer, type: FrameType = .journalChunk) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let id = AttachmentID.read(from: &buffer), let index = buffer.readInteger(as: UInt32.self)
        else { throw .truncated(type, "chunk id and index") }
        self.init(id: id, index: index, sealed: buffer)
    }
}
