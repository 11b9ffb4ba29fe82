import NIOCore

/// Where journal attachments are kept: sealed chunks the relay cannot read.
///
/// A ``SessionHub`` never calls it: it keeps the index of committed attachments itself and
/// returns the I/O as ``HubAction/journal(_:)`` actions, which its shell carries out with
/// ``perform(_:)`` (the relay: off its event loops and outside any session's lock, so a slow disk
/// delays only the session that uses it). Calls for one session come one at a time, in order;
/// calls for different sessions may run concurrently. ``MemoryJournalStorage`` keeps everything
/// in memory; the relay's `JournalStore` (module `SessionRelay`) keeps files under its data
/// directory so attachments survive a restart.
///
/// An upload is `beginUpload`, then `appendChunk` for each chunk in order, then
/// `commitUpload`; only committed attachments are listed and served.
package protocol JournalStorage: AnyObject, Sendable {
    /// Committed attachments of `session`, in announcement order (read when a relay starts
    /// serving the session: ``SessionHub/restoreJournal(_:of:)``).
    func attachments(in session: SessionID) async throws -> [StoredAttachment]
    /// Starts storing an attachment.
    func beginUpload(_ header: JournalHeader, in session: SessionID) async throws
    /// Stores the next sealed chunk of an upload in progress.
    func appendChunk(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) async throws
    /// Makes a complete upload visible.
    func commitUpload(_ attachment: StoredAttachment, in session: SessionID) async throws
    /// Forgets an attachment, committed or in progress (no error if absent).
    func discard(_ id: AttachmentID, in session: SessionID) async
    /// Reads sealed chunks `range` of a committed attachment.
    func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) async throws -> [ByteBuffer]
    /// Forgets a session's whole journal.
    func deleteSession(_ session: SessionID) async
}

extension JournalStorage {
    /// Carries out one operation a hub returned; hand the outcome to
    /// ``SessionHub/journalCompleted(_:_:)``.
    package func perform<Connection>(_ operation: JournalOperation<Connection>) async -> JournalOutcome {
        do {
            switch operation {
            case .begin(let header, let session):
                try await beginUpload(header, in: session)
            case .append(let sealed, let index, let id, let session):
                try await appendChunk(sealed, index: index, of: id, in: session)
            case .commit(let attachment, let session):
                try await commitUpload(attachment, in: session)
            case .discard(let id, let session):
                await discard(id, in: session)
            case .deleteSession(let session):
                await deleteSession(session)
            case .read(let range, let attachment, let session, _, _):
                return .chunks(try await chunks(range, of: attachment.header.id, in: session))
            }
            return .done
        } catch {
            return .failed
        }
    }
}
