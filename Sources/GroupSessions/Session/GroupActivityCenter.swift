import Logging

/// Where sessions of one activity type come from: activating an activity creates one,
/// accepting an invite joins one, and both are delivered on ``sessions``. When another member
/// replaces a session with a new one (``activate(_:replacing:timeout:)``), the center opens
/// the successor and delivers it on ``sessions`` too.
///
/// ```swift
/// let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: 7000), logger: logger)
/// Task { for await session in center.sessions { try await session.join() } }
/// let invite = Invite.generate(host: "127.0.0.1", port: 7000)
/// _ = try await center.activate(WatchMovie(movieID: "42"), invite: invite)
/// ```
public final class GroupActivityCenter<Activity: GroupActivity>: Sendable {
    let transport: any SessionTransport
    let logger: Logger
    let reconnectPolicy: ReconnectPolicy
    let continuation: AsyncStream<GroupSession<Activity>>.Continuation

    /// Every session this center creates or accepts, in order.
    public let sessions: AsyncStream<GroupSession<Activity>>

    /// Creates a center using `transport`.
    ///
    /// - Parameters:
    ///   - transport: The relay (``RelayTransport``) or ``InMemoryTransport``.
    ///   - logger: Where sessions log (info or below; never payloads or secrets).
    ///   - reconnectPolicy: How sessions reconnect and resume after a lost connection.
    public init(
        transport: any SessionTransport, logger: Logger,
        reconnectPolicy: ReconnectPolicy = ReconnectPolicy()
    ) {
        self.transport = transport
        self.logger = logger
        self.reconnectPolicy = reconnectPolicy
        (sessions, continuation) = AsyncStream.makeStream(of: GroupSession<Activity>.self)
    }

    /// Starts `activity` as a new session named by `invite` (normally a fresh
    /// ``Invite/generate(host:port:suite:usesTLS:relayKeyPin:)``). The session is `waiting`; the activity is published
    /// to everyone when it joins.
    ///
    /// - Parameters:
    ///   - activity: The session's first activity.
    ///   - invite: The session to create.
    ///   - timeout: How long to wait for the relay's welcome.
    /// - Throws: ``GroupSessionError`` if the relay refuses, or
    ///   ``GroupSessionError/timedOut(_:)`` if it does not answer within `timeout`.
    public func activate(
        _ activity: Activity, invite: Invite, timeout: Duration = .seconds(30)
    ) async throws -> GroupSession<Activity> {
        let engine = try await SessionEngine.open(
            invite: invite, transport: transport, activityIdentifier: Activity.activityIdentifier, logger: logger,
            policy: reconnectPolicy, timeout: timeout)
        engine.setInitialActivity(try GroupSession<Activity>.encode(activity))
        let session = GroupSession<Activity>(engine: engine, invite: invite)
        watchForSuccessor(of: session)
        continuation.yield(session)
        return session
    }

    /// Accepts an invite to an existing session. The session is `waiting`, with the activity
    /// and retained messages already received.
    ///
    /// - Parameters:
    ///   - invite: The session to open.
    ///   - timeout: How long to wait for the relay's welcome and the retained frames.
    /// - Throws: ``GroupSessionError`` if the relay refuses (e.g. a wrong secret), does not
    ///   answer within `timeout` (``GroupSessionError/timedOut(_:)``), or the session has no
    ///   activity of this type.
    public func accept(_ invite: Invite, timeout: Duration = .seconds(30)) async throws -> GroupSession<Activity> {
        let engine = try await SessionEngine.open(
            invite: invite, transport: transport, activityIdentifier: Activity.activityIdentifier, logger: logger,
            policy: reconnectPolicy, timeout: timeout)
        guard let bytes = engine.activity, (try? GroupSession<Activity>.decode(bytes)) != nil else {
            engine.leave()
            throw GroupSessionError.noActivity
        }
        let session = GroupSession<Activity>(engine: engine, invite: invite)
        watchForSuccessor(of: session)
        continuation.yield(session)
        return session
    }

    /// Stops delivering sessions on ``sessions``.
    public func finish() { continuation.finish() }
}
