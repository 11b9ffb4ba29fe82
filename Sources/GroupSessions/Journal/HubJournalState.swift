/// The journal uploads a ``SessionHub`` has in progress (committed attachments live in its
/// ``JournalStorage``).
struct HubJournalState<Connection: Hashable & Sendable>: Sendable {
    /// One upload in progress.
    struct Upload: Sendable {
        var header: JournalHeader
        var uploader: ParticipantID
        var connection: Connection
        var token: UInt64
        var nextIndex = 0
    }

    /// Uploads in progress per session.
    var uploads: [SessionID: [AttachmentID: Upload]] = [:]

    /// Bytes reserved by the uploads in progress of `session`.
    func reservedBytes(in session: SessionID) -> Int {
        uploads[session]?.values.reduce(0) { $0 + $1.header.storedBytes } ?? 0
    }
}
