import NIOCore

/// The payload of a ``FrameType/hello`` frame: the join token that admits a connection.
///
/// Layout: `token(32)`. Trailing bytes are ignored (room for later fields).
public struct HelloPayload: Hashable, Sendable {
    /// Length of the join token.
    public static let tokenLength = 32
    /// The join token derived from the invite secret (``SessionKeys/joinToken``).
    public var token: [UInt8]

    /// Wraps a token; it must be ``tokenLength`` bytes.
    public init(token: [UInt8]) { self.token = token }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeBytes(token)
        return buffer
    }

    /// Parses a hello payload.
    public init(decoding buffer: ByteBuffer) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let token = buffer.readBytes(length: Self.tokenLength) else { throw .truncated(.hello, "token") }
        self.token = token
    }
}
