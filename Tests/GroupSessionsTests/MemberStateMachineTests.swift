@testable import GroupSessions
import NIOCore
import Testing

/// The member engine's state machine alone: frames and commands in, actions out, no sockets,
/// no tasks, no clock (times are passed in).
@Suite("MemberStateMachine: the member side as events in, actions out")
struct MemberStateMachineTests {
    let invite = Invite.generate(host: "127.0.0.1", port: 1)
    let me = ParticipantID(rawValue: 0xA)
    let peer = ParticipantID(rawValue: 0xB)
    var keys: SessionKeys { SessionKeys(invite: invite) }

    func machine(policy: ReconnectPolicy = ReconnectPolicy()) -> MemberStateMachine {
        MemberStateMachine(keys: keys, local: me, activityIdentifier: "movie", policy: policy, now: .zero)
    }

    /// The relay's frames, as it would send them.
    func welcome(sequence: UInt64 = 0, members: [ParticipantID] = [], retained: UInt32 = 0) -> Frame {
        Frame(type: .welcome, session: keys.session, sender: .relay,
              payload: WelcomePayload(sequence: sequence, maximumPayload: 300 * 1024, ratePerSecond: 1000, burst: 1000,
                                      members: members, retainedCount: retained).encoded())
    }

    func presence(_ type: FrameType, _ who: ParticipantID, stamp: UInt64) -> Frame {
        Frame(type: type, session: keys.session, sender: who, sequence: stamp)
    }

    func ack(_ senderSequence: UInt64, stamp: UInt64) -> Frame {
        var payload = ByteBuffer()
        payload.writeInteger(senderSequence)
        return Frame(type: .ack, session: keys.session, sender: .relay, sequence: stamp, payload: payload)
    }

    func error(_ code: RelayErrorCode, senderSequence: UInt64 = 0) -> Frame {
        Frame(type: .error, session: keys.session, sender: .relay,
              payload: ErrorPayload(code: code, senderSequence: senderSequence, detail: "test").encoded())
    }

    /// A message `peer` sealed with sender sequence `senderSequence`, stamped `stamp` by the relay.
    func message(
        _ name: String, _ text: String, senderSequence: UInt64, stamp: UInt64, retainKey: [UInt8] = [],
        replayed: Bool = false, kind: Envelope.Kind = .message
    ) throws -> Frame {
        var cipher = PayloadCipher(keys: keys)
        var frame = try cipher.seal(
            Envelope(kind: kind, name: name, body: Array(text.utf8)).encoded(),
            route: DataRoute(senderSequence: senderSequence, recipients: [], retainKey: retainKey), flags: [], sender: peer)
        frame.sequence = stamp
        if replayed { frame.flags.insert(.replayed) }
        return frame
    }

    /// A machine welcomed (nothing retained) and joined, at time zero.
    func joined(policy: ReconnectPolicy = ReconnectPolicy()) -> MemberStateMachine {
        var machine = machine(policy: policy)
        _ = machine.expectWelcome(waiter: 1)
        _ = machine.receive(welcome(sequence: 10, members: [peer]), generation: 0, now: .zero)
        _ = machine.join(waiter: 2)
        _ = machine.receive(presence(.joined, me, stamp: 11), generation: 0, now: .zero)
        return machine
    }

