import Logging
import NIOCore
import Synchronization

/// The untyped core of a group session: one connection at a time, the end-to-end crypto,
/// membership, activity convergence and message dispatch. ``GroupSession``,
/// ``GroupSessionMessenger`` and ``GroupStateObserver`` are typed views on it.
///
/// The engine is the shell around a ``MemberStateMachine``, as postgres-nio's `ConnectionPool`
/// is around its `PoolStateMachine`: every event (a frame, a command, a connection's end, a
/// keepalive tick, a reconnect attempt) is fed to the machine under one lock, and the
/// ``MemberStateMachine/Action``s it returns are carried out after that lock is released.
/// Message handlers and stream consumers therefore never run under the lock: a handler may
/// send, subscribe or cancel a subscription. Carrying out actions is serialised by a second
/// lock, `delivery`, taken before the state lock (and not again by the task already holding
/// it), so that every handler and stream sees events one at a time and in the machine's order:
/// messages in the relay's sequence order, and a sender's frames written in sender-sequence
/// order. All I/O runs in ``run(first:)``, the engine's one task (`SessionEngine+Run.swift`).
final class SessionEngine: Sendable {
    /// A message subscriber: gets the envelope body and context.
    typealias MessageHandler = @Sendable ([UInt8], MessageContext) -> Void
    typealias Action = MemberStateMachine.Action

    /// A registered message handler; `finish` runs once when the session is invalidated.
    struct Handler: Sendable {
        let deliver: MessageHandler
        let finish: (@Sendable () -> Void)?
    }

    /// A subscriber to one kind of change; `finish` runs once when the session is invalidated.
    struct Subscriber<Value: Sendable>: Sendable {
        let yield: @Sendable (Value) -> Void
        let finish: @Sendable () -> Void
    }

    /// What sits behind the state lock: the machine, the current connection and the
    /// subscribers the machine's actions are carried out to.
    struct Shell: Sendable {
        var machine: MemberStateMachine
        /// The current connection; replaced on every reconnect.
        var connection: any TransportConnection
        var handlers: [String: [Int: Handler]] = [:]
        var states: [Int: Subscriber<GroupSessionState>] = [:]
        var participants: [Int: Subscriber<Set<Participant>>] = [:]
        var activities: [Int: Subscriber<[UInt8]>] = [:]
        var errors: [Int: Subscriber<GroupSessionError>] = [:]
        var links: [Int: Subscriber<GroupSessionConnectionState>] = [:]
        /// Armed waits (``SessionSignal``), by id; all failed when the session is invalidated.
        var signals: [Int: SessionSignal] = [:]
        var ackCallbacks: [UInt64: @Sendable (_ stamp: UInt64, _ senderSequence: UInt64) -> Void] = [:]
        private var nextID = 0

        init(machine: MemberStateMachine, connection: any TransportConnection) {
            self.machine = machine
            self.connection = connection
        }

        mutating func makeID() -> Int {
            nextID += 1
            return nextID
        }
    }

    let session: SessionID
    let local: ParticipantID
    let activityIdentifier: String
    let keys: SessionKeys
    let transport: any SessionTransport
    let policy: ReconnectPolicy
    let logger: Logger
    /// Attachments (`GroupSessionJournal`); see `Journal/JournalClient.swift`.
    let journal: JournalClient
    let inner: Mutex<Shell>
    /// Held while actions are carried out (see the type's description); never while waiting.
    let delivery = Mutex(())
    /// Work started by message handlers that must outlive the handler (opening a successor
    /// session): run as children of ``run(first:)``.
    let jobs: AsyncStream<@Sendable () async -> Void>
    let jobsContinuation: AsyncStream<@Sendable () async -> Void>.Continuation
    /// Opened when the session is invalidated: ends a reconnect's wait.
    let stopped = Latch()
    /// The origin of the engine's monotonic time (``uptime``), which the machine runs on.
    let origin = ContinuousClock.now

    /// The tasks (by engine) that hold `delivery` now: a handler that calls back into its engine
    /// must not take it again.
    @TaskLocal static var delivering: Set<ObjectIdentifier> = []

