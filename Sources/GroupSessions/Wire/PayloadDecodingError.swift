/// A frame's payload does not have the layout its type requires (`docs/protocol.md`, "Payloads").
public struct PayloadDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case truncated
        case invalid
    }

    private let code: Code
    /// The frame type whose payload failed.
    public let frameType: FrameType
    private let detail: String

    /// The payload ended before a required field.
    public static func truncated(_ type: FrameType, _ field: String) -> Self {
        Self(code: .truncated, frameType: type, detail: field)
    }
    /// A field holds a value outside its allowed range.
    public static func invalid(_ type: FrameType, _ detail: String) -> Self {
        Self(code: .invalid, frameType: type, detail: detail)
    }

    public var description: String {
        switch code {
        case .truncated: "\(frameType) payload is truncated at \(detail)"
        case .invalid: "\(frameType) payload is invalid: \(detail)"
        }
    }
}
