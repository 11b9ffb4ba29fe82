import Logging
import NIOCore
import RateLimiting

/// The member side of a group session as a pure state machine: events in (a frame from the
/// relay, a command from the app, a connection that ended, a reconnect attempt, a tick of the
/// keepalive), ``Action``s out. It holds no connection, no clock, no task, no stream and no
/// handler: ``SessionEngine`` (the shell) keeps it behind a lock, feeds it and carries its actions
/// out after the lock is released, so that message handlers and stream consumers never run
/// under the lock. Times are `Duration`s on the shell's monotonic scale, so tests drive it
/// directly.
///
/// ```swift
/// var machine = MemberStateMachine(keys: keys, local: me, activityIdentifier: "movie", policy: policy, now: .zero)
/// machine.expectWelcome(waiter: 1)                // [.send(hello)]
/// machine.receive(welcomeFrame, now: .seconds(1)) // [.participantsChanged(...), .fire(waiter: 1, value: 0)]
/// ```
struct MemberStateMachine: Sendable {
    /// Something for the shell to do, in order, once the lock is released.
    enum Action: Sendable {
        /// Write a frame on the current connection.
        case send(Frame)
        /// Close the current connection (after the frames already queued).
        case closeConnection
        /// Hand a message to the handlers registered for `name`.
        case deliver(name: String, body: [UInt8], context: MessageContext)
        /// The relay acknowledged one of this member's frames with `stamp`.
        case acknowledged(senderSequence: UInt64, stamp: UInt64)
        case stateChanged(GroupSessionState)
        case participantsChanged(Set<Participant>)
        case activityChanged([UInt8])
        case linkChanged(GroupSessionConnectionState)
        /// A relay refusal that did not end the session.
        case relayError(GroupSessionError)
        /// Wake the waiter `waiter` (``SessionSignal``) with `value`.
        case fire(waiter: Int, value: UInt64)
        /// Wake the waiter `waiter` with `error`.
        case fail(waiter: Int, error: GroupSessionError)
        /// The connection is lost and the session will resume: transfers in flight fail, and
        /// the shell starts reconnecting (``nextReconnectStep(now:random:)``).
        case reconnect
        /// The session is over: finish every stream and handler, fail every waiter, close the connection.
        case invalidated(GroupSessionInvalidationReason)
        case log(Logger.Level, String, Logger.Metadata)
    }

    /// What the keepalive of a connection does next (``keepalive(generation:now:)``).
    enum KeepaliveStep: Sendable, Hashable {
        /// The connection was replaced, the session is over, or keepalive is off.
        case stop
        case wait(until: Duration)
        case ping(Frame)
        /// Nothing arrived for `silence`: the shell drops the connection.
        case dead(silence: Duration)
    }

    /// What the reconnect loop does next (``nextReconnectStep(now:random:)``).
    enum ReconnectStep: Sendable {
        /// Not reconnecting any more (resumed or invalidated).
        case stop
        /// Wait `delay`, then call ``attemptStarting()`` and connect.
        case wait(Duration)
        /// Too long since the loss: carry these actions out (the session is invalidated).
        case giveUp([Action])
    }

    let session: SessionID
    let local: ParticipantID
    let activityIdentifier: String
    let keys: SessionKeys
    let policy: ReconnectPolicy