    /// Largest application message body.
    static let maximumMessageSize = MemberStateMachine.maximumMessageSize

    private init(
        keys: SessionKeys, local: ParticipantID, activityIdentifier: String, connection: any TransportConnection,
        transport: any SessionTransport, policy: ReconnectPolicy, logger: Logger
    ) {
        self.session = keys.session
        self.keys = keys
        self.local = local
        self.activityIdentifier = activityIdentifier
        self.transport = transport
        self.policy = policy
        var logger = logger
        logger[metadataKey: "session"] = "\(keys.session)"
        logger[metadataKey: "participant"] = "\(local)"
        self.logger = logger
        journal = JournalClient(keys: keys, local: local, connection: connection, logger: logger)
        inner = Mutex(Shell(
            machine: MemberStateMachine(
                keys: keys, local: local, activityIdentifier: activityIdentifier, policy: policy, now: .zero),
            connection: connection))
        (jobs, jobsContinuation) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
    }

    /// The engine's monotonic time: time since it was created.
    var uptime: Duration { origin.duration(to: .now) }

    /// Connects, authenticates with the invite's join token and waits for the welcome and the
    /// retained frames, leaving the member admitted (`waiting`).
    static func open(
        invite: Invite, transport: any SessionTransport, activityIdentifier: String, logger: Logger,
        policy: ReconnectPolicy = ReconnectPolicy(), timeout: Duration = .seconds(30)
    ) async throws -> SessionEngine {
        // A node of a relay service that does not serve the session redirects (the transport
        // then tries the node it named), or is briefly unable to: try again, a few times.
        let started = ContinuousClock.now
        var attempt = 0
        while true {
            do {
                return try await openOnce(
                    invite: invite, transport: transport, activityIdentifier: activityIdentifier, logger: logger,
                    policy: policy, timeout: timeout)
            } catch let error as GroupSessionError
                where (error.relayCode == .redirect || error.relayCode == .unavailable) && attempt < 8
                && started.duration(to: .now) < timeout
            {
                attempt += 1
                logger.info("connecting again", metadata: ["reason": "\(error)"])
                if error.relayCode == .unavailable { try await Task.sleep(for: policy.delay(forAttempt: attempt)) }
            }
        }
    }

    private static func openOnce(
        invite: Invite, transport: any SessionTransport, activityIdentifier: String, logger: Logger,
        policy: ReconnectPolicy, timeout: Duration
    ) async throws -> SessionEngine {
        let keys = SessionKeys(invite: invite)
        let connection = try await transport.makeConnection(logger: logger)
        let engine = SessionEngine(
            keys: keys, local: .random(), activityIdentifier: activityIdentifier, connection: connection,
            transport: transport, policy: policy, logger: logger)
        // The member side's one unstructured task: the session's `run()`, which owns everything
        // the session does (the connection's I/O, the read loop, the keepalive, reconnects, the
        // successor's opening) and returns once the session is invalidated and its last
        // connection closed. It cannot be a child of the caller's task: `accept` and `activate`
        // hand out a live session that outlives the call (the GroupActivities shape the CLI, the
        // adapters and the tests use), and no caller runs a `run()` of its own.
        Task { await engine.run(first: connection) }
        do {
            try await engine.firstSignal(timeout: timeout, "the relay's welcome") { shell, id in
                shell.machine.expectWelcome(waiter: id)
            }
        } catch {
            engine.invalidate(.refused("\(error)"))
            if let failure = engine.inner.withLock({ $0.machine.transportFailure }) { throw failure }
            throw error
        }
        return engine
    }

    // MARK: Carrying out actions

    /// Runs `body` holding `delivery`, unless this task already holds it for this engine.
    private func delivering<R: Sendable>(_ body: () throws -> R) throws -> R {
        let me = ObjectIdentifier(self)
        if Self.delivering.contains(me) { return try body() }
        return try delivery.withLock { _ in
            try Self.$delivering.withValue(Self.delivering.union([me])) { try body() }
        }
    }

