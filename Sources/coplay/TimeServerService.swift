import ClockSync
import Foundation
import ServiceLifecycle

/// Runs a `TimeServer` as a ServiceLifecycle service: graceful shutdown closes its socket.
struct TimeServerService: Service {
    let server: TimeServer<ContinuousClock>
    /// Called once with the bound address (the CLI prints it).
    var onListening: @Sendable (String) -> Void = { _ in }

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await server.run() }
                let address = try await server.boundAddress()
                onListening("\(address)")
            }
        } onGracefulShutdown: {
            server.shutdown()
        }
    }
}
