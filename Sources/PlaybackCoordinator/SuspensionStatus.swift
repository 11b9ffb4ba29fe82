/// What the group knows of one suspension, as the channel's ordered messages established it.
///
/// A member learns of a suspension (its own included) only when the channel delivers the begin
/// notice in its total order, so a status also *confirms* that every member has, or will have, the
/// same record: the same wait interval, on the same reference instants.
///
/// ```swift
/// let suspension = try await coordinator.beginSuspension(.buffering)
/// if let status = await suspension.status(), status.waits {
///     print("the group waits from \(status.begin)")
/// }
/// ```
public struct SuspensionStatus: Hashable, Sendable {
    /// The suspension's identifier.
    public var id: String
    /// The suspended member (its channel id).
    public var participant: PlaybackParticipantID
    /// Why it began.
    public var reason: SuspensionReason
    /// When the group starts waiting for it (its begin notice's effective instant).
    public var begin: ReferenceTime
    /// When the group stops waiting at the latest: `begin` plus the sender's timeout.
    public var deadline: ReferenceTime
    /// The end notice's effective instant, once the channel delivered one (from the member, or from
    /// another member when the suspended one left).
    public var end: ReferenceTime?
    /// Whether the group waits for it (a waiting reason, within the participant limit).
    public var waits: Bool

    /// Creates a status.
    ///
    /// - Parameters:
    ///   - id: the suspension's identifier.
    ///   - participant: the suspended member.
    ///   - reason: why it began.
    ///   - begin: the begin notice's effective instant.
    ///   - deadline: `begin` plus the timeout.
    ///   - end: the end notice's effective instant, if delivered.
    ///   - waits: whether the group waits for it.
    public init(
        id: String, participant: PlaybackParticipantID, reason: SuspensionReason, begin: ReferenceTime, deadline: ReferenceTime,
        end: ReferenceTime? = nil, waits: Bool
    ) {
        self.id = id
        self.participant = participant
        self.reason = reason
        self.begin = begin
        self.deadline = deadline
        self.end = end
        self.waits = waits
    }

    /// Whether an end notice was delivered.
    public var isEnded: Bool { end != nil }

    /// When the wait ends (or ended): the end notice's instant, or the deadline if that comes first
    /// (or no end notice came).
    public var waitEnd: ReferenceTime { min(end ?? deadline, deadline) }

    /// Whether the wait ran into the deadline: ended after it, or not ended by it at `now`.
    ///
    /// - Parameter now: the reference time now (only matters while no end notice was delivered).
    public func timedOut(at now: ReferenceTime) -> Bool {
        if let end { return end > deadline }
        return now >= deadline
    }

    /// How long the group waits (or waited): from `begin` to ``waitEnd``; zero when the group does
    /// not wait for this suspension.
    public var waited: Duration { waits ? waitEnd - begin : .zero }
}
