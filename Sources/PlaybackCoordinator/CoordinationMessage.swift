/// A message the coordinators of a group exchange over the ``CoordinationChannel``.
///
/// Every message carries `sentAt`, the sender's reference time when sending, so each receiver
/// measures one-way delays on the shared clock (the basis of the adaptive lead).
///
/// On the wire each message is one JSON object naming its kind and that kind's version, then its
/// fields: `{"kind":"presence","v":1,"sentAt":…,"observedDelayNs":…,"prerollNs":…}`. The format is
/// written by hand (`CoordinationMessage+Codable.swift`, and `Web/static/sync/messages.js` for the
/// page), documented field by field in `docs/protocol.md` ("Coordination messages") and pinned by
/// the shared vectors `Tests/Vectors/messages/coordination.json`. A message of a kind this coplay
/// does not know, or of a newer version of a kind it knows, decodes as
/// ``unsupported(kind:version:)``: the coordinator reports it once per sender, kind and version
/// (a ``PlaybackEvent/EventType/unsupportedMessage`` event) and otherwise ignores it.
///
/// ```swift
/// let message = CoordinationMessage.presence(.init(sentAt: now, observedDelay: .milliseconds(3),
///                                                  preroll: .zero, item: "clip"))
/// try await channel.send(message, retainingUnder: nil)
/// ```
public enum CoordinationMessage: Hashable, Sendable {
    /// A new playback state proposed by its originator (retained under ``stateKey``).
    case state(StateProposal)
    /// A suspension began or ended (retained under ``suspensionKey(for:)``).
    case suspension(SuspensionNotice)
    /// A periodic liveness and delay report (not retained).
    case presence(PresenceReport)
    /// An edit of the group's queue (not retained; applied in the channel's order).
    case queueEdit(QueueEditNotice)
    /// A joiner asks for the queue (not retained).
    case queueRequest(QueueRequest)
    /// A part of a copy of the queue: an answer to a request, or the retained copy (retained
    /// under ``queueSnapshotKey(part:)``).
    case queueSnapshot(QueueSnapshotPart)
    /// A command signed by a member's key, in a session where only hosts control (see
    /// ``SignedCoordinationMessage``): the channel's ``CoordinationGate`` unwraps it; a
    /// coordinator ignores one that reaches it.
    case signed(SignedCoordinationMessage)
    /// A message this coplay cannot read: a `kind` it does not know, a `version` of a known kind
    /// newer than ``Kind/version``, or (version 0) the unversioned form of builds before this
    /// format. Only decoding makes one; coplay never sends one (encoded, it is just its kind and
    /// version).
    case unsupported(kind: String, version: Int)

    /// The retain key of the playback state: a joiner receives the latest state at once.
    public static let stateKey = "coplay.playback.state"

    /// Where only hosts control, the retain key of the latest transition sent by a member without
    /// control (unsigned, see ``StateProposal/isUnauthenticated``): kept apart from ``stateKey``
    /// so that a joiner still receives the last signed state and can check the transition against
    /// it.
    public static let transitionKey = "coplay.playback.transition"

    /// The retain key of one participant's latest suspension notice.
    public static func suspensionKey(for participant: PlaybackParticipantID) -> String {
        "coplay.playback.suspension.\(participant.rawValue)"
    }

    /// Whether the relay may drop this message's retained slot to make room for a new key once the
    /// session holds its most (GroupSessions' `FrameFlags.evictable`): a suspension notice. Every member that
    /// ever suspends has a slot of its own, kept after it leaves, and a session that runs for days
    /// sees many members come and go; the least recently written slot is one whose waits have long
    /// been folded into the group's state. The state, the queue's copy, roles and chat never are.
    public var retainedSlotIsEvictable: Bool {
        if case .suspension = self { return true }
        return false
    }

    /// The retain key of part `part` of the retained copy of the queue.
    public static func queueSnapshotKey(part: Int) -> String {
        "coplay.queue.snapshot.\(part)"
    }

    /// When the sender sent the message, on the reference clock (`nil` for an
    /// ``unsupported(kind:version:)`` message, which is not read, and a ``signed(_:)`` one, whose
    /// inner message says).
    public var sentAt: ReferenceTime? {
        switch self {
        case .state(let proposal): proposal.sentAt
        case .suspension(let notice): notice.sentAt
        case .presence(let report): report.sentAt
        case .queueEdit(let notice): notice.sentAt
        case .queueRequest(let request): request.sentAt
        case .queueSnapshot(let part): part.sentAt
        case .signed, .unsupported: nil
        }
    }
}

