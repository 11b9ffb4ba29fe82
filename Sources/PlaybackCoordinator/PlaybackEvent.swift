/// A notice of something that happened in coordinated playback, for logs, UIs and measurement.
///
/// Events are flat values: a ``type`` plus the fields that apply. The command-line tool prints
/// them as JSON Lines (see ``jsonLine`` and `docs/events.md`, schema version ``schemaVersion``).
/// `realtime` is `CLOCK_REALTIME` in seconds when the event was emitted (for a frame, when it was
/// presented), so players on one machine can be compared by an outside tool.
///
/// ```swift
/// for await event in coordinator.events {
///     print(event.jsonLine)   // {"type":"play","v":2,"realtime":...,"player":"alice",...}
/// }
/// ```
public struct PlaybackEvent: Hashable, Sendable, Codable {
    /// The JSON Lines schema version, printed as `"v"` on every line.
    public static let schemaVersion = 2

    /// What happened.
    public enum EventType: String, Hashable, Sendable, Codable, CaseIterable {
        /// Accepted commands (one per accepted state).
        case play, pause, seek, rate, item
        /// Accepted queue commands: the group moved to another entry of its queue.
        case next, previous, jump
        /// The group's item or queue entry changed; ``PlaybackEvent/reason`` says why (`end`: the
        /// previous entry ended; `next`, `previous`, `jump`, `item`: somebody's command) and
        /// ``PlaybackEvent/entry`` names the queue entry.
        case itemChanged
        /// The group's queue changed (an edit in ``PlaybackEvent/detail``, by the originator), or
        /// this member received the queue on joining (no originator).
        case queueChanged
        /// The group's timeline reached the item's end (the state's duration): every player holds
        /// the last frame, from the same reference instant. Nobody's command: no originator.
        case itemEnded
        /// A command for another item than the local one was ignored (and completed).
        case commandIgnored
        /// Membership.
        case joined, left
        /// Suspensions.
        case suspensionBegan, suspensionEnded
        /// A frame was presented.
        case frame
        /// The player stopped (paused or waiting) with this frame on screen.
        case stopped
        /// The sync controller corrected the player (a rate trim started or ended, or a seek).
        case correction
        /// The member's clock moved to another time server (the node it polled stopped answering);
        /// ``PlaybackEvent/detail`` says from which to which and why.
        case timeSource
        /// A member sent a coordination message this coplay cannot read (a kind it does not know,
        /// or a newer version of one): ``PlaybackEvent/detail`` says which and to update coplay.
        /// Reported once per member, kind and version; the message is ignored.
        case unsupportedMessage
        /// A member plays the item from a near copy: another encode whose duration matches, aligned
        /// by timestamp, not frame-identical (its frames are left out of accuracy figures).
        /// ``PlaybackEvent/originator`` is that member (the local one when it is this member's copy),
        /// ``PlaybackEvent/detail`` says how its copy differs.
        case nearCopy
        /// The group plays a queue entry this member has no copy of (``PlaybackEvent/entry``, its
        /// ``PlaybackEvent/item``, the entry's title in ``PlaybackEvent/detail`` when known): the
        /// member is suspended (`coordinatedPlaybackNotPossible`, which the group does not wait for)
        /// and its player holds still until the group reaches an entry it has. Emitted once per
        /// entry, on that member only.
        case missingEntry
        /// Another member's player jumped back into step after being far off the group's timeline
        /// (its laptop slept, its process was stopped): ``PlaybackEvent/originator`` is that member,
        /// ``PlaybackEvent/errorMs`` how far off it was (negative: behind), from its presence report.
        case caughtUp
        /// A chat message (``PlaybackEvent/text``) from ``PlaybackEvent/originator``, named by the
        /// label people see (its name, or `name#tag` when several keys use the name), signed by
        /// ``PlaybackEvent/key``; ``PlaybackEvent/detail`` is `history` for one sent before this
        /// member joined. Printed by `coplay host` / `join`, not by the coordinator.
        case chat
        /// A host removed ``PlaybackEvent/originatorName`` (its label; ``PlaybackEvent/key`` its
        /// key) from the session, and this member moved with everyone else to the successor
        /// session (``PlaybackEvent/detail``: `moved`, or `left behind` for a member the removal
        /// held no invite for). Printed by `coplay host` / `join`.
        case moved
        /// A host (``PlaybackEvent/originatorName``, when it said who it is) removed this member:
        /// its player stops and it exits with status 3. Printed by `coplay host` / `join`.
        case removed
        /// Where only hosts control: the host granted (``PlaybackEvent/detail`` `grant`) or revoked
        /// (`revoke`) control of the member key ``PlaybackEvent/key``, named ``PlaybackEvent/text``
        /// when the statement was made; ``PlaybackEvent/originator`` sent the statement. Printed by
        /// `coplay host` / `join`.
        case roleChanged
        /// Where only hosts control: a command or role statement did not count
        /// (``PlaybackEvent/reason``: `unsigned`, `malformed`, `badSignature`, `noControl`,
        /// `replay`, `stale`), from ``PlaybackEvent/originator``, signed by ``PlaybackEvent/key``
        /// when signed; ``PlaybackEvent/count`` is how many this member ignored so far.
        case messageRejected
    }

