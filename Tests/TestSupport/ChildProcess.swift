import Foundation
import Subprocess
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A child process for tests, owned by swift-subprocess: started in the background, its standard
/// output and error read line by line as they come, signalled and awaited, and nothing blocks a
/// thread of the cooperative pool meanwhile (no `waitUntilExit`, no `readDataToEndOfFile`), so
/// suites that run children can run in parallel with the rest.
///
/// ```swift
/// let relay = try await ChildProcess.start(coplay, ["serve", "--listen", "127.0.0.1:0"])
/// let line = await relay.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("coplay relay listening on") }
/// relay.terminate()
/// let status = await relay.wait()
/// ```
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signalled(Int32)
        /// It could not be started (the message says why).
        case failedToStart(String)

        /// The exit code, or 128 + the signal, like a shell's `$?`.
        public var status: Int32 {
            switch self {
            case .exited(let code): code
            case .signalled(let signal): 128 + signal
            case .failedToStart: 127
            }
        }

        /// The exit code, if it exited (nil if a signal ended it or it never started).
        public var exitCode: Int32? {
            if case .exited(let code) = self { code } else { nil }
        }

        public var description: String {
            switch self {
            case .exited(let code): "exit \(code)"
            case .signalled(let signal): "signal \(signal)"
            case .failedToStart(let message): "failed to start: \(message)"
            }
        }
    }

    /// The outcome of ``run(_:_:environment:timeout:)``.
    public struct Output: Sendable {
        public var termination: Termination
        public var stdout: String
        public var stderr: String
        /// The exit code (128 + signal when killed).
        public var status: Int32 { termination.status }
    }

    private struct State {
        var pid: Int32?
        var stdout = Data()
        var stderr = Data()
        var termination: Termination?
    }

    private let state = Mutex(State())
    /// The executable and arguments, for messages.
    public let commandLine: String

    private init(commandLine: String) {
        self.commandLine = commandLine
    }

    /// Starts `executable` with `arguments` (standard input empty, output and error captured) and
    /// returns once it runs (or could not start: then ``termination`` says why).
    public static func start(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) async -> ChildProcess {
        let child = ChildProcess(commandLine: ([executable] + arguments).joined(separator: " "))
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        let subprocessEnvironment: Environment = environment.map { variables in
            .custom(Dictionary(uniqueKeysWithValues: variables.compactMap { key, value in
                Environment.Key(rawValue: key).map { ($0, value) }
            }))
        } ?? .inherit
        Task {
            var options = PlatformOptions()
            // If the test is cancelled or fails mid-way: SIGTERM, then SIGKILL after 2 s.
            options.teardownSequence = [.send(signal: .terminate, allowedDurationToNextStep: .seconds(2))]
            let termination: Termination
            do {
                let result = try await Subprocess.run(
                    .path(.init(executable)), arguments: Arguments(arguments), environment: subprocessEnvironment,
                    platformOptions: options,
                    input: .none, output: .sequence, error: .sequence
                ) { execution in
                    child.state.withLock { $0.pid = execution.processIdentifier.value }
                    startedContinuation.finish()
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            do {
                                for try await chunk in execution.standardOutput {
                                    let data = chunk.withUnsafeBytes { Data($0) }
                                    child.state.withLock { $0.stdout.append(data) }
                                }
                            } catch {}
                        }
                        group.addTask {
                            do {
                                for try await chunk in execution.standardError {
                                    let data = chunk.withUnsafeBytes { Data($0) }
                                    child.state.withLock { $0.stderr.append(data) }
                                }
                            } catch {}
                        }
                    }
                }
                switch result.terminationStatus {
                case .exited(let code): termination = .exited(code)
                case .signaled(let signal): termination = .signalled(signal)
                }
            } catch {
                termination = .failedToStart("\(error)")
            }
            child.state.withLock { $0.termination = termination }
            startedContinuation.finish()
        }
        for await _ in started {}
        return child
    }

    /// Runs `executable` to completion and returns its output; SIGKILLs it after `timeout`.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration = .seconds(60)
    ) async -> Output {
        let child = await start(executable, arguments, environment: environment)
        let termination = await child.wait(timeout: timeout)
        if termination == nil {
            child.kill()
        }
        let final = await child.wait()
        return Output(termination: final, stdout: child.stdout, stderr: child.stderr)
    }

    /// The process id, while it runs.
    public var processIdentifier: Int32? { state.withLock { $0.termination == nil ? $0.pid : nil } }
    /// Whether it has not ended yet.
    public var isRunning: Bool { state.withLock { $0.termination == nil } }
    /// How it ended, once it has.
    public var termination: Termination? { state.withLock { $0.termination } }
    /// Standard output so far.
    public var stdout: String { String(decoding: state.withLock { $0.stdout }, as: UTF8.self) }
    /// Standard error so far.
    public var stderr: String { String(decoding: state.withLock { $0.stderr }, as: UTF8.self) }
    /// Complete lines of standard output so far.
    public var stdoutLines: [String] { Self.completeLines(state.withLock { $0.stdout }) }
    /// Complete lines of standard error so far.
    public var stderrLines: [String] { Self.completeLines(state.withLock { $0.stderr }) }

    private static func completeLines(_ data: Data) -> [String] {
        guard let last = data.lastIndex(of: 0x0A) else { return [] }
        return data[data.startIndex..<last].split(separator: 0x0A, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
    }

    /// Sends `signal` if it still runs.
    public func send(_ signal: Int32) {
        state.withLock { state in
            // Under the lock, so the pid is not one reaped (and reused) already.
            if state.termination == nil, let pid = state.pid { _ = Glibc.kill(pid, signal) }
        }
    }

    /// SIGTERM.
    public func terminate() { send(SIGTERM) }
    /// SIGINT.
    public func interrupt() { send(SIGINT) }
    /// SIGKILL.
    public func kill() { send(SIGKILL) }

    /// Waits until it ends.
    @discardableResult
    public func wait() async -> Termination {
        while true {
            if let termination = await wait(timeout: .seconds(3600)) { return termination }
        }
    }

    /// Waits until it ends or `timeout` passes (then nil).
    public func wait(timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let termination { return termination }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for a complete line of standard output (or error, with `stderr: true`) that satisfies
    /// `condition`; nil after `timeout` or when the child ended without printing one.
    public func waitForLine(
        timeout: Duration, stderr: Bool = false, _ condition: (String) -> Bool
    ) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let ended = !isRunning
            if let line = (stderr ? stderrLines : stdoutLines).first(where: condition) { return line }
            if ended || ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// Runs a blocking call (a socket read with a timeout, a file lock) or a long computation that never
/// suspends on a thread of its own and awaits it, so the cooperative pool (two threads on a 2-core
/// machine) is never held by it: async tests running beside it keep their threads.
///
/// - Parameter stackSize: the thread's stack in bytes (nil: the platform's default), for deep
///   recursion such as a simulation's.
public func onOwnThread<T: Sendable>(stackSize: Int? = nil, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = "test blocking call"
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
    }
}
