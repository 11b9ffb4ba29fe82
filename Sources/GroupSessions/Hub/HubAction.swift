/// What a ``SessionHub`` asks its I/O shell to do after an event.
package enum HubAction<Connection: Hashable & Sendable>: Sendable {
    /// Write `frame` to `connection`. `droppable` frames may be skipped for a connection that
    /// is falling behind (unreliable data).
    case send(Connection, Frame, droppable: Bool)
    /// Close `connection` after the frames already queued for it.
    case close(Connection)
}
