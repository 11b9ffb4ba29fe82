/// A one-shot wake-up for a task waiting on a ``SessionEngine``: the relay's welcome, the join
/// confirmation, the ack of a frame.
///
/// The engine keeps the signal in its state and fires (or fails) it when the awaited frame
/// arrives. Unlike a checked continuation, a signal may be fired after its waiter stopped
/// waiting (timed out, cancelled) or never fired at all: the waiter's stream has ended and the
/// call does nothing. A waiter that gives up therefore never hangs its task, and nothing is
/// left to resume. Waiters are made by `SessionEngine.firstSignal(timeout:_:arm:disarm:)`.
struct SessionSignal: Sendable {
    /// Unique per engine, so a waiter only clears the slot if it still holds its own signal.
    let id: Int
    let continuation: AsyncStream<Result<UInt64, any Error>>.Continuation

    /// Wakes the waiter with `value` (an ack's stamp; 0 when there is nothing to report).
    func fire(_ value: UInt64 = 0) {
        continuation.yield(.success(value))
        continuation.finish()
    }

    /// Wakes the waiter with `error`.
    func fail(_ error: any Error) {
        continuation.yield(.failure(error))
        continuation.finish()
    }
}
