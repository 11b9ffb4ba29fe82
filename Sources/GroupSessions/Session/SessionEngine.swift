import Logging
import NIOCore
import RateLimiting
import Synchronization

/// The untyped core of a group session: one connection, the end-to-end crypto, membership,
/// activity convergence and message dispatch. ``GroupSession``, ``GroupSessionMessenger`` and
/// ``GroupStateObserver`` are typed views on it.
///
/// All state sits behind one lock so that assigning a sender sequence, sealing and queueing a
/// frame happen atomically: concurrent senders can never reorder their own frames.
final class SessionEngine: Sendable {
    /// A message subscriber: gets the envelope body and context.
    typealias MessageHandler = @Sendable ([UInt8], MessageContext) -> Void

    struct Inner: ~Copyable {
        var state: GroupSessionState = .waiting
        /// The current connection; replaced on every reconnect.
        var connection: any TransportConnection
        /// Bumped with every new connection, so a stale connection's end is ignored.
        var generation = 0
        var link: GroupSessionConnectionState = .connected
        var lossStarted: ContinuousClock.Instant?
        var lastConnectError = "the connection was lost"
        /// A transport mismatch (TLS or not, certificate, pin) the connection ended with: `open`
        /// reports it as such rather than as a refused invite.
        var transportFailure: RelayTransportError?
        var reconnectTaskRunning = false
        /// A resuming hello was sent on the current connection; its welcome is awaited.
        var resuming = false
        /// Pings and the silence deadline of the current connection (`SessionEngine+Keepalive.swift`).
        var keepalive: Keepalive
        var unacked = UnackedFrames()
        var connectionStreams: [Int: AsyncStream<GroupSessionConnectionState>.Continuation] = [:]
        var members: Set<ParticipantID> = []
        var cipher: PayloadCipher
        var replay = ReplayGuard()
        var nextSenderSequence: UInt64 = 1
        var maximumPayload = 300 * 1024
        var ratePerSecond = 2_000
        var burst = 20_000
        /// The sender's own limit, mirroring the relay's (`ratePerSecond`, `burst`; set from each welcome).
        var tokens = TokenBucket(capacity: 20_000, rate: 2_000, now: SessionEngine.bucketTime)
        var lastStamp: UInt64 = 0
        var activity: [UInt8]?
        var activityStamp: UInt64 = 0
        var publishActivityOnJoin = false
        var pendingActivity: [UInt64: [UInt8]] = [:]
        var ackCallbacks: [UInt64: @Sendable (_ stamp: UInt64, _ senderSequence: UInt64) -> Void] = [:]
        var retainedRemaining = 0
        var welcomed = false
        var welcomeWaiter: SessionSignal?
        var joinWaiter: SessionSignal?
        /// The creator's `join()` waits until the relay has stored the initial activity, so an
        /// `accept` that follows (from anywhere) finds it.
        var activityWaiter: (senderSequence: UInt64, signal: SessionSignal)?
        var messageHandlers: [String: [Int: MessageHandler]] = [:]
        var retainedMessages: [String: [[UInt8]: ([UInt8], MessageContext)]] = [:]
        var stateStreams: [Int: AsyncStream<GroupSessionState>.Continuation] = [:]
        var participantStreams: [Int: AsyncStream<Set<Participant>>.Continuation] = [:]
        var activityStreams: [Int: AsyncStream<[UInt8]>.Continuation] = [:]
        var errorStreams: [Int: AsyncStream<GroupSessionError>.Continuation] = [:]
        var nextSubscriber = 0
        var rejectedFrames = 0

        mutating func subscriberID() -> Int {
            nextSubscriber += 1
            return nextSubscriber
        }

        var participants: Set<Participant> { Set(members.map(Participant.init(id:))) }
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
    let inner: Mutex<Inner>
    /// The origin of the engine's monotonic time (``uptime``), which the keepalive runs on.
    let origin = ContinuousClock.now

    /// Share of the relay's rate and burst a sender allows itself (see `handleWelcome`).
    static let rateMargin = 0.8

    /// The origin of ``bucketTime``.
    private static let bucketOrigin = ContinuousClock.now
    /// Monotonic time for the send limit's ``TokenBucket``.
    static var bucketTime: Duration { bucketOrigin.duration(to: .now) }

