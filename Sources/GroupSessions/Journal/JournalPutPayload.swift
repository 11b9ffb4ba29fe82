import NIOCore

/// The payload of ``FrameType/journalPut``: `token u64 | header` (see ``JournalHeader``).
///
/// The token is the uploader's name for this operation; the relay echoes it in the
/// `senderSequence` of any error frame about the upload.
public struct JournalPutPayload: Hashable, Sendable {
    /// The request token (top bit set).
    public var token: UInt64
    /// What is being uploaded.
    public var header: JournalHeader

    /// Creates a put payload.
    public init(token: UInt64, header: JournalHeader) {
        self.token = token
        self.header = header
    }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(token)
        header.encode(into: &buffer)
        return buffer
    }

    /// Parses a put payload.
    public init(decoding buffer: ByteBuffer) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let token = buffer.readInteger(as: UInt64.self) else { throw .truncated(.journalPut, "token") }
        self.init(token: token, header: try JournalHeader.decode(from: &buffer, type: .journalPut))
    }
}
