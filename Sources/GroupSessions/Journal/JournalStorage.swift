import NIOCore

/// Where a ``SessionHub`` keeps journal attachments: sealed chunks it cannot read.
///
/// The hub calls these synchronously while it handles a frame; an implementation keeps them
/// short (one chunk written, or one fetch window read, per call). ``MemoryJournalStorage``
/// keeps everything in memory; the relay's `JournalStore` (module `SessionRelay`) keeps files
/// under its data directory so attachments survive a restart.
///
/// An upload is `beginUpload`, then `appendChunk` for each chunk in order, then
/// `commitUpload`; only committed attachments are listed, served and counted by
/// ``storedBytes(in:)`` (the hub accounts for uploads in progress itself).
package protocol JournalStorage: AnyObject, Sendable {
    /// Committed attachments of `session`, in announcement order.
    func attachments(in session: SessionID) -> [StoredAttachment]
    /// Bytes committed for `session` (``JournalHeader/storedBytes`` summed).
    func storedBytes(in session: SessionID) -> Int
    /// Bytes committed over every session (for metrics).
    func totalStoredBytes() -> Int
    /// Starts storing an attachment.
    func beginUpload(_ header: JournalHeader, in session: SessionID) throws
    /// Stores the next sealed chunk of an upload in progress.
    func appendChunk(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) throws
    /// Makes a complete upload visible.
    func commitUpload(_ attachment: StoredAttachment, in session: SessionID) throws
    /// Forgets an attachment, committed or in progress (no error if absent).
    func discard(_ id: AttachmentID, in session: SessionID)
    /// Reads sealed chunks `range` of a committed attachment.
    func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) throws -> [ByteBuffer]
    /// Forgets a session's whole journal.
    func deleteSession(_ session: SessionID)
}
