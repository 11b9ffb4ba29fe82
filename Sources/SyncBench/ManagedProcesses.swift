import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// Child processes a benchmark started, each in its own process group (Foundation's `Process` puts
/// children in a new group), so stopping one also stops what it spawned (Syncplay's mpv).
///
/// ```swift
/// let processes = ManagedProcesses()
/// try processes.start("/usr/bin/syncplay-server", ["--port", "8999"], log: logURL)
/// await processes.terminateAll()
/// ```
package final class ManagedProcesses: Sendable {
    private let processes = NIOLockedValueBox<[Process]>([])

    /// Creates an empty set.
    package init() {}

    /// Starts `executable` with `arguments`, standard output and error appended to `log`.
    @discardableResult
    package func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, log: URL
    ) throws -> Int32 {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? handle.close()
        processes.withLockedValue { $0.append(process) }
        return process.processIdentifier
    }

    /// The started processes that have exited, with their status.
    package var exited: [(pid: Int32, status: Int32)] {
        processes.withLockedValue { list in
            list.filter { !$0.isRunning }.map { ($0.processIdentifier, $0.terminationStatus) }
        }
    }

    /// Sends SIGTERM to every process group, waits up to `grace` seconds, then SIGKILLs what is left.
    package func terminateAll(grace: Double = 3) async {
        let list = processes.withLockedValue { $0 }
        for process in list where process.isRunning {
            kill(-process.processIdentifier, SIGTERM)
        }
        let deadline = Date().addingTimeInterval(grace)
        while list.contains(where: \.isRunning) && Date() < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        for process in list {
            // Also the group: a child may outlive its leader.
            kill(-process.processIdentifier, SIGKILL)
        }
        for process in list where process.isRunning {
            process.waitUntilExit()
        }
    }
}
