/// Waiting for the relay without ever leaving a waiter behind.
extension SessionEngine {
    /// Arms a one-shot ``SessionSignal`` with `arm` and waits for it; returns the value it is
    /// fired with.
    ///
    /// `arm` runs under the state lock with the signal's id: it tells the machine what to
    /// wait for (and returns the actions that ask the relay for it); the machine fires or fails
    /// that id with an action. The wait also ends when the session is invalidated (every armed
    /// signal is failed then), when `timeout` passes, or when the calling task is cancelled,
    /// whichever comes first. In every case the signal is disarmed before this returns (with
    /// `disarm`, under the lock, for anything else `arm` stored), so a late fire is harmless.
    ///
    /// ```swift
    /// try await firstSignal(timeout: .seconds(30), "the relay's welcome") { shell, id in
    ///     shell.machine.expectWelcome(waiter: id)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: How long to wait.
    ///   - what: What is awaited, for the ``GroupSessionError/timedOut(_:)`` message.
    ///   - arm: Arms the wait and returns the actions that send the request; an error it
    ///     throws ends the wait with that error.
    ///   - disarm: Forgets whatever else `arm` stored; called with the lock held once the wait is over.
    /// - Returns: The value the signal was fired with.
    /// - Throws: The error the signal failed with, ``GroupSessionError/invalidated(_:)``,
    ///   ``GroupSessionError/timedOut(_:)``, or `CancellationError`.
    @discardableResult
    func firstSignal(
        timeout: Duration, _ what: String,
        arm: (inout Shell, Int) throws -> [Action],
        disarm: (inout Shell) -> Void = { _ in }
    ) async throws -> UInt64 {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<UInt64, any Error>.self)
        let id = inner.withLock { $0.makeID() }
        let signal = SessionSignal(id: id, continuation: continuation)
        defer {
            continuation.finish()
            inner.withLock { shell in
                shell.signals[id] = nil
                shell.machine.disarm(id)
                disarm(&shell)
            }
        }
        try performThrowing { shell in
            if case .invalidated(let reason) = shell.machine.state { throw GroupSessionError.invalidated("\(reason)") }
            shell.signals[id] = signal
            return ((), try arm(&shell, id))
        }
        var iterator = stream.makeAsyncIterator()
        let result = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(for: timeout)
                continuation.finish()
            }
            defer { group.cancelAll() }
            return await iterator.next()
        }
        switch result {
        case .success(let value)?: return value
        case .failure(let error)?: throw error
        case nil:
            try Task.checkCancellation()
            if case .invalidated(let reason) = state { throw GroupSessionError.invalidated("\(reason)") }
            throw GroupSessionError.timedOut(what)
        }
    }
}