    private(set) var state: GroupSessionState = .waiting
    /// Bumped with every new connection, so a stale connection's end is ignored.
    private(set) var generation = 0
    private(set) var link: GroupSessionConnectionState = .connected
    private var lossStarted: Duration?
    private(set) var lastConnectError = "the connection was lost"
    /// A transport mismatch (TLS or not, certificate, pin) the connection ended with: `open`
    /// reports it as such rather than as a refused invite.
    private(set) var transportFailure: RelayTransportError?
    /// A resuming hello was sent on the current connection; its welcome is awaited.
    private var resuming = false
    private var keepalive: Keepalive
    /// Pings sent on the current connection.
    private var pingsSent: UInt64 = 0
    private(set) var unacked = UnackedFrames()
    private(set) var members: Set<ParticipantID> = []
    private var cipher: PayloadCipher
    private var replay = ReplayGuard()
    private(set) var nextSenderSequence: UInt64 = 1
    private var maximumPayload = 300 * 1024
    private(set) var ratePerSecond = 2_000
    private(set) var burst = 20_000
    /// The sender's own limit, mirroring the relay's (`ratePerSecond`, `burst`; set from each welcome).
    private var tokens: TokenBucket
    private(set) var lastStamp: UInt64 = 0
    private(set) var activity: [UInt8]?
    private var activityStamp: UInt64 = 0
    private var publishActivityOnJoin = false
    private var pendingActivity: [UInt64: [UInt8]] = [:]
    private var retainedRemaining = 0
    private(set) var welcomed = false
    private(set) var welcomeWaiter: Int?
    private(set) var joinWaiter: Int?
    /// The creator's `join()` waits until the relay has stored the initial activity, so an
    /// `accept` that follows (from anywhere) finds it.
    private(set) var activityWaiter: (senderSequence: UInt64, id: Int)?
    private var retainedMessages: [String: [[UInt8]: ([UInt8], MessageContext)]] = [:]
    private(set) var rejectedFrames = 0

    /// Share of the relay's rate and burst a sender allows itself (see `receiveWelcome`).
    static let rateMargin = 0.8
    /// Largest application message body.
    static let maximumMessageSize = 256 * 1024
    /// Unacknowledged reliable bytes kept for re-sending above which sends fail with `queueFull`.
    static let maximumUnackedBytes = 64 << 20
    /// The retain name of the session's activity.
    static let activityRetainName = "coplay.activity"

    /// A member `local` of the invite's session whose first connection opened at `now`.
    init(keys: SessionKeys, local: ParticipantID, activityIdentifier: String, policy: ReconnectPolicy, now: Duration) {
        self.session = keys.session
        self.keys = keys
        self.local = local
        self.activityIdentifier = activityIdentifier
        self.policy = policy
        keepalive = Keepalive(policy: policy, now: now)
        cipher = PayloadCipher(keys: keys)
        tokens = TokenBucket(capacity: 20_000, rate: 2_000, now: now)
    }

    var participants: Set<Participant> { Set(members.map(Participant.init(id:))) }
    var isInvalidated: Bool { if case .invalidated = state { true } else { false } }

    /// Retained messages named `name` already held, in the relay's order: what a new handler gets first.
    func retained(named name: String) -> [([UInt8], MessageContext)] {
        (retainedMessages[name] ?? [:]).values.sorted { $0.1.sequence < $1.1.sequence }
    }

    // MARK: Commands

    /// The first connection's `hello`; the welcome (and the retained frames after it) fire `waiter`.
    mutating func expectWelcome(waiter: Int) -> [Action] {
        welcomeWaiter = waiter
        return [.send(Frame(type: .hello, flags: .presenceBatches, session: session, sender: local,
                            payload: HelloPayload(token: keys.joinToken).encoded()))]
    }

    /// Whether `join()` has anything to do.
    ///
    /// - Throws: ``GroupSessionError/invalidated(_:)``.
    func needsJoin() throws -> Bool {
        switch state {
        case .joined: return false
        case .invalidated(let reason): throw GroupSessionError.invalidated("\(reason)")
        case .waiting: return true
        }
    }

    /// Asks the relay to join; our own `joined` fires `waiter`.
    mutating func join(waiter: Int) -> [Action] {
        joinWaiter = waiter
        // While reconnecting, the join is asked again once welcomed (`receiveWelcome`).
        return link == .connected ? [.send(Frame(type: .join, session: session, sender: local))] : []
    }

    /// After the join: publishes the activity set before it, if this member created the
    /// session; its ack fires `waiter`. `nil` when there is nothing to publish.
    mutating func publishInitialActivity(waiter: Int, now: Duration) throws -> [Action]? {
        defer { publishActivityOnJoin = false }
        guard publishActivityOnJoin, let activity else { return nil }
        let (sequence, actions) = try seal(
            Envelope(kind: .activity, name: activityIdentifier, body: activity), recipients: [],
            retainKey: keys.retainKey(for: Self.activityRetainName), unreliable: false, now: now)
        pendingActivity[sequence] = activity
        activityWaiter = (sequence, waiter)
        return actions
    }

