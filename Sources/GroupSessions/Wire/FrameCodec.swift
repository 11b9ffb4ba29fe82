import NIOCore

/// Reads and writes relay-protocol frames (`docs/protocol.md`).
///
/// ``decode(from:maximumFrameLength:)`` is total: for any bytes it returns a frame, `nil`
/// (more bytes needed), or throws a ``FrameDecodingError``. It never reads past what the
/// length prefix announces and rejects an oversized announcement before waiting for its bytes.
///
/// ```swift
/// var buffer = ByteBuffer()
/// FrameCodec.encode(frame, into: &buffer)
/// let decoded = try FrameCodec.decode(from: &buffer)   // == frame
/// ```
public enum FrameCodec {
    /// Default upper bound on the length field (header + payload): 1 MiB + header.
    public static let defaultMaximumFrameLength = Frame.headerLength + (1 << 20)

    /// Appends `frame`, length prefix first, to `buffer`.
    public static func encode(_ frame: Frame, into buffer: inout ByteBuffer) {
        buffer.reserveCapacity(minimumWritableBytes: frame.wireLength)
        // One write for the length prefix and the header (a relay fan-out encodes a frame per member).
        buffer.writeMultipleIntegers(
            UInt32(Frame.headerLength + frame.payload.readableBytes), frame.version, frame.type.rawValue,
            frame.flags.rawValue, frame.session.high, frame.session.low, frame.sender.rawValue, frame.sequence)
        var payload = frame.payload
        buffer.writeBuffer(&payload)
    }

    /// Decodes one frame from the front of `buffer`.
    ///
    /// - Parameters:
    ///   - buffer: Bytes received so far; on success the frame's bytes are consumed, on `nil`
    ///     or error nothing is consumed.
    ///   - maximumFrameLength: The largest length field accepted.
    /// - Returns: The frame, or `nil` if `buffer` does not yet hold a whole frame.
    /// - Throws: ``FrameDecodingError`` if the bytes cannot be a valid frame.
    public static func decode(
        from buffer: inout ByteBuffer,
        maximumFrameLength: Int = defaultMaximumFrameLength
    ) throws(FrameDecodingError) -> Frame? {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
        guard length >= Frame.headerLength else { throw .tooShort(length: length) }
        guard Int(length) <= maximumFrameLength else {
            throw .tooLarge(length: length, limit: maximumFrameLength)
        }
        // The version byte is checked as soon as it is present, before the rest is awaited.
        if let version = buffer.getInteger(at: buffer.readerIndex + Frame.lengthPrefix, as: UInt8.self),
            version != Frame.version
        {
            throw .unsupportedVersion(version)
        }
        guard buffer.readableBytes >= Frame.lengthPrefix + Int(length) else { return nil }

        buffer.moveReaderIndex(forwardBy: Frame.lengthPrefix)
        // All reads below are within the `length` bytes just checked to be readable.
        let version = buffer.readInteger(as: UInt8.self)!
        let type = buffer.readInteger(as: UInt8.self)!
        let flags = buffer.readInteger(as: UInt16.self)!
        let high = buffer.readInteger(as: UInt64.self)!
        let low = buffer.readInteger(as: UInt64.self)!
        let sender = buffer.readInteger(as: UInt64.self)!
        let sequence = buffer.readInteger(as: UInt64.self)!
        let payload = buffer.readSlice(length: Int(length) - Frame.headerLength)!
        var frame = Frame(
            type: FrameType(rawValue: type),
            flags: FrameFlags(rawValue: flags),
            session: SessionID(high: high, low: low),
            sender: ParticipantID(rawValue: sender),
            sequence: sequence,
            payload: payload
        )
        frame.version = version
        return frame
    }
}
