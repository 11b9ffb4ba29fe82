/// What a ``SessionHub`` asks its I/O shell to do after an event.
package enum HubAction<Connection: Hashable & Sendable>: Sendable {
    /// Write `frame` to `connection`. `droppable` frames may be skipped for a connection that
    /// is falling behind (unreliable data).
    case send(Connection, Frame, droppable: Bool)
    /// Close `connection` after the frames already queued for it.
    case close(Connection)
    /// Read or write journal storage (``JournalStorage``), in the order the hub asked, and report
    /// the outcome with ``SessionHub/journalCompleted(_:_:)``. The hub does no I/O itself.
    ///
    /// A `.commit` comes in the same batch as the attachment's announcement: the shell sends the
    /// batch's frames (and any later ones of the session) only once the commit is done.
    case journal(JournalOperation<Connection>)
}
