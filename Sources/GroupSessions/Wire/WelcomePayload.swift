import NIOCore

/// The payload of a ``FrameType/welcome`` frame: what a newly admitted connection needs to know.
///
/// Layout: `sequence u64 | maxPayload u32 | ratePerSecond u32 | burst u32 | count u16 |
/// count × participant u64 | retainedCount u32`.
/// Trailing bytes are ignored.
public struct WelcomePayload: Hashable, Sendable {
    /// The last sequence number the session stamped.
    public var sequence: UInt64
    /// The largest data payload the relay forwards.
    public var maximumPayload: UInt32
    /// Sustained data frames per second a connection may send.
    public var ratePerSecond: UInt32
    /// Data frames a connection may send in a burst above the sustained rate.
    public var burst: UInt32
    /// The members that have joined (not merely been admitted).
    public var members: [ParticipantID]
    /// How many retained data frames follow this welcome.
    public var retainedCount: UInt32

    /// Creates a welcome payload.
    public init(
        sequence: UInt64, maximumPayload: UInt32, ratePerSecond: UInt32, burst: UInt32, members: [ParticipantID],
        retainedCount: UInt32 = 0
    ) {
        self.retainedCount = retainedCount
        self.sequence = sequence
        self.maximumPayload = maximumPayload
        self.ratePerSecond = ratePerSecond
        self.burst = burst
        self.members = members
    }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(sequence)
        buffer.writeInteger(maximumPayload)
        buffer.writeInteger(ratePerSecond)
        buffer.writeInteger(burst)
        buffer.writeInteger(UInt16(clamping: members.count))
        for member in members.prefix(Int(UInt16.max)) { buffer.writeInteger(member.rawValue) }
        buffer.writeInteger(retainedCount)
        return buffer
    }

    /// Parses a welcome payload.
    public init(decoding buffer: ByteBuffer) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let sequence = buffer.readInteger(as: UInt64.self),
            let maximumPayload = buffer.readInteger(as: UInt32.self),
            let ratePerSecond = buffer.readInteger(as: UInt32.self),
            let burst = buffer.readInteger(as: UInt32.self),
            let count = buffer.readInteger(as: UInt16.self)
        else { throw .truncated(.welcome, "fixed fields") }
        guard buffer.readableBytes >= Int(count) * 8 else { throw .truncated(.welcome, "members") }
        var members: [ParticipantID] = []
        members.reserveCapacity(Int(count))
        for _ in 0..<count { members.append(ParticipantID(rawValue: buffer.readInteger(as: UInt64.self)!)) }
        guard let retainedCount = buffer.readInteger(as: UInt32.self) else { throw .truncated(.welcome, "retained count") }
        self.init(
            sequence: sequence, maximumPayload: maximumPayload, ratePerSecond: ratePerSecond, burst: burst,
            members: members, retainedCount: retainedCount)
    }
}
