import NIOCore

/// One relay-protocol frame: a fixed 36-byte header and an opaque payload.
///
/// On the wire a frame is preceded by a 4-byte big-endian length (header + payload).
/// See `docs/protocol.md` for the layout, the frame types and the limits; ``FrameCodec``
/// reads and writes it.
///
/// ```swift
/// let frame = Frame(type: .ping, session: id, sender: me, sequence: 7)
/// var bytes = ByteBuffer()
/// FrameCodec.encode(frame, into: &bytes)
/// ```
public struct Frame: Hashable, Sendable, CustomStringConvertible {
    /// The only protocol version this build speaks.
    public static let version: UInt8 = 1
    /// Bytes in the fixed header (after the length prefix): version, type, flags, session, sender, sequence.
    public static let headerLength = 36
    /// Bytes of the length prefix.
    public static let lengthPrefix = 4

    /// Protocol version of this frame.
    public var version: UInt8
    /// What the frame means.
    public var type: FrameType
    /// Header flags.
    public var flags: FrameFlags
    /// The session the frame belongs to.
    public var session: SessionID
    /// Who sent it. The relay overwrites this with the authenticated sender when it forwards.
    public var sender: ParticipantID
    /// On frames from the relay: the session's total-order sequence number (0 when not stamped).
    /// On a ping/pong: an echo token. Ignored by the relay on frames from clients.
    public var sequence: UInt64
    /// The opaque payload.
    public var payload: ByteBuffer

    /// Creates a frame of the current version.
    public init(
        type: FrameType,
        flags: FrameFlags = [],
        session: SessionID,
        sender: ParticipantID,
        sequence: UInt64 = 0,
        payload: ByteBuffer = ByteBuffer()
    ) {
        self.version = Frame.version
        self.type = type
        self.flags = flags
        self.session = session
        self.sender = sender
        self.sequence = sequence
        self.payload = payload
    }

    /// Bytes this frame occupies on the wire, length prefix included.
    public var wireLength: Int { Frame.lengthPrefix + Frame.headerLength + payload.readableBytes }

    public var description: String {
        "Frame(\(type), session: \(session), sender: \(sender), seq: \(sequence), \(payload.readableBytes) bytes)"
    }
}
