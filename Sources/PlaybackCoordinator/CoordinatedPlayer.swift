/// A player that ``GroupPlayback`` coordinates: the coordinator drives it through
/// ``PlaybackControlDelegate/handle(_:)``, and it runs for as long as playback is coordinated.
///
/// ``HeadlessPlayer`` is one; an adapter for an external player (mpv) is another. A player whose
/// person acts on it directly (a pause key, a seek) turns those actions into group commands through
/// the coordinator it is given, and tells it when it cannot play (``PlayerReadiness``).
///
/// ```swift
/// actor MyPlayer: CoordinatedPlayer {
///     nonisolated let events: AsyncStream<PlaybackEvent>
///     func handle(_ command: PlaybackCommand) async { /* schedule it */ }
///     func run(coordinator: PlaybackCoordinator) async throws {
///         coordinator.reportReadiness(.loading)
///         // load, then:
///         coordinator.reportReadiness(.ready)
///         // present frames until cancelled; on the pause key: try await coordinator.pause()
///     }
/// }
/// ```
public protocol CoordinatedPlayer: PlaybackControlDelegate {
    /// What the player reports (frames, stops, corrections); finishes when the player stops.
    var events: AsyncStream<PlaybackEvent> { get }

    /// Runs the player until the task is cancelled, or until the player ends on its own (its
    /// process quit, its window closed). Returning or throwing ends the coordination: the member
    /// leaves the session.
    ///
    /// - Parameter coordinator: the coordinator driving this player, for the person's own actions
    ///   and for readiness reports.
    func run(coordinator: PlaybackCoordinator) async throws

    /// From now on `coordinator` drives this player, in place of the one ``run(coordinator:)`` was
    /// given: the session moved to a successor (``PlaybackSuccession``) and the player plays on.
    /// The person's actions and readiness reports go to it. The default does nothing (a player
    /// that never talks to its coordinator).
    func follow(_ coordinator: PlaybackCoordinator) async
}

extension CoordinatedPlayer {
    public func follow(_ coordinator: PlaybackCoordinator) async {}
}

/// Whether a player can play now; see ``PlaybackCoordinator/reportReadiness(_:)``.
///
/// Like `AVPlayer`'s coordinator: a player that is not ready makes the group wait (a `buffering`
/// or `stallRecovery` suspension that the coordinator begins and ends by itself), so nobody runs
/// ahead of a member that is still loading, seeking or starved.
public enum PlayerReadiness: Hashable, Sendable, CustomStringConvertible {
    /// The player can present the group's timeline.
    case ready
    /// The item is being opened.
    case loading
    /// A seek has not completed yet.
    case seeking
    /// Playback ran out of data (a stall).
    case starved

    /// The suspension a not-ready player begins: `buffering` while loading or seeking,
    /// `stallRecovery` when starved; `nil` when ready.
    public var suspensionReason: SuspensionReason? {
        switch self {
        case .ready: nil
        case .loading, .seeking: .buffering
        case .starved: .stallRecovery
        }
    }

    public var description: String {
        switch self {
        case .ready: "ready"
        case .loading: "loading"
        case .seeking: "seeking"
        case .starved: "starved"
        }
    }
}

extension HeadlessPlayer: CoordinatedPlayer {
    /// Presents frames until cancelled (the headless player is always ready).
    public func run(coordinator: PlaybackCoordinator) async throws {
        await run()
    }
}
