import Synchronization

@testable import PlaybackCoordinator

/// A clock that only moves when the test advances it; sleepers resume when their deadline is reached.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// The earliest deadline of a pending sleeper.
    var nextDeadline: Instant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time to `instant` and wakes every sleeper due by then.
    func advance(to instant: Instant) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, instant)
            let ready = state.sleepers.filter { $0.value.deadline <= state.now }
            for key in ready.keys { state.sleepers[key] = nil }
            return Array(ready.values)
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

/// A reference-time source that reads a manual clock (reference time = the clock's offset).
struct ManualReference: ReferenceTimeSource {
    let clock: ManualClock

    func now() -> ReferenceTime? { ReferenceTime(nanoseconds: clock.now.offset.nanosecondsValue) }
    func referenceTime(atLocal local: Duration) -> ReferenceTime? { ReferenceTime(nanoseconds: local.nanosecondsValue) }
    func localTime(atReference reference: ReferenceTime) -> Duration? { .nanoseconds(reference.nanoseconds) }
    var errorBound: Duration? { .zero }
}
