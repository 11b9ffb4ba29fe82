/// An edit of the group's queue, as a member sends it (``CoordinationMessage/queueEdit(_:)``).
/// Not retained: members apply edits in the channel's order; a joiner receives the queue itself
/// (``QueueSnapshotPart``).
public struct QueueEditNotice: Hashable, Sendable {
    /// The edit.
    public var edit: QueueEdit
    /// The sender's reference time when sending.
    public var sentAt: ReferenceTime

    /// Creates a notice.
    public init(edit: QueueEdit, sentAt: ReferenceTime) {
        self.edit = edit
        self.sentAt = sentAt
    }
}

/// A joiner's request for the queue (``CoordinationMessage/queueRequest(_:)``): a member that has
/// the queue answers with the queue as of the request's place in the channel's order.
public struct QueueRequest: Hashable, Sendable {
    /// The sender's reference time when sending.
    public var sentAt: ReferenceTime

    /// Creates a request.
    public init(sentAt: ReferenceTime) {
        self.sentAt = sentAt
    }
}

/// One part of a copy of the whole queue (``CoordinationMessage/queueSnapshot(_:)``).
///
/// A queue is sent in parts of at most ``maximumEntries`` entries, so a 1,000-entry queue stays
/// well inside a session message's size limit. Two kinds: an answer to a joiner's
/// ``QueueRequest`` (`request` is that request's channel sequence, and the copy holds every edit
/// ordered before it), and the retained copy (`request` is `nil`, retained under
/// ``CoordinationMessage/queueSnapshotKey(part:)``), which a member that joins an empty session
/// starts from.
public struct QueueSnapshotPart: Hashable, Sendable, Codable {
    /// The most entries one part carries.
    public static let maximumEntries = 200

    /// Identifies one copy: its parts share it.
    public var snapshot: String
    /// The channel sequence of the request this copy answers; `nil` for the retained copy.
    public var request: UInt64?
    /// The copy holds every edit whose channel sequence is at most this.
    public var through: UInt64
    /// This part's index, from 0.
    public var part: Int
    /// How many parts the copy has.
    public var parts: Int
    /// This part's entries, in list order after the previous part's.
    public var entries: [QueueEntry]
    /// The queue's repeat mode.
    public var repeatMode: RepeatMode
    /// The queue's shuffle seed, if shuffled.
    public var shuffleSeed: UInt32?
    /// The playing entry that was removed, and where the queue continues after it.
    public var removedPlaying: PlayQueue.RemovedEntry?
    /// In an answer's first part: the group's playback state at the request's place in the order
    /// (with its revision). The relay's retained state is the latest state message, which can be
    /// a transition proposal that lost its race; a joiner takes this one instead.
    public var state: PlaybackState?
    /// The sender's reference time when sending.
    public var sentAt: ReferenceTime

    /// Creates a part.
    public init(
        snapshot: String, request: UInt64?, through: UInt64, part: Int, parts: Int, entries: [QueueEntry],
        repeatMode: RepeatMode, shuffleSeed: UInt32?, removedPlaying: PlayQueue.RemovedEntry?, state: PlaybackState? = nil,
        sentAt: ReferenceTime
    ) {
        self.snapshot = snapshot
        self.request = request
        self.through = through
        self.part = part
        self.parts = parts
        self.entries = entries
        self.repeatMode = repeatMode
        self.shuffleSeed = shuffleSeed
        self.removedPlaying = removedPlaying
        self.state = state
        self.sentAt = sentAt
    }

    /// A queue in parts.
    static func parts(
        of queue: PlayQueue, snapshot: String, request: UInt64?, through: UInt64, state: PlaybackState? = nil,
        sentAt: ReferenceTime
    ) -> [QueueSnapshotPart] {
        let chunks = stride(from: 0, to: max(queue.entries.count, 1), by: maximumEntries).map { start in
            Array(queue.entries[start..<min(start + maximumEntries, queue.entries.count)])
        }
        return chunks.enumerated().map { index, entries in
            QueueSnapshotPart(
                snapshot: snapshot, request: request, through: through, part: index, parts: chunks.count, entries: entries,
                repeatMode: queue.repeatMode, shuffleSeed: queue.shuffleSeed, removedPlaying: queue.removedPlaying,
                state: index == 0 ? state : nil, sentAt: sentAt)
        }
    }

    /// The queue the parts of one copy make, if every part is there.
    static func assemble(_ parts: [QueueSnapshotPart]) -> PlayQueue? {
        guard let first = parts.first, parts.count == first.parts,
            Set(parts.map(\.part)) == Set(0..<first.parts)
        else { return nil }
        let ordered = parts.sorted { $0.part < $1.part }
        return PlayQueue(
            entries: ordered.flatMap(\.entries), repeatMode: first.repeatMode, shuffleSeed: first.shuffleSeed,
            removedPlaying: first.removedPlaying)
    }
}