    /// Forgets waiter `id` wherever it is armed (its wait is over).
    mutating func disarm(_ id: Int) {
        if welcomeWaiter == id { welcomeWaiter = nil }
        if joinWaiter == id { joinWaiter = nil }
        if activityWaiter?.id == id { activityWaiter = nil }
    }

    mutating func leave() -> [Action] {
        var actions: [Action] = []
        if link == .connected && !isInvalidated { actions.append(.send(Frame(type: .leave, session: session, sender: local))) }
        return actions + invalidate(.left)
    }

    mutating func end() throws -> [Action] {
        guard case .joined = state else { throw GroupSessionError.notJoined }
        guard link == .connected else { throw GroupSessionError.connectionClosed }
        return [.send(Frame(type: .end, session: session, sender: local))]
    }

    /// Sets the activity locally before joining; it is published when the join completes.
    mutating func setInitialActivity(_ bytes: [UInt8]) {
        activity = bytes
        publishActivityOnJoin = true
    }

    /// Publishes a new activity (retained); members converge on the one the relay ordered last.
    mutating func setActivity(_ bytes: [UInt8], now: Duration) throws -> [Action] {
        let (sequence, actions) = try seal(
            Envelope(kind: .activity, name: activityIdentifier, body: bytes), recipients: [],
            retainKey: keys.retainKey(for: Self.activityRetainName), unreliable: false, now: now)
        pendingActivity[sequence] = bytes
        return actions
    }

    /// Seals and queues one application message.
    ///
    /// - Returns: The sender sequence it was given, and the actions (its frame's `send`).
    mutating func send(
        name: String, body: [UInt8], recipients: [ParticipantID], retainName: String?, evictable: Bool = false,
        unreliable: Bool, now: Duration
    ) throws -> (UInt64, [Action]) {
        guard body.count <= Self.maximumMessageSize else {
            throw GroupSessionError.messageTooLarge(size: body.count, limit: Self.maximumMessageSize)
        }
        let retainKey = retainName.map { keys.retainKey(for: "message:" + $0) } ?? []
        return try seal(
            Envelope(kind: .message, name: name, body: body), recipients: recipients, retainKey: retainKey,
            evictable: evictable && !retainKey.isEmpty, unreliable: unreliable, now: now)
    }

    private mutating func seal(
        _ envelope: Envelope, recipients: [ParticipantID], retainKey: [UInt8], evictable: Bool = false, unreliable: Bool,
        now: Duration
    ) throws -> (UInt64, [Action]) {
        switch state {
        case .joined: break
        case .waiting: throw GroupSessionError.notJoined
        case .invalidated(let reason): throw GroupSessionError.invalidated("\(reason)")
        }
        let plaintext = envelope.encoded()
        let route = DataRoute(senderSequence: nextSenderSequence, recipients: recipients, retainKey: retainKey)
        let payloadSize = route.encodedLength + plaintext.count + 16
        guard payloadSize <= maximumPayload else {
            throw GroupSessionError.messageTooLarge(size: payloadSize, limit: maximumPayload)
        }
        // Mirror the relay's token bucket so the sender gets a clear error instead of a drop.
        tokens.refill(now: now)
        guard tokens.hasToken else { throw GroupSessionError.rateLimited(ratePerSecond: ratePerSecond, burst: burst) }
        var flags: FrameFlags = unreliable ? .unreliable : []
        if evictable { flags.insert(.evictable) }
        let frame = try cipher.seal(plaintext, route: route, flags: flags, sender: local)
        if !unreliable {
            guard unacked.bytes < Self.maximumUnackedBytes else { throw GroupSessionError.queueFull }
            unacked.append(frame, senderSequence: route.senderSequence)
        }
        tokens.spend()
        nextSenderSequence += 1
        // While reconnecting, reliable frames wait in `unacked` (re-sent on resuming) and
        // unreliable ones are dropped.
        return (route.senderSequence, link == .connected ? [.send(frame)] : [])
    }

    /// Ends the session: every stream and handler is finished, every waiter failed.
    mutating func invalidate(_ reason: GroupSessionInvalidationReason) -> [Action] {
        guard !isInvalidated else { return [] }
        state = .invalidated(reason: reason)
        var actions: [Action] = [.stateChanged(state)]
        for id in [welcomeWaiter, joinWaiter, activityWaiter?.id].compactMap({ $0 }) {
            actions.append(.fail(waiter: id, error: .invalidated("\(reason)")))
        }
        welcomeWaiter = nil
        joinWaiter = nil
        activityWaiter = nil
        actions.append(.invalidated(reason))
        return actions
    }

