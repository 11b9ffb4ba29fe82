import Foundation
import GroupSessions
import Logging
import MallocInterposerSwift
import SessionRelay

/// A relay running in a child process: this same benchmark executable, started with
/// ``environmentKey`` set, serves a ``RelayServer`` on a free loopback port instead of running
/// benchmarks (see ``serveIfChild()``).
///
/// A separate process keeps the relay's memory apart from the clients' (read from
/// `/proc/PID/status`), the way `coplay bench relay` measures a `coplay serve` child. The child
/// exits when its standard input closes, so it never outlives the benchmark process; each line
/// written to it asks for its live heap (``heap()``), answered on one line of its standard output.
///
/// The child is a benchmark executable, so the malloc interposer of ordo-one/benchmark is linked
/// in and puts a 16-byte header in front of every allocation: its resident memory is a little
/// above a plain `coplay serve`'s. ``heap()`` reports live allocations and requested bytes, which
/// the header does not change, so both figures are given.
final class RelayProcess: @unchecked Sendable {
    // @unchecked: `Process` is not declared Sendable; it is only started in `start()` and then
    // read (pid) or terminated, calls Foundation documents as thread-safe.

    /// Set in the child's environment; its value is unused.
    static let environmentKey = "COPLAY_BENCH_RELAY_CHILD"

    /// The child process.
    let process: Process
    /// The relay's TCP port on 127.0.0.1.
    let port: Int
    private let input: Pipe
    private let output: Pipe

    private init(process: Process, port: Int, input: Pipe, output: Pipe) {
        self.process = process
        self.port = port
        self.input = input
        self.output = output
    }

    /// The child's live heap: allocations not yet freed and the bytes requested for them, counted
    /// by the malloc interposer since the child started.
    struct Heap: Sendable {
        var allocations: Int
        var bytes: Int
    }

    /// Asks the child for its live heap (blocking; a few microseconds of the child's time).
    func heap() throws -> Heap {
        input.fileHandleForWriting.write(Data("heap\n".utf8))
        let fields = Self.readLine(output).split(separator: " ").compactMap { Int($0) }
        guard fields.count == 2 else { throw RelayBenchmarkError("the relay child did not report its heap") }
        return Heap(allocations: fields[0], bytes: fields[1])
    }

    /// Reads one line from `pipe` (empty at end of file).
    private static func readLine(_ pipe: Pipe) -> String {
        var line = Data()
        while true {
            guard let byte = try? pipe.fileHandleForReading.read(upToCount: 1), let first = byte.first else { break }
            if first == UInt8(ascii: "\n") { break }
            line.append(first)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Starts the child relay and waits until it answers a hello.
    static func start() async throws -> RelayProcess {
        guard let executable = Bundle.main.executableURL else { throw RelayBenchmarkError("no executable path") }
        let process = Process()
        process.executableURL = executable
        process.arguments = []
        var environment = ProcessInfo.processInfo.environment
        environment[environmentKey] = "1"
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // The child prints its bound port on one line.
        let text = readLine(output).trimmingCharacters(in: .whitespaces)
        guard let port = Int(text) else {
            process.terminate()
            throw RelayBenchmarkError("the relay child did not report its port (got \(text.debugDescription))")
        }
        let relay = RelayProcess(process: process, port: port, input: input, output: output)
        var logger = Logger(label: "coplay.benchmarks.relay")
        logger.logLevel = .error
        let observer = GroupStateObserver(transport: RelayTransport(host: "127.0.0.1", port: port), logger: logger)
        for _ in 0..<100 {
            if await observer.refresh(timeout: .seconds(1)) { return relay }
            try await Task.sleep(for: .milliseconds(100))
        }
        relay.stop()
        throw RelayBenchmarkError("the relay child on port \(port) did not answer")
    }

    /// The child's resident memory in bytes (`VmRSS`), or 0 if it cannot be read.
    var residentBytes: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8) else {
            return 0
        }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return (line.split(separator: " ").compactMap { Int($0) }.first ?? 0) * 1024
        }
        return 0
    }

    /// Stops the child and waits for it to exit.
    func stop() {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    /// In the child (``environmentKey`` set): serves a relay on a free loopback port, prints the
    /// port, and exits when standard input closes. Otherwise returns at once.
    static func serveIfChild() {
        guard ProcessInfo.processInfo.environment[environmentKey] != nil else { return }
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.hook()
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(0, &byte, 1) > 0 {
                guard byte == UInt8(ascii: "\n") else { continue }
                let stats = MallocInterposerSwift.getStatistics()
                let live = "\(stats.mallocCount - stats.freeCount) \(stats.mallocBytesCount - stats.freeBytesCount)\n"
                FileHandle.standardOutput.write(Data(live.utf8))
            }
            exit(0)
        }
        Task.detached {
            var logger = Logger(label: "coplay.benchmarks.relay-child")
            logger.logLevel = .error
            var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
            configuration.limits.ratePerSecond = 1_000_000
            configuration.limits.burst = 1_000_000
            configuration.limits.maximumConnections = 20_000
            let server = RelayServer(configuration: configuration, logger: logger)
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await server.run() }
                    let port = try await server.boundPort()
                    FileHandle.standardOutput.write(Data("\(port)\n".utf8))
                    try await group.next()
                }
            } catch {
                FileHandle.standardError.write(Data("relay child: \(error)\n".utf8))
            }
            exit(1)
        }
        while true { sleep(3600) }
    }
}
