import Foundation
import GroupSessions
import NIOCore
import Synchronization

/// Journal storage whose disk stalls every write of chosen sessions (benchmarks of the relay's
/// isolation between sessions): it sleeps `delay` on the calling thread, as a slow disk would,
/// then hands the call to `base`. Other sessions, and reads, go straight through.
///
/// ```swift
/// let journal = StalledJournal(base: try JournalStore(directory: dir, logger: logger), delay: .milliseconds(200))
/// journal.stall(session)
/// ```
package final class StalledJournal: JournalStorage {
    private let base: any JournalStorage
    private let delay: Duration
    private let stalled = Mutex<Set<SessionID>>([])
    private let writes = Atomic<Int>(0)

    /// Wraps `base`; no session is stalled until ``stall(_:)``.
    package init(base: any JournalStorage, delay: Duration) {
        self.base = base
        self.delay = delay
    }

    /// Makes every later write of `session` take `delay` longer.
    package func stall(_ session: SessionID) {
        stalled.withLock { _ = $0.insert(session) }
    }

    /// Writes delayed so far.
    package var stalledWrites: Int { writes.load(ordering: .relaxed) }

    private func stallIfChosen(_ session: SessionID) {
        guard stalled.withLock({ $0.contains(session) }) else { return }
        writes.add(1, ordering: .relaxed)
        Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18)
    }

    package func attachments(in session: SessionID) -> [StoredAttachment] { base.attachments(in: session) }
    package func storedBytes(in session: SessionID) -> Int { base.storedBytes(in: session) }
    package func totalStoredBytes() -> Int { base.totalStoredBytes() }

    package func beginUpload(_ header: JournalHeader, in session: SessionID) throws {
        stallIfChosen(session)
        try base.beginUpload(header, in: session)
    }

    package func appendChunk(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) throws {
        stallIfChosen(session)
        try base.appendChunk(sealed, index: index, of: id, in: session)
    }

    package func commitUpload(_ attachment: StoredAttachment, in session: SessionID) throws {
        stallIfChosen(session)
        try base.commitUpload(attachment, in: session)
    }

    package func discard(_ id: AttachmentID, in session: SessionID) {
        stallIfChosen(session)
        base.discard(id, in: session)
    }

    package func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) throws -> [ByteBuffer] {
        try base.chunks(range, of: id, in: session)
    }

    package func deleteSession(_ session: SessionID) {
        stallIfChosen(session)
        base.deleteSession(session)
    }
}
