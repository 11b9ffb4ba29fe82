import NIOCore
import Synchronization

/// A ``JournalStorage`` in memory: for ``InMemoryTransport`` (which carries the hub's journal
/// operations out at once, with ``performNow(_:)``) and a relay without a data directory. Its
/// methods are synchronous and short: they never wait for I/O.
///
/// ```swift
/// let journal = MemoryJournalStorage()
/// for case .journal(let operation) in actions { actions += hub.journalCompleted(operation, journal.performNow(operation)) }
/// ```
package final class MemoryJournalStorage: JournalStorage {
    private struct Entry {
        var header: JournalHeader
        var chunks: [ByteBuffer] = []
        var stored: StoredAttachment?
    }

    private struct Journal {
        var entries: [AttachmentID: Entry] = [:]
        var storedBytes = 0
    }

    private let journals = Mutex<[SessionID: Journal]>([:])

    /// Creates an empty store.
    package init() {}

    package func attachments(in session: SessionID) -> [StoredAttachment] {
        journals.withLock { journals in
            (journals[session]?.entries.values.compactMap(\.stored) ?? []).sorted { $0.sequence < $1.sequence }
        }
    }

    /// Bytes committed for `session` (``JournalHeader/storedBytes`` summed).
    package func storedBytes(in session: SessionID) -> Int {
        journals.withLock { $0[session]?.storedBytes ?? 0 }
    }

    /// Bytes committed over every session.
    package func totalStoredBytes() -> Int {
        journals.withLock { $0.values.reduce(0) { $0 + $1.storedBytes } }
    }

    package func beginUpload(_ header: JournalHeader, in session: SessionID) throws {
        journals.withLock { $0[session, default: Journal()].entries[header.id] = Entry(header: header) }
    }

    package func appendChunk(_ sealed: ByteBuffer, index: Int, of id: AttachmentID, in session: SessionID) throws {
        try journals.withLock { journals in
            guard journals[session]?.entries[id]?.chunks.count == index else {
                throw GroupSessionError.protocolViolation("chunk \(index) of \(id) out of order")
            }
            // A copy, so the stored chunk does not pin the receive buffer it arrived in.
            journals[session]?.entries[id]?.chunks.append(ByteBuffer(bytes: sealed.readableBytesView))
        }
    }

    package func commitUpload(_ attachment: StoredAttachment, in session: SessionID) throws {
        try journals.withLock { journals in
            guard journals[session]?.entries[attachment.header.id] != nil else {
                throw GroupSessionError.attachmentNotFound
            }
            journals[session]?.entries[attachment.header.id]?.stored = attachment
            journals[session]?.storedBytes += attachment.header.storedBytes
        }
    }

    package func discard(_ id: AttachmentID, in session: SessionID) {
        journals.withLock { journals in
            guard let entry = journals[session]?.entries.removeValue(forKey: id) else { return }
            if entry.stored != nil { journals[session]?.storedBytes -= entry.header.storedBytes }
        }
    }

    package func chunks(_ range: Range<Int>, of id: AttachmentID, in session: SessionID) throws -> [ByteBuffer] {
        try journals.withLock { journals in
            guard let entry = journals[session]?.entries[id], entry.stored != nil, range.upperBound <= entry.chunks.count
            else { throw GroupSessionError.attachmentNotFound }
            return Array(entry.chunks[range])
        }
    }

    package func deleteSession(_ session: SessionID) {
        _ = journals.withLock { $0.removeValue(forKey: session) }
    }

    /// Carries out `operation` at once (``JournalStorage/perform(_:)`` without suspending).
    package func performNow<Connection>(_ operation: JournalOperation<Connection>) -> JournalOutcome {
        do {
            switch operation {
            case .begin(let header, let session): try beginUpload(header, in: session)
            case .append(let sealed, let index, let id, let session): try appendChunk(sealed, index: index, of: id, in: session)
            case .commit(let attachment, let session): try commitUpload(attachment, in: session)
            case .discard(let id, let session): discard(id, in: session)
            case .deleteSession(let session): deleteSession(session)
            case .read(let range, let attachment, let session, _, _):
                return .chunks(try chunks(range, of: attachment.header.id, in: session))
            }
            return .done
        } catch {
            return .failed
        }
    }
}