    @Test("the welcome and the retained frames after it: messages delivered in order, then the open wait fires")
    func welcomeWithRetained() throws {
        var machine = machine()
        let hello = machine.expectWelcome(waiter: 1)
        #expect(summary(hello) == ["send hello"])
        #expect(summary(machine.receive(welcome(sequence: 4, members: [peer], retained: 2), generation: 0, now: .zero))
                == ["participants 1"])
        let first = try message("Chat", "a", senderSequence: 1, stamp: 3, retainKey: [1], replayed: true)
        #expect(summary(machine.receive(first, generation: 0, now: .zero)) == ["deliver Chat a @3"])
        let second = try message("Chat", "b", senderSequence: 2, stamp: 4, retainKey: [2], replayed: true)
        // The last retained frame is delivered before the wait ends: `accept` returns with it held.
        #expect(summary(machine.receive(second, generation: 0, now: .zero)) == ["deliver Chat b @4", "fire 1"])
        #expect(machine.retained(named: "Chat").map(\.1.sequence) == [3, 4])
        #expect(machine.state == .waiting)
    }

    @Test("messages in the relay's order; a replayed or tampered frame is rejected, not delivered")
    func deliveryAndRejection() throws {
        var machine = joined()
        #expect(summary(machine.receive(try message("Chat", "x", senderSequence: 1, stamp: 12), generation: 0, now: .zero))
                == ["deliver Chat x @12"])
        #expect(summary(machine.receive(try message("Chat", "y", senderSequence: 2, stamp: 13), generation: 0, now: .zero))
                == ["deliver Chat y @13"])
        #expect(summary(machine.receive(try message("Chat", "x", senderSequence: 1, stamp: 14), generation: 0, now: .zero))
                == ["log rejected a replayed data frame"])
        var tampered = try message("Chat", "z", senderSequence: 3, stamp: 15)
        let last = tampered.payload.writerIndex - 1
        let byte = try #require(tampered.payload.getInteger(at: last, as: UInt8.self))
        tampered.payload.setInteger(byte ^ 0xFF, at: last)
        #expect(summary(machine.receive(tampered, generation: 0, now: .zero)) == ["log rejected a data frame that does not open"])
        #expect(machine.rejectedFrames == 2)
        #expect(machine.lastStamp == 15)
    }

    @Test("join: the join frame out, our own `joined` in makes the state joined and fires the wait")
    func join() throws {
        var machine = machine()
        _ = machine.expectWelcome(waiter: 1)
        _ = machine.receive(welcome(members: [peer]), generation: 0, now: .zero)
        expectError(.notJoined) {
            _ = try machine.send(name: "Chat", body: [1], recipients: [], retainName: nil, unreliable: false, now: .zero)
        }
        let needsJoin = try machine.needsJoin()
        #expect(needsJoin)
        #expect(summary(machine.join(waiter: 2)) == ["send join"])
        #expect(summary(machine.receive(presence(.joined, me, stamp: 1), generation: 0, now: .zero))
                == ["state joined", "participants 2", "fire 2"])
        let needsJoinAgain = try machine.needsJoin()
        #expect(!needsJoinAgain)
        #expect(summary(machine.receive(presence(.left, peer, stamp: 2), generation: 0, now: .zero)) == ["participants 1"])
    }

    @Test("an evictable retained message carries the flag for the relay; unretained, it means nothing")
    func evictableFlag() throws {
        var machine = joined()
        func flags(retainName: String?, evictable: Bool) throws -> FrameFlags? {
            let (_, actions) = try machine.send(
                name: "Chat", body: [1], recipients: [], retainName: retainName, evictable: evictable, unreliable: false, now: .zero)
            for case .send(let frame) in actions { return frame.flags }
            return nil
        }
        #expect(try flags(retainName: "coplay.playback.suspension.7", evictable: true) == .evictable)
        #expect(try flags(retainName: "coplay.playback.state", evictable: false) == [])
        #expect(try flags(retainName: nil, evictable: true) == [])
    }

    @Test("sends: sealed in sender-sequence order, acknowledged with the relay's stamp")
    func sendAndAck() throws {
        var machine = joined()
        let (first, sent) = try machine.send(name: "Chat", body: [1], recipients: [], retainName: nil, unreliable: false, now: .zero)
        let (second, _) = try machine.send(name: "Chat", body: [2], recipients: [], retainName: nil, unreliable: false, now: .zero)
        #expect((first, second) == (1, 2))
        #expect(summary(sent) == ["send data"])
        #expect(machine.unacked.count == 2)
        #expect(summary(machine.receive(ack(1, stamp: 20), generation: 0, now: .zero)) == ["ack 1 @20"])
        #expect(machine.unacked.count == 1)
        expectError(.messageTooLarge(size: MemberStateMachine.maximumMessageSize + 1, limit: MemberStateMachine.maximumMessageSize)) {
            _ = try machine.send(name: "Chat", body: Array(repeating: 0, count: MemberStateMachine.maximumMessageSize + 1),
                                 recipients: [], retainName: nil, unreliable: false, now: .zero)
        }
    }

    @Test("the activity: the creator's is published on join; members converge on the highest stamp")
    func activity() throws {
        var machine = machine()
        machine.setInitialActivity(Array("first".utf8))
        _ = machine.expectWelcome(waiter: 1)
        _ = machine.receive(welcome(members: []), generation: 0, now: .zero)
        _ = machine.join(waiter: 2)
        _ = machine.receive(presence(.joined, me, stamp: 1), generation: 0, now: .zero)
        let published = try machine.publishInitialActivity(waiter: 3, now: .zero)
        let publish = try #require(published)
        #expect(summary(publish) == ["send data"])
        let again = try machine.publishInitialActivity(waiter: 4, now: .zero)
        #expect(again == nil)  // once only
        #expect(summary(machine.receive(ack(1, stamp: 5), generation: 0, now: .zero))
                == ["activity first", "fire 3", "ack 1 @5"])
        // A peer's update the relay ordered earlier loses; a later one wins.
        let older = try message("movie", "older", senderSequence: 1, stamp: 4, kind: .activity)
        #expect(summary(machine.receive(older, generation: 0, now: .zero)).isEmpty)
        let newer = try message("movie", "newer", senderSequence: 2, stamp: 6, kind: .activity)
        #expect(summary(machine.receive(newer, generation: 0, now: .zero)) == ["activity newer"])
        #expect(machine.activity == Array("newer".utf8))
    }

    @Test("a lost connection: reconnect with backoff, resume after the last stamp, re-send what was not acked")
    func reconnectAndResume() throws {
        var machine = joined()
        _ = try machine.send(name: "Chat", body: [1], recipients: [], retainName: nil, unreliable: false, now: .zero)
        _ = try machine.send(name: "Chat", body: [2], recipients: [], retainName: nil, unreliable: false, now: .zero)
        _ = machine.receive(ack(1, stamp: 12), generation: 0, now: .zero)
        let lost = machine.connectionEnded(generation: 0, reason: "reset", now: .seconds(1))
        #expect(summary(lost) == ["link reconnecting (attempt 0)", "log lost the connection to the relay; reconnecting", "reconnect"])
        // While reconnecting, a reliable send waits for the resume; an unreliable one is dropped.
        let (_, queued) = try machine.send(name: "Chat", body: [3], recipients: [], retainName: nil, unreliable: false, now: .zero)
        #expect(queued.isEmpty)
        let (_, dropped) = try machine.send(name: "Chat", body: [4], recipients: [], retainName: nil, unreliable: true, now: .zero)
        #expect(dropped.isEmpty)
        guard case .wait(let delay) = machine.nextReconnectStep(now: .seconds(1), random: 0.5) else {
            Issue.record("expected a wait")
            return
        }
        #expect(delay == .milliseconds(100))
        #expect(summary(machine.attemptStarting()) == ["link reconnecting (attempt 1)"])
        machine.connectFailed("refused")
        guard case .wait(let second) = machine.nextReconnectStep(now: .seconds(2), random: 0.5) else {
            Issue.record("expected a wait")
            return
        }
        #expect(second == .milliseconds(200))
        _ = machine.attemptStarting()
        let connected = machine.connected(now: .seconds(2))
        let (generation, hello) = try #require(connected)
        #expect(generation == 1)
        guard case .send(let frame)? = hello.first else {
            Issue.record("expected a hello")
            return
        }
        #expect(try HelloPayload(decoding: frame.payload).resumeAfter == 12)
        // The old connection's end is stale now.
        #expect(machine.connectionEnded(generation: 0, reason: "late", now: .seconds(2)).isEmpty)
        let resumed = machine.receive(welcome(sequence: 0, members: [me, peer]), generation: 1, now: .seconds(2))
        #expect(summary(resumed) == ["send data", "send data", "link connected", "log resumed the session"])
        #expect(machine.link == .connected)
        #expect(machine.state == .joined)
    }

    @Test("reconnecting gives up after the policy's time; the session is invalidated")
    func giveUp() {
        var policy = ReconnectPolicy()
        policy.giveUpAfter = .seconds(5)
        var machine = joined(policy: policy)
        _ = machine.connectionEnded(generation: 0, reason: "reset", now: .seconds(1))
        guard case .giveUp(let actions) = machine.nextReconnectStep(now: .seconds(6), random: 0.5) else {
            Issue.record("expected giving up")
            return
        }
        #expect(summary(actions).first?.hasPrefix("state invalidated(connection lost: could not resume") == true)
        #expect(summary(actions).last == "invalidated")
        guard case .stop = machine.nextReconnectStep(now: .seconds(7), random: 0.5) else {
            Issue.record("expected stop")
            return
        }
        let late = machine.connected(now: .seconds(7))
        #expect(late == nil)
    }

    @Test("a connection lost before the welcome, or with a policy that never reconnects, invalidates")
    func lostBeforeWelcome() {
        var machine = machine()
        _ = machine.expectWelcome(waiter: 1)
        let actions = machine.connectionEnded(
            generation: 0, reason: "refused", transportFailure: RelayTransportError(code: .relaySpeaksTLS, relay: "x", detail: ""),
            now: .zero)
        #expect(summary(actions) == ["state invalidated(connection lost: refused)", "fail 1", "invalidated"])
        #expect(machine.transportFailure?.code == .relaySpeaksTLS)
        var never = joined(policy: .never)
        #expect(summary(never.connectionEnded(generation: 0, reason: "reset", now: .zero)).last == "invalidated")
    }

    @Test("relay errors: about one frame the session goes on; a refusal fails the waits and invalidates")
    func relayErrors() throws {
        var machine = joined()
        _ = try machine.send(name: "Chat", body: [1], recipients: [], retainName: nil, unreliable: false, now: .zero)
        #expect(summary(machine.receive(error(.rateLimited, senderSequence: 1), generation: 0, now: .zero))
                == ["log the relay refused a request", "error"])
        #expect(machine.unacked.count == 0)
        _ = machine.join(waiter: 7)
        let refused = summary(machine.receive(error(.unauthorized), generation: 0, now: .zero))
        #expect(refused == ["log the relay refused a request", "error", "fail 7", "state invalidated(refused: unauthorized: test)", "invalidated"])
        expectError(.invalidated("")) {
            _ = try machine.send(name: "Chat", body: [1], recipients: [], retainName: nil, unreliable: false, now: .zero)
        }
    }

    @Test("keepalive: pings on schedule, a silent connection is dead, a replaced one stops")
    func keepalive() {
        var policy = ReconnectPolicy()
        policy.pingInterval = .seconds(5)
        policy.livenessTimeout = .seconds(15)
        var machine = joined(policy: policy)
        #expect(machine.keepalive(generation: 0, now: .seconds(1)) == .wait(until: .seconds(5)))
        guard case .ping(let ping) = machine.keepalive(generation: 0, now: .seconds(5)) else {
            Issue.record("expected a ping")
            return
        }
        #expect(ping.type == .ping && ping.sequence == 1)
        #expect(summary(machine.receive(Frame(type: .ping, session: keys.session, sender: .relay, sequence: 9),
                                        generation: 0, now: .seconds(6))) == ["send pong"])
        #expect(machine.keepalive(generation: 0, now: .seconds(21)) == .dead(silence: .seconds(15)))
        #expect(machine.keepalive(generation: 1, now: .seconds(21)) == .stop)
    }

    @Test("leave: the leave frame, then the end of everything; a second leave does nothing")
    func leave() {
        var machine = joined()
        _ = machine.join(waiter: 9)  // a stray waiter is failed, not left behind
        #expect(summary(machine.leave()) == ["send leave", "state invalidated(left)", "fail 9", "invalidated"])
        #expect(machine.leave().isEmpty)
    }

    @Test("`end` from another member invalidates; ending is only for a joined member")
    func end() throws {
        var machine = machine()
        expectError(.notJoined) { _ = try machine.end() }
        var joined = joined()
        let ending = try joined.end()
        #expect(summary(ending) == ["send end"])
        #expect(summary(joined.receive(presence(.end, peer, stamp: 40), generation: 0, now: .zero))
                == ["state invalidated(ended by \(peer))", "invalidated"])
    }
}

