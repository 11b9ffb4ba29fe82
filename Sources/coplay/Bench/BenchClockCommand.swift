import ArgumentParser
import BenchmarkSupport
import ClockSync
import Foundation
import Logging
import NIOPosix

/// `coplay bench clock`: offset accuracy of coplay's client and of chronyd against the same server,
/// and the request rate one server event loop answers.
struct BenchClockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock",
        abstract: "Measure clock-sync accuracy (coplay vs chronyd) and time-server throughput on loopback.",
        discussion: """
            Starts a time server in this process (one event loop, rate limit off) serving the system \
            clock plus a known offset X, then measures X repeatedly: with coplay's client (the code \
            behind `coplay time query`, fresh socket and filter each run) and with \
            `chronyd -Q -f /dev/null 'server 127.0.0.1 port P minpoll -6 maxpoll -6 maxsamples S'`. \
            Reports median, p99 and max of |measured - X|. Then floods the server from a client \
            thread in this process and reports answered requests per second.
            Build with -c release for meaningful figures.
            """
    )

    @Option(name: .long, help: "coplay client runs.")
    var runs: Int = 200

    @Option(name: .long, help: "chronyd -Q runs (about 0.25 s each; 0 to skip).")
    var chronyRuns: Int = 50

    @Option(name: .long, help: "Samples per run, for both clients.")
    var samples: Int = 4

    @Option(name: .long, help: ArgumentHelp("The server's offset X, in seconds.", valueName: "seconds"))
    var offset: Double = 0.123_456

    @Option(name: .long, help: ArgumentHelp("Length of the throughput test (0 to skip).", valueName: "seconds"))
    var loadSeconds: Double = 3

    @Flag(name: .long, help: "Print one JSON object.")
    var json = false

    func validate() throws {
        guard (1...100_000).contains(runs) else { throw ValidationError("--runs must be 1...100000") }
        guard (0...10_000).contains(chronyRuns) else { throw ValidationError("--chrony-runs must be 0...10000") }
        guard (1...64).contains(samples) else { throw ValidationError("--samples must be 1...64") }
        guard offset.isFinite, abs(offset) < 1e6 else { throw ValidationError("--offset must be finite, |X| < 1e6") }
        guard loadSeconds >= 0, loadSeconds <= 60 else { throw ValidationError("--load-seconds must be 0...60") }
    }

    func run() async throws {
        var logger = Logger(label: "coplay.bench.clock") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let serverLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clientLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var core = TimeServerCore.Configuration()
        core.rateLimit = nil
        let server = TimeServer(
            configuration: .init(host: "127.0.0.1", port: 0, offset: offset, core: core, eventLoopGroup: serverLoop),
            logger: logger
        )
        let offset = self.offset
        let report = try await withThrowingTaskGroup(of: Void.self, returning: BenchClockReport.self) { group in
            group.addTask { try await server.run() }
            defer { server.shutdown() }
            guard let port = try await server.boundAddress().port else { throw ValidationError("server has no port") }

            var coplayErrors: [Double] = []
            for _ in 0..<runs {
                let timescale = LocalTimescale(clock: ContinuousClock())
                let transport = try await UDPTimeTransport.connect(
                    host: "127.0.0.1", port: port, timescale: timescale, eventLoopGroup: clientLoop)
                let client = TimeClient(transport: transport, syncedClock: SyncedClock(timescale: timescale, logger: logger), logger: logger)
                let estimate = try await client.measure(samples: samples, interval: .milliseconds(10))
                coplayErrors.append(estimate.offset(atLocal: timescale.now()) - offset)
                await transport.close()
            }

            var chronyErrors: [Double] = []
            var chronyFailures = 0
            if chronyRuns > 0, let chronyd = ["/usr/sbin/chronyd", "/usr/bin/chronyd"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            }) {
                for _ in 0..<chronyRuns {
                    let measured = try Self.chronyMeasure(chronyd: chronyd, port: port, samples: samples)
                    if let measured { chronyErrors.append(measured - offset) } else { chronyFailures += 1 }
                }
            }

            let statsBefore = server.statistics
            let load = loadSeconds > 0 ? Self.flood(port: port, seconds: loadSeconds) : nil
            let answered = server.statistics.answered - statsBefore.answered
            server.shutdown()
            try await group.waitForAll()
            return BenchClockReport(
                offset: offset,
                samplesPerRun: samples,
                coplay: .init(errors: coplayErrors),
                chrony: chronyErrors.isEmpty ? nil : .init(errors: chronyErrors),
                chronyFailures: chronyFailures,
                throughput: load.map { .init(seconds: $0.seconds, sent: $0.sent, received: $0.received,
                                              serverAnswered: answered, requestsPerSecond: Double($0.received) / $0.seconds) }
            )
        }
        try await serverLoop.shutdownGracefully()
        try await clientLoop.shutdownGracefully()
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.table)
        }
    }

    /// One `chronyd -Q` run; returns the offset it measured, or nil if it printed none.
    static func chronyMeasure(chronyd: String, port: Int, samples: Int) throws -> Double? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: chronyd)
        process.arguments = ["-Q", "-t", "10", "-f", "/dev/null",
                             "server 127.0.0.1 port \(port) minpoll -6 maxpoll -6 maxsamples \(samples)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let range = output.range(of: "System clock wrong by ") else { return nil }
        return Double(output[range.upperBound...].prefix { !$0.isWhitespace })
    }

    /// Sends valid requests in windows of 64 for `seconds` from one blocking socket, counting answers.
    static func flood(port: Int, seconds: Double) -> (seconds: Double, sent: Int, received: Int) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var tv = timeval(tv_sec: 0, tv_usec: 20_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buffer: CInt = 4 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, socklen_t(MemoryLayout<CInt>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let request = NTPPacket(mode: .client, transmitTimestamp: NTPTimestamp(rawValue: 0x1234_5678_9ABC_DEF0)).encoded()
        var reply = [UInt8](repeating: 0, count: 128)
        let start = ContinuousClock.now
        let limit = Duration.seconds(seconds)
        var sent = 0
        var received = 0
        while ContinuousClock.now - start < limit {
            for _ in 0..<64 {
                if request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count { sent += 1 }
            }
            // Drain what has come back; stop the inner loop at the first 20 ms timeout.
            while received < sent {
                let n = reply.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n < 0 { break }
                received += 1
            }
        }
        let elapsed = ContinuousClock.now - start
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18, sent, received)
    }
}

