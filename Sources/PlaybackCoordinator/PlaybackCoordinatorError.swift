/// Errors thrown by the playback coordinator module.
///
/// ```swift
/// do { try await coordinator.coordinateRateChange(to: -1) }
/// catch let error as PlaybackCoordinatorError { print(error) }   // "invalid rate -1.0: ..."
/// ```
public struct PlaybackCoordinatorError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case invalidRate(Double)
        case invalidItemTime(Double)
        case noItem
        case notSynchronized
        case notConnected(String)
        case unknownSuspension(String)
        case invalidSuspensionLength(Double, maximum: Double)
        case suspensionNotConfirmed(String, phase: String)
        case seekPastEnd(Double, duration: Double)
        case itemUnavailable(String, detail: String)
        case queueNotReceived
        case noEntry(String)
        case cannotEditQueue(String)
        case onlyHostsControl
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    /// A rate that is negative or not finite.
    public static func invalidRate(_ rate: Double) -> Self { Self(.invalidRate(rate)) }
    /// An item time that is negative or not finite.
    public static func invalidItemTime(_ time: Double) -> Self { Self(.invalidItemTime(time)) }
    /// A command before any item is known (no group state and no local item).
    public static var noItem: Self { Self(.noItem) }
    /// The reference clock is not synchronized yet.
    public static var notSynchronized: Self { Self(.notSynchronized) }
    /// Sending on a channel whose participant is not (or no longer) a member.
    public static func notConnected(_ participant: PlaybackParticipantID) -> Self { Self(.notConnected(participant.rawValue)) }
    /// Ending a suspension that does not exist or already ended.
    public static func unknownSuspension(_ id: String) -> Self { Self(.unknownSuspension(id)) }
    /// A suspension length that is not positive, not finite, or longer than the suspension timeout.
    public static func invalidSuspensionLength(_ length: Duration, maximum: Duration) -> Self {
        Self(.invalidSuspensionLength(length.secondsValue, maximum: maximum.secondsValue))
    }
    /// The channel did not deliver a suspension's begin (or end) notice back in time.
    ///
    /// - Parameters:
    ///   - id: the suspension.
    ///   - phase: `begin` or `end`.
    public static func suspensionNotConfirmed(_ id: String, phase: String) -> Self {
        Self(.suspensionNotConfirmed(id, phase: phase))
    }
    /// A seek (or an item change) to a time past the item's known duration.
    public static func seekPastEnd(_ itemTime: Double, duration: Double) -> Self { Self(.seekPastEnd(itemTime, duration: duration)) }
    /// An item change nobody in the group could follow.
    ///
    /// - Parameters:
    ///   - item: the item.
    ///   - detail: why (no member has it; only the sender has it).
    public static func itemUnavailable(_ item: String, detail: String) -> Self { Self(.itemUnavailable(item, detail: detail)) }

    /// A queue command before this member received the group's queue (it asked on joining).
    public static var queueNotReceived: Self { Self(.queueNotReceived) }
    /// A queue command with nothing to move to.
    ///
    /// - Parameter detail: what is missing, for people (`there is no entry after the last one
    ///   (repeat is off)`, `there is no entry 7: the queue has 3`).
    public static func noEntry(_ detail: String) -> Self { Self(.noEntry(detail)) }
    /// A queue edit that cannot be made as asked (moving entries of a shuffled queue).
    ///
    /// - Parameter detail: why, and what to do instead, for people.
    public static func cannotEditQueue(_ detail: String) -> Self { Self(.cannotEditQueue(detail)) }

    /// A command of a member without control in a session where only hosts control
    /// (docs/protocol.md, "Roles"): nothing was sent.
    public static var onlyHostsControl: Self { Self(.onlyHostsControl) }

    public var description: String {
        switch code {
        case .invalidRate(let rate): "invalid rate \(rate): a rate is 0 (paused) or between 0.0625 and 16"
        case .invalidItemTime(let time): "invalid item time \(time): must be finite and not negative"
        case .noItem: "no item: load an item (transitionToItem) or wait for the group's state first"
        case .notSynchronized: "the reference clock is not synchronized yet"
        case .notConnected(let who): "participant \(who) is not connected to the channel"
        case .unknownSuspension(let id): "unknown or already ended suspension \(id)"
        case .seekPastEnd(let time, let duration):
            "cannot seek to \(time) s: the item is \(duration) s long (seek between 0 and \(duration))"
        case .itemUnavailable(let item, let detail):
            "nobody could follow a change to item \(item): \(detail) (members play the items they have files for; `coplay people` lists them)"
        case .invalidSuspensionLength(let length, let maximum):
            "invalid suspension length \(length) s: must be more than 0 and at most the suspension timeout (\(maximum) s)"
        case .queueNotReceived: "the group's queue has not arrived yet (it is asked for on joining)"
        case .noEntry(let detail): detail
        case .cannotEditQueue(let detail): detail
        case .onlyHostsControl: "only hosts control this session"
        case .suspensionNotConfirmed(let id, let phase):
            "the group channel did not confirm the \(phase) of suspension \(id) in time"
        }
    }
}
