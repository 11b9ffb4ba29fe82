/// The group's playback timeline: which item plays, how fast, and where it is at one reference instant.
///
/// Everything else follows from the anchor:
/// `itemTime(at: t) = anchorItemTime + rate * (t - anchorReferenceTime)`. Paused is rate 0.
/// A command becomes a new state whose anchor lies slightly in the future, so every participant
/// applies it at the same reference instant. The channel's total order decides between concurrent
/// states: the one with the highest sequence number wins, and that sequence number becomes its
/// ``revision``.
///
/// ```swift
/// let state = PlaybackState(item: "clip", rate: 1, anchorItemTime: 10,
///                           anchorReferenceTime: ReferenceTime(seconds: 100),
///                           originator: "alice", revision: 7)
/// state.itemTime(at: ReferenceTime(seconds: 102.5))   // 12.5
/// ```
///
/// Its JSON (`PlaybackState+Codable.swift`) is the state's part of a `state` coordination message
/// (docs/protocol.md, "Coordination messages"): the fields by name, `revision` only when not 0.
public struct PlaybackState: Hashable, Sendable {
    /// Identifier of the item the state is about.
    public var item: String
    /// Playback rate; 0 is paused. Never negative.
    public var rate: Double
    /// Item time (seconds) at ``anchorReferenceTime``.
    public var anchorItemTime: Double
    /// The reference instant at which the item is at ``anchorItemTime``.
    public var anchorReferenceTime: ReferenceTime
    /// The participant whose command produced this state.
    public var originator: PlaybackParticipantID
    /// The channel sequence number of the message that carried this state (0 before it was sent).
    public var revision: UInt64
    /// The rate the group plays at when not paused by the user: a pause keeps the previous rate
    /// here so `play` resumes at it.
    public var intendedRate: Double
    /// The item's duration in seconds, when the proposer knew it (from the file, the current state
    /// or a member's report): playback ends there, on the same reference instant for everyone
    /// (``CoordinatorCore/segments()`` ends the timeline with an ``TimelineSegment/ended`` segment).
    public var duration: Double?
    /// The queue entry the state plays (its id), when the group plays from a queue; `nil` for an
    /// item chosen directly.
    public var entry: String?

    /// Creates a state.
    ///
    /// - Parameters:
    ///   - item: identifier of the item.
    ///   - rate: playback rate, 0 for paused.
    ///   - anchorItemTime: item time at the anchor, seconds.
    ///   - anchorReferenceTime: the anchor instant on the reference clock.
    ///   - originator: the participant that issued the command.
    ///   - revision: the channel sequence number, or 0 before sending.
    ///   - intendedRate: the rate a later `play` resumes at (defaults to `rate`, or 1 when paused).
    ///   - duration: the item's duration in seconds, if known.
    ///   - entry: the queue entry, if the group plays from a queue.
    public init(
        item: String,
        rate: Double,
        anchorItemTime: Double,
        anchorReferenceTime: ReferenceTime,
        originator: PlaybackParticipantID,
        revision: UInt64 = 0,
        intendedRate: Double? = nil,
        duration: Double? = nil,
        entry: String? = nil
    ) {
        self.item = item
        self.rate = rate
        self.anchorItemTime = anchorItemTime
        self.anchorReferenceTime = anchorReferenceTime
        self.originator = originator
        self.revision = revision
        self.intendedRate = intendedRate ?? (rate > 0 ? rate : 1)
        self.duration = duration
        self.entry = entry
    }

    /// The item time (seconds) at reference instant `t` (before or after the anchor).
    public func itemTime(at t: ReferenceTime) -> Double {
        anchorItemTime + rate * (t - anchorReferenceTime).secondsValue
    }

    /// The reference instant at which the item reaches `itemTime`, or `nil` when paused.
    public func referenceTime(forItemTime itemTime: Double) -> ReferenceTime? {
        guard rate > 0 else { return nil }
        return anchorReferenceTime + .secondsRounded((itemTime - anchorItemTime) / rate)
    }

    /// Whether the state is playing (rate above zero).
    public var isPlaying: Bool { rate > 0 }

    /// Whether both states put the group on the same timeline: the same item and entry, anchor,
    /// rate, intended rate and duration (whoever proposed them, whatever their revisions).
    public func sameTimeline(as other: PlaybackState) -> Bool {
        item == other.item && entry == other.entry && rate == other.rate && anchorItemTime == other.anchorItemTime
            && anchorReferenceTime == other.anchorReferenceTime && intendedRate == other.intendedRate && duration == other.duration
    }
}
