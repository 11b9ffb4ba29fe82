/// One complete attachment as a `JournalStorage` keeps it: the clear header (with the
/// sealed metadata), who uploaded it, and the session sequence its announcement was stamped with.
public struct StoredAttachment: Hashable, Sendable {
    /// Size, chunking and sealed metadata.
    public var header: JournalHeader
    /// The authenticated uploader (its key seals the attachment).
    public var uploader: ParticipantID
    /// The stamp of its ``FrameType/journalAdded`` announcement (replays keep it).
    public var sequence: UInt64

    /// Creates a record.
    public init(header: JournalHeader, uploader: ParticipantID, sequence: UInt64) {
        self.header = header
        self.uploader = uploader
        self.sequence = sequence
    }
}
