/// An error from the impairment proxy.
package struct NetworkEmulationError: Error, CustomStringConvertible, Sendable {
    private enum Code: Sendable {
        case invalidProfile(String)
        case notStarted
        case alreadyStarted
    }

    private let code: Code

    private init(_ code: Code) { self.code = code }

    /// A profile or configuration value is out of range.
    package static func invalidProfile(_ reason: String) -> NetworkEmulationError { .init(.invalidProfile(reason)) }

    /// The proxy was used before ``ImpairmentProxy/start()``.
    package static var notStarted: NetworkEmulationError { .init(.notStarted) }

    /// ``ImpairmentProxy/start()`` was called twice.
    package static var alreadyStarted: NetworkEmulationError { .init(.alreadyStarted) }

    package var description: String {
        switch code {
        case .invalidProfile(let reason): "invalid impairment: \(reason)"
        case .notStarted: "the impairment proxy is not started"
        case .alreadyStarted: "the impairment proxy is already started"
        }
    }
}
