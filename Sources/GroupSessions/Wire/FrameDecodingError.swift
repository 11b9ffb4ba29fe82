/// Why a byte stream could not be decoded into frames.
///
/// Every decoding failure is one of these; the decoder never traps and never allocates more
/// than the announced frame length, which is checked against the limit before any payload
/// bytes are awaited. After an error the stream is out of step and must be closed.
public struct FrameDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case tooShort(UInt32)
        case tooLarge(UInt32, limit: Int)
        case unsupportedVersion(UInt8)
        case notOneFrame(messageLength: Int)
    }

    private let code: Code

    /// The length prefix announces fewer bytes than a header needs.
    public static func tooShort(length: UInt32) -> Self { Self(code: .tooShort(length)) }
    /// The length prefix announces more bytes than the limit allows.
    public static func tooLarge(length: UInt32, limit: Int) -> Self { Self(code: .tooLarge(length, limit: limit)) }
    /// The version byte names a protocol version this build does not speak.
    public static func unsupportedVersion(_ version: UInt8) -> Self { Self(code: .unsupportedVersion(version)) }
    /// A message-framed transport (WebSocket) delivered a message that is not exactly one frame:
    /// shorter than its length prefix says, or with bytes after the frame.
    public static func notOneFrame(messageLength: Int) -> Self { Self(code: .notOneFrame(messageLength: messageLength)) }

    /// The length prefix that was refused (too short or too large), if that was the failure.
    public var announcedLength: UInt32? {
        switch code {
        case .tooShort(let length), .tooLarge(let length, _): length
        default: nil
        }
    }

    /// The relay error code that answers this failure.
    public var relayErrorCode: RelayErrorCode {
        switch code {
        case .tooShort: .malformed
        case .tooLarge: .frameTooLarge
        case .unsupportedVersion: .unsupportedVersion
        case .notOneFrame: .malformed
        }
    }

    public var description: String {
        switch code {
        case .tooShort(let length):
            "frame length \(length) is shorter than the \(Frame.headerLength)-byte header"
        case .tooLarge(let length, let limit):
            "frame length \(length) exceeds the limit of \(limit) bytes"
        case .unsupportedVersion(let version):
            "protocol version \(version) is not supported (this build speaks version \(Frame.version))"
        case .notOneFrame(let length):
            "a \(length)-byte WebSocket message is not exactly one frame (each binary message carries one whole frame)"
        }
    }
}
