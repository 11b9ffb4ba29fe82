/// Why a participant suspended its part in coordinated playback.
///
/// ```swift
/// let suspension = await coordinator.beginSuspension(.buffering)
/// // ... refill ...
/// try await suspension.end()
/// ```
public enum SuspensionReason: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The player stalled and is recovering.
    case stallRecovery
    /// The player is buffering.
    case buffering
    /// The user is scrubbing; usually ends with a proposed new time.
    case userChangingTime
    /// Something outside the player interrupted it (a call, another app).
    case interruption
    /// An app-defined reason.
    case custom(String)

    /// The reasons that make the group wait by default.
    public static let defaultWaitingReasons: Set<SuspensionReason> = [.stallRecovery, .buffering]

    public var description: String {
        switch self {
        case .stallRecovery: "stallRecovery"
        case .buffering: "buffering"
        case .userChangingTime: "userChangingTime"
        case .interruption: "interruption"
        case .custom(let name): "custom:\(name)"
        }
    }
}