/// What kind of user command produced a state.
public enum CommandLabel: String, Hashable, Sendable, CaseIterable {
    case play, pause, seek, rate, item
    /// Queue commands: to the next or previous entry, or to a chosen one.
    case next, previous, jump
    /// The group's timeline reached the end of an entry and moves on to the one the queue plays
    /// next (every member proposes it; the first in the channel's order applies, see
    /// ``StateProposal/follows``). Nobody's command.
    case advance
    /// The group's current state sent again, unchanged, so that the relay's retained copy (what a
    /// joiner starts from) is the group's state again after a transition proposal that lost a
    /// race replaced it there. It applies only when it equals the group's state.
    case restate
}

/// A proposed playback state and the command that produced it.
public struct StateProposal: Hashable, Sendable {
    /// The proposed state (its `revision` is filled in by receivers from the channel sequence; it
    /// is not on the wire).
    public var state: PlaybackState
    /// The command that produced it.
    public var command: CommandLabel
    /// The sender's reference time when sending.
    public var sentAt: ReferenceTime
    /// For an ``CommandLabel/advance``: the queue entry whose end it follows. It applies only
    /// while the group plays that entry and the group's end of it (with every wait known at that
    /// point of the channel's order) is the new state's anchor: of the members' identical
    /// proposals the first ordered applies and the rest change nothing, and one computed before
    /// a command or a wait changed the timeline changes nothing either. A member without any
    /// state yet (a joiner reading the retained state) takes it as it is.
    public var follows: String?
    /// Whether the proposal comes from a member without control in a session where only hosts
    /// control (set by the channel's gate, never on the wire). Only a transition may: the program
    /// moves on at an entry's end whether or not a controller is there. The core then takes
    /// nothing from it but the trigger: it applies the transition it computes itself from its own
    /// state and queue, and only when the proposal names that transition (the entry it follows,
    /// the entry after it, the anchor), so a forged one changes nothing.
    public var isUnauthenticated: Bool

    /// Creates a proposal.
    public init(
        state: PlaybackState, command: CommandLabel, sentAt: ReferenceTime, follows: String? = nil, isUnauthenticated: Bool = false
    ) {
        self.state = state
        self.command = command
        self.sentAt = sentAt
        self.follows = follows
        self.isUnauthenticated = isUnauthenticated
    }
}

/// A suspension beginning or ending.
public struct SuspensionNotice: Hashable, Sendable {
    /// Whether the suspension begins or ends.
    public enum Phase: String, Hashable, Sendable, CaseIterable { case begin, end }

    /// Unique identifier of the suspension (the participant plus a local counter).
    public var id: String
    /// Begin or end.
    public var phase: Phase
    /// Why the participant is suspended.
    public var reason: SuspensionReason
    /// The reference instant at which the begin or end takes effect for the group.
    public var effectiveAt: ReferenceTime
    /// Whether the group waits for this suspension (decided by the sender's configuration).
    public var waits: Bool
    /// How long at most the group waits for it.
    public var timeout: Duration
    /// On `end`, the item time the participant proposed (a seek follows as a separate state).
    public var proposedItemTime: Double?
    /// The sender's reference time when sending.
    public var sentAt: ReferenceTime
    /// What the sender knew of the group's waits when sending, so that a member who joins later
    /// (and receives only each member's latest notice) holds the same timeline. Absent from
    /// senders that predate it.
    public var history: SuspensionHistory?

    /// Creates a notice.
    public init(
        id: String, phase: Phase, reason: SuspensionReason, effectiveAt: ReferenceTime, waits: Bool,
        timeout: Duration, proposedItemTime: Double? = nil, sentAt: ReferenceTime, history: SuspensionHistory? = nil
    ) {
        self.id = id
        self.phase = phase
        self.reason = reason
        self.effectiveAt = effectiveAt
        self.waits = waits
        self.timeout = timeout
        self.proposedItemTime = proposedItemTime
        self.sentAt = sentAt
        self.history = history
    }
}

