/// A ``SessionHub``'s journal: the index of committed attachments and the uploads in progress
/// (the bytes live in the shell's ``JournalStorage``).
struct HubJournalState<Connection: Hashable & Sendable>: Sendable {
    /// One upload in progress.
    struct Upload: Sendable {
        var header: JournalHeader
        var uploader: ParticipantID
        var connection: Connection
        var token: UInt64
        /// Chunks received (and asked to be written).
        var nextIndex = 0
        /// Chunks the storage has written (each acknowledged then).
        var written = 0
    }

    /// Uploads in progress per session.
    var uploads: [SessionID: [AttachmentID: Upload]] = [:]
    /// Committed attachments per session, in announcement order.
    var stored: [SessionID: [StoredAttachment]] = [:]

    /// Bytes reserved by the uploads in progress of `session`.
    func reservedBytes(in session: SessionID) -> Int {
        uploads[session]?.values.reduce(0) { $0 + $1.header.storedBytes } ?? 0
    }

    /// Bytes committed for `session`.
    func storedBytes(in session: SessionID) -> Int {
        stored[session]?.reduce(0) { $0 + $1.header.storedBytes } ?? 0
    }
}
