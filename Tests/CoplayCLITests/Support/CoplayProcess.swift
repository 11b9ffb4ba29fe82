import Foundation

/// Runs the built `coplay` executable from tests, the way a user would.
///
/// The binary is found, in order: `$COPLAY_BIN`; next to the test bundle (SwiftPM puts the
/// executable and `*.xctest` in the same products directory); `<package>/.build/debug/coplay`.
enum CoplayProcess {
    /// The package root (the folder holding `Package.swift`).
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// Path of the `coplay` executable under test.
    static let binary: URL = {
        if let env = ProcessInfo.processInfo.environment["COPLAY_BIN"] {
            return URL(fileURLWithPath: env)
        }
        var bundleDir = Bundle.main.bundleURL
        if bundleDir.pathExtension == "xctest" { bundleDir.deleteLastPathComponent() }
        let besideBundle = bundleDir.appendingPathComponent("coplay")
        if FileManager.default.isExecutableFile(atPath: besideBundle.path) { return besideBundle }
        return packageRoot.appendingPathComponent(".build/debug/coplay")
    }()

    /// The outcome of a finished process.
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `executable` (default: coplay) with `arguments` to completion, killing it after `timeout` seconds.
    static func run(
        _ arguments: [String],
        executable: URL = binary,
        timeout: TimeInterval = 60,
        environment: [String: String]? = nil
    ) async throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()

        // Read both pipes concurrently so neither fills up and blocks the child.
        async let stdout = Task.detached { out.fileHandleForReading.readDataToEndOfFile() }.value
        async let stderr = Task.detached { err.fileHandleForReading.readDataToEndOfFile() }.value
        let watchdog = Task.detached {
            try await Task.sleep(for: .seconds(timeout))
            if process.isRunning { process.terminate() }
        }
        let (o, e) = await (stdout, stderr)
        process.waitUntilExit()
        watchdog.cancel()
        return Result(
            status: process.terminationStatus,
            stdout: String(decoding: o, as: UTF8.self),
            stderr: String(decoding: e, as: UTF8.self)
        )
    }

    /// Starts a long-running process (a server); the caller stops it with `terminate()` / `Process.interrupt()`.
    /// Standard output and error are inherited unless pipes are given.
    static func start(
        _ arguments: [String],
        executable: URL = binary,
        stdout: Pipe? = nil,
        stderr: Pipe? = nil
    ) throws -> Process {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let stdout { process.standardOutput = stdout }
        if let stderr { process.standardError = stderr }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// A free UDP+TCP port number on loopback (bound then released; racy only against other processes).
    static func freePort() -> Int {
        for _ in 0..<100 {
            let port = Int.random(in: 20000..<60000)
            if canBind(port: port, stream: true) && canBind(port: port, stream: false) { return port }
        }
        fatalError("no free port found")
    }

    private static func canBind(port: Int, stream: Bool) -> Bool {
        let fd = socket(AF_INET, Int32(stream ? SOCK_STREAM.rawValue : SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
