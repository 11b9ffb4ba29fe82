import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL server for one test: Debian's PostgreSQL 15 binaries (`initdb`,
/// `pg_ctl`) run on a fresh cluster in a temporary directory, listening on 127.0.0.1 at a free
/// port (socket directory inside the cluster's directory), superuser `coplay` trusted locally.
/// When the tests run as root the server runs as the `postgres` user (`runuser`), which owns the
/// directory. ``stop()`` (or deinit) stops the server and removes the directory.
///
/// The commands (`initdb`, `pg_ctl`, `psql`) run on a thread of their own and are awaited: none
/// parks a thread of Swift's cooperative pool, which has only two on the 2-core machine, while
/// the suites beside run.
///
/// ```swift
/// guard let postgres = try await TemporaryPostgres.startIfAvailable() else { return }  // prints why it skipped
/// let url = postgres.url   // postgresql://coplay@127.0.0.1:PORT/coplay
/// ```
public final class TemporaryPostgres: @unchecked Sendable {
    /// Where Debian installs PostgreSQL 15's server binaries.
    public static let binaries = "/usr/lib/postgresql/15/bin"
    /// Why PostgreSQL tests cannot run here, or `nil` when they can.
    public static var unavailableReason: String? {
        for tool in ["initdb", "pg_ctl"] where !FileManager.default.isExecutableFile(atPath: "\(binaries)/\(tool)") {
            return "PostgreSQL 15 is not installed (\(binaries)/\(tool) is missing; scripts/install-deps.sh installs the postgresql package)"
        }
        return nil
    }

    /// The cluster's directory (removed by ``stop()``).
    public let directory: String
    /// The TCP port on 127.0.0.1.
    public let port: Int
    private let runAsPostgres: Bool
    private var running = false

    /// The database URL (superuser `coplay`, database `coplay`).
    public var url: String { "postgresql://coplay@127.0.0.1:\(port)/coplay?sslmode=disable" }

    /// Starts a server, or returns `nil` (after printing why) when PostgreSQL is not installed.
    public static func startIfAvailable() async throws -> TemporaryPostgres? {
        if let reason = unavailableReason {
            print("skipping a PostgreSQL test: \(reason)")
            return nil
        }
        return try await TemporaryPostgres()
    }

    /// Creates the cluster and starts the server.
    public init() async throws {
        runAsPostgres = geteuid() == 0
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-pg-\(UUID().uuidString)").path
        directory = base
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        port = freePort()
        if runAsPostgres { try await Self.run("/bin/chown", ["postgres:postgres", base]) }
        try await command("\(Self.binaries)/initdb", [
            "-D", "\(base)/data", "-U", "coplay", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions",
        ])
        try await start()
        try await command("\(Self.binaries)/psql", [
            "-h", "127.0.0.1", "-p", "\(port)", "-U", "coplay", "-d", "postgres", "-q", "-c", "CREATE DATABASE coplay",
        ])
    }

    deinit { stop() }

    /// Starts the server (again, after ``stopServer()``), waiting until it accepts connections.
    public func start() async throws {
        try await command("\(Self.binaries)/pg_ctl", [
            "-D", "\(directory)/data", "-l", "\(directory)/server.log", "-w", "-t", "30",
            "-o", "-k \(directory) -p \(port) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            "start",
        ])
        running = true
    }

    /// Stops the server (fast shutdown: open connections are closed), keeping the cluster.
    public func stopServer() async {
        guard running else { return }
        running = false
        _ = try? await command("\(Self.binaries)/pg_ctl", ["-D", "\(directory)/data", "-m", "fast", "-w", "-t", "30", "stop"])
    }

    /// Stops the server at once (SIGQUIT to the postmaster: PostgreSQL's immediate shutdown, which
    /// takes milliseconds and needs no waiting) and removes the cluster. Synchronous, for `defer`.
    public func stop() {
        if running, let pidLine = (try? String(contentsOfFile: "\(directory)/data/postmaster.pid", encoding: .utf8))?
            .split(separator: "\n").first, let pid = Int32(pidLine), pid > 1 {
            _ = Glibc.kill(pid, SIGQUIT)
        }
        running = false
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs SQL with psql and returns its unaligned, tuples-only output.
    public func psql(_ sql: String) async throws -> String {
        try await command("\(Self.binaries)/psql", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "coplay", "-d", "coplay", "-At", "-c", sql])
    }

    /// The server's log so far (for failure messages).
    public var log: String { (try? String(contentsOfFile: "\(directory)/server.log", encoding: .utf8)) ?? "" }

    @discardableResult
    private func command(_ path: String, _ arguments: [String]) async throws -> String {
        if runAsPostgres { return try await Self.run("/usr/sbin/runuser", ["-u", "postgres", "--", path] + arguments) }
        return try await Self.run(path, arguments)
    }

    /// Runs a command to completion on a thread of its own (see ``runBlocking(_:_:)``).
    @discardableResult
    private static func run(_ path: String, _ arguments: [String]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try runBlocking(path, arguments) })
            }
        }
    }

    /// Runs a command to completion with posix_spawn and waitpid, its output in a file.
    ///
    /// Blocks its thread (``run(_:_:)`` gives it one of its own). Not Foundation's `Process`: it
    /// notices a child's exit through a descriptor the child inherits, and `pg_ctl start` leaves the
    /// server running with that descriptor, so the wait would never end; waitpid on the direct
    /// child does not care what the server keeps open.
    @discardableResult
    private static func runBlocking(_ path: String, _ arguments: [String]) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-pg-out-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard spawned == 0 else {
            throw PostgresError(description: "cannot run \(path): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let exited = (status & 0x7f) == 0
        let code = (status >> 8) & 0xff
        guard exited && code == 0 else {
            throw PostgresError(description: "\(path) \(arguments.joined(separator: " ")) failed (status \(status)): \(text)")
        }
        return text
    }

    /// A PostgreSQL command that failed.
    public struct PostgresError: Error, CustomStringConvertible {
        public var description: String
    }
}
