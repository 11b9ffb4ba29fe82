import Foundation
import GroupSessions
import SessionRelay
import Synchronization

/// A session store that stalls every write of chosen sessions (benchmarks and tests of the
/// relay's isolation between sessions): it sleeps `delay` on the calling thread, then hands the
/// call to `base`. Other sessions go straight through. Its journal storage (``journalStorage``,
/// for example a ``StalledJournal``) is the relay's.
///
/// ```swift
/// let store = StalledStore(base: try SessionStore(directory: dir, logger: logger), delay: .milliseconds(200))
/// store.stall(session)
/// configuration.store = store
/// ```
package final class StalledStore: SessionPersistence, JournalProviding {
    private let base: any SessionPersistence
    private let delay: Duration
    private let stalled = Mutex<Set<SessionID>>([])
    private let writes = Atomic<Int>(0)
    /// Where the relay keeps journal attachments.
    package let journalStorage: any JournalStorage

    /// Wraps `base`; no session is stalled until ``stall(_:)``. The relay keeps attachments in
    /// `journal` (default: memory).
    package init(base: any SessionPersistence, delay: Duration, journal: any JournalStorage = MemoryJournalStorage()) {
        self.base = base
        self.delay = delay
        journalStorage = journal
    }

    /// Makes every later write of `session` take `delay` longer.
    package func stall(_ session: SessionID) {
        stalled.withLock { _ = $0.insert(session) }
    }

    /// Writes delayed so far.
    package var stalledWrites: Int { writes.load(ordering: .relaxed) }

    package func apply(_ event: SessionStoreEvent) {
        if stalled.withLock({ $0.contains(event.session) }) {
            writes.add(1, ordering: .relaxed)
            Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18)
        }
        base.apply(event)
    }

    package func needsCompaction(_ session: SessionID) -> Bool { base.needsCompaction(session) }
    package func compact(_ snapshot: SessionSnapshot) throws { try base.compact(snapshot) }
    package func load() throws -> [SessionSnapshot] { try base.load() }
}
