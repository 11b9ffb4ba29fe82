/// Why the relay's session store could not read or write its data directory.
public struct SessionStoreError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable { case io, corrupt }
    private let code: Code
    private let detail: String

    /// A file operation failed.
    static func io(_ detail: String) -> Self { Self(code: .io, detail: detail) }
    /// A stored file does not parse.
    static func corrupt(_ detail: String) -> Self { Self(code: .corrupt, detail: detail) }

    public var description: String {
        switch code {
        case .io: "session store I/O failed: \(detail)"
        case .corrupt: "session store file is corrupt: \(detail)"
        }
    }
}