/// Checks that `body` throws a ``GroupSessionError`` of `kind`'s kind.
func expectError(_ kind: GroupSessionError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("no error; expected \(kind)", sourceLocation: sourceLocation)
    } catch let error as GroupSessionError {
        #expect(error.isSameKind(as: kind), "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(error); expected \(kind)", sourceLocation: sourceLocation)
    }
}

/// Short, comparable names for actions.
func summary(_ actions: [MemberStateMachine.Action]) -> [String] {
    actions.map { action in
        switch action {
        case .send(let frame): "send \(frame.type)"
        case .closeConnection: "close"
        case .deliver(let name, let body, let context): "deliver \(name) \(String(decoding: body, as: UTF8.self)) @\(context.sequence)"
        case .acknowledged(let senderSequence, let stamp): "ack \(senderSequence) @\(stamp)"
        case .stateChanged(let state): "state \(state)"
        case .participantsChanged(let participants): "participants \(participants.count)"
        case .activityChanged(let bytes): "activity \(String(decoding: bytes, as: UTF8.self))"
        case .linkChanged(let link): "link \(link)"
        case .relayError: "error"
        case .fire(let waiter, _): "fire \(waiter)"
        case .fail(let waiter, _): "fail \(waiter)"
        case .reconnect: "reconnect"
        case .invalidated: "invalidated"
        case .log(_, let message, _): "log \(message)"
        }
    }
}
