/// One time server a ``TimeClient`` may poll: a name for logs and how to reach it.
///
/// A client given several (the nodes of a relay service, in the invite's order) polls the first
/// and moves to the next when it stops answering (``TimeSourceFailover``). The transport is made
/// when the client first polls this server, and kept for when the client comes back to it.
///
/// ```swift
/// let source = TimeSource(name: "relay-2.example:7000") {
///     try await UDPTimeTransport.connect(host: "relay-2.example", port: 7000, timescale: timescale)
/// }
/// ```
public struct TimeSource: Sendable, CustomStringConvertible {
    /// How the server is named in logs and in ``TimeSourceChange``.
    public var name: String
    /// Makes the transport to the server (called at most once per client, unless it throws).
    public var connect: @Sendable () async throws -> any NTPTransport

    /// Creates a source that connects when first polled.
    ///
    /// - Parameters:
    ///   - name: How the server is named in logs.
    ///   - connect: Makes the transport (its timestamps on the synced clock's timescale).
    public init(name: String, connect: @escaping @Sendable () async throws -> any NTPTransport) {
        self.name = name
        self.connect = connect
    }

    /// Creates a source over a transport that already exists.
    ///
    /// - Parameters:
    ///   - name: How the server is named in logs.
    ///   - transport: The transport to the server.
    public init(name: String, transport: any NTPTransport) {
        self.init(name: name) { transport }
    }

    public var description: String { name }
}

/// A ``TimeClient`` moved from one time server to another.
public struct TimeSourceChange: Sendable, Hashable, CustomStringConvertible {
    /// The server given up on.
    public var from: String
    /// The server polled from now on.
    public var to: String
    /// Why: `"no answer"` (unanswered polls in a row) or the error the old server gave.
    public var reason: String

    /// Creates a record of a change.
    ///
    /// - Parameters:
    ///   - from: The server given up on.
    ///   - to: The server polled from now on.
    ///   - reason: Why.
    public init(from: String, to: String, reason: String) {
        self.from = from
        self.to = to
        self.reason = reason
    }

    public var description: String { "from \(from) to \(to) (\(reason))" }
}
