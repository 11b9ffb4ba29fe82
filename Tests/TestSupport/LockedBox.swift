import Foundation

/// A value behind a lock, for test code that records from several tasks.
///
/// ```swift
/// let seen = LockedBox<[Int]>([])
/// seen.mutate { $0.append(1) }
/// #expect(seen.value == [1])
/// ```
public final class LockedBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: T

    /// Creates a box holding `value`.
    public init(_ value: T) { stored = value }

    /// A copy of the current value.
    public var value: T { lock.withLock { stored } }

    /// Changes the value under the lock and returns what `body` returns.
    public func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&stored) } }
}
