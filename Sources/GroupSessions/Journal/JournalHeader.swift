import NIOCore

/// The clear-text description of an attachment the relay needs to store and serve it, plus
/// the metadata sealed by the uploader.
///
/// Layout: `id (16) | size u64 | chunkSize u32 | sealedMetadata (rest)`. It is the payload of
/// ``FrameType/journalAdded`` and follows the token in ``FrameType/journalPut``.
///
/// The relay checks every chunk against `size` and `chunkSize`: chunk `i` holds
/// `min(chunkSize, size - i * chunkSize)` plaintext bytes plus a 16-byte tag.
public struct JournalHeader: Hashable, Sendable {
    /// The attachment.
    public var id: AttachmentID
    /// Plaintext bytes.
    public var size: UInt64
    /// Plaintext bytes per chunk (the last chunk may be shorter).
    public var chunkSize: UInt32
    /// ``AttachmentMetadata`` sealed by the uploader (opaque to the relay).
    public var sealedMetadata: [UInt8]

    /// Bytes of the AEAD tag on every sealed chunk.
    public static let tagLength = 16

    /// Creates a header.
    public init(id: AttachmentID, size: UInt64, chunkSize: UInt32, sealedMetadata: [UInt8]) {
        self.id = id
        self.size = size
        self.chunkSize = chunkSize
        self.sealedMetadata = sealedMetadata
    }

    /// Number of chunks (0 for an empty attachment); `chunkSize` must be positive.
    public var chunkCount: Int {
        guard chunkSize > 0 else { return 0 }
        return Int((size + UInt64(chunkSize) - 1) / UInt64(chunkSize))
    }

    /// Plaintext bytes in chunk `index`.
    public func plaintextLength(ofChunk index: Int) -> Int {
        let start = UInt64(index) * UInt64(chunkSize)
        return Int(min(UInt64(chunkSize), size - min(size, start)))
    }

    /// Sealed bytes of chunk `index` (plaintext + tag).
    public func sealedLength(ofChunk index: Int) -> Int { plaintextLength(ofChunk: index) + Self.tagLength }

    /// Bytes the relay stores for this attachment: every sealed chunk plus the metadata.
    public var storedBytes: Int {
        Int(clamping: size) + chunkCount * Self.tagLength + sealedMetadata.count
    }

    /// Appends the header to `buffer`.
    public func encode(into buffer: inout ByteBuffer) {
        id.write(to: &buffer)
        buffer.writeInteger(size)
        buffer.writeInteger(chunkSize)
        buffer.writeBytes(sealedMetadata)
    }

    /// The header alone, encoded.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        encode(into: &buffer)
        return buffer
    }

    /// Reads a header that fills the rest of `buffer`.
    public static func decode(from buffer: inout ByteBuffer, type: FrameType) throws(PayloadDecodingError) -> JournalHeader {
        guard let id = AttachmentID.read(from: &buffer), let size = buffer.readInteger(as: UInt64.self),
            let chunkSize = buffer.readInteger(as: UInt32.self)
        else { throw .truncated(type, "attachment header") }
        guard chunkSize > 0 else { throw .invalid(type, "chunk size 0") }
        let metadata = buffer.readBytes(length: buffer.readableBytes) ?? []
        return JournalHeader(id: id, size: size, chunkSize: chunkSize, sealedMetadata: metadata)
    }
}
