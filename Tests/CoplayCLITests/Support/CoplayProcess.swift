import Foundation
import TestSupport

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

    /// The environment every coplay the tests start gets: this process's, with `XDG_STATE_HOME` in a
    /// temporary directory of this test run, so that `coplay serve` (which keeps sessions in
    /// `$XDG_STATE_HOME/coplay/relay-HOST-PORT` by default) never writes into the real home, and
    /// relays of parallel tests (on different ports) never share a directory; `XDG_CACHE_HOME` likewise.
    static let environment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        let state = FileManager.default.temporaryDirectory
            .appendingPathComponent("coplay-cli-tests-\(ProcessInfo.processInfo.processIdentifier)-state")
        try? FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        environment["XDG_STATE_HOME"] = state.path
        // `--media-dir`'s fingerprint cache ($XDG_CACHE_HOME/coplay/fingerprints.json) too.
        let cache = FileManager.default.temporaryDirectory
            .appendingPathComponent("coplay-cli-tests-\(ProcessInfo.processInfo.processIdentifier)-cache")
        environment["XDG_CACHE_HOME"] = cache.path
        return environment
    }()

    /// The outcome of a finished process.
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `executable` (default: coplay) with `arguments` to completion, killing it after `timeout` seconds.
    /// Through swift-subprocess (``ChildProcess``): no thread of the cooperative pool waits for it.
    static func run(
        _ arguments: [String],
        executable: URL = binary,
        timeout: TimeInterval = 60,
        environment: [String: String]? = nil
    ) async throws -> Result {
        let output = await ChildProcess.run(
            executable.path, arguments, environment: environment ?? Self.environment, timeout: .seconds(timeout))
        if case .failedToStart(let message) = output.termination {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(executable.path): \(message)"])
        }
        return Result(status: output.status, stdout: output.stdout, stderr: output.stderr)
    }

    /// Starts a long-running process (a server); the caller stops it with `terminate()` / `interrupt()`
    /// and awaits `wait()`. Its output is captured (``ChildProcess/stdoutLines``).
    static func start(
        _ arguments: [String], executable: URL = binary, environment: [String: String]? = nil
    ) async throws -> ChildProcess {
        let child = await ChildProcess.start(executable.path, arguments, environment: environment ?? Self.environment)
        if case .failedToStart(let message) = child.termination {
            throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(executable.path): \(message)"])
        }
        return child
    }

    /// The port in a line that ends with `HOST:PORT` (or `HOST:PORT/path`, or `HOST:PORT (…)`).
    static func port(in line: String?) -> Int? {
        guard let line else { return nil }
        return line.prefix { $0 != "(" }.matches(of: /:(\d+)/).last.flatMap { Int($0.output.1) }
    }

    /// Starts `coplay serve` with `arguments` (the listen address may give port 0) and waits for its
    /// "listening" line, which it prints once it accepts connections; returns the process and the bound port.
    static func startRelay(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (ChildProcess, Int) {
        let relay = try await start(["serve"] + arguments)
        let line = await relay.waitForLine(timeout: timeout) { $0.hasPrefix("coplay relay listening on") }
        guard let port = port(in: line) else {
            relay.kill()
            throw CocoaError(.fileReadUnknown, userInfo: [
                NSLocalizedDescriptionKey: "coplay serve did not start (\(relay.termination?.description ?? "no listening line")): \(relay.stderr.suffix(2000))",
            ])
        }
        return (relay, port)
    }
}