    /// Feeds an event to the machine (`body`, under the state lock) and carries out the actions
    /// it returns, in order, after the lock is released.
    ///
    /// - Throws: What `body` throws, or the first error writing a frame other than a closed
    ///   connection (a full queue).
    @discardableResult
    func performThrowing<R: Sendable>(_ body: (inout Shell) throws -> (R, [Action])) throws -> R {
        try delivering {
            let (result, effects) = try inner.withLock { shell -> (R, [Effect]) in
                let (result, actions) = try body(&shell)
                return (result, resolve(actions, in: &shell))
            }
            var failure: (any Error)?
            for effect in effects {
                switch effect {
                case .send(let connection, let frame):
                    do { try connection.send(frame) } catch let error as GroupSessionError
                        where error.isSameKind(as: .connectionClosed) {
                        // A connection that closed but is not noticed yet: the frame waits in
                        // `unacked` for the resume (or was unreliable).
                    } catch { failure = failure ?? error }
                case .run(let action):
                    action()
                }
            }
            if let failure { throw failure }
            return result
        }
    }

    /// ``performThrowing(_:)`` for events that cannot fail.
    func perform(_ body: (inout Shell) -> [Action]) {
        _ = try? performThrowing { shell in ((), body(&shell)) }
    }

    /// One action, bound to what it touches (taken under the state lock).
    enum Effect: Sendable {
        case send(any TransportConnection, Frame)
        case run(@Sendable () -> Void)
    }

    private func resolve(_ actions: [Action], in shell: inout Shell) -> [Effect] {
        var effects: [Effect] = []
        effects.reserveCapacity(actions.count)
        func each<T: Sendable>(_ subscribers: [Int: Subscriber<T>], _ value: T) {
            guard !subscribers.isEmpty else { return }
            let yields = subscribers.sorted { $0.key < $1.key }.map(\.value.yield)
            effects.append(.run { for yield in yields { yield(value) } })
        }
        for action in actions {
            switch action {
            case .send(let frame):
                effects.append(.send(shell.connection, frame))
            case .closeConnection:
                effects.append(.run { [connection = shell.connection] in connection.close() })
            case .deliver(let name, let body, let context):
                guard let handlers = shell.handlers[name], !handlers.isEmpty else { break }
                let delivers = handlers.sorted { $0.key < $1.key }.map(\.value.deliver)
                effects.append(.run { for deliver in delivers { deliver(body, context) } })
            case .acknowledged(let senderSequence, let stamp):
                if let callback = shell.ackCallbacks.removeValue(forKey: senderSequence) {
                    effects.append(.run { callback(stamp, senderSequence) })
                }
            case .stateChanged(let state): each(shell.states, state)
            case .participantsChanged(let participants): each(shell.participants, participants)
            case .activityChanged(let bytes): each(shell.activities, bytes)
            case .linkChanged(let link): each(shell.links, link)
            case .relayError(let error): each(shell.errors, error)
            case .fire(let id, let value):
                if let signal = shell.signals.removeValue(forKey: id) { effects.append(.run { signal.fire(value) }) }
            case .fail(let id, let error):
                if let signal = shell.signals.removeValue(forKey: id) { effects.append(.run { signal.fail(error) }) }
            case .reconnect:
                // Journal transfers do not resume: the ones in flight fail (the caller retries).
                effects.append(.run { [journal] in journal.fail(all: .connectionClosed) })
            case .invalidated(let reason):
                effects.append(invalidation(reason, in: &shell))
            case .log(let level, let message, let metadata):
                effects.append(.run { [logger] in logger.log(level: level, "\(message)", metadata: metadata) })
            }
        }
        return effects
    }

