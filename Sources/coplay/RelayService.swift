import ClockSync
import Logging
import NIOCore
import ServiceLifecycle
import SessionRelay

/// The relay as `coplay demo` embeds it: the session relay on TCP and an NTPv4 time server on UDP on the
/// same port number, so an invite's HOST:PORT is both where members connect and what their
/// `TimeClient` polls.
///
/// The TCP listener binds first (so port 0 picks a free port); the time server then binds UDP on
/// the port the relay got. Both stop on graceful shutdown.
struct RelayService: Service {
    let relay: RelayServer
    let timeConfiguration: TimeServerCore.Configuration
    let logger: Logger
    var onListening: @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }

    init(host: String, port: Int, timeRateLimit: Double?, logger: Logger,
         onListening: @escaping @Sendable (_ host: String, _ port: Int) -> Void = { _, _ in }) {
        relay = RelayServer(configuration: RelayConfiguration(host: host, port: port), logger: logger)
        var time = TimeServerCore.Configuration()
        // One relay serves many members, often from one address (loopback, NAT): a generous bucket.
        time.rateLimit = timeRateLimit.map { .init(burst: max(32, 4 * $0), rate: $0) }
        timeConfiguration = time
        self.logger = logger
        self.onListening = onListening
    }

    func run() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await relay.run() }
            let address = try await relay.localAddress()
            guard let port = address.port else { throw RelayStartError(detail: "the relay has no port (\(address))") }
            let host = relay.configuration.host
            let time = TimeServer(
                configuration: .init(host: host, port: port, core: timeConfiguration), logger: logger)
            group.addTask { try await TimeServerService(server: time).run() }
            _ = try await time.boundAddress()
            onListening(host, port)
        }
    }
}

/// The relay could not start.
struct RelayStartError: Error, CustomStringConvertible {
    var detail: String
    var description: String { detail }
}
