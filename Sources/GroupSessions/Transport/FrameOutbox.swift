import Synchronization

/// An ordered, byte-counted queue of frames waiting to be written to one connection.
///
/// Producers call ``enqueue(_:droppable:)`` synchronously (under their own lock if they need a
/// global order); one writer task drains it with ``next()``. The outbox enforces two limits on
/// the bytes queued but not yet written: above `softLimit`, droppable (unreliable) frames are
/// discarded; above `hardLimit`, the outbox reports ``EnqueueResult/overflow`` and the owner
/// disconnects the slow reader instead of buffering without bound.
package final class FrameOutbox: Sendable {
    /// What happened to an enqueued frame.
    package enum EnqueueResult: Sendable, Equatable {
        /// Queued for writing.
        case queued
        /// Dropped: droppable and the queue is above the soft limit.
        case dropped
        /// Not queued: the queue is above the hard limit (or closed).
        case overflow
        /// Not queued: the outbox is closed.
        case closed
    }

    private struct State: ~Copyable {
        var frames: [Frame] = []
        var queuedBytes = 0
        var closed = false
        var waiter: CheckedContinuation<[Frame]?, Never>?
    }

    private let state = Mutex(State())
    /// Queued bytes above which droppable frames are discarded.
    package let softLimit: Int
    /// Queued bytes above which nothing more is accepted.
    package let hardLimit: Int

    /// Creates an open, empty outbox.
    package init(softLimit: Int = 4 << 20, hardLimit: Int = 64 << 20) {
        self.softLimit = softLimit
        self.hardLimit = hardLimit
    }

    /// Bytes queued and not yet reported written.
    package var queuedBytes: Int { state.withLock { $0.queuedBytes } }

    /// Queues `frame` after everything queued before.
    @discardableResult
    package func enqueue(_ frame: Frame, droppable: Bool = false) -> EnqueueResult {
        let waiter: CheckedContinuation<[Frame]?, Never>?
        let result: EnqueueResult
        (waiter, result) = state.withLock { state -> (CheckedContinuation<[Frame]?, Never>?, EnqueueResult) in
            guard !state.closed else { return (nil, .closed) }
            if droppable && state.queuedBytes > softLimit { return (nil, .dropped) }
            guard state.queuedBytes <= hardLimit else { return (nil, .overflow) }
            state.queuedBytes += frame.wireLength
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, .queued)
            }
            state.frames.append(frame)
            return (nil, .queued)
        }
        waiter?.resume(returning: [frame])
        return result
    }

    /// Stops accepting frames; ``next()`` returns what is queued, then `nil`.
    package func close() {
        let waiter = state.withLock { state -> CheckedContinuation<[Frame]?, Never>? in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Whether ``close()`` was called.
    package var isClosed: Bool { state.withLock { $0.closed } }

    /// Waits for queued frames and takes them all; `nil` once closed and drained, or when the
    /// calling task is cancelled while nothing is queued.
    ///
    /// Cancellation does not close the outbox: frames queued afterwards wait for the next call.
    /// A writer loop therefore ends either way:
    ///
    /// ```swift
    /// while let batch = await outbox.next() {
    ///     try await outbound.write(contentsOf: batch)
    ///     outbox.written(batch.reduce(0) { $0 + $1.wireLength })
    /// }
    /// ```
    ///
    /// Only one task may call this at a time.
    package func next() async -> [Frame]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Frame]?, Never>) in
                let ready: [Frame]?? = state.withLock { state in
                    if !state.frames.isEmpty {
                        defer { state.frames.removeAll(keepingCapacity: true) }
                        return .some(state.frames)
                    }
                    // Checked under the lock: a cancellation that came before this point has
                    // already set the flag (its handler may have run and found no waiter); one
                    // that comes after finds the waiter below and resumes it.
                    if state.closed || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<[Frame]?, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Reports that `bytes` of previously taken frames were written.
    package func written(_ bytes: Int) {
        state.withLock { $0.queuedBytes -= bytes }
    }
}
