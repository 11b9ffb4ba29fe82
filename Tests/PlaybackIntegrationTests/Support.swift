import ClockSync
import GroupSessions
import Logging
import SessionRelay
// Shared helpers (LockedBox, Collector, eventually) live in Tests/TestSupport.
import TestSupport

struct TestActivity: GroupActivity, Equatable {
    static let activityIdentifier = "org.coplay.tests.playback-integration"
    var item: String
    var metadata: GroupActivityMetadata { GroupActivityMetadata(title: item, type: .watchTogether) }
}

/// A relay on a free loopback port for the duration of `body`, and, when `withTime` is set, the
/// relay's NTP server on the same port number (UDP), as `coplay serve` runs them.
func withLocalRelay<R>(withTime: Bool = true, _ body: (Invite) async throws -> R) async throws -> R {
    let relay = RelayServer(configuration: RelayConfiguration(host: "127.0.0.1", port: 0), logger: Logger(label: "test.relay"))
    let relayTask = Task { try await relay.run() }
    defer { relayTask.cancel() }
    let port = try await relay.boundPort()
    guard withTime else { return try await body(Invite.generate(host: "127.0.0.1", port: port)) }
    let time = TimeServer(configuration: .init(host: "127.0.0.1", port: port), clock: ContinuousClock(), logger: Logger(label: "test.time"))
    let timeTask = Task { try await time.run() }
    defer {
        time.shutdown()
        timeTask.cancel()
    }
    _ = try await time.boundAddress()
    return try await body(Invite.generate(host: "127.0.0.1", port: port))
}
