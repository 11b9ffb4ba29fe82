/// Tuning of a playback coordinator. Members of one group should share the participant limit.
///
/// ```swift
/// var configuration = CoordinatorConfiguration()
/// configuration.margin = .milliseconds(30)
/// configuration.suspensionTimeout = .seconds(5)
/// ```
public struct CoordinatorConfiguration: Hashable, Sendable {
    /// Safety margin added to the measured group delay and decoder preroll to size the lead.
    public var margin: Duration = .milliseconds(20)
    /// The smallest lead (time between issuing a command and its reference instant).
    public var minimumLead: Duration = .milliseconds(40)
    /// The largest lead, whatever the measurements say.
    public var maximumLead: Duration = .seconds(2)
    /// The local decoder's preroll: time between a command and its first frame.
    public var preroll: Duration = .zero
    /// How often the coordinator reports presence (liveness, delay, preroll).
    public var presenceInterval: Duration = .seconds(1)
    /// How many recent one-way delays the lead estimate looks at.
    public var delayWindow: Int = 64
    /// Suspension reasons that make the group wait (Apple's `suspensionReasonsThatTriggerWaiting`).
    /// Read when a suspension begins; ``PlaybackCoordinator/setSuspensionReasonsThatTriggerWaiting(_:)``
    /// changes it at run time.
    public var waitingReasons: Set<SuspensionReason> = SuspensionReason.defaultWaitingReasons
    /// Per reason, the largest group (members, this one included) that still waits out a
    /// suspension with that reason; a larger group plays on. No entry: no limit. Like Apple's
    /// `setParticipantLimit(_:forWaitingOutSuspensionsWithReason:)`: a stall can hold a group of
    /// three, not a watch party of fifty.
    public var participantLimits: [SuspensionReason: Int] = [:]
    /// At most this many participants make the group wait at once; further suspensions do not
    /// (decided by every member from the ordered notices, so members should share it).
    public var maximumWaitingParticipants: Int = 3
    /// The group waits for one suspension at most this long.
    public var suspensionTimeout: Duration = .seconds(10)
    /// How long the local player may stay not ready (``PlayerReadiness``) before the coordinator
    /// suspends it and the group waits: short seeks that complete before their instant cost nothing.
    public var readinessGrace: Duration = .milliseconds(100)
    /// Whether the local player gets no command before the channel reports the local member's own
    /// `joined`. A relay replays the retained messages (the state, then each member's latest
    /// suspension notice) before it stamps the joiner's `joined`: holding commands until then
    /// gives a late joiner's player its first command from the whole replay, never a frame from
    /// the state alone. ``GroupPlayback`` turns it on; off, commands flow from the first message.
    public var holdsCommandsUntilJoined: Bool = false
    /// Whether the core suspends the local member while the group plays a queue entry it cannot
    /// present (its `canPresent` refuses the entry's item): a ``PlaybackEvent/EventType/missingEntry``
    /// event and a ``SuspensionReason/coordinatedPlaybackNotPossible`` suspension, which detaches
    /// the local player and does not make the group wait (unless the app made it a waiting reason).
    /// The core ends the suspension as soon as the group plays an item the member can present, and
    /// the player gets the group's state again: it comes back in step. Applies to a core with a
    /// `canPresent` predicate only. ``GroupPlayback`` turns it on; off, such a member only reports
    /// ``PlaybackEvent/EventType/commandIgnored``.
    public var suspendsWhileEntryMissing: Bool = false

    /// Creates the default configuration.
    public init() {}
}
