import NIOCore

/// Journal storage I/O a ``SessionHub`` returns in ``HubAction/journal(_:)`` for its shell to
/// carry out off the hub (the relay: outside the session's lock, off the event loops), one
/// session's operations in the order returned. The shell hands each outcome back with
/// ``SessionHub/journalCompleted(_:_:)``; ``JournalStorage/perform(_:)`` carries one out.
package enum JournalOperation<Connection: Hashable & Sendable>: Sendable {
    /// Start storing an upload (``JournalStorage/beginUpload(_:in:)``).
    case begin(JournalHeader, session: SessionID)
    /// Store the next sealed chunk of an upload; the chunk is acknowledged once it is done.
    case append(ByteBuffer, index: Int, attachment: AttachmentID, session: SessionID)
    /// Make a complete upload visible; its announcement waits for it.
    case commit(StoredAttachment, session: SessionID)
    /// Forget an attachment, committed or in progress.
    case discard(AttachmentID, session: SessionID)
    /// Forget a session's whole journal.
    case deleteSession(SessionID)
    /// Read sealed chunks `range` of `attachment` for `connection`, whose fetch named `token`.
    case read(Range<Int>, of: StoredAttachment, session: SessionID, for: Connection, token: UInt64)

    /// The session the operation is about.
    package var session: SessionID {
        switch self {
        case .begin(_, let session), .append(_, _, _, let session), .commit(_, let session), .discard(_, let session),
            .deleteSession(let session), .read(_, _, let session, _, _):
            session
        }
    }
}

/// How a ``JournalOperation`` went.
package enum JournalOutcome: Sendable {
    /// Done (a write, or a discard).
    case done
    /// The chunks a `.read` asked for.
    case chunks([ByteBuffer])
    /// The storage failed (the hub refuses the request it was for).
    case failed
}