    // MARK: Inbound

    /// Something arrived on connection `generation` at `now` (for the keepalive).
    mutating func heard(generation: Int, now: Duration) {
        if self.generation == generation { keepalive.heard(at: now) }
    }

    /// A frame arrived on connection `generation` at `now` (journal frames and the journal's
    /// errors are the shell's: it hands them to the journal client instead).
    mutating func receive(_ frame: Frame, generation: Int, now: Duration) -> [Action] {
        heard(generation: generation, now: now)
        switch frame.type {
        case .welcome: return receiveWelcome(frame, now: now)
        case .data: return receiveData(frame)
        case .ack: return receiveAck(frame)
        case .joined, .left: return receivePresence(frame)
        case .end: return invalidate(.ended(by: Participant(id: frame.sender)))
        case .error: return receiveError(frame)
        case .ping: return [.send(Frame(type: .pong, session: session, sender: local, sequence: frame.sequence))]
        default: return []
        }
    }

    private mutating func applyLimits(_ welcome: WelcomePayload) {
        maximumPayload = Int(welcome.maximumPayload)
        // Keep a margin below the relay's limits: network jitter can bunch frames sent
        // at an allowed pace, and an accepted send must never be refused by the relay.
        ratePerSecond = max(1, Int(Double(welcome.ratePerSecond) * Self.rateMargin))
        burst = max(1, Int(Double(welcome.burst) * Self.rateMargin))
    }

    private mutating func receiveWelcome(_ frame: Frame, now: Duration) -> [Action] {
        guard let welcome = try? WelcomePayload(decoding: frame.payload) else {
            return invalidate(.refused("malformed welcome"))
        }
        var actions: [Action] = []
        if resuming {
            // The answer to a resuming hello: re-send every unacknowledged reliable frame (the
            // relay drops those it already stamped) and report `connected`.
            resuming = false
            applyLimits(welcome)
            tokens.setLimits(capacity: Double(burst), rate: Double(ratePerSecond))
            let welcomed = Set(welcome.members)
            if welcomed != members {
                members = welcomed
                actions.append(.participantsChanged(participants))
            }
            actions += unacked.frames.map { .send($0) }
            lossStarted = nil
            actions += setLink(.connected)
            actions.append(.log(.info, "resumed the session", ["resent": "\(unacked.count)"]))
            return actions
        }
        // A first welcome, or a plain one after a reconnect (the member had not joined yet):
        // connected again, and a join that was under way is asked again.
        if link != .connected {
            lossStarted = nil
            actions += setLink(.connected)
            if joinWaiter != nil { actions.append(.send(Frame(type: .join, session: session, sender: local))) }
        }
        welcomed = true
        applyLimits(welcome)
        tokens = TokenBucket(capacity: Double(burst), rate: Double(ratePerSecond), now: now)
        lastStamp = welcome.sequence
        members = Set(welcome.members)
        retainedRemaining = Int(welcome.retainedCount)
        actions.append(.participantsChanged(participants))
        if retainedRemaining == 0, let waiter = welcomeWaiter {
            welcomeWaiter = nil
            actions.append(.fire(waiter: waiter, value: 0))
        }
        return actions
    }

    private mutating func receiveData(_ frame: Frame) -> [Action] {
        var actions: [Action] = []
        lastStamp = max(lastStamp, frame.sequence)
        if frame.flags.contains(.replayed) && retainedRemaining > 0 {
            retainedRemaining -= 1
            if retainedRemaining == 0, let waiter = welcomeWaiter {
                welcomeWaiter = nil
                // After the message itself: the retained state is complete once it is delivered.
                actions += openData(frame)
                actions.append(.fire(waiter: waiter, value: 0))
                return actions
            }
        }
        return openData(frame)
    }

