import Foundation
import GroupSessions
import Logging
import NIOSSL
import PlaybackCoordinator
import ServiceLifecycle
import Synchronization

/// `coplay control INVITE suspend SECONDS`: joins as a member without a player, holds a waiting
/// suspension through `PlaybackCoordinator.holdSuspension(_:for:)` and leaves. It runs as a
/// `Service` so that SIGINT/SIGTERM end the suspension (sent and confirmed) before it leaves,
/// rather than leaving the group to release it (it would: one lead after the member left, or at
/// the suspension timeout). Glue only.
struct SuspendControl: Service, CustomStringConvertible {
    let invite: Invite
    let duration: Duration
    let reason: SuspensionReason
    let logger: Logger
    /// Client TLS settings for a `coplays://` invite.
    var tls: TLSConfiguration?
    /// The name the others' events give the suspension (`--name`).
    var name = "control"
    private let outcome = Outcome()

    /// The line printed on success, or the error; set once by `run()`.
    final class Outcome: Sendable {
        private let value = Mutex<Result<String, any Error>?>(nil)
        func set(_ result: Result<String, any Error>) { value.withLock { $0 = result } }
        var result: Result<String, any Error>? { value.withLock { $0 } }
    }

    init(invite: Invite, duration: Duration, reason: SuspensionReason, logger: Logger) {
        self.invite = invite
        self.duration = duration
        self.reason = reason
        self.logger = logger
    }

    /// Names the command without its invite (the invite holds the session's secret).
    var description: String { "control suspend" }

    /// Runs the suspension until it ends (or SIGINT/SIGTERM ends it early) and returns the line
    /// to print.
    ///
    /// - Throws: the setup errors of any control command; ``PlaybackSetupError/notWaited(_:)``
    ///   when the group did not wait; ``PlaybackSetupError/interrupted(_:)`` after a signal.
    func runUntilDone() async throws -> String {
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: self, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        guard let result = outcome.result else { throw PlaybackSetupError.interrupted("before the suspension began") }
        return try result.get()
    }

    func run() async throws {
        do {
            let line = try await cancelWhenGracefulShutdown { try await hold() }
            outcome.set(.success(line))
        } catch is CancellationError {
            outcome.set(.failure(PlaybackSetupError.interrupted(
                "before the group confirmed the suspension (if it had begun, it was ended)")))
        } catch {
            outcome.set(.failure(error))
        }
    }

    private func hold() async throws -> String {
        try await ControlCommand.withCommandMember(invite: invite, tls: tls, logger: logger, name: name) { _, coordinator in
            try await hold(through: coordinator)
        }
    }

    private func hold(through coordinator: PlaybackCoordinator) async throws -> String {
        let status = try await coordinator.holdSuspension(reason, for: duration) { [logger] status in
            logger.notice(
                "suspension began",
                metadata: ["id": "\(status.id)", "waits": "\(status.waits)", "reference": "\(status.begin.seconds)"])
        }
        let interrupted = Task.isCancelled
        let waited = String(format: "%.3f", status.waited.secondsValue)
        guard status.waits else {
            throw PlaybackSetupError.notWaited(
                "the group did not wait for this suspension (\(reason)): as many members as the group waits for at once are already suspended; it was ended")
        }
        let from = "the group waited from reference \(status.begin.seconds) s"
        if interrupted {
            throw PlaybackSetupError.interrupted("the suspension (\(reason)) was ended early: \(from), ended after \(waited) s")
        }
        if status.timedOut(at: status.waitEnd) {
            return "suspend accepted: \(reason), \(from), released by the group's suspension timeout after \(waited) s"
        }
        return "suspend accepted: \(reason), \(from), ended after \(waited) s"
    }
}