    /// What happened.
    public var type: EventType
    /// `CLOCK_REALTIME` seconds when it happened (for frames: when presented).
    public var realtime: Double
    /// The local participant reporting the event.
    public var player: PlaybackParticipantID?
    /// The participant whose command, suspension or membership change this is: its id, never its
    /// display name (which is ``originatorName``).
    public var originator: PlaybackParticipantID?
    /// The originator's announced display name, when known. The JSON line's `originator` key prints
    /// this label (the name, or the id while no name is known) and `originatorId` the id.
    public var originatorName: String?
    /// The item concerned.
    public var item: String?
    /// Item time in seconds (the command's, or the frame's position).
    public var itemTime: Double?
    /// Rate, where one applies.
    public var rate: Double?
    /// Reference instant in seconds at which the thing takes or took effect.
    public var referenceTime: Double?
    /// State revision (channel sequence).
    public var revision: UInt64?
    /// Suspension reason.
    public var reason: String?
    /// The suspension's identifier (on `suspensionBegan` and `suspensionEnded`): unique in the
    /// group, the same on every member, and the id ``PlaybackSuspension/id`` and
    /// ``PlaybackCoordinator/suspensionStatus(_:)`` use.
    public var suspension: String?
    /// Whether a suspension makes the group wait (on `suspensionEnded`: whether the group waited for it).
    public var waits: Bool?
    /// `true` on `suspensionEnded` when the group stopped waiting because of the timeout.
    public var timedOut: Bool?
    /// Frame index (frames, stopped).
    public var index: Int?
    /// Frame presentation time in seconds (frames, stopped).
    public var pts: Double?
    /// Frames: presented minus scheduled reference instant, in milliseconds (wake-up error).
    /// Corrections: the player's position error before correcting, in milliseconds.
    public var errorMs: Double?
    /// Free-form detail (for example the correction kind).
    public var detail: String?
    /// The queue entry the event is about (its id), when the group plays from a queue.
    public var entry: String?
    /// A chat message's text.
    public var text: String?
    /// A chat message's sender key (unpadded base64url of its 32-byte Ed25519 public key).
    public var key: String?
    /// A chat message's sending time on its sender's wall clock, seconds since the Unix epoch.
    public var sentAt: Double?
    /// A running count (``EventType/messageRejected``: messages ignored so far).
    public var count: Int?

    /// How the originator is named for people: its display name when known, its id otherwise.
    public var originatorLabel: String? { originatorName ?? originator?.rawValue }

    /// Creates an event; fields that do not apply stay `nil`.
    public init(
        type: EventType, realtime: Double, player: PlaybackParticipantID? = nil, originator: PlaybackParticipantID? = nil,
        originatorName: String? = nil, item: String? = nil, itemTime: Double? = nil, rate: Double? = nil,
        referenceTime: Double? = nil, revision: UInt64? = nil, reason: String? = nil, suspension: String? = nil,
        waits: Bool? = nil, timedOut: Bool? = nil,
        index: Int? = nil, pts: Double? = nil, errorMs: Double? = nil, detail: String? = nil, entry: String? = nil,
        text: String? = nil, key: String? = nil, sentAt: Double? = nil, count: Int? = nil
    ) {
        self.type = type
        self.realtime = realtime
        self.player = player
        self.originator = originator
        self.originatorName = originatorName
        self.item = item
        self.itemTime = itemTime
        self.rate = rate
        self.referenceTime = referenceTime
        self.revision = revision
        self.reason = reason
        self.suspension = suspension
        self.waits = waits
        self.timedOut = timedOut
        self.index = index
        self.pts = pts
        self.errorMs = errorMs
        self.detail = detail
        self.entry = entry
        self.text = text
        self.key = key
        self.sentAt = sentAt
        self.count = count
    }
}
