import ArgumentParser
import ClockSync
import Foundation
import Logging

/// `coplay time query`: measure an NTP server's offset from this machine's clock.
struct TimeQueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Measure an NTP server's offset from this machine's clock.",
        discussion: """
            Sends a short burst of NTPv4 requests, filters the samples (low delay preferred, outliers \
            rejected) and prints the offset (server minus this machine's UTC clock), the best round-trip \
            delay, an error bound and the drift estimate (0 unless the samples span 8 s or more).

            Example: coplay time query 127.0.0.1:12123 --samples 8 --json
            """
    )

    @Argument(help: ArgumentHelp("The server's address and UDP port (port 123 if omitted).", valueName: "host:port"))
    var server: String

    @Option(name: .long, help: "How many requests to send.")
    var samples: Int = 8

    @Option(name: .long, help: ArgumentHelp("Seconds between requests.", valueName: "seconds"))
    var interval: Double = 0.2

    @Option(name: .long, help: ArgumentHelp("Seconds to wait for each response.", valueName: "seconds"))
    var timeout: Double = 1

    @Flag(name: .long, help: "Print one JSON object instead of a summary.")
    var json = false

    func validate() throws {
        _ = try TimeEndpoint(parsing: server, defaultPort: 123)
        guard (1...10_000).contains(samples) else { throw ValidationError("--samples must be between 1 and 10000") }
        guard interval.isFinite, interval >= 0, interval <= 3600 else {
            throw ValidationError("--interval must be between 0 and 3600 seconds")
        }
        guard timeout.isFinite, timeout > 0, timeout <= 60 else {
            throw ValidationError("--timeout must be more than 0 and at most 60 seconds")
        }
    }

    func run() async throws {
        let endpoint = try TimeEndpoint(parsing: server, defaultPort: 123)
        let logger = Logger(label: "coplay.time.query") { StreamLogHandler.standardError(label: $0) }
        let timescale = LocalTimescale(clock: ContinuousClock())
        let synced = SyncedClock(timescale: timescale, logger: logger)
        let transport = try await UDPTimeTransport.connect(host: endpoint.host, port: endpoint.port, timescale: timescale)
        var configuration = TimeClient<ContinuousClock>.Configuration()
        configuration.timeout = .seconds(timeout)
        let client = TimeClient(transport: transport, syncedClock: synced, configuration: configuration, logger: logger)
        let estimate: ClockEstimate
        do {
            estimate = try await client.measure(samples: samples, interval: .seconds(interval))
        } catch {
            await transport.close()
            throw error
        }
        await transport.close()
        let stats = client.statistics
        let result = TimeQueryResult(
            server: endpoint.description,
            offset: estimate.offset(atLocal: timescale.now()),
            delay: estimate.bestDelay,
            errorBound: estimate.errorBound,
            driftPPM: estimate.driftPPM,
            driftErrorPPM: estimate.driftErrorPPM.isFinite ? estimate.driftErrorPPM : nil,
            samplesUsed: estimate.usedSamples,
            sent: stats.sent,
            received: stats.samples,
            rateLimited: stats.rateLimited
        )
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(result), as: UTF8.self))
        } else {
            print(result.summary)
        }
    }
}

/// What `coplay time query` reports (`--json` prints it as one object; times in seconds).
struct TimeQueryResult: Codable, Sendable {
    var server: String
    var offset: Double
    var delay: Double
    var errorBound: Double
    var driftPPM: Double
    var driftErrorPPM: Double?
    var samplesUsed: Int
    var sent: Int
    var received: Int
    var rateLimited: Int

    var summary: String {
        func micro(_ seconds: Double) -> String { String(format: "%.1f µs", seconds * 1e6) }
        let sign = offset >= 0 ? "+" : "-"
        return """
            server \(server): offset \(sign)\(String(format: "%.6f", abs(offset))) s \
            (± \(micro(errorBound))), delay \(micro(delay)), drift \(String(format: "%.2f", driftPPM)) ppm
            \(received) of \(sent) responses, \(samplesUsed) used\(rateLimited > 0 ? ", \(rateLimited) rate-limited" : "")
            """
    }
}
