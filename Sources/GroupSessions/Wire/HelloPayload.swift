import NIOCore

/// The payload of a ``FrameType/hello`` frame: the join token that admits a connection.
///
/// Layout: `token(32) [resumeAfter u64]`. Trailing bytes are ignored (room for later fields).
/// A hello carrying `resumeAfter` asks to resume the sender's membership (see `docs/protocol.md`,
/// "Reconnect and resume").
public struct HelloPayload: Hashable, Sendable {
    /// Length of the join token.
    public static let tokenLength = 32
    /// The join token derived from the invite secret (``SessionKeys/joinToken``).
    public var token: [UInt8]
    /// When resuming: the last session sequence number the member received; `nil` for a new admission.
    public var resumeAfter: UInt64?

    /// Wraps a token (it must be ``tokenLength`` bytes) and, when resuming, the last sequence received.
    public init(token: [UInt8], resumeAfter: UInt64? = nil) {
        self.token = token
        self.resumeAfter = resumeAfter
    }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeBytes(token)
        if let resumeAfter { buffer.writeInteger(resumeAfter) }
        return buffer
    }

    /// Parses a hello payload.
    public init(decoding buffer: ByteBuffer) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let token = buffer.readBytes(length: Self.tokenLength) else { throw .truncated(.hello, "token") }
        self.token = token
        resumeAfter = buffer.readInteger(as: UInt64.self)
    }
}
