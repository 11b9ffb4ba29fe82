import Synchronization

/// A counter the relay benchmarks' reader tasks and their driver share.
final class SharedCounter: Sendable {
    private let storage = Atomic<Int>(0)

    /// The count now.
    var value: Int { storage.load(ordering: .relaxed) }

    /// Adds one.
    func increment() { storage.add(1, ordering: .relaxed) }

    /// Sets the count.
    func store(_ value: Int) { storage.store(value, ordering: .relaxed) }
}
