import GroupSessions
import NIOCore
import SessionRelay
import Synchronization

/// Journal attachments of the sessions this node serves, in memory (every call returns without
/// waiting) and written to PostgreSQL with the session's next commit: a committed
/// attachment's chunks go into the same transaction as the `journalAdded` announcement that
/// makes it visible, so an announced attachment is in the database.
///
/// A node that takes a session over loads its attachments from the database
/// (``PostgresSessionStore``); a node that stops serving a session forgets them.
package final class PostgresJournal: JournalStorage {
    /// A change to write with the session's next commit.
    enum Operation: Sendable {
        case commit(StoredAttachment, [ByteBuffer])
        case discard(AttachmentID)
        case deleteSession
    }

    private let memory = MemoryJournalStorage()
    private let pending = Mutex<[SessionID: [Operation]]>([:])

    package init() {}

    /// The changes recorded for `session` since the last call, oldest first.
    func takePending(_ session: SessionID) -> [Operation] {
        pending.withLock { $0.removeValue(forKey: session) ?? [] }
    }

    /// Replaces what this node holds of `session` by what the database holds.
    func load(_ session: SessionID, attachments: [(StoredAttachment, [ByteBuffer])]) throws {
        memory.deleteSession(session)
        _ = pending.withLock { $0.removeValue(forKey: session) }
        for (attachment, chunks) in attachments {
            try memory.beginUpload(attachment.header, in: session)
            for (index, chunk) in chunks.enumerated() {
                try memory.appendChunk(chunk, index: index, of: attachment.header.id, in: session)
            }
            try memory.commitUpload(attachment, in: session)
        }
    }

    /// Forgets `session` on this node (it is served elsewhere now, or gone).
    func forget(_ session: SessionID) {
        memory.deleteSession(session)
        _ = pending.withLock { $0.removeValue(forKey: session) }
    }

    private func record(_ operation: Operation, in session: SessionID) {
        pending.withLock { $0[session, default: []].append(operation) }
    }

    // MARK: JournalStorage

    package func attachments(in session: SessionID) -> [StoredAttachment] { memory.attachments(in: session) }

    package func beginUpload(_ header: JournalHeader, in session: SessionID) throws {
        try memory.beginUpload(header, in: session)
    }

    package func appendChunk(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) throws {
        try memory.appendChunk(sealed, index: index, of: id, in: session)
    }

    package func commitUpload(_ attachment: StoredAttachment, in session: SessionID) throws {
        try memory.commitUpload(attachment, in: session)
        let chunks = try memory.chunks(0..<attachment.header.chunkCount, of: attachment.header.id, in: session)
        record(.commit(attachment, chunks), in: session)
    }

    package func discard(_ id: AttachmentID, in session: SessionID) {
        memory.discard(id, in: session)
        record(.discard(id), in: session)
    }

    package func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) throws -> [ByteBuffer] {
        try memory.chunks(range, of: id, in: session)
    }

    package func deleteSession(_ session: SessionID) {
        memory.deleteSession(session)
        pending.withLock { $0[session] = [.deleteSession] }
    }
}
