import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#endif

/// A child process of the scenario runner whose standard output is read line by line while it runs.
///
/// Standard error goes to a log file (its last lines are kept for error messages). Foundation's
/// `Process` starts the child in its own process group, so ``stop(grace:)`` signals the whole group:
/// `unshare --fork` and the coplay process it forked go together.
///
/// ```swift
/// let relay = try ChildProcess(executable: coplay, arguments: ["serve"], log: logURL) { line in print(line) }
/// relay.stop()
/// ```
package final class ChildProcess: Sendable {
    private struct Buffer {
        var partial = Data()
        var errorTail: [String] = []
        var errorPartial = Data()
    }

    /// A short name for messages (`relay`, `p1`, ...).
    package let name: String
    private let process: Process
    private let buffer = NIOLockedValueBox(Buffer())

    /// Starts `executable`.
    ///
    /// - Parameters:
    ///   - name: a short name for messages.
    ///   - executable: the program's path.
    ///   - arguments: its arguments.
    ///   - log: a file that receives standard output and error as they come (nil: discarded).
    ///   - environment: variables set for it on top of this process's environment.
    ///   - onLine: called with each standard-output line (without the newline), on a reader thread.
    package init(
        name: String, executable: String, arguments: [String], log: URL?, environment: [String: String] = [:],
        onLine: @escaping @Sendable (String) -> Void = { _ in }
    ) throws {
        self.name = name
        let logHandle: FileHandle? = try log.map { log in
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            return try FileHandle(forWritingTo: log)
        }
        let out = Pipe()
        let err = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        self.process = process
        let buffer = self.buffer
        let logLock = NIOLock()
        out.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            logLock.withLock { logHandle?.write(data) }
            let lines = buffer.withLockedValue { state -> [String] in
                state.partial.append(data)
                var lines: [String] = []
                while let newline = state.partial.firstIndex(of: 0x0A) {
                    lines.append(String(decoding: state.partial[state.partial.startIndex..<newline], as: UTF8.self))
                    state.partial.removeSubrange(state.partial.startIndex...newline)
                }
                return lines
            }
            for line in lines { onLine(line) }
        }
        err.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if data.isEmpty {
                handle.readabilityHandler = nil
                return
            }
            logLock.withLock { logHandle?.write(data) }
            buffer.withLockedValue { state in
                state.errorPartial.append(data)
                while let newline = state.errorPartial.firstIndex(of: 0x0A) {
                    state.errorTail.append(
                        String(decoding: state.errorPartial[state.errorPartial.startIndex..<newline], as: UTF8.self))
                    state.errorPartial.removeSubrange(state.errorPartial.startIndex...newline)
                }
                if state.errorTail.count > 20 { state.errorTail.removeFirst(state.errorTail.count - 20) }
            }
        }
        try process.run()
    }

    /// The child's process id.
    package var pid: Int32 { process.processIdentifier }

    /// Whether the child still runs.
    package var isRunning: Bool { process.isRunning }

    /// The exit status (or signal number), once it has exited.
    package var exitStatus: Int32? { process.isRunning ? nil : process.terminationStatus }

    /// The last lines of standard error (at most 20).
    package var errorTail: [String] { buffer.withLockedValue { $0.errorTail } }

    /// A one-line account of how the child ended: `p1 exited with status 1: <last stderr line>`.
    package var exitDescription: String {
        let status = exitStatus.map { "exited with status \($0)" } ?? "is still running"
        let last = errorTail.last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        return "\(name) \(status)" + (last.map { ": \($0.count > 160 ? $0.prefix(157) + "..." : $0)" } ?? "")
    }

    /// `p1 exited with status 1` or `p1 is still running`, without the error line.
    package var exitSummary: String {
        "\(name) " + (exitStatus.map { "exited with status \($0)" } ?? "is still running")
    }

    /// Sends `signal` to the child's process group.
    package func signal(_ signal: Int32) {
        kill(-process.processIdentifier, signal)
        kill(process.processIdentifier, signal)
    }

    /// Stops the child: SIGTERM to its group, SIGKILL after `grace` seconds; waits for the exit.
    package func stop(grace: Double = 3) async {
        guard process.isRunning else { return }
        signal(SIGTERM)
        let deadline = ContinuousClock.now + .milliseconds(Int(grace * 1000))
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { signal(SIGKILL) }
        let killDeadline = ContinuousClock.now + .seconds(5)
        while process.isRunning && ContinuousClock.now < killDeadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the child exits or `timeout` seconds pass.
    ///
    /// - Returns: the exit status, or nil on timeout.
    package func wait(timeout: Double) async -> Int32? {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while process.isRunning && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return exitStatus
    }
}
