import ArgumentParser
import BenchmarkSupport
import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay

/// `coplay bench relay`: measures a `coplay serve` child process over loopback.
struct BenchRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay",
        abstract: "Measure the relay: connections held, messages forwarded per second, fan-out latency, memory per idle connection.",
        discussion: """
            Starts `coplay serve` on a free loopback port as a child process (so its memory can be \
            read from /proc), drives it with raw protocol clients from this process, prints the \
            figures and stops it. Every loop is bounded in count and time.
            """
    )

    @Option(help: "Idle connections to open for the connection/memory measurement.")
    var connections: Int = 2_000

    @Option(help: "Members in the fan-out latency session.")
    var members: Int = 1_000

    @Option(help: "Messages the fan-out sender stamps.")
    var latencyMessages: Int = 50

    @Option(help: "Milliseconds between the fan-out sender's messages.")
    var latencyIntervalMs: Int = 20

    @Option(help: "Receivers in the throughput session.")
    var receivers: Int = 10

    @Option(help: "Messages sent in the throughput run.")
    var messages: Int = 20_000

    @Option(help: ArgumentHelp("Measure this coplay binary's relay instead of this one's (before/after comparisons).", valueName: "PATH"))
    var relayBinary: String?

    @Option(
        name: .customLong("serve-arg"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp(
            "Pass ARG on to the relay's `coplay serve` (repeat it; for example --serve-arg --store --serve-arg postgresql://USER@HOST:PORT/DB, or --serve-arg --data-dir --serve-arg DIR, to measure a relay with a store).",
            valueName: "ARG"))
    var serveArguments: [String] = []

    @Option(
        help: ArgumentHelp(
            "Also measure session isolation in-process: one session's store stalls this long on every write while another session's fan-out latency is measured (0 skips).",
            valueName: "MS"))
    var stalledStoreMs: Int = 0

    @Option(
        help: ArgumentHelp(
            "Also measure journal isolation in-process: one session uploads a journal attachment to a disk that stalls this long on every write while another session's fan-out latency is measured (0 skips).",
            valueName: "MS"))
    var stalledJournalMs: Int = 0

    func validate() throws {
        guard (1...20_000).contains(connections) else { throw ValidationError("--connections must be in 1...20000") }
        guard (2...5_000).contains(members) else { throw ValidationError("--members must be in 2...5000") }
        guard (1...10_000).contains(latencyMessages) else { throw ValidationError("--latency-messages must be in 1...10000") }
        guard (1...10_000).contains(latencyIntervalMs) else { throw ValidationError("--latency-interval-ms must be in 1...10000") }
        guard (1...1_000).contains(receivers) else { throw ValidationError("--receivers must be in 1...1000") }
        guard (1...1_000_000).contains(messages) else { throw ValidationError("--messages must be in 1...1000000") }
        guard (0...10_000).contains(stalledStoreMs) else { throw ValidationError("--stalled-store-ms must be in 0...10000") }
        guard (0...10_000).contains(stalledJournalMs) else { throw ValidationError("--stalled-journal-ms must be in 0...10000") }
        if let relayBinary, !FileManager.default.isExecutableFile(atPath: relayBinary) {
            throw ValidationError("--relay-binary \(relayBinary) is not an executable file")
        }
    }

    func run() async throws {
        var logger = Logger(label: "coplay.bench.relay")
        logger.logLevel = .warning
        let port = try Self.freePort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: relayBinary ?? CommandLine.arguments[0]).standardizedFileURL
        if relayBinary == nil, !FileManager.default.isExecutableFile(atPath: server.executableURL!.path) {
            server.executableURL = Bundle.main.executableURL
        }
        Self.raiseDescriptorLimit(to: connections + 4_096)
        // The raw load clients do not ping: without `--idle-timeout 0` the relay would close the
        // receivers of a slow (debug-build) 1,000-member assembly after 45 s of their silence.
        server.arguments = [
            "serve", "--listen", "127.0.0.1:\(port)", "--rate", "1000000", "--burst", "1000000",
            "--max-connections", "20000", "--idle-timeout", "0", "--log-level", "warning",
        ] + serveArguments
        // As measured before relays kept sessions by default: in memory, unless the run asks for a
        // store (an older --relay-binary knows no --memory-only, and keeps nothing anyway).
        if relayBinary == nil, !serveArguments.contains(where: { $0.hasPrefix("--data-dir") || $0.hasPrefix("--store") }) {
            server.arguments?.append("--memory-only")
        }
        server.standardOutput = Pipe()
        try server.run()
        defer {
            if server.isRunning {
                server.terminate()
                server.waitUntilExit()
            }
        }
        let bench = RelayBenchmark(host: "127.0.0.1", port: port, logger: logger)
        try await Self.waitForRelay(port: port, logger: logger)

        print("coplay bench relay: relay pid \(server.processIdentifier) on 127.0.0.1:\(port)")
        // 1. Throughput, and the relay's own CPU time for it (a figure that load from other work
        // disturbs far less than the rate: compare binaries by it on a busy machine).
        let cpuBefore = Self.cpuNanoseconds(pid: server.processIdentifier)
        let (rate, delivered) = try await bench.throughput(receivers: receivers, messages: messages)
        let cpuAfter = Self.cpuNanoseconds(pid: server.processIdentifier)
        print(String(format: "forwarding: %.0f frames/s delivered (%d receivers x %d messages, %d delivered)",
                     rate, receivers, messages, delivered))
        if let cpuBefore, let cpuAfter, delivered > 0 {
            print(String(format: "relay CPU while forwarding: %.0f ms, %.2f us per delivered frame",
                         Double(cpuAfter - cpuBefore) / 1e6, Double(cpuAfter - cpuBefore) / 1e3 / Double(delivered)))
        }

        // 2. Fan-out latency.
        let fanOut = try await bench.fanOutLatency(
            members: members, messages: latencyMessages, interval: .milliseconds(latencyIntervalMs))
        let latencies = fanOut.latencies
        print(String(format: "session assembly: %d members joined and every member saw every join in %.2f s (%d/%d ready)",
                     members, Double(fanOut.assembly.components.seconds) + Double(fanOut.assembly.components.attoseconds) * 1e-18,
                     fanOut.readyReceivers, members - 1))
        print(String(format: "fan-out latency, %d-member session, %d messages %d ms apart: p50 %.0f us, p99 %.0f us, max %.0f us (%d of %d samples)",
                     members, latencyMessages, latencyIntervalMs, Statistics.percentileOfSorted(latencies, 0.5) ?? .nan,
                     Statistics.percentileOfSorted(latencies, 0.99) ?? .nan, latencies.last ?? .nan, latencies.count,
                     (members - 1) * latencyMessages))
        let completions = fanOut.completions.sorted()
        if let slowest = fanOut.completions.indices.max(by: { fanOut.completions[$0] < fanOut.completions[$1] }) {
            print(String(format: "fan-out completion (the last member served), per message: median %.0f us, slowest %.0f us (message %d of %d)",
                         Statistics.percentileOfSorted(completions, 0.5) ?? .nan, fanOut.completions[slowest],
                         slowest + 1, fanOut.completions.count))
        }

        // 3. Connections held and memory per idle connection.
        try await Task.sleep(for: .seconds(1))
        let before = Self.residentBytes(pid: server.processIdentifier)
        let invite = Invite.generate(host: "127.0.0.1", port: port)
        let held = try await bench.openMembers(count: connections, invite: invite, concurrency: 50, separateSessions: true)
        try await Task.sleep(for: .seconds(2))
        let after = Self.residentBytes(pid: server.processIdentifier)
        let perConnection = Double(after - before) / Double(max(held.count, 1))
        print("connections held: \(held.count) of \(connections) requested (each joined to a session of its own)")
        print(String(format: "relay memory: %.1f MiB before, %.1f MiB with them, %.1f KiB per idle connection",
                     Double(before) / 1_048_576, Double(after) / 1_048_576, perConnection / 1024))
        for member in held { member.connection.close() }

        // 4. Isolation: another session's stalled store.
        if stalledStoreMs > 0 { try await measureIsolation(logger: logger) }
        // 5. Isolation: another session's stalled journal disk.
        if stalledJournalMs > 0 { try await measureJournalIsolation(logger: logger) }
    }

    /// A relay in this process on `store`, without rate limits or idle timeout (the isolation
    /// measurements), and the task that runs it.
    static func isolationRelay(store: any SessionPersistence, logger: Logger) -> (RelayServer, Task<Void, any Error>) {
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.store = store
        configuration.limits.ratePerSecond = 1_000_000
        configuration.limits.burst = 1_000_000
        configuration.limits.idleTimeout = .zero
        let relay = RelayServer(configuration: configuration, logger: logger)
        return (relay, Task { try await relay.run() })
    }

    /// The fan-out latency p99 (µs) of a session of `members` on `bench`'s relay.
    func fanOutP99(_ bench: RelayBenchmark, members: Int) async throws -> Double {
        let result = try await bench.fanOutLatency(members: members, messages: latencyMessages, interval: .milliseconds(latencyIntervalMs))
        return Statistics.percentileOfSorted(result.latencies, 0.99) ?? .nan
    }

    /// One relay in this process whose store stalls every write of one session by
    /// `--stalled-store-ms`: the fan-out latency of another session, first alone, then while the
    /// stalled session keeps sending (a frame every 10 ms for the whole measurement).
    func measureIsolation(logger: Logger) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-isolation-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = StalledStore(
            base: try SessionStore(directory: directory.path, logger: logger), delay: .milliseconds(stalledStoreMs))
        let (relay, task) = Self.isolationRelay(store: store, logger: logger)
        defer { task.cancel() }
        let port = try await relay.boundPort()
        let bench = RelayBenchmark(host: "127.0.0.1", port: port, logger: logger)
        let isolationMembers = min(members, 100)
        func measure() async throws -> Double { try await fanOutP99(bench, members: isolationMembers) }
        let alone = try await measure()
        let stalled = Invite.generate(host: "127.0.0.1", port: port)
        let pair = try await bench.openMembers(count: 2, invite: stalled, concurrency: 2)
        store.stall(stalled.session)
        let noise = Task {
            var sequence: UInt64 = 0
            while !Task.isCancelled {
                sequence += 1
                try pair[0].connection.send(RelayBenchmark.frame(from: pair[0], sequence: sequence, stamp: 0, size: 64))
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        let during = try await measure()
        noise.cancel()
        for member in pair { member.connection.close() }
        print(String(format: "isolation: %d-member session fan-out p99 %.0f us alone, %.0f us while another session's store stalls %d ms per write (%d writes stalled); difference %.0f us",
                     isolationMembers, alone, during, stalledStoreMs, store.stalledWrites, during - alone))
    }

    /// One relay in this process whose journal disk stalls every write of one session by
    /// `--stalled-journal-ms`: the fan-out latency of another session, first alone, then while a
    /// member of the stalled session uploads attachments (each chunk sent once the previous one
    /// was acknowledged, as members upload) for the whole measurement.
    func measureJournalIsolation(logger: Logger) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-journal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = StalledJournal(
            base: try JournalStore(directory: directory.path, logger: logger), delay: .milliseconds(stalledJournalMs))
        let store = StalledStore(
            base: try SessionStore(directory: directory.path, logger: logger), delay: .zero, journal: journal)
        let (relay, task) = Self.isolationRelay(store: store, logger: logger)
        defer { task.cancel() }
        let port = try await relay.boundPort()
        let bench = RelayBenchmark(host: "127.0.0.1", port: port, logger: logger)
        let isolationMembers = min(members, 100)
        func measure() async throws -> Double { try await fanOutP99(bench, members: isolationMembers) }
        let alone = try await measure()
        let stalled = Invite.generate(host: "127.0.0.1", port: port)
        let uploader = try await bench.openMembers(count: 1, invite: stalled, concurrency: 1)[0]
        journal.stall(stalled.session)
        let noise = Task { await Self.upload(from: uploader) }
        let during = try await measure()
        noise.cancel()
        uploader.connection.close()
        let acknowledged = await noise.value
        print(String(format: "journal isolation: %d-member session fan-out p99 %.0f us alone, %.0f us while another session uploads to a journal disk that stalls %d ms per write (%d writes stalled, %d chunks acknowledged); difference %.0f us",
                     isolationMembers, alone, during, stalledJournalMs, journal.stalledWrites, acknowledged,
                     during - alone))
    }

    /// Uploads 1 MiB attachments of 16 KiB chunks from `member` until cancelled, each chunk once
    /// the previous one was acknowledged (raw frames: the relay cannot tell them from sealed ones).
    ///
    /// - Returns: The chunks acknowledged.
    static func upload(from member: RelayBenchmark.Member) async -> Int {
        var acknowledged = 0
        do { try await upload(from: member, acknowledged: &acknowledged) } catch {}
        return acknowledged
    }

    private static func upload(from member: RelayBenchmark.Member, acknowledged: inout Int) async throws {
        var inbound = member.connection.inbound.makeAsyncIterator()
        var token: UInt64 = 1 << 63
        while !Task.isCancelled {
            token += 1
            let header = JournalHeader(id: .random(), size: 1 << 20, chunkSize: 16_384, sealedMetadata: [])
            try member.connection.send(
                Frame(type: .journalPut, session: member.session, sender: member.id,
                      payload: JournalPutPayload(token: token, header: header).encoded()))
            for index in 0..<header.chunkCount {
                let sealed = ByteBuffer(repeating: 0x5A, count: header.sealedLength(ofChunk: index))
                try member.connection.send(
                    Frame(type: .journalChunk, session: member.session, sender: member.id,
                          payload: JournalChunkPayload(id: header.id, index: UInt32(index), sealed: sealed).encoded()))
                while let frame = try await inbound.next() {
                    if frame.type == .error { return }
                    if frame.type == .journalAck { break }
                }
                if Task.isCancelled { return }
                acknowledged += 1
            }
        }
    }

    /// Raises this process's open-file limit (the benchmark's clients and, inherited, the relay
    /// child's) to `wanted`: the soft limit up to the hard one, and the hard one too when allowed
    /// (root). The relay's own defaults are left alone.
    static func raiseDescriptorLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        var raised = limit
        raised.rlim_cur = rlim_t(wanted)
        raised.rlim_max = max(limit.rlim_max, rlim_t(wanted))
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) != 0 {
            limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }

    /// The CPU time a process's threads have run, in nanoseconds: the sum of the first field of
    /// each `/proc/PID/task/TID/schedstat` (the scheduler's own accounting, not clock ticks). Nil
    /// when the process cannot be read.
    static func cpuNanoseconds(pid: Int32) -> UInt64? {
        let tasks = "/proc/\(pid)/task"
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks) else { return nil }
        return threads.reduce(0) { total, thread in
            let line = (try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8)) ?? ""
            return total + (line.split(separator: " ").first.flatMap { UInt64($0) } ?? 0)
        }
    }

    static func residentBytes(pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kib = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kib * 1024
        }
        return 0
    }

    static func waitForRelay(port: Int, logger: Logger) async throws {
        let observer = GroupStateObserver(transport: RelayTransport(host: "127.0.0.1", port: port), logger: logger)
        for _ in 0..<100 {
            if await observer.refresh(timeout: .seconds(1)) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ValidationError("the relay child process did not come up on port \(port)")
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw ValidationError("no free port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }
}
