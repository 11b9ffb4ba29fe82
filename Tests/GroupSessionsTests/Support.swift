import Foundation
import GroupSessions
import Testing

struct WatchMovie: GroupActivity, Equatable {
    static let activityIdentifier = "org.coplay.tests.watch-movie"
    var movie: String
    var metadata: GroupActivityMetadata { GroupActivityMetadata(title: movie, type: .watchTogether) }
}

struct Chat: Codable, Sendable, Equatable {
    var sender: Int
    var index: Int
    var text: String = ""
}

/// Waits until `condition` holds, polling; fails the test after `timeout` (generous by design).
func eventually(
    _ what: String, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return }
        try? await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
}

/// Collects async-stream values in the background for assertions.
final class Collector<T: Sendable>: Sendable {
    private let storage = LockedBox<[T]>([])
    private let task: Task<Void, Never>

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == T {
        let storage = self.storage
        task = Task {
            do {
                for try await value in sequence { storage.mutate { $0.append(value) } }
            } catch {}
        }
    }

    var values: [T] { storage.value }
    func cancel() { task.cancel() }
}

final class LockedBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&stored) } }
}
