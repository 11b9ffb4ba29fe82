/// Collects an async sequence's values in the background, for assertions.
///
/// ```swift
/// let states = Collector(session.states)
/// await eventually("joined") { states.values.contains(.joined) }
/// ```
public final class Collector<T: Sendable>: Sendable {
    private let storage = LockedBox<[T]>([])
    private let task: Task<Void, Never>

    /// Starts collecting `sequence` until it ends, throws or ``cancel()`` is called.
    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == T {
        let storage = self.storage
        task = Task {
            do {
                for try await value in sequence { storage.mutate { $0.append(value) } }
            } catch {}
        }
    }

    /// The values so far, in order.
    public var values: [T] { storage.value }
    /// How many values so far.
    public var count: Int { storage.value.count }
    /// Stops collecting.
    public func cancel() { task.cancel() }
}
