/// A command the coordinator gives the local player through its ``PlaybackControlDelegate``.
///
/// Commands are absolute: they say where the item is at a reference instant, so a command that
/// arrives late still puts the player at the right position (it snaps), and one that arrives
/// early is simply scheduled. A command replaces any command already scheduled at or after its
/// reference time.
///
/// ```swift
/// switch command.kind {
/// case .play(let itemTime, let at, let rate): player.schedule(itemTime, at, rate)
/// case .pause(let itemTime, let at): player.schedule(itemTime, at, 0)
/// default: break
/// }
/// ```
public struct PlaybackCommand: Hashable, Sendable {
    /// What to do.
    public enum Kind: Hashable, Sendable {
        /// Be at `itemTime` at `referenceTime`, advancing at `rate` from then on.
        case play(itemTime: Double, referenceTime: ReferenceTime, rate: Double)
        /// Be stopped at `itemTime` from `referenceTime` on.
        case pause(itemTime: Double, referenceTime: ReferenceTime)
        /// Jump: prepare to present `itemTime` at `referenceTime`, ready by `completionDueDate`.
        /// A play or pause command for the same instant follows.
        case seek(itemTime: Double, referenceTime: ReferenceTime, completionDueDate: ReferenceTime)
        /// The group waits (for a suspended participant) holding `itemTime` from `referenceTime`;
        /// keep the decoder primed; the wait ends at the latest at `completionDueDate`.
        case buffer(itemTime: Double, referenceTime: ReferenceTime, completionDueDate: ReferenceTime)
    }

    /// What to do.
    public var kind: Kind
    /// The participant whose command this is: its id, never its display name.
    public var originator: PlaybackParticipantID
    /// The originator's announced display name, when the coordinator knows it.
    public var originatorName: String?
    /// The item the command is about; a player on another item ignores it.
    public var expectedItemIdentifier: String
    /// The revision (channel sequence) of the state the command comes from.
    public var revision: UInt64

    /// Creates a command.
    ///
    /// - Parameters:
    ///   - kind: what to do.
    ///   - originator: the id of the participant whose command it is.
    ///   - originatorName: its display name, if known.
    ///   - expectedItemIdentifier: the item the command is about.
    ///   - revision: the state's revision.
    public init(
        kind: Kind, originator: PlaybackParticipantID, originatorName: String? = nil, expectedItemIdentifier: String,
        revision: UInt64
    ) {
        self.kind = kind
        self.originator = originator
        self.originatorName = originatorName
        self.expectedItemIdentifier = expectedItemIdentifier
        self.revision = revision
    }

    /// The reference instant the command takes effect.
    public var referenceTime: ReferenceTime {
        switch kind {
        case .play(_, let t, _), .pause(_, let t), .seek(_, let t, _), .buffer(_, let t, _): t
        }
    }

    /// The item time the command names.
    public var itemTime: Double {
        switch kind {
        case .play(let x, _, _), .pause(let x, _), .seek(let x, _, _), .buffer(let x, _, _): x
        }
    }

    /// The rate from ``referenceTime`` on (0 for pause and buffer; `nil` for seek, which does not
    /// change motion by itself).
    public var rate: Double? {
        switch kind {
        case .play(_, _, let rate): rate
        case .pause, .buffer: 0
        case .seek: nil
        }
    }
}
