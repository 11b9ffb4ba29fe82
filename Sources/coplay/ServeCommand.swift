import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle

/// `coplay serve`: the relay (TCP) and its time server (UDP NTPv4) on one port number.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run a relay: group sessions on TCP and an NTPv4 time server on UDP, same port.",
        discussion: """
            Members connect to HOST:PORT over TCP (end-to-end encrypted frames the relay cannot read) and \
            synchronise their clocks against the NTP server on UDP HOST:PORT. Prints one line \
            "coplay relay listening on HOST:PORT" once both are bound; stops cleanly on SIGINT or SIGTERM.

            Example: coplay serve --listen 127.0.0.1:7000
            """
    )

    @Option(name: .long, help: ArgumentHelp("The address and port (TCP and UDP) to listen on; port 0 picks one.", valueName: "host:port"))
    var listen: String = "127.0.0.1:7000"

    @Option(name: .long, help: ArgumentHelp("NTP requests per second allowed per client address (0: no limit).", valueName: "rate"))
    var timeRate: Double = 64

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    func validate() throws {
        _ = try TimeEndpoint(parsing: listen)
        guard timeRate.isFinite, timeRate >= 0 else { throw ValidationError("--time-rate must be a rate >= 0") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    func run() async throws {
        let endpoint = try TimeEndpoint(parsing: listen)
        var logger = Logger(label: "coplay.serve") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        let service = RelayService(
            host: endpoint.host, port: endpoint.port, timeRateLimit: timeRate > 0 ? timeRate : nil, logger: logger
        ) { host, port in
            let shown = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            FileHandle.standardOutput.write(Data("coplay relay listening on \(shown)\n".utf8))
        }
        let group = ServiceGroup(configuration: .init(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