/// The group's waits as one member knew them when it sent a suspension notice.
///
/// The relay keeps only each member's latest notice, and a wait that is over moves the group's
/// timeline for good: without this, a member joining after a wait (or a one-shot controller)
/// would compute the timeline of the state alone and play, or pause, that many seconds off.
/// Every notice therefore carries every suspension its sender knows whose wait is not over before
/// the state's anchor, and the anchor itself when the sender has folded older waits into it
/// (``CoordinatorCore`` folds a wait a minute after it ended, instead of forgetting it).
public struct SuspensionHistory: Hashable, Sendable {
    /// The revision of the state the anchor belongs to (absent before any state).
    public var revision: UInt64?
    /// The state's anchor instant, later than the proposed one once older waits were folded in.
    public var anchorReferenceTime: ReferenceTime?
    /// The item time at ``anchorReferenceTime``.
    public var anchorItemTime: Double?
    /// The suspensions the sender knew, in the order they began.
    public var suspensions: [Entry]

    /// One suspension as the group decided it.
    public struct Entry: Hashable, Sendable {
        /// Its identifier.
        public var id: String
        /// The suspended member.
        public var participant: PlaybackParticipantID
        /// Why.
        public var reason: SuspensionReason
        /// When the wait began (the begin notice's effective instant).
        public var begin: ReferenceTime
        /// When it ended, if its end was delivered.
        public var end: ReferenceTime?
        /// The longest the group waits for it.
        public var timeout: Duration
        /// Whether the group waits for it (the receivers' decision, the same on every member).
        public var waits: Bool

        /// Creates an entry.
        public init(
            id: String, participant: PlaybackParticipantID, reason: SuspensionReason, begin: ReferenceTime,
            end: ReferenceTime?, timeout: Duration, waits: Bool
        ) {
            self.id = id
            self.participant = participant
            self.reason = reason
            self.begin = begin
            self.end = end
            self.timeout = timeout
            self.waits = waits
        }
    }

    /// Creates a history.
    public init(revision: UInt64?, anchorReferenceTime: ReferenceTime?, anchorItemTime: Double?, suspensions: [Entry]) {
        self.revision = revision
        self.anchorReferenceTime = anchorReferenceTime
        self.anchorItemTime = anchorItemTime
        self.suspensions = suspensions
    }
}

/// A participant's periodic report: liveness, the largest one-way delay it observed recently and
/// its decoder preroll, so originators size the lead for the whole group.
public struct PresenceReport: Hashable, Sendable {
    /// The sender's reference time when sending.
    public var sentAt: ReferenceTime
    /// The largest one-way delay (sender's `sentAt` to local receipt) over the recent window.
    public var observedDelay: Duration
    /// The time the participant's decoder needs between a command and its first frame.
    public var preroll: Duration
    /// The item the participant has loaded.
    public var item: String?
    /// The participant's display name (`--name`), if it has one; events name it by this.
    public var name: String?
    /// The items the participant can play (its files), with their durations: what a member that
    /// proposes an item or a seek checks first, so the group refuses what nobody could follow.
    /// `nil` from a member without a player (a `coplay control` run) or an older version.
    public var items: [ItemSummary]?
    /// `true` from a member that joins only to send one command or look (`coplay control`, `coplay
    /// queue`, `coplay people`): the others announce neither its joining nor its leaving, and name
    /// its command by ``name``. Absent (`nil`) from players and older versions.
    public var oneShot: Bool?
    /// How far the member's player was off the group's timeline, in seconds (negative: behind),
    /// when it last jumped back into step after a large error (a laptop that slept, a process
    /// that was stopped): sent once, in the next report after the jump, so the others can say
    /// "alice caught up after 20 s away". Absent otherwise.
    public var caughtUp: Double?

    /// One item a participant can play.
    public struct ItemSummary: Hashable, Sendable {
        /// The item's identifier (coplay's players: the content fingerprint).
        public var item: String
        /// Its duration in seconds, if known.
        public var duration: Double?
        /// `false` when the participant plays this item from a near copy: another encode whose
        /// duration matches, aligned by timestamp, so its frames are not the item's (coplay leaves
        /// it out of accuracy figures). Absent (`nil`) for a copy with the item's own frames, and
        /// from members that do not say.
        public var frameIdentical: Bool?

        /// Creates a summary.
        public init(item: String, duration: Double?, frameIdentical: Bool? = nil) {
            self.item = item
            self.duration = duration
            self.frameIdentical = frameIdentical
        }
    }

    /// Creates a report.
    public init(
        sentAt: ReferenceTime, observedDelay: Duration, preroll: Duration, item: String?, name: String? = nil,
        items: [ItemSummary]? = nil, oneShot: Bool? = nil, caughtUp: Double? = nil
    ) {
        self.sentAt = sentAt
        self.observedDelay = observedDelay
        self.preroll = preroll
        self.item = item
        self.name = name
        self.items = items
        self.oneShot = oneShot
        self.caughtUp = caughtUp
    }
}
