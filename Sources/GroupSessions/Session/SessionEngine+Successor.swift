/// Waits used when one session hands its members a successor (see
/// `GroupActivityCenter+Successor.swift`).
extension SessionEngine {
    /// Sends one reliable message to every member and returns the relay's stamp once it is acked.
    ///
    /// - Throws: ``GroupSessionError`` if sending fails, the session is invalidated or `timeout`
    ///   passes before the ack.
    @discardableResult
    func sendAcknowledged(name: String, body: [UInt8], timeout: Duration) async throws -> UInt64 {
        try await firstSignal(timeout: timeout, "the relay to acknowledge \(name)") { signal in
            try send(name: name, body: body, recipients: [], retainName: nil, unreliable: false) { stamp, _ in
                signal.yield(stamp)
                signal.finish()
            }
            return nil
        }
    }

    /// Arms `arm` with a one-shot signal and waits for its first value; the signal also ends when
    /// the session is invalidated or `timeout` passes. Never leaves a waiter behind.
    private func firstSignal(
        timeout: Duration, _ what: String,
        _ arm: (AsyncStream<UInt64>.Continuation) throws -> Task<Void, Never>?
    ) async throws -> UInt64 {
        let (signal, continuation) = AsyncStream.makeStream(of: UInt64.self)
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
        }
        let armed = try arm(continuation)
        defer { armed?.cancel() }
        var iterator = signal.makeAsyncIterator()
        if let value = await iterator.next() { return value }
        if case .invalidated(let reason) = state { throw GroupSessionError.invalidated("\(reason)") }
        throw GroupSessionError.timedOut(what)
    }
}