    private mutating func openData(_ frame: Frame) -> [Action] {
        let route: DataRoute
        let plaintext: [UInt8]
        do {
            (route, plaintext) = try cipher.open(frame)
        } catch {
            rejectedFrames += 1
            return [.log(.info, "rejected a data frame that does not open", ["sender": "\(frame.sender)"])]
        }
        guard replay.accept(route.senderSequence, from: frame.sender) else {
            guard !frame.flags.contains(.replayed) else { return [] }
            rejectedFrames += 1
            return [.log(.info, "rejected a replayed data frame", ["sender": "\(frame.sender)"])]
        }
        guard let envelope = try? Envelope(decoding: plaintext) else {
            rejectedFrames += 1
            return []
        }
        switch envelope.kind {
        case .activity:
            guard envelope.name == activityIdentifier else {
                return [.log(.info, "ignored an activity of another kind", ["activity": "\(envelope.name)"])]
            }
            return applyActivity(envelope.body, stamp: frame.sequence)
        case .message:
            let context = MessageContext(
                source: Participant(id: frame.sender), sequence: frame.sequence,
                senderSequence: route.senderSequence, isRetained: !route.retainKey.isEmpty)
            if !route.retainKey.isEmpty {
                retainedMessages[envelope.name, default: [:]][route.retainKey] = (envelope.body, context)
            }
            return [.deliver(name: envelope.name, body: envelope.body, context: context)]
        default:
            return []  // A kind from a newer member: ignored.
        }
    }

    private mutating func applyActivity(_ bytes: [UInt8], stamp: UInt64) -> [Action] {
        guard stamp > activityStamp else { return [] }
        activityStamp = stamp
        activity = bytes
        return [.activityChanged(bytes)]
    }

    private mutating func receiveAck(_ frame: Frame) -> [Action] {
        var payload = frame.payload
        guard let senderSequence = payload.readInteger(as: UInt64.self) else { return [] }
        var actions: [Action] = []
        lastStamp = max(lastStamp, frame.sequence)
        unacked.acknowledge(through: senderSequence)
        if let bytes = pendingActivity.removeValue(forKey: senderSequence) {
            actions += applyActivity(bytes, stamp: frame.sequence)
        }
        if let waiter = activityWaiter, waiter.senderSequence <= senderSequence {
            activityWaiter = nil
            actions.append(.fire(waiter: waiter.id, value: frame.sequence))
        }
        actions.append(.acknowledged(senderSequence: senderSequence, stamp: frame.sequence))
        return actions
    }

    private mutating func receivePresence(_ frame: Frame) -> [Action] {
        lastStamp = max(lastStamp, frame.sequence)
        var actions: [Action] = []
        var joinConfirmed: Int?
        if frame.type == .joined {
            members.insert(frame.sender)
            if frame.sender == local, case .waiting = state {
                state = .joined
                actions.append(.stateChanged(.joined))
                joinConfirmed = joinWaiter
                joinWaiter = nil
            }
        } else {
            members.remove(frame.sender)
        }
        actions.append(.participantsChanged(participants))
        if let joinConfirmed { actions.append(.fire(waiter: joinConfirmed, value: 0)) }
        return actions
    }

    private mutating func receiveError(_ frame: Frame) -> [Action] {
        guard let payload = try? ErrorPayload(decoding: frame.payload) else { return [] }
        let error = GroupSessionError.refusedByRelay(payload.code, payload.detail)
        var actions: [Action] = [
            .log(.info, "the relay refused a request", ["code": "\(payload.code)", "detail": "\(payload.detail)"]),
            .relayError(error),
        ]
        if payload.senderSequence > 0 { unacked.remove(payload.senderSequence) }
        if let waiter = activityWaiter, payload.senderSequence == waiter.senderSequence {
            activityWaiter = nil
            return actions + [.fail(waiter: waiter.id, error: error)]  // The initial activity was refused: join() reports it.
        }
        if payload.code == .rateLimited || payload.code == .frameTooLarge || payload.code == .quotaExceeded {
            return actions  // About one frame; the session goes on.
        }
        if payload.code == .redirect || payload.code == .unavailable {
            // Another node serves the session, or this one cannot now: the relay closes the
            // connection and the member connects again (the transport tries the named node
            // first). Only a first connection's wait for its welcome ends here (open retries).
            if let waiter = welcomeWaiter {
                welcomeWaiter = nil
                actions.append(.fail(waiter: waiter, error: error))
            }
            return actions
        }
        for id in [welcomeWaiter, joinWaiter, activityWaiter?.id].compactMap({ $0 }) {
            actions.append(.fail(waiter: id, error: error))
        }
        welcomeWaiter = nil
        joinWaiter = nil
        activityWaiter = nil
        if payload.code == .cannotResume {
            actions += invalidate(.connectionLost("the relay cannot resume this session: \(payload.detail)"))
        }
        if [.unauthorized, .tooManyConnections, .slowConsumer, .malformed, .unsupportedVersion].contains(payload.code) {
            actions += invalidate(.refused("\(payload.code): \(payload.detail)"))
        }
        return actions
    }

