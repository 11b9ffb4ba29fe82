import GroupSessions
import NIOCore

/// Journal storage whose disk stalls every write of chosen sessions (benchmarks of the relay's
/// isolation between sessions): each write takes `delay` longer (``StalledDisk``), then goes to
/// `base`. Other sessions, and reads, go straight through.
///
/// ```swift
/// let journal = StalledJournal(base: try JournalStore(directory: dir, logger: logger), delay: .milliseconds(200))
/// journal.stall(session)
/// ```
package final class StalledJournal: JournalStorage {
    private let base: any JournalStorage
    private let disk: StalledDisk

    /// Wraps `base`; no session is stalled until ``stall(_:)``.
    package init(base: any JournalStorage, delay: Duration) {
        self.base = base
        disk = StalledDisk(delay: delay)
    }

    /// Makes every later write of `session` take `delay` longer.
    package func stall(_ session: SessionID) { disk.stall(session) }

    /// Writes delayed so far.
    package var stalledWrites: Int { disk.stalledWrites }

    package func attachments(in session: SessionID) async throws -> [StoredAttachment] {
        try await base.attachments(in: session)
    }

    package func beginUpload(_ header: JournalHeader, in session: SessionID) async throws {
        await disk.write(session)
        try await base.beginUpload(header, in: session)
    }

    package func appendChunk(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) async throws {
        await disk.write(session)
        try await base.appendChunk(sealed, index: index, of: id, in: session)
    }

    package func commitUpload(_ attachment: StoredAttachment, in session: SessionID) async throws {
        await disk.write(session)
        try await base.commitUpload(attachment, in: session)
    }

    package func discard(_ id: AttachmentID, in session: SessionID) async {
        await disk.write(session)
        await base.discard(id, in: session)
    }

    package func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) async throws -> [ByteBuffer] {
        try await base.chunks(range, of: id, in: session)
    }

    package func deleteSession(_ session: SessionID) async {
        await disk.write(session)
        await base.deleteSession(session)
    }
}
