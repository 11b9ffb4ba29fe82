/// A message the coordinators of a group exchange over the ``CoordinationChannel``.
///
/// Every message carries `sentAt`, the sender's reference time when sending, so each receiver
/// measures one-way delays on the shared clock (the basis of the adaptive lead).
/// The wire form is the synthesized `Codable` encoding; the channel adapter chooses the encoder.
///
/// ```swift
/// let message = CoordinationMessage.presence(.init(sentAt: now, observedDelay: .milliseconds(3),
///                                                  preroll: .zero, item: "clip"))
/// try await channel.send(message, retainingUnder: nil)
/// ```
public enum CoordinationMessage: Hashable, Sendable, Codable {
    /// A new playback state proposed by its originator (retained under ``stateKey``).
    case state(StateProposal)
    /// A suspension began or ended (retained under ``suspensionKey(for:)``).
    case suspension(SuspensionNotice)
    /// A periodic liveness and delay report (not retained).
    case presence(PresenceReport)

    /// The retain key of the playback state: a joiner receives the latest state at once.
    public static let stateKey = "coplay.playback.state"

    /// The retain key of one participant's latest suspension notice.
    public static func suspensionKey(for participant: PlaybackParticipantID) -> String {
        "coplay.playback.suspension.\(participant.rawValue)"
    }

    /// When the sender sent the message, on the reference clock.
    public var sentAt: ReferenceTime {
        switch self {
        case .state(let proposal): proposal.sentAt
        case .suspension(let notice): notice.sentAt
        case .presence(let report): report.sentAt
        }
    }
}

/// What kind of user command produced a state.
public enum CommandLabel: String, Hashable, Sendable, Codable, CaseIterable {
    case play, pause, seek, rate, item
}

/// A proposed playback state and the command that produced it.
public struct StateProposal: Hashable, Sendable, Codable {
    /// The proposed state (its `revision` is filled in by receivers from the channel sequence).
    public var state: PlaybackState
    /// The command that produced it.
    public var command: CommandLabel
    /// The sender's reference time when sending.
    public var sentAt: ReferenceTime

    /// Creates a proposal.
    public init(state: PlaybackState, command: CommandLabel, sentAt: ReferenceTime) {
        self.state = state
        self.command = command
        self.sentAt = sentAt
    }
}

/// A suspension beginning or ending.
public struct SuspensionNotice: Hashable, Sendable, Codable {
    /// Whether the suspension begins or ends.
    public enum Phase: String, Hashable, Sendable, Codable { case begin, end }

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

    /// Creates a notice.
    public init(
        id: String, phase: Phase, reason: SuspensionReason, effectiveAt: ReferenceTime, waits: Bool,
        timeout: Duration, proposedItemTime: Double? = nil, sentAt: ReferenceTime
    ) {
        self.id = id
        self.phase = phase
        self.reason = reason
        self.effectiveAt = effectiveAt
        self.waits = waits
        self.timeout = timeout
        self.proposedItemTime = proposedItemTime
        self.sentAt = sentAt
    }
}

/// A participant's periodic report: liveness, the largest one-way delay it observed recently and
/// its decoder preroll, so originators size the lead for the whole group.
public struct PresenceReport: Hashable, Sendable, Codable {
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

    /// Creates a report.
    public init(sentAt: ReferenceTime, observedDelay: Duration, preroll: Duration, item: String?, name: String? = nil) {
        self.sentAt = sentAt
        self.observedDelay = observedDelay
        self.preroll = preroll
        self.item = item
        self.name = name
    }
}
