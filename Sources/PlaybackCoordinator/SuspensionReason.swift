/// Why a participant suspended its part in coordinated playback.
///
/// Mirrors `AVCoordinatedPlaybackSuspension.Reason`. Whether the group *waits* for a suspension is
/// the suspending member's choice (``CoordinatorConfiguration/waitingReasons``, by default
/// ``defaultWaitingReasons``), bounded by the participant limits and the suspension timeout; every
/// member then holds its timeline still over the same reference interval. Independently of
/// waiting, the reasons in ``detachingReasons`` *detach* the local player: while such a suspension
/// is open the coordinator stops handing it commands (events still flow), and when the last one
/// ends it gives the player the group's current state, so it rejoins where the group is.
///
/// ```swift
/// let suspension = try await coordinator.beginSuspension(.buffering)
/// // ... refill ...
/// try await suspension.end()
/// ```
///
/// In JSON (coordination messages) a reason is its ``description``: `"buffering"`, or
/// `"custom:NAME"` for ``custom(_:)`` (`SuspensionReason+Codable.swift`).
public enum SuspensionReason: Hashable, Sendable, CustomStringConvertible {
    /// The player stalled and is recovering.
    case stallRecovery
    /// The player is buffering.
    case buffering
    /// The user is scrubbing; usually ends with a proposed new time.
    case userChangingTime
    /// Something outside the player interrupted it (a call, another app).
    case interruption
    /// The participant plays other content than the group's item (an advertisement, a legal
    /// notice). Detaches the local player; the group does not wait unless the app makes it a
    /// waiting reason (then at most for the suspension timeout).
    case playingInterstitial
    /// The participant cannot follow the group now (it lacks the item, or its player cannot play
    /// it at the group's rate). Detaches the local player; the group does not wait unless the app
    /// makes it a waiting reason.
    case coordinatedPlaybackNotPossible
    /// The participant's player needs the person to act before it can play (a browser that blocks
    /// autoplay, a confirmation). Detaches the local player; the group does not wait unless the app
    /// makes it a waiting reason.
    case userActionRequired
    /// An app-defined reason.
    case custom(String)

    /// The reasons that make the group wait by default.
    public static let defaultWaitingReasons: Set<SuspensionReason> = [.stallRecovery, .buffering]

    /// The reasons that detach the local player from the group while suspended (see the type's
    /// discussion): ``playingInterstitial``, ``coordinatedPlaybackNotPossible``,
    /// ``userActionRequired``. The other reasons keep the player following the group's commands.
    public static let detachingReasons: Set<SuspensionReason> = [
        .playingInterstitial, .coordinatedPlaybackNotPossible, .userActionRequired,
    ]

    /// Apple's name for ``interruption``.
    public static let audioSessionInterrupted = SuspensionReason.interruption
    /// Apple's name for ``userChangingTime``.
    public static let userIsChangingCurrentTime = SuspensionReason.userChangingTime

    /// Whether this reason detaches the local player (one of ``detachingReasons``).
    public var detachesPlayer: Bool { Self.detachingReasons.contains(self) }

    public var description: String {
        switch self {
        case .stallRecovery: "stallRecovery"
        case .buffering: "buffering"
        case .userChangingTime: "userChangingTime"
        case .interruption: "interruption"
        case .playingInterstitial: "playingInterstitial"
        case .coordinatedPlaybackNotPossible: "coordinatedPlaybackNotPossible"
        case .userActionRequired: "userActionRequired"
        case .custom(let name): "custom:\(name)"
        }
    }
}
