/// Errors of the mpv adapter, each with a message a person can act on.
///
/// ```swift
/// do { try await MPVProcess.findExecutable() }
/// catch let error as MPVError { print(error) }   // "mpv is not installed: ..."
/// ```
public struct MPVError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case notInstalled
        case didNotStart
        case ipc
        case commandFailed
        case cannotPlay
        case quit
    }

    private let code: Code
    public let description: String

    private init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// No `mpv` executable on `PATH`.
    public static var notInstalled: Self {
        Self(.notInstalled, "mpv is not installed (no 'mpv' on PATH): install it with 'apt-get install mpv' (Debian/Ubuntu package 'mpv')")
    }

    /// mpv exited or never opened its IPC socket.
    public static func didNotStart(_ detail: String) -> Self { Self(.didNotStart, "mpv did not start: \(detail)") }

    /// The IPC connection failed or closed.
    public static func ipc(_ detail: String) -> Self { Self(.ipc, "mpv IPC: \(detail)") }

    /// mpv answered a command with an error.
    public static func commandFailed(_ command: String, _ error: String) -> Self {
        Self(.commandFailed, "mpv answered '\(error)' to \(command)")
    }

    /// mpv could not open or decode a file.
    public static func cannotPlay(_ file: String, _ detail: String) -> Self {
        Self(.cannotPlay, "mpv cannot play \(file): \(detail)")
    }

    /// mpv quit (the person closed it, or it crashed).
    public static func quit(_ detail: String) -> Self { Self(.quit, "mpv quit: \(detail)") }

    /// Whether this says mpv quit or its connection closed (the member should leave cleanly).
    public var isQuit: Bool { code == .quit || code == .ipc }
}
