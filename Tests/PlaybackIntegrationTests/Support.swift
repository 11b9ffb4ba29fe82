import Foundation
import GroupSessions
import Testing

struct TestActivity: GroupActivity, Equatable {
    static let activityIdentifier = "org.coplay.tests.playback-integration"
    var item: String
    var metadata: GroupActivityMetadata { GroupActivityMetadata(title: item, type: .watchTogether) }
}

/// Waits until `condition` holds, polling; fails the test after `timeout` (generous by design).
func eventually(
    _ what: String, timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async -> Bool
) async {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if await condition() { return }
        try? await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
}

/// Collects async-stream values in the background for assertions.
final class Collector<T: Sendable>: Sendable {
    private let storage = Locked<[T]>([])
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

final class Locked<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&stored) } }
}
