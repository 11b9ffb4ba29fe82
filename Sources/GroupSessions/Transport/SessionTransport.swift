import Logging

/// A way to reach a session hub: the network relay (``RelayTransport``) or an in-process one
/// (``InMemoryTransport``).
///
/// A transport carries relay-protocol frames and nothing else: encryption, envelopes and
/// session semantics live above it in ``GroupSession``, so every transport routes the same
/// sealed frames.
///
/// ```swift
/// let transport: any SessionTransport = InMemoryTransport()
/// let connection = try await transport.connect(logger: logger)
/// try connection.send(helloFrame)
/// for try await frame in connection.inbound { ... }
/// ```
public protocol SessionTransport: Sendable {
    /// Opens a new connection to the hub.
    ///
    /// - Parameter logger: Where the connection logs (at info or below).
    func connect(logger: Logger) async throws -> any TransportConnection

    /// Opens a new connection whose I/O the caller runs with ``TransportConnection/run()``, in a
    /// task it owns (a session runs it in its own `run()`, beside its read loop): nothing of the
    /// connection outlives that task.
    ///
    /// The default is ``connect(logger:)``: a connection that runs on its own, whose `run()` returns at once.
    ///
    /// - Parameter logger: Where the connection logs (at info or below).
    func makeConnection(logger: Logger) async throws -> any TransportConnection
}

extension SessionTransport {
    /// A connection from ``connect(logger:)``: it needs no owner to run it.
    public func makeConnection(logger: Logger) async throws -> any TransportConnection {
        try await connect(logger: logger)
    }
}

/// One open connection to a session hub.
public protocol TransportConnection: Sendable {
    /// Queues `frame` for sending; frames are sent in the order of the calls.
    ///
    /// - Throws: ``GroupSessionError`` if the connection is closed or its queue is full.
    func send(_ frame: Frame) throws
    /// Frames from the hub, in order; finishes when the connection closes, throws if it fails.
    var inbound: AsyncThrowingStream<Frame, any Error> { get }
    /// Closes the connection after the frames already queued.
    func close()
    /// Closes the connection after the frames already queued and returns once they are written
    /// and the connection is closed (or `timeout` has passed).
    func closeAndWait(timeout: Duration) async
    /// Runs the connection's I/O until it is closed, for a connection from
    /// ``SessionTransport/makeConnection(logger:)``; cancelling the calling task closes it.
    /// Connections that need no task of their own return at once.
    func run() async
}

extension TransportConnection {
    /// Connections that need no task of their own (in-process ones, or those that run their own I/O).
    public func run() async {}

    /// Connections that write synchronously need not wait.
    public func closeAndWait(timeout: Duration) async { close() }
}
