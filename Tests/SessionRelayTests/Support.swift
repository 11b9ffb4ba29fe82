import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Testing
// Shared helpers (LockedBox, Collector, eventually, CapturingLogHandler, WatchMovie, Chat) live in Tests/TestSupport.
import TestSupport

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
