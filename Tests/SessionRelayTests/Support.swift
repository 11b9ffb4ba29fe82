import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
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

final class LockedBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&stored) } }
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
    var count: Int { storage.value.count }
    func cancel() { task.cancel() }
}

/// Waits until `condition` holds, polling; records an issue after `timeout` (generous by design).
@discardableResult
func eventually(
    _ what: String, timeout: Duration = .seconds(120), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
    return false
}

/// A log handler that keeps every rendered record (message + metadata) in memory.
struct CapturingLogHandler: LogHandler {
    let records: LockedBox<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        records.mutate { $0.append("\(event.level) \(event.message) \(all)") }
    }
}

/// A relay on a free loopback port for the duration of `body`.
func withRelay<R>(
    _ configuration: RelayConfiguration = RelayConfiguration(host: "127.0.0.1", port: 0),
    logger: Logger = Logger(label: "test.relay"),
    _ body: (RelayServer, Int) async throws -> R
) async throws -> R {
    var configuration = configuration
    configuration.port = 0
    let relay = RelayServer(configuration: configuration, logger: logger)
    let task = Task { try await relay.run() }
    defer { task.cancel() }
    let port = try await relay.localAddress().port!
    return try await body(relay, port)
}

extension Array where Element == UInt8 {
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        for start in 0...(count - needle.count) where self[start..<start + needle.count].elementsEqual(needle) {
            return true
        }
        return false
    }
}
