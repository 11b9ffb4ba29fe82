import Foundation
import GroupSessions
import SessionRelay
import Synchronization

/// A session store that stalls every write of chosen sessions (benchmarks and tests of the
/// relay's isolation between sessions): each event written takes `delay` longer, spent blocking a
/// Dispatch thread as a slow disk would (``StalledDisk``), then the call goes to `base`. Other
/// sessions go straight through. Its journal storage (``journalStorage``, for example a
/// ``StalledJournal``) is the relay's.
///
/// ```swift
/// let store = StalledStore(base: try SessionStore(directory: dir, logger: logger), delay: .milliseconds(200))
/// store.stall(session)
/// configuration.store = store
/// ```
package final class StalledStore: SessionPersistence, JournalProviding {
    private let base: any SessionPersistence
    private let disk: StalledDisk
    /// Where the relay keeps journal attachments.
    package let journalStorage: any JournalStorage

    /// Wraps `base`; no session is stalled until ``stall(_:)``. The relay keeps attachments in
    /// `journal` (default: memory).
    package init(base: any SessionPersistence, delay: Duration, journal: any JournalStorage = MemoryJournalStorage()) {
        self.base = base
        disk = StalledDisk(delay: delay)
        journalStorage = journal
    }

    /// Makes every later write of `session` take `delay` longer.
    package func stall(_ session: SessionID) { disk.stall(session) }

    /// Writes delayed so far.
    package var stalledWrites: Int { disk.stalledWrites }

    package func commit(_ events: [SessionStoreEvent], of session: SessionID, lease: SessionLease?) async throws {
        for _ in events { await disk.write(session) }
        try await base.commit(events, of: session, lease: lease)
    }

    package func needsCompaction(_ session: SessionID) -> Bool { base.needsCompaction(session) }
    package func compact(_ snapshot: SessionSnapshot) async throws { try await base.compact(snapshot) }
    package func load() async throws -> [SessionSnapshot] { try await base.load() }
    package func claim(_ session: SessionID) async throws -> SessionClaim { try await base.claim(session) }
    package func release(_ session: SessionID, lease: SessionLease?) async { await base.release(session, lease: lease) }
}

/// The stall of ``StalledStore`` and ``StalledJournal``: a write of a chosen session blocks a
/// Dispatch worker thread for `delay` (as a slow disk blocks the thread that writes to it) while
/// its caller waits.
package final class StalledDisk: Sendable {
    private let delay: Duration
    private let stalled = Mutex<Set<SessionID>>([])
    private let writes = Atomic<Int>(0)

    /// A disk that stalls `delay` per write of the sessions given to ``stall(_:)``.
    package init(delay: Duration) {
        self.delay = delay
    }

    /// Makes every later write of `session` take `delay` longer.
    package func stall(_ session: SessionID) {
        stalled.withLock { _ = $0.insert(session) }
    }

    /// Writes delayed so far.
    package var stalledWrites: Int { writes.load(ordering: .relaxed) }

    /// One write of `session`: returns after `delay` if the session is stalled, at once otherwise.
    package func write(_ session: SessionID) async {
        guard stalled.withLock({ $0.contains(session) }) else { return }
        writes.add(1, ordering: .relaxed)
        let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) * 1e-18
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                Thread.sleep(forTimeInterval: seconds)
                continuation.resume()
            }
        }
    }
}
