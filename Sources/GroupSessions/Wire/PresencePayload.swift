import NIOCore

/// The payload of a ``FrameType/presence`` frame: `joined` and `left` frames of one session
/// delivered as one, each entry keeping its own stamp.
///
/// Layout: `count u16 | count × (type u8 | participant u64 | sequence u64)`, `type` being
/// `0x04` (joined) or `0x05` (left). Trailing bytes are ignored.
///
/// The relay builds these when a member's queue holds several presence frames in a row (a mass
/// join), for connections that asked for them with ``FrameFlags/presenceBatches``. A reader
/// expands one with ``frames(of:)`` and handles the frames as if they had come one by one.
public struct PresencePayload: Hashable, Sendable {
    /// One `joined` or `left` frame.
    public struct Entry: Hashable, Sendable {
        /// ``FrameType/joined`` or ``FrameType/left``.
        public var type: FrameType
        /// Who joined or left.
        public var participant: ParticipantID
        /// The session sequence number the relay stamped it with.
        public var sequence: UInt64

        /// Creates an entry.
        public init(type: FrameType, participant: ParticipantID, sequence: UInt64) {
            self.type = type
            self.participant = participant
            self.sequence = sequence
        }
    }

    /// Bytes one entry takes.
    public static let entryLength = 17
    /// The most entries one payload carries.
    public static let maximumEntries = Int(UInt16.max)

    /// The frames, in the order the relay stamped them.
    public var entries: [Entry]

    /// Wraps entries (at most ``maximumEntries``).
    public init(entries: [Entry]) {
        self.entries = entries
    }

    /// Serializes the payload.
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(2 + entries.count * Self.entryLength)
        buffer.writeInteger(UInt16(clamping: entries.count))
        for entry in entries.prefix(Self.maximumEntries) {
            buffer.writeInteger(entry.type.rawValue)
            buffer.writeInteger(entry.participant.rawValue)
            buffer.writeInteger(entry.sequence)
        }
        return buffer
    }

    /// Parses a presence payload; an entry of another type than `joined` / `left` is invalid.
    public init(decoding buffer: ByteBuffer) throws(PayloadDecodingError) {
        var buffer = buffer
        guard let count = buffer.readInteger(as: UInt16.self) else { throw .truncated(.presence, "count") }
        guard buffer.readableBytes >= Int(count) * Self.entryLength else { throw .truncated(.presence, "entries") }
        var entries: [Entry] = []
        entries.reserveCapacity(Int(count))
        for _ in 0..<count {
            let type = FrameType(rawValue: buffer.readInteger(as: UInt8.self)!)
            guard type == .joined || type == .left else { throw .invalid(.presence, "entry of type \(type)") }
            entries.append(Entry(
                type: type, participant: ParticipantID(rawValue: buffer.readInteger(as: UInt64.self)!),
                sequence: buffer.readInteger(as: UInt64.self)!))
        }
        self.init(entries: entries)
    }

    /// The `joined` / `left` frames a presence frame stands for, in order: `frame` itself when it
    /// is of another type.
    public static func frames(of frame: Frame) throws(PayloadDecodingError) -> [Frame] {
        guard frame.type == .presence else { return [frame] }
        return try PresencePayload(decoding: frame.payload).entries.map { entry in
            Frame(type: entry.type, session: frame.session, sender: entry.participant, sequence: entry.sequence)
        }
    }

    /// Replaces every run of two or more plain `joined` / `left` frames of one session in
    /// `frames` by ``FrameType/presence`` frames (at most ``maximumEntries`` entries each);
    /// everything else stays where it is.
    public static func batching(_ frames: [Frame]) -> [Frame] {
        func batchable(_ frame: Frame) -> Bool {
            (frame.type == .joined || frame.type == .left) && frame.flags.isEmpty && frame.payload.readableBytes == 0
        }
        guard frames.count > 1 else { return frames }
        var result: [Frame] = []
        var index = frames.startIndex
        while index < frames.endIndex {
            var end = index
            while end < frames.endIndex, end - index < maximumEntries, batchable(frames[end]),
                frames[end].session == frames[index].session
            {
                end += 1
            }
            if end - index < 2 {
                result.append(frames[index])
                index += 1
                continue
            }
            let run = frames[index..<end]
            let payload = PresencePayload(entries: run.map {
                Entry(type: $0.type, participant: $0.sender, sequence: $0.sequence)
            })
            result.append(Frame(
                type: .presence, session: frames[index].session, sender: .relay, sequence: run.last!.sequence,
                payload: payload.encoded()))
            index = end
        }
        return result
    }
}
