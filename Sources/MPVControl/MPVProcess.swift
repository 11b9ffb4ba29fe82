import Foundation
internal import Subprocess
import Synchronization

/// Starts mpv as a child process with its JSON IPC on a fresh socket, for the duration of a body
/// (swift-subprocess owns the process: it is stopped when the body ends, throws or is cancelled).
///
/// ```swift
/// try await MPVProcess.run(arguments: MPVProcess.headlessArguments) { mpv in
///     try await mpv.run(["loadfile", "clip.mp4"])
/// }
/// ```
public enum MPVProcess {
    /// The options coplay always gives mpv (measured reasons in docs/mpv.md):
    /// - idle and paused until told, never quitting at the end of a file (the group decides), no
    ///   resume-playback state of the person's;
    /// - `--hr-seek=yes`: exact seeks (they land on the first frame at or after the target);
    /// - `--video-timing-offset=0`: `time-pos` changes when a frame is due, not one frame (two at
    ///   60 fps) early when it is queued, so the adapter's frame clock reads the frame on screen;
    /// - `--af=scaletempo2`: the time-stretch filter is always in the chain, so a `speed` trim moves
    ///   the position as asked (without it, each change between 1 and another speed inserts or
    ///   removes the filter and the position jumps by 2-25 ms);
    /// - `--prefetch-playlist=yes`: mpv opens the playlist's next entry (the queue's next) ahead, which
    ///   about halves what a change of entry costs (docs/mpv.md).
    public static let baseArguments = [
        "--idle=yes", "--pause", "--keep-open=always", "--hr-seek=yes", "--no-resume-playback",
        "--video-timing-offset=0", "--af=scaletempo2", "--prefetch-playlist=yes",
        "--input-default-bindings=yes", "--no-input-terminal", "--msg-level=all=error",
    ]

    /// No window and no sound (benchmarks, tests, machines without a display).
    public static let headlessArguments = ["--vo=null", "--ao=null"]

    /// Whether this process can open windows (an X11 or Wayland display is set).
    public static var hasDisplay: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// The path of `mpv` on `PATH`.
    ///
    /// - Throws: ``MPVError/notInstalled`` naming the Debian package.
    public static func findExecutable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/mpv"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw MPVError.notInstalled
    }

    /// Runs mpv with ``baseArguments`` plus `arguments`, connects to its IPC socket and calls `body`
    /// with the connection. When `body` returns, mpv is asked to quit (and killed if it does not
    /// within 2 s); when `body` throws or the task is cancelled, mpv is terminated.
    ///
    /// - Parameters:
    ///   - arguments: more mpv options (`--vo=null`, a person's `--mpv-arg`s).
    ///   - stamp: the clock the connection stamps with (see ``MPVConnection``).
    ///   - startupTimeout: how long mpv may take to open its socket.
    ///   - body: the work to do with mpv.
    /// - Throws: ``MPVError/notInstalled``; ``MPVError/didNotStart(_:)`` with mpv's last error lines
    ///   when it exits or does not open its socket in time; what `body` throws.
    public static func run<R: Sendable>(
        arguments: [String] = [], stamp: @escaping @Sendable () -> Double = MPVConnection.realtime,
        startupTimeout: Duration = .seconds(10),
        body: (MPVConnection) async throws -> R
    ) async throws -> R {
        let executable = try findExecutable()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-mpv-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("ipc.sock").path
        var options = PlatformOptions()
        options.teardownSequence = [.send(signal: .terminate, allowedDurationToNextStep: .seconds(2))]
        let result = try await Subprocess.run(
            .path(.init(executable)), arguments: Arguments(baseArguments + arguments + ["--input-ipc-server=\(socket)"]),
            platformOptions: options, input: .none, output: .discarded, error: .sequence
        ) { execution in
            try await withThrowingTaskGroup(of: R?.self) { group in
                let errors = ErrorLines()
                // mpv's standard error: kept for messages; its end means mpv exited.
                group.addTask {
                    for try await line in execution.standardError.strings() { errors.append(line) }
                    errors.markExited()
                    return nil
                }
                let connection = try await connect(socket: socket, timeout: startupTimeout, errors: errors, stamp: stamp)
                let value: R
                do {
                    value = try await body(connection)
                } catch {
                    await connection.close()
                    throw error
                }
                try? await connection.run(["quit"])
                await connection.close()
                // Give mpv 2 s to quit, then kill it; either way its standard error ends.
                group.addTask {
                    try await Task.sleep(for: .seconds(2))
                    try? execution.send(signal: .kill)
                    return nil
                }
                _ = try await group.next()
                group.cancelAll()
                return value
            }
        }
        return result.closureResult
    }

    /// Connects to the socket once mpv opened it.
    private static func connect(
        socket: String, timeout: Duration, errors: ErrorLines, stamp: @escaping @Sendable () -> Double
    ) async throws -> MPVConnection {
        let deadline = ContinuousClock.now + timeout
        while true {
            if errors.exited {
                throw MPVError.didNotStart("it exited: \(errors.tail.isEmpty ? "no message" : errors.tail)")
            }
            if FileManager.default.fileExists(atPath: socket), let connection = try? await MPVConnection.connect(path: socket, stamp: stamp) {
                return connection
            }
            guard ContinuousClock.now < deadline else {
                throw MPVError.didNotStart("no IPC socket after \(timeout) \(errors.tail)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// The last lines mpv printed on standard error, and whether it exited.
private final class ErrorLines: Sendable {
    private let state = Mutex<(lines: [String], exited: Bool)>(([], false))

    func append(_ line: String) {
        state.withLock { state in
            state.lines.append(line.trimmingCharacters(in: .whitespacesAndNewlines))
            if state.lines.count > 8 { state.lines.removeFirst() }
        }
    }

    func markExited() { state.withLock { $0.exited = true } }
    var exited: Bool { state.withLock { $0.exited } }
    var tail: String { state.withLock { $0.lines.joined(separator: " / ") } }
}
