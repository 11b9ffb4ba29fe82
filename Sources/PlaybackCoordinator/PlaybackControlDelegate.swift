/// The local player, as the coordinator drives it.
///
/// Modelled on `AVPlaybackCoordinatorPlaybackControlDelegate`: the coordinator decides *what* the
/// group does and *when* (on the reference clock); the delegate makes the local decoder do it.
/// Commands for another item than the local one are never delivered (the coordinator counts them
/// ignored and completed), so the delegate only checks `expectedItemIdentifier` if it switches
/// items on its own.
///
/// ```swift
/// actor MyPlayer: PlaybackControlDelegate {
///     func handle(_ command: PlaybackCommand) async {
///         // schedule command.itemTime at command.referenceTime with command.rate
///     }
/// }
/// ```
public protocol PlaybackControlDelegate: Sendable {
    /// Carries out `command`; returning counts as completion.
    ///
    /// - Parameter command: the command; see ``PlaybackCommand/Kind``.
    func handle(_ command: PlaybackCommand) async
}
