import ArgumentParser
import ClockSync
import Foundation
import Logging
import ServiceLifecycle

/// `coplay time serve`: an NTPv4 server on UDP until SIGINT or SIGTERM.
struct TimeServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run an NTPv4 time server on UDP until interrupted.",
        discussion: """
            Serves this process's monotonic clock, anchored to UTC once at start (it never steps), \
            plus an optional fixed offset. Requests over the per-client rate limit (a burst of 32, \
            then 8 per second) get a RATE kiss-o'-death. Stops cleanly (exit 0) on SIGINT or SIGTERM.

            Example: coplay time serve --listen 127.0.0.1:12123 --offset 0.25
            (negative offsets work either way: --offset -0.25 or --offset=-0.25)
            """
    )

    @Option(name: .long, help: ArgumentHelp("The address and UDP port to listen on.", valueName: "host:port"))
    var listen: String = "127.0.0.1:12123"

    // Unconditional: the value after --offset is taken even when it starts with "-" (a negative offset).
    @Option(
        name: .long, parsing: .unconditional,
        help: ArgumentHelp("Seconds added to the served time (may be negative).", valueName: "seconds"))
    var offset: Double = 0

    @Flag(name: .long, help: "Answer every request (no per-client rate limit).")
    var noRateLimit = false

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func validate() throws {
        _ = try TimeEndpoint(parsing: listen)
        guard offset.isFinite, abs(offset) < 2_000_000_000 else {
            throw ValidationError("--offset must be a finite number of seconds within ±2e9")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown --log-level '\(logLevel)'")
        }
    }

    func run() async throws {
        let endpoint = try TimeEndpoint(parsing: listen)
        var logger = Logger(label: "coplay.time.serve") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var core = TimeServerCore.Configuration()
        if noRateLimit { core.rateLimit = nil }
        let server = TimeServer(
            configuration: .init(host: endpoint.host, port: endpoint.port, offset: offset, core: core),
            logger: logger
        )
        let service = TimeServerService(server: server) { address in
            // Unbuffered, so a supervising process (or test) sees it at once.
            Console.out.write("coplay time server listening on \(address) (offset \(offset) s)\n")
        }
        let group = ServiceGroup(configuration: .init(
            services: [service],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        ))
        try await group.run()
    }
}