    /// Takes every subscriber, handler and waiter out of `shell` and returns what ends them.
    private func invalidation(_ reason: GroupSessionInvalidationReason, in shell: inout Shell) -> Effect {
        var finish: [@Sendable () -> Void] = []
        finish += shell.states.values.map(\.finish)
        finish += shell.participants.values.map(\.finish)
        finish += shell.activities.values.map(\.finish)
        finish += shell.errors.values.map(\.finish)
        finish += shell.links.values.map(\.finish)
        finish += shell.handlers.values.flatMap { $0.values.compactMap(\.finish) }
        shell.states.removeAll()
        shell.participants.removeAll()
        shell.activities.removeAll()
        shell.errors.removeAll()
        shell.links.removeAll()
        shell.handlers.removeAll()
        shell.ackCallbacks.removeAll()
        let signals = Array(shell.signals.values)
        shell.signals.removeAll()
        let connection = shell.connection
        return .run { [finish, journal, logger, stopped] in
            for action in finish { action() }
            connection.close()
            journal.fail(all: .invalidated("\(reason)"), close: true)
            logger.info("session invalidated", metadata: ["reason": "\(reason)"])
            for signal in signals { signal.fail(GroupSessionError.invalidated("\(reason)")) }
            stopped.open()
        }
    }

    // MARK: State

    var state: GroupSessionState { inner.withLock { $0.machine.state } }
    var participants: Set<Participant> { inner.withLock { $0.machine.participants } }
    var activity: [UInt8]? { inner.withLock { $0.machine.activity } }
    var rejectedFrames: Int { inner.withLock { $0.machine.rejectedFrames } }
    /// The connection state now.
    var connectionState: GroupSessionConnectionState { inner.withLock { $0.machine.link } }

    func stateUpdates() -> AsyncStream<GroupSessionState> {
        stream(\.states) { $0.state }
    }

    func participantUpdates() -> AsyncStream<Set<Participant>> {
        stream(\.participants) { $0.participants }
    }

    /// The current activity, then every change, each passed through `transform` (`nil` skips it).
    func activityUpdates<T: Sendable>(_ transform: @escaping @Sendable ([UInt8]) -> T?) -> AsyncStream<T> {
        let (stream, continuation) = AsyncStream.makeStream(of: T.self)
        let id = subscribe(\.activities, initial: { $0.activity }) { bytes in
            if let value = transform(bytes) { continuation.yield(value) }
        } finish: {
            continuation.finish()
        }
        if let id { continuation.onTermination = { [weak self] _ in self?.unsubscribe(\.activities, id) } }
        return stream
    }

    func errorUpdates() -> AsyncStream<GroupSessionError> {
        stream(\.errors) { _ in nil }
    }

    /// The connection state now, then every change; finishes after `invalidated`.
    func connectionStateUpdates() -> AsyncStream<GroupSessionConnectionState> {
        stream(\.links) { $0.link }
    }

    private func stream<T: Sendable>(
        _ path: WritableKeyPath<Shell, [Int: Subscriber<T>]> & Sendable,
        initial: @escaping (MemberStateMachine) -> T?
    ) -> AsyncStream<T> {
        let (stream, continuation) = AsyncStream.makeStream(of: T.self)
        let id = subscribe(path, initial: initial) { continuation.yield($0) } finish: { continuation.finish() }
        // Cancelling a consumer removes it directly: the engine never yields under its state lock.
        if let id { continuation.onTermination = { [weak self] _ in self?.unsubscribe(path, id) } }
        return stream
    }

    /// Registers a subscriber and hands it the current value (in order with every later one).
    ///
    /// - Returns: Its id, or `nil` if the session is already invalidated (it has then been
    ///   given the current value and finished).
    func subscribe<T: Sendable>(
        _ path: WritableKeyPath<Shell, [Int: Subscriber<T>]> & Sendable,
        initial: (MemberStateMachine) -> T?,
        yield: @escaping @Sendable (T) -> Void, finish: @escaping @Sendable () -> Void
    ) -> Int? {
        let subscriber = Subscriber(yield: yield, finish: finish)
        return try? delivering { () -> Int? in
            let (id, value) = inner.withLock { shell -> (Int?, T?) in
                let value = initial(shell.machine)
                guard !shell.machine.isInvalidated else { return (nil, value) }
                let id = shell.makeID()
                shell[keyPath: path][id] = subscriber
                return (id, value)
            }
            if let value { yield(value) }
            if id == nil { finish() }
            return id
        }
    }

