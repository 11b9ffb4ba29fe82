/// An error raised by the benchmark runner or its analysis.
///
/// Compare errors by their ``description`` or catch them as a whole; the cases are not public so new
/// ones can be added without breaking callers.
package struct BenchError: Error, CustomStringConvertible, Sendable {
    private enum Code: Sendable {
        case malformedLine(player: String, line: Int, reason: String)
        case missingTool(String)
        case scenarioFailed(String)
        case timeout(String)
        case ipc(String)
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    /// A JSON Lines event stream had a line that is not a valid event.
    package static func malformedLine(player: String, line: Int, reason: String) -> BenchError {
        BenchError(.malformedLine(player: player, line: line, reason: reason))
    }

    /// A program the scenario needs is not installed.
    package static func missingTool(_ name: String) -> BenchError { BenchError(.missingTool(name)) }

    /// The scenario could not run to completion.
    package static func scenarioFailed(_ reason: String) -> BenchError { BenchError(.scenarioFailed(reason)) }

    /// Something the scenario waited for did not happen in time.
    package static func timeout(_ what: String) -> BenchError { BenchError(.timeout(what)) }

    /// A media player's IPC channel failed.
    package static func ipc(_ reason: String) -> BenchError { BenchError(.ipc(reason)) }

    package var description: String {
        switch code {
        case let .malformedLine(player, line, reason):
            "event stream of \(player), line \(line): \(reason)"
        case let .missingTool(name):
            "\(name) is not installed (run scripts/install-deps.sh --bench)"
        case let .scenarioFailed(reason):
            "scenario failed: \(reason)"
        case let .timeout(what):
            "timed out waiting for \(what)"
        case let .ipc(reason):
            "player IPC: \(reason)"
        }
    }
}
