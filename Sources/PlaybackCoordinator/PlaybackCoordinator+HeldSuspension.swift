extension PlaybackCoordinator {
    /// Suspends the local member so that the group waits about `duration`, then ends the suspension.
    ///
    /// Begins a suspension with `reason`, waits until the channel has delivered its begin notice
    /// back (so every member has it, in the same order), holds it, and sends the end one lead
    /// before `begin + duration`, so the group's wait lasts `duration` (a little more when this
    /// member is late to wake; never less). Then it waits until the end notice is delivered too,
    /// and returns what the group knows of the suspension. When the group does not wait for it (a
    /// reason that is not a waiting reason, or the participant limit), the suspension is ended at
    /// once: check ``SuspensionStatus/waits``.
    ///
    /// The suspension is never left open. If the calling task is cancelled while the suspension is
    /// held, it is ended early (the end is still sent and confirmed) and the status is returned, its
    /// ``SuspensionStatus/waited`` shorter than asked. If the begin is not confirmed (cancellation,
    /// or no delivery within `confirmationTimeout`), the end is sent anyway and the call throws.
    ///
    /// ```swift
    /// let status = try await coordinator.holdSuspension(.buffering, for: .seconds(2))
    /// print(status.waits, status.waited)   // true, ~2 seconds
    /// ```
    ///
    /// - Parameters:
    ///   - reason: why the member suspends; one of the configuration's waiting reasons for the group
    ///     to wait.
    ///   - duration: how long the group should wait: more than zero, at most ``suspensionTimeout``.
    ///   - confirmationTimeout: how long to wait for the channel to deliver each notice back.
    ///   - began: called once the group has the begin notice, before the hold.
    /// - Returns: the suspension's status after its end was delivered.
    /// - Throws: ``PlaybackCoordinatorError`` for a bad duration, an unsynchronized clock, a send
    ///   failure or a notice not confirmed in time; `CancellationError` when cancelled before the
    ///   begin was confirmed.
    public func holdSuspension(
        _ reason: SuspensionReason, for duration: Duration, confirmationTimeout: Duration = .seconds(10),
        began: @Sendable (SuspensionStatus) -> Void = { _ in }
    ) async throws -> SuspensionStatus {
        guard duration > .zero, duration <= suspensionTimeout else {
            throw PlaybackCoordinatorError.invalidSuspensionLength(duration, maximum: suspensionTimeout)
        }
        let suspension = try await beginSuspension(reason)
        let confirmed: SuspensionStatus?
        do {
            confirmed = try await pollSuspension(suspension.id, timeout: confirmationTimeout) { _ in true }
        } catch {
            _ = try? await finish(suspension, timeout: confirmationTimeout)
            throw error
        }
        guard let confirmed else {
            _ = try? await finish(suspension, timeout: confirmationTimeout)
            throw PlaybackCoordinatorError.suspensionNotConfirmed(suspension.id, phase: "begin")
        }
        began(confirmed)
        if confirmed.waits {
            let target = confirmed.begin + duration
            while !Task.isCancelled {
                let remaining = target - (now() + lead)
                if remaining <= .zero { break }
                do { try await clock.sleep(for: min(remaining, .milliseconds(100))) } catch { break }
            }
        }
        return try await finish(suspension, timeout: confirmationTimeout)
    }

    /// Ends `suspension` and waits for the channel to deliver the end, whether or not the calling
    /// task is cancelled (the work runs in a task of its own, which does not inherit cancellation).
    private func finish(_ suspension: PlaybackSuspension, timeout: Duration) async throws -> SuspensionStatus {
        // The one task left in PlaybackCoordinator, and it cannot go: a suspension the caller's
        // cancellation interrupts must still be ended and confirmed (else every member stays held),
        // and Swift 6.3 has no structured way to shield work from its task's cancellation (a child
        // task inherits it). The caller awaits its value (awaiting it is not interrupted by
        // cancellation), so it never outlives the call.
        try await Task {
            try await suspension.end()
            guard let status = try await self.pollSuspension(suspension.id, timeout: timeout, until: \.isEnded) else {
                throw PlaybackCoordinatorError.suspensionNotConfirmed(suspension.id, phase: "end")
            }
            return status
        }.value
    }

    /// Polls the status of suspension `id` every 5 ms on the coordinator's clock until `condition`
    /// holds (returning it) or `timeout` of polls passed (returning `nil`).
    private func pollSuspension(
        _ id: String, timeout: Duration, until condition: (SuspensionStatus) -> Bool
    ) async throws -> SuspensionStatus? {
        let interval = Duration.milliseconds(5)
        let polls = max(1, Int(timeout / interval))
        for _ in 0..<polls {
            if let status = suspensionStatus(id), condition(status) { return status }
            try await clock.sleep(for: interval)
        }
        return suspensionStatus(id).flatMap { condition($0) ? $0 : nil }
    }
}
