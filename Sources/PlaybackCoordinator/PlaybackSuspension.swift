/// A suspension the local participant began; end it exactly once.
///
/// ```swift
/// let suspension = try await coordinator.beginSuspension(.userChangingTime)
/// // the user scrubs ...
/// try await suspension.end(proposingNewTime: 42)
/// ```
public struct PlaybackSuspension: Sendable {
    /// The suspension's identifier (unique in the group).
    public let id: String
    /// Why it began.
    public let reason: SuspensionReason
    let coordinator: PlaybackCoordinator

    /// Ends the suspension; the group resumes (if it waited) `lead` from now.
    public func end() async throws {
        try await coordinator.endSuspension(id, proposing: nil)
    }

    /// What the group knows of this suspension: `nil` until the channel has delivered its begin
    /// notice (so a status confirms that every member has it).
    public func status() async -> SuspensionStatus? {
        await coordinator.suspensionStatus(id)
    }

    /// Ends the suspension and moves the group to `itemTime`.
    public func end(proposingNewTime itemTime: Double) async throws {
        try await coordinator.endSuspension(id, proposing: itemTime)
    }
}