    // MARK: Connections

    /// The keepalive of connection `generation` at `now`: ping, wait, or give the connection up.
    mutating func keepalive(generation: Int, now: Duration) -> KeepaliveStep {
        guard self.generation == generation, !isInvalidated else { return .stop }
        switch keepalive.poll(now: now) {
        case .wait(until: let until?): return .wait(until: until)
        case .wait(until: nil): return .stop
        case .ping:
            // The relay echoes the sequence in its pong; any frame counts as a sign of life.
            pingsSent += 1
            return .ping(Frame(type: .ping, session: session, sender: local, sequence: pingsSent))
        case .dead(let silence): return .dead(silence: silence)
        }
    }

    /// Connection `generation` ended (closed, failed, or given up by the keepalive) at `now`:
    /// reconnect, or invalidate if the session was never welcomed or the policy says never.
    mutating func connectionEnded(
        generation: Int, reason: String, transportFailure: RelayTransportError? = nil, now: Duration
    ) -> [Action] {
        if let transportFailure { self.transportFailure = transportFailure }
        guard self.generation == generation, !isInvalidated else { return [] }
        guard welcomed, policy.giveUpAfter > .zero else { return invalidate(.connectionLost(reason)) }
        lastConnectError = reason
        resuming = false
        guard link == .connected else { return [] }
        lossStarted = now
        return setLink(.reconnecting(attempt: 0)) + [
            .log(.info, "lost the connection to the relay; reconnecting", ["reason": "\(reason)"]), .reconnect,
        ]
    }

    /// The reconnect loop's next step at `now`; `random` (0...1) places the wait in its jitter band.
    mutating func nextReconnectStep(now: Duration, random: Double) -> ReconnectStep {
        guard case .reconnecting(let attempt) = link, !isInvalidated else { return .stop }
        let elapsed = now - (lossStarted ?? now)
        guard elapsed < policy.giveUpAfter else {
            return .giveUp(invalidate(.connectionLost(
                "could not resume the session within \(policy.giveUpAfter) of losing the relay (last error: \(lastConnectError))")))
        }
        return .wait(min(policy.delay(forAttempt: attempt, random: random), policy.giveUpAfter - elapsed))
    }

    /// A reconnect attempt begins (after its wait).
    mutating func attemptStarting() -> [Action] {
        guard case .reconnecting(let attempt) = link, !isInvalidated else { return [] }
        return setLink(.reconnecting(attempt: attempt + 1))
    }

    /// A reconnect attempt could not connect.
    mutating func connectFailed(_ error: String) {
        lastConnectError = error
    }

    /// A reconnect attempt connected at `now`: the new connection's generation, and the `hello`
    /// (resuming after the last stamp seen, once joined) to send on it; `nil` if it is not
    /// wanted any more (the shell closes it).
    mutating func connected(now: Duration) -> (generation: Int, actions: [Action])? {
        guard case .reconnecting = link, !isInvalidated else { return nil }
        generation += 1
        keepalive = Keepalive(policy: policy, now: now)
        pingsSent = 0
        let joined = state == .joined
        resuming = joined
        let hello = HelloPayload(token: keys.joinToken, resumeAfter: joined ? lastStamp : nil)
        return (generation, [.send(Frame(type: .hello, flags: .presenceBatches, session: session, sender: local,
                                         payload: hello.encoded()))])
    }

    private mutating func setLink(_ new: GroupSessionConnectionState) -> [Action] {
        guard link != new else { return [] }
        link = new
        return [.linkChanged(new)]
    }
}
