/// Waiting for the relay without ever leaving a waiter behind.
extension SessionEngine {
    /// Arms a one-shot ``SessionSignal`` with `arm` and waits for it; returns the value it is
    /// fired with.
    ///
    /// The wait also ends when the session is invalidated, when `timeout` passes, or when the
    /// calling task is cancelled, whichever comes first. In every case `disarm` runs before this
    /// returns (under the engine's lock), so the caller removes the signal from wherever `arm`
    /// stored it (check ``SessionSignal/id``: the slot may hold a newer waiter's signal), and a
    /// late fire is harmless.
    ///
    /// ```swift
    /// try await firstSignal(timeout: .seconds(30), "the relay's welcome") { signal in
    ///     inner.withLock { $0.welcomeWaiter = signal }
    ///     try connection.send(hello)
    /// } disarm: { inner, signal in
    ///     if inner.welcomeWaiter?.id == signal.id { inner.welcomeWaiter = nil }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - timeout: How long to wait.
    ///   - what: What is awaited, for the ``GroupSessionError/timedOut(_:)`` message.
    ///   - arm: Stores the signal where the engine will fire it and sends the request; an error
    ///     it throws ends the wait with that error.
    ///   - disarm: Forgets the signal; called with the lock held once the wait is over.
    /// - Returns: The value the signal was fired with.
    /// - Throws: The error the signal failed with, ``GroupSessionError/invalidated(_:)``,
    ///   ``GroupSessionError/timedOut(_:)``, or `CancellationError`.
    @discardableResult
    func firstSignal(
        timeout: Duration, _ what: String,
        arm: (SessionSignal) throws -> Void,
        disarm: (inout Inner, SessionSignal) -> Void
    ) async throws -> UInt64 {
        let (stream, continuation) = AsyncStream.makeStream(of: Result<UInt64, any Error>.self)
        let signal = SessionSignal(id: inner.withLock { $0.subscriberID() }, continuation: continuation)
        let states = stateUpdates()
        let watcher = Task {
            for await state in states {
                if case .invalidated = state { break }
            }
            continuation.finish()
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            continuation.finish()
        }
        defer {
            watcher.cancel()
            timer.cancel()
            continuation.finish()
            inner.withLock { disarm(&$0, signal) }
        }
        try arm(signal)
        var iterator = stream.makeAsyncIterator()
        switch await iterator.next() {
        case .success(let value)?: return value
        case .failure(let error)?: throw error
        case nil:
            try Task.checkCancellation()
            if case .invalidated(let reason) = state { throw GroupSessionError.invalidated("\(reason)") }
            throw GroupSessionError.timedOut(what)
        }
    }
}