    func unsubscribe<T: Sendable>(_ path: WritableKeyPath<Shell, [Int: Subscriber<T>]> & Sendable, _ id: Int) {
        _ = inner.withLock { $0[keyPath: path].removeValue(forKey: id) }
    }

    /// Registers a handler for messages named `name`; retained messages already held are
    /// handed to it at once (in order with every later message). `finish` runs once when the
    /// session is invalidated (at once if it already is). Returns a token for ``removeHandler(_:name:)``.
    func addHandler(
        name: String, finish: (@Sendable () -> Void)? = nil, _ handler: @escaping MessageHandler
    ) -> Int {
        let entry = Handler(deliver: handler, finish: finish)
        return (try? delivering { () -> Int in
            let (id, retained, invalidated) = inner.withLock { shell in
                let id = shell.makeID()
                let invalidated = shell.machine.isInvalidated
                if !invalidated { shell.handlers[name, default: [:]][id] = entry }
                return (id, shell.machine.retained(named: name), invalidated)
            }
            for (body, context) in retained { handler(body, context) }
            if invalidated { finish?() }
            return id
        }) ?? 0
    }

    func removeHandler(_ id: Int, name: String) {
        inner.withLock { _ = $0.handlers[name]?.removeValue(forKey: id) }
    }

    /// Starts `job` as a child of ``run(first:)`` (from a handler that must not wait); dropped if
    /// the session's run is over.
    func spawn(_ job: @escaping @Sendable () async -> Void) {
        jobsContinuation.yield(job)
    }

    // MARK: Commands

    func join(timeout: Duration = .seconds(30)) async throws {
        guard try inner.withLock({ try $0.machine.needsJoin() }) else { return }
        try await firstSignal(timeout: timeout, "the relay to confirm the join") { shell, id in
            shell.machine.join(waiter: id)
        }
        try await firstSignal(timeout: timeout, "the relay to store the session's activity") { shell, id in
            try shell.machine.publishInitialActivity(waiter: id, now: uptime) ?? [.fire(waiter: id, value: 0)]
        }
    }

    func leave() {
        perform { $0.machine.leave() }
    }

    /// Leaves, and returns once the `leave` frame is written and the connection closed (or after
    /// `timeout`): a process about to exit calls this, so the others see it leave at once.
    func leave(waitingUpTo timeout: Duration) async {
        let connection = inner.withLock { $0.connection }
        leave()
        await connection.closeAndWait(timeout: timeout)
    }

    func end() throws {
        try performThrowing { shell in ((), try shell.machine.end()) }
    }

    /// Sets the activity locally before joining; it is published when ``join(timeout:)`` completes.
    func setInitialActivity(_ bytes: [UInt8]) {
        inner.withLock { $0.machine.setInitialActivity(bytes) }
    }

    /// Publishes a new activity (retained); members converge on the one the relay ordered last.
    func setActivity(_ bytes: [UInt8]) throws {
        let now = uptime
        try performThrowing { shell in ((), try shell.machine.setActivity(bytes, now: now)) }
    }

    /// Seals and queues one application message.
    ///
    /// - Returns: The sender sequence it was given.
    @discardableResult
    func send(
        name: String, body: [UInt8], recipients: [ParticipantID], retainName: String?, evictable: Bool = false,
        unreliable: Bool, onAck: (@Sendable (_ stamp: UInt64, _ senderSequence: UInt64) -> Void)? = nil
    ) throws -> UInt64 {
        let now = uptime
        return try performThrowing { shell in
            let (senderSequence, actions) = try shell.machine.send(
                name: name, body: body, recipients: recipients, retainName: retainName, evictable: evictable,
                unreliable: unreliable, now: now)
            if let onAck { shell.ackCallbacks[senderSequence] = onAck }
            return (senderSequence, actions)
        }
    }

    /// Ends this member's session object: notifies and finishes every stream, closes the connection.
    func invalidate(_ reason: GroupSessionInvalidationReason) {
        perform { $0.machine.invalidate(reason) }
    }
}
