/// A change a `SessionHub` asks a persistent store to record (when
/// `SessionHub.recordsStoreEvents` is on). The shell takes them with
/// `SessionHub.takeStoreEvents()` *before* carrying out the actions of the same call, so an
/// `ack` never leaves before the frame it acknowledges is written.
public enum SessionStoreEvent: Sendable {
    /// The session was created or its membership changed: a metadata-only snapshot.
    case updated(SessionSnapshot)
    /// A frame was stamped in the session (append it to the session's log).
    case logged(SessionID, Frame)
    /// The session is gone (ended, or its last member left or timed out).
    case deleted(SessionID)
}

extension SessionStoreEvent {
    /// The session the event is about.
    public var session: SessionID {
        switch self {
        case .updated(let snapshot): snapshot.session
        case .logged(let session, _): session
        case .deleted(let session): session
        }
    }
}
