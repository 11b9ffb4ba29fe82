import NIOCore

/// A NIO decoder turning a byte stream into ``Frame`` values with ``FrameCodec``.
///
/// Install it as `ByteToMessageHandler(FrameDecoder(maximumFrameLength: ...))`. A malformed
/// stream fires a ``FrameDecodingError`` down the pipeline; the owner answers with an error
/// frame and closes the connection.
public struct FrameDecoder: NIOSingleStepByteToMessageDecoder, Sendable {
    public typealias InboundOut = Frame

    /// The largest length field accepted.
    public let maximumFrameLength: Int

    /// Creates a decoder accepting frames up to `maximumFrameLength` (header + payload).
    public init(maximumFrameLength: Int = FrameCodec.defaultMaximumFrameLength) {
        self.maximumFrameLength = maximumFrameLength
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> Frame? {
        try FrameCodec.decode(from: &buffer, maximumFrameLength: maximumFrameLength)
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> Frame? {
        try decode(buffer: &buffer)
    }
}

/// A NIO encoder writing ``Frame`` values with ``FrameCodec``.
public struct FrameEncoder: MessageToByteEncoder, Sendable {
    public typealias OutboundIn = Frame

    /// Creates an encoder.
    public init() {}

    public func encode(data: Frame, out: inout ByteBuffer) throws {
        FrameCodec.encode(data, into: &out)
    }
}