    /// Largest application message body.
    static let maximumMessageSize = 256 * 1024

    /// Unacknowledged reliable bytes kept for re-sending above which sends fail with `queueFull`.
    static let maximumUnackedBytes = 64 << 20

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
        inner = Mutex(Inner(
            connection: connection, keepalive: Keepalive(policy: policy, now: .zero), cipher: PayloadCipher(keys: keys)))
    }

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
        let connection = try await transport.connect(logger: logger)
        let engine = SessionEngine(
            keys: keys, local: .random(), activityIdentifier: activityIdentifier, connection: connection,
            transport: transport, policy: policy, logger: logger)
        // The inbound loop lives as long as the connection; it ends when the connection closes.
        Task { await engine.serve(connection, generation: 0) }
        do {
            try await engine.firstSignal(timeout: timeout, "the relay's welcome") { signal in
                engine.inner.withLock { $0.welcomeWaiter = signal }
                try connection.send(
                    Frame(type: .hello, flags: .presenceBatches, session: keys.session, sender: engine.local,
                          payload: HelloPayload(token: keys.joinToken).encoded()))
            } disarm: { inner, signal in
                if inner.welcomeWaiter?.id == signal.id { inner.welcomeWaiter = nil }
            }
        } catch {
            engine.invalidate(.refused("\(error)"))
            if let failure = engine.inner.withLock({ $0.transportFailure }) { throw failure }
            throw error
        }
        return engine
    }

    // MARK: State

    var state: GroupSessionState { inner.withLock { $0.state } }
    var participants: Set<Participant> { inner.withLock { $0.participants } }
    var activity: [UInt8]? { inner.withLock { $0.activity } }
    var rejectedFrames: Int { inner.withLock { $0.rejectedFrames } }

    func stateUpdates() -> AsyncStream<GroupSessionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: GroupSessionState.self)
        subscribe(continuation, initial: { $0.state }, store: { $0.stateStreams[$1] = $2 },
                  remove: { $0.stateStreams[$1] = nil }, finished: { if case .invalidated = $0.state { true } else { false } })
        return stream
    }

    func participantUpdates() -> AsyncStream<Set<Participant>> {
        let (stream, continuation) = AsyncStream.makeStream(of: Set<Participant>.self)
        subscribe(continuation, initial: { $0.participants }, store: { $0.participantStreams[$1] = $2 },
                  remove: { $0.participantStreams[$1] = nil }, finished: { if case .invalidated = $0.state { true } else { false } })
        return stream
    }

    func activityUpdates() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        subscribe(continuation, initial: { $0.activity }, store: { $0.activityStreams[$1] = $2 },
                  remove: { $0.activityStreams[$1] = nil }, finished: { if case .invalidated = $0.state { true } else { false } })
        return stream
    }

    func errorUpdates() -> AsyncStream<GroupSessionError> {
        let (stream, continuation) = AsyncStream.makeStream(of: GroupSessionError.self)
        subscribe(continuation, initial: { _ in nil }, store: { $0.errorStreams[$1] = $2 },
                  remove: { $0.errorStreams[$1] = nil }, finished: { if case .invalidated = $0.state { true } else { false } })
        return stream
    }

    func subscribe<T: Sendable>(
        _ continuation: AsyncStream<T>.Continuation,
        initial: (borrowing Inner) -> T?,
        store: (inout Inner, Int, AsyncStream<T>.Continuation) -> Void,
        remove: @escaping @Sendable (inout Inner, Int) -> Void,
        finished: (borrowing Inner) -> Bool
    ) {
        let id: Int? = inner.withLock { inner in
            if let value = initial(inner) { continuation.yield(value) }
            if finished(inner) { return nil }
            let id = inner.subscriberID()
            store(&inner, id, continuation)
            return id
        }
        guard let id else {
            continuation.finish()
            return
        }
        // Not under the engine's lock from here: a consumer task cancelled while the engine yields to it
        // under that lock would hold its task's status lock and wait for ours (a lock-order inversion that
        // hung `coplay control`). The removal runs a moment later; yielding to an ended stream is a no-op.
        continuation.onTermination = { [weak self] _ in
            Task { self?.inner.withLock { remove(&$0, id) } }
        }
    }

    /// Registers a handler for messages named `name`; retained messages already held are
    /// handed to it at once. Returns a token for ``removeHandler(_:name:)``.
    func addHandler(name: String, _ handler: @escaping MessageHandler) -> Int {
        inner.withLock { inner in
            let id = inner.subscriberID()
            inner.messageHandlers[name, default: [:]][id] = handler
            for (body, context) in (inner.retainedMessages[name] ?? [:]).values.sorted(by: { $0.1.sequence < $1.1.sequence }) {
                handler(body, context)
            }
            return id
        }
    }

    func removeHandler(_ id: Int, name: String) {
        inner.withLock { _ = $0.messageHandlers[name]?.removeValue(forKey: id) }
    }

    // MARK: Commands

    func join(timeout: Duration = .seconds(30)) async throws {
        let alreadyJoined: Bool = try inner.withLock { inner in
            switch inner.state {
            case .joined: return true
            case .invalidated(let reason): throw GroupSessionError.invalidated("\(reason)")
            case .waiting: return false
            }
        }
        if alreadyJoined { return }
        try await firstSignal(timeout: timeout, "the relay to confirm the join") { signal in
            try inner.withLock { inner in
                inner.joinWaiter = signal
                try inner.connection.send(Frame(type: .join, session: session, sender: local))
            }
        } disarm: { inner, signal in
            if inner.joinWaiter?.id == signal.id { inner.joinWaiter = nil }
        }
        let publish = inner.withLock { inner -> [UInt8]? in
            defer { inner.publishActivityOnJoin = false }
            return inner.publishActivityOnJoin ? inner.activity : nil
        }
        guard let publish else { return }
        let retainKey = keys.retainKey(for: "coplay.activity")
        try await firstSignal(timeout: timeout, "the relay to store the session's activity") { signal in
            try inner.withLock { inner in
                let sequence = try sealAndSend(
                    Envelope(kind: .activity, name: activityIdentifier, body: publish), recipients: [],
                    retainKey: retainKey, unreliable: false, inner: &inner)
                inner.pendingActivity[sequence] = publish
                inner.activityWaiter = (sequence, signal)
            }
        } disarm: { inner, signal in
            if inner.activityWaiter?.signal.id == signal.id { inner.activityWaiter = nil }
        }
    }

    func leave() {
        inner.withLock { inner in
            if inner.link == .connected { try? inner.connection.send(Frame(type: .leave, session: session, sender: local)) }
        }
        invalidate(.left)
    }

    /// Leaves, and returns once the `leave` frame is written and the connection closed (or after
    /// `timeout`): a process about to exit calls this, so the others see it leave at once.
    func leave(waitingUpTo timeout: Duration) async {
        let connection = inner.withLock { $0.connection }
        leave()
        await connection.closeAndWait(timeout: timeout)
    }

    func end() throws {
        try inner.withLock { inner in
            guard case .joined = inner.state else { throw GroupSessionError.notJoined }
            try inner.connection.send(Frame(type: .end, session: session, sender: local))
        }
    }

    /// Sets the activity locally before joining; it is published when ``join(timeout:)`` completes.
    func setInitialActivity(_ bytes: [UInt8]) {
        inner.withLock { inner in
            inner.activity = bytes
            inner.publishActivityOnJoin = true
        }
    }

    /// Publishes a new activity (retained); members converge on the one the relay ordered last.
    func setActivity(_ bytes: [UInt8]) throws {
        let retainKey = keys.retainKey(for: "coplay.activity")
        try inner.withLock { inner in
            let sequence = try sealAndSend(
                Envelope(kind: .activity, name: activityIdentifier, body: bytes), recipients: [], retainKey: retainKey,
                unreliable: false, inner: &inner)
            inner.pendingActivity[sequence] = bytes
        }
    }

    /// Seals and queues one application message.
    ///
    /// - Returns: The sender sequence it was given.
    @discardableResult
    func send(
        name: String, body: [UInt8], recipients: [ParticipantID], retainName: String?, unreliable: Bool,
        onAck: (@Sendable (_ stamp: UInt64, _ senderSequence: UInt64) -> Void)? = nil
    ) throws -> UInt64 {
        guard body.count <= Self.maximumMessageSize else {
            throw GroupSessionError.messageTooLarge(size: body.count, limit: Self.maximumMessageSize)
        }
        let retainKey = retainName.map { keys.retainKey(for: "message:" + $0) } ?? []
        return try inner.withLock { inner in
            let senderSequence = try sealAndSend(
                Envelope(kind: .message, name: name, body: body), recipients: recipients, retainKey: retainKey,
                unreliable: unreliable, inner: &inner)
            if let onAck { inner.ackCallbacks[senderSequence] = onAck }
            return senderSequence
        }
    }

    private func sealAndSend(
        _ envelope: Envelope, recipients: [ParticipantID], retainKey: [UInt8], unreliable: Bool, inner: inout Inner
    ) throws -> UInt64 {
        switch inner.state {
        case .joined: break
        case .waiting: throw GroupSessionError.notJoined
        case .invalidated(let reason): throw GroupSessionError.invalidated("\(reason)")
        }
        let plaintext = envelope.encoded()
        let route = DataRoute(senderSequence: inner.nextSenderSequence, recipients: recipients, retainKey: retainKey)
        let payloadSize = route.encodedLength + plaintext.count + 16
        guard payloadSize <= inner.maximumPayload else {
            throw GroupSessionError.messageTooLarge(size: payloadSize, limit: inner.maximumPayload)
        }
        // Mirror the relay's token bucket so the sender gets a clear error instead of a drop.
        inner.tokens.refill(now: Self.bucketTime)
        guard inner.tokens.hasToken else {
            throw GroupSessionError.rateLimited(ratePerSecond: inner.ratePerSecond, burst: inner.burst)
        }
        let frame = try inner.cipher.seal(
            plaintext, route: route, flags: unreliable ? .unreliable : [], sender: local)
        if !unreliable {
            guard inner.unacked.bytes < Self.maximumUnackedBytes else { throw GroupSessionError.queueFull }
        }
        // While reconnecting, reliable frames wait in `unacked` and unreliable ones are dropped;
        // a connection that closed but is not noticed yet is the same case.
        if inner.link == .connected {
            do { try inner.connection.send(frame) } catch let error as GroupSessionError
                where error.isSameKind(as: .connectionClosed) {}
        }
        if !unreliable { inner.unacked.append(frame, senderSequence: route.senderSequence) }
        inner.tokens.spend()
        inner.nextSenderSequence += 1
        return route.senderSequence
    }

    // MARK: Inbound

    func readLoop(_ connection: any TransportConnection, generation: Int) async {
        do {
            for try await frame in connection.inbound {
                let now = uptime
                inner.withLock { inner in
                    if inner.generation == generation { inner.keepalive.heard(at: now) }
                }
                handle(frame)
            }
            connectionDropped(generation: generation, reason: "the relay closed the connection")
        } catch {
            if let failure = error as? RelayTransportError { inner.withLock { $0.transportFailure = failure } }
            connectionDropped(generation: generation, reason: "\(error)")
        }
    }

    private func handle(_ frame: Frame) {
        switch frame.type {
        case .welcome: handleWelcome(frame)
        case .data: handleData(frame)
        case .ack: handleAck(frame)
        case .joined, .left: handlePresence(frame)
        case .end: invalidate(.ended(by: Participant(id: frame.sender)))
        case .error: handleError(frame)
        case .ping:
            let pong = Frame(type: .pong, session: session, sender: local, sequence: frame.sequence)
            inner.withLock { inner in try? inner.connection.send(pong) }
        case let type where type.isJournal: journal.handle(frame)
        default: break
        }
    }

    private func handleWelcome(_ frame: Frame) {
        guard let welcome = try? WelcomePayload(decoding: frame.payload) else {
            invalidate(.refused("malformed welcome"))
            return
        }
        if resumed(welcome) { return }
        let waiter = inner.withLock { inner -> SessionSignal? in
            welcomedAfterReconnect(inner: &inner)
            inner.welcomed = true
            inner.maximumPayload = Int(welcome.maximumPayload)
            // Keep a margin below the relay's limits: network jitter can bunch frames sent
            // at an allowed pace, and an accepted send must never be refused by the relay.
            inner.ratePerSecond = max(1, Int(Double(welcome.ratePerSecond) * Self.rateMargin))
            inner.burst = max(1, Int(Double(welcome.burst) * Self.rateMargin))
            inner.tokens = TokenBucket(
                capacity: Double(inner.burst), rate: Double(inner.ratePerSecond), now: Self.bucketTime)
            inner.lastStamp = welcome.sequence
            inner.members = Set(welcome.members)
            inner.retainedRemaining = Int(welcome.retainedCount)
            for continuation in inner.participantStreams.values { continuation.yield(inner.participants) }
            guard inner.retainedRemaining == 0 else { return nil }
            defer { inner.welcomeWaiter = nil }
            return inner.welcomeWaiter
        }
        waiter?.fire()
    }

    private func handleData(_ frame: Frame) {
        let waiter = inner.withLock { inner -> SessionSignal? in
            var waiter: SessionSignal?
            inner.lastStamp = max(inner.lastStamp, frame.sequence)
            if frame.flags.contains(.replayed) && inner.retainedRemaining > 0 {
                inner.retainedRemaining -= 1
                if inner.retainedRemaining == 0 {
                    waiter = inner.welcomeWaiter
                    inner.welcomeWaiter = nil
                }
            }
            let route: DataRoute
            let plaintext: [UInt8]
            do {
                (route, plaintext) = try inner.cipher.open(frame)
            } catch {
                inner.rejectedFrames += 1
                logger.info("rejected a data frame that does not open", metadata: ["sender": "\(frame.sender)"])
                return waiter
            }
            guard inner.replay.accept(route.senderSequence, from: frame.sender) else {
                if !frame.flags.contains(.replayed) {
                    inner.rejectedFrames += 1
                    logger.info("rejected a replayed data frame", metadata: ["sender": "\(frame.sender)"])
                }
                return waiter
            }
            guard let envelope = try? Envelope(decoding: plaintext) else {
                inner.rejectedFrames += 1
                return waiter
            }
            inner.lastStamp = max(inner.lastStamp, frame.sequence)
            switch envelope.kind {
            case .activity:
                guard envelope.name == activityIdentifier else {
                    logger.info("ignored an activity of another kind", metadata: ["activity": "\(envelope.name)"])
                    break
                }
                applyActivity(envelope.body, stamp: frame.sequence, inner: &inner)
            case .message:
                let context = MessageContext(
                    source: Participant(id: frame.sender), sequence: frame.sequence,
                    senderSequence: route.senderSequence, isRetained: !route.retainKey.isEmpty)
                if !route.retainKey.isEmpty {
                    inner.retainedMessages[envelope.name, default: [:]][route.retainKey] = (envelope.body, context)
                }
                for handler in (inner.messageHandlers[envelope.name] ?? [:]).values { handler(envelope.body, context) }
            default:
                break  // A kind from a newer member: ignored.
            }
            return waiter
        }
        waiter?.fire()
    }

    private func applyActivity(_ bytes: [UInt8], stamp: UInt64, inner: inout Inner) {
        guard stamp > inner.activityStamp else { return }
        inner.activityStamp = stamp
        inner.activity = bytes
        for continuation in inner.activityStreams.values { continuation.yield(bytes) }
    }

    private func handleAck(_ frame: Frame) {
        var payload = frame.payload
        guard let senderSequence = payload.readInteger(as: UInt64.self) else { return }
        let (callback, activityStored) = inner.withLock { inner in
            inner.lastStamp = max(inner.lastStamp, frame.sequence)
            var activityStored: SessionSignal?
            if let waiter = inner.activityWaiter, waiter.senderSequence <= senderSequence {
                activityStored = waiter.signal
                inner.activityWaiter = nil
            }
            inner.unacked.acknowledge(through: senderSequence)
            if let bytes = inner.pendingActivity.removeValue(forKey: senderSequence) {
                applyActivity(bytes, stamp: frame.sequence, inner: &inner)
            }
            return (inner.ackCallbacks.removeValue(forKey: senderSequence), activityStored)
        }
        activityStored?.fire(frame.sequence)
        callback?(frame.sequence, senderSequence)
    }

    private func handlePresence(_ frame: Frame) {
        let waiter = inner.withLock { inner -> SessionSignal? in
            inner.lastStamp = max(inner.lastStamp, frame.sequence)
            var waiter: SessionSignal?
            if frame.type == .joined {
                inner.members.insert(frame.sender)
                if frame.sender == local, case .waiting = inner.state {
                    inner.state = .joined
                    for continuation in inner.stateStreams.values { continuation.yield(.joined) }
                    waiter = inner.joinWaiter
                    inner.joinWaiter = nil
                }
            } else {
                inner.members.remove(frame.sender)
            }
            for continuation in inner.participantStreams.values { continuation.yield(inner.participants) }
            return waiter
        }
        waiter?.fire()
    }

    private func handleError(_ frame: Frame) {
        guard let payload = try? ErrorPayload(decoding: frame.payload) else { return }
        if journal.handleError(payload) { return }
        let error = GroupSessionError.refusedByRelay(payload.code, payload.detail)
        logger.info("the relay refused a request", metadata: ["code": "\(payload.code)", "detail": "\(payload.detail)"])
        let waiters = inner.withLock { inner -> [SessionSignal] in
            if payload.senderSequence > 0 { inner.unacked.remove(payload.senderSequence) }
            for continuation in inner.errorStreams.values { continuation.yield(error) }
            if let waiter = inner.activityWaiter, payload.senderSequence == waiter.senderSequence {
                inner.activityWaiter = nil
                return [waiter.signal]  // The initial activity was refused: join() reports it.
            }
            if payload.code == .rateLimited || payload.code == .frameTooLarge || payload.code == .quotaExceeded {
                return []  // About one frame; the session goes on.
            }
            if payload.code == .redirect || payload.code == .unavailable {
                // Another node serves the session, or this one cannot now: the relay closes the
                // connection and the member connects again (the transport tries the named node
                // first). Only a first connection's wait for its welcome ends here (open retries).
                defer { inner.welcomeWaiter = nil }
                return [inner.welcomeWaiter].compactMap { $0 }
            }
            let waiters = [inner.welcomeWaiter, inner.joinWaiter, inner.activityWaiter?.signal].compactMap { $0 }
            inner.welcomeWaiter = nil
            inner.joinWaiter = nil
            inner.activityWaiter = nil
            return waiters
        }
        for waiter in waiters { waiter.fail(error) }
        if payload.code == .cannotResume {
            invalidate(.connectionLost("the relay cannot resume this session: \(payload.detail)"))
        }
        if [.unauthorized, .tooManyConnections, .slowConsumer, .malformed, .unsupportedVersion].contains(payload.code) {
            invalidate(.refused("\(payload.code): \(payload.detail)"))
        }
    }

    /// Ends this member's session object: notifies and finishes every stream, closes the connection.
    func invalidate(_ reason: GroupSessionInvalidationReason) {
        // Streams are finished outside the lock: finishing runs their onTermination handlers,
        // which take the lock to unsubscribe.
        let finished = inner.withLock { inner -> (waiters: [SessionSignal], finish: [@Sendable () -> Void])? in
            if case .invalidated = inner.state { return nil }
            let state = GroupSessionState.invalidated(reason: reason)
            inner.state = state
            var finish: [@Sendable () -> Void] = []
            for continuation in inner.stateStreams.values {
                continuation.yield(state)
                finish.append { continuation.finish() }
            }
            inner.stateStreams.removeAll()
            for continuation in inner.participantStreams.values { finish.append { continuation.finish() } }
            inner.participantStreams.removeAll()
            for continuation in inner.activityStreams.values { finish.append { continuation.finish() } }
            inner.activityStreams.removeAll()
            for continuation in inner.errorStreams.values { finish.append { continuation.finish() } }
            inner.errorStreams.removeAll()
            for continuation in inner.connectionStreams.values { finish.append { continuation.finish() } }
            inner.connectionStreams.removeAll()
            inner.messageHandlers.removeAll()
            let waiters = [inner.welcomeWaiter, inner.joinWaiter, inner.activityWaiter?.signal].compactMap { $0 }
            inner.welcomeWaiter = nil
            inner.joinWaiter = nil
            inner.activityWaiter = nil
            finish.append { [connection = inner.connection] in connection.close() }
            return (waiters, finish)
        }
        guard let (waiters, finish) = finished else { return }
        for action in finish { action() }
        journal.fail(all: .invalidated("\(reason)"), close: true)
        logger.info("session invalidated", metadata: ["reason": "\(reason)"])
        for waiter in waiters { waiter.fail(GroupSessionError.invalidated("\(reason)")) }
    }
}
