import Synchronization

/// A `Clock` that only moves when told to: tests of every module use it to drive time-dependent code
/// deterministically.
///
/// Sleepers resume, in deadline order, when ``advance(by:)`` or ``advance(to:)`` moves the clock to or
/// past their deadline. A cancelled sleeper throws `CancellationError` at once.
///
/// ```swift
/// let clock = ManualClock()
/// async let woke: Void = clock.sleep(for: .seconds(5))
/// await clock.waitForSleepers(1)
/// clock.advance(by: .seconds(5))
/// try await woke
/// ```
public final class ManualClock: Clock, Sendable {
    /// A point on the manual clock: the time elapsed since the clock's zero.
    public struct Instant: InstantProtocol, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The time since the clock's zero.
        public var offset: Duration

        /// Creates an instant at `offset` from the clock's zero.
        ///
        /// - Parameter offset: The time since zero.
        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "ManualClock.Instant(\(offset))" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Instant
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
    }

    private let state: Mutex<State>

    /// Creates a clock reading `now`.
    ///
    /// - Parameter now: The starting instant; zero by default.
    public init(now: Instant = Instant(offset: .zero)) {
        self.state = Mutex(State(now: now))
    }

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks are currently sleeping on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline among current sleepers, if any.
    public var nextDeadline: Instant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    /// Moves the clock forward by `duration`, waking every sleeper whose deadline is reached.
    ///
    /// - Parameter duration: A non-negative duration.
    public func advance(by duration: Duration) {
        let target = state.withLock { $0.now.advanced(by: max(.zero, duration)) }
        advance(to: target)
    }

    /// Moves the clock to `instant` (if it lies ahead), waking sleepers in deadline order.
    ///
    /// - Parameter instant: The new reading.
    public func advance(to instant: Instant) {
        let woken: [Sleeper] = state.withLock { state in
            if instant > state.now { state.now = instant }
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Suspends until at least `count` tasks sleep on this clock (yielding between checks).
    ///
    /// - Parameter count: The number of sleepers to wait for.
    public func waitForSleepers(_ count: Int = 1) async {
        while sleeperCount < count {
            await Task.yield()
        }
    }

    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let action { continuation.resume(with: action) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
