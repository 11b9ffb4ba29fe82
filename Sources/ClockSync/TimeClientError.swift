/// Why a ``TimeClient`` stopped.
public struct TimeClientError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Sendable, Hashable {
        case refused(KissCode)
        case noResponse(attempts: Int)
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The server sent DENY or RSTR: the client must stop polling it.
    ///
    /// - Parameter code: The kiss code received.
    public static func refused(_ code: KissCode) -> TimeClientError { .init(.refused(code)) }

    /// No usable response arrived.
    ///
    /// - Parameter attempts: How many requests were sent.
    public static func noResponse(attempts: Int) -> TimeClientError { .init(.noResponse(attempts: attempts)) }

    /// The kiss code when the server refused service, else `nil`.
    public var refusalCode: KissCode? {
        if case .refused(let code) = code { return code }
        return nil
    }

    public var description: String {
        switch code {
        case .refused(let code):
            "the time server refused service (kiss-o'-death \(code)); not polling it again"
        case .noResponse(let attempts):
            "no usable response from the time server after \(attempts) request(s)"
        }
    }
}