/// What `coplay bench clock` measured (seconds unless named otherwise).
struct BenchClockReport: Codable, Sendable {
    struct Errors: Codable, Sendable {
        var runs: Int
        var medianAbsError: Double
        var p99AbsError: Double
        var maxAbsError: Double
        var meanError: Double

        init(errors: [Double]) {
            let sorted = errors.map(abs).sorted()
            func quantile(_ q: Double) -> Double { Statistics.percentileOfSorted(sorted, q) ?? .nan }
            runs = errors.count
            medianAbsError = quantile(0.5)
            p99AbsError = quantile(0.99)
            maxAbsError = sorted.last ?? .nan
            meanError = errors.isEmpty ? .nan : errors.reduce(0, +) / Double(errors.count)
        }
    }

    struct Throughput: Codable, Sendable {
        var seconds: Double
        var sent: Int
        var received: Int
        var serverAnswered: Int
        var requestsPerSecond: Double
    }

    var offset: Double
    var samplesPerRun: Int
    var coplay: Errors
    var chrony: Errors?
    var chronyFailures: Int
    var throughput: Throughput?

    var table: String {
        func us(_ s: Double) -> String { String(format: "%9.1f µs", s * 1e6) }
        func row(_ name: String, _ e: Errors) -> String {
            "\(name.padding(toLength: 20, withPad: " ", startingAt: 0))\(String(format: "%5d", e.runs))  \(us(e.medianAbsError))  \(us(e.p99AbsError))  \(us(e.maxAbsError))  \(us(e.meanError))"
        }
        var lines = [
            "coplay bench clock: loopback, server offset X = \(offset) s, \(samplesPerRun) samples per run",
            "client               runs   median|err|     p99|err|     max|err|    mean err",
            row("coplay time query", coplay),
        ]
        if let chrony { lines.append(row("chronyd -Q", chrony)) }
        if chronyFailures > 0 { lines.append("chronyd -Q runs without a result: \(chronyFailures)") }
        if let throughput {
            lines.append(String(format: "server throughput: %.0f requests/s answered (one event loop; %d sent, %d answered in %.1f s)",
                                throughput.requestsPerSecond, throughput.sent, throughput.received, throughput.seconds))
        }
        return lines.joined(separator: "\n")
    }
}
