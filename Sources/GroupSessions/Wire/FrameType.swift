/// The type byte of a frame (see `docs/protocol.md`, "Frame types").
///
/// A `FrameType` is an open set: the decoder accepts any byte, so a newer peer's frame types
/// decode to values this build does not name, and the relay answers them with
/// ``RelayErrorCode/unsupportedType`` instead of tearing the stream down.
public struct FrameType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The byte on the wire.
    public var rawValue: UInt8

    /// Wraps a type byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Client to relay: authenticate for a session with a join token (first frame on a connection).
    public static let hello = FrameType(rawValue: 0x01)
    /// Relay to client: admitted; session parameters, current members, then retained frames follow.
    public static let welcome = FrameType(rawValue: 0x02)
    /// Client to relay: become an active member (presence is announced, data starts flowing).
    public static let join = FrameType(rawValue: 0x03)
    /// Relay to clients: a participant joined (sender = that participant).
    public static let joined = FrameType(rawValue: 0x04)
    /// Relay to clients: a participant left (sender = that participant).
    public static let left = FrameType(rawValue: 0x05)
    /// Both ways: an end-to-end encrypted application frame (routing prefix + sealed box).
    public static let data = FrameType(rawValue: 0x06)
    /// Relay to the sender of a data frame: the session sequence number it was stamped with.
    public static let ack = FrameType(rawValue: 0x07)
    /// Client to relay: end the session for everyone. Relay to clients: the session has ended.
    public static let end = FrameType(rawValue: 0x08)
    /// Client to relay: leave the session (the connection then closes).
    public static let leave = FrameType(rawValue: 0x09)
    /// Relay to client: a request was refused (error code + detail); sent to the offender only.
    public static let error = FrameType(rawValue: 0x0A)
    /// Either way: liveness probe; answered by ``pong`` with the same sequence.
    public static let ping = FrameType(rawValue: 0x0B)
    /// Answer to ``ping``.
    public static let pong = FrameType(rawValue: 0x0C)
    /// Client to relay: an NTP-style time request over the relay connection (``TimeExchangePayload``),
    /// for members that cannot send UDP (browsers). Allowed before ``hello``; never stamped or stored.
    public static let timeRequest = FrameType(rawValue: 0x0D)
    /// Relay to client: the answer to ``timeRequest`` (sender 0, sequence 0).
    public static let timeReply = FrameType(rawValue: 0x0E)
    /// Relay to client: several `joined` / `left` frames in one (``PresencePayload``), each
    /// with its own stamp; sent only to connections whose `hello` carried
    /// ``FrameFlags/presenceBatches``. Reading it is reading its entries in order.
    public static let presence = FrameType(rawValue: 0x0F)

    public var description: String {
        switch self {
        case .hello: "hello"
        case .welcome: "welcome"
        case .join: "join"
        case .joined: "joined"
        case .left: "left"
        case .data: "data"
        case .ack: "ack"
        case .end: "end"
        case .leave: "leave"
        case .error: "error"
        case .ping: "ping"
        case .pong: "pong"
        case .timeRequest: "timeRequest"
        case .timeReply: "timeReply"
        case .presence: "presence"
        default: "type(0x\(String(rawValue, radix: 16)))"
        }
    }
}
