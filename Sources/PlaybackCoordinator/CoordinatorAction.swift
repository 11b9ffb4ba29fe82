/// What the sans-IO ``CoordinatorCore`` asks its shell to do.
public enum CoordinatorAction: Hashable, Sendable {
    /// Send a message on the coordination channel, retained under the key when there is one.
    case send(CoordinationMessage, retainKey: String?)
    /// Give a command to the local player.
    case command(PlaybackCommand)
    /// Publish an event (its `realtime` is 0; the shell stamps it).
    case event(PlaybackEvent)
}
