import NIOCore

/// The payload of an ``FrameType/error`` frame.
///
/// Layout: `code u16 | senderSequence u64 | detail (UTF-8, rest of payload)`.
/// `senderSequence` names the refused data frame (0 when the error is not about one).
public struct ErrorPayload: Hashable, Sendable {
    /// What went wrong.
    public var code: RelayErrorCode
    /// The sender sequence of the refused data frame, or 0.
    public var senderSequence: UInt64
    /// Human-readable detail; never contains payload bytes.
    public var detail: String

    /// Creates an error payload.
    public init(code: RelayErrorCode, senderSequence: UInt64 = 0, detail: String) {
        self.code = code
        self.senderSequence = senderSequence
        self.detail = detail
    }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(code.rawValue)
        buffer.writeInteger(senderSequence)
        buffer.writeString(detail)
        return buffer
    }

    /// Parses an error payload; invalid UTF-8 in the detail is repaired, not rejected.
    public init(decoding buffer: ByteBuffer) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let code = buffer.readInteger(as: UInt16.self), let sequence = buffer.readInteger(as: UInt64.self)
        else { throw .truncated(.error, "code") }
        self.init(
            code: RelayErrorCode(rawValue: code), senderSequence: sequence,
            detail: String(decoding: buffer.readableBytesView, as: UTF8.self))
    }
}
