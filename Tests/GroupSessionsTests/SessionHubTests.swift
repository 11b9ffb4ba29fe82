import GroupSessions
import NIOCore
import Testing

@Suite("SessionHub (sans-IO routing core)")
struct SessionHubTests {
    let session = SessionID(high: 1, low: 2)
    let token = Array(repeating: UInt8(3), count: 32)

    func hello(_ id: UInt64, token: [UInt8]? = nil) -> Frame {
        Frame(type: .hello, session: session, sender: ParticipantID(rawValue: id),
              payload: HelloPayload(token: token ?? self.token).encoded())
    }

    func data(_ id: UInt64, seq: UInt64, retain: [UInt8] = [], to recipients: [UInt64] = [], flags: FrameFlags = []) -> Frame {
        var payload = ByteBuffer()
        DataRoute(senderSequence: seq, recipients: recipients.map(ParticipantID.init(rawValue:)), retainKey: retain)
            .encode(into: &payload)
        payload.writeRepeatingByte(9, count: 16)
        return Frame(type: .data, flags: flags, session: session, sender: ParticipantID(rawValue: id), payload: payload)
    }

    func sends(_ actions: [HubAction<Int>]) -> [(Int, Frame)] {
        actions.compactMap { if case .send(let c, let f, _) = $0 { (c, f) } else { nil } }
    }

    func admitAndJoin(_ hub: inout SessionHub<Int>, _ connection: Int, id: UInt64) {
        _ = hub.connect(connection)
        _ = hub.receive(hello(id), from: connection, now: .zero)
        _ = hub.receive(Frame(type: .join, session: session, sender: ParticipantID(rawValue: id)), from: connection, now: .zero)
    }

    @Test("the first hello registers the token hash; a different token is refused and closed")
    func tokens() throws {
        var hub = SessionHub<Int>(limits: HubLimits())
        _ = hub.connect(1)
        #expect(sends(hub.receive(hello(1), from: 1, now: .zero)).first?.1.type == .welcome)
        _ = hub.connect(2)
        let refused = hub.receive(hello(2, token: Array(repeating: 4, count: 32)), from: 2, now: .zero)
        #expect(sends(refused).count == 1)
        #expect(try ErrorPayload(decoding: sends(refused)[0].1.payload).code == .unauthorized)
        #expect(refused.contains { if case .close(2) = $0 { true } else { false } })
    }

    @Test("every forwarded frame gets the next session sequence; the sender gets an ack; targeting works")
    func ordering() throws {
        var hub = SessionHub<Int>(limits: HubLimits())
        for c in 1...3 { admitAndJoin(&hub, c, id: UInt64(c)) }
        var last: UInt64 = 0
        for seq in 1...10 {
            let out = sends(hub.receive(data(1, seq: UInt64(seq)), from: 1, now: .zero))
            #expect(Set(out.map(\.0)) == [1, 2, 3])
            let forwarded = out.filter { $0.1.type == .data }
            #expect(forwarded.count == 2)
            #expect(forwarded.allSatisfy { $0.1.sequence == forwarded[0].1.sequence && $0.1.sender.rawValue == 1 })
            #expect(forwarded[0].1.sequence > last)
            last = forwarded[0].1.sequence
            #expect(out.first { $0.0 == 1 }?.1.type == .ack)
        }
        let targeted = sends(hub.receive(data(2, seq: 1, to: [3]), from: 2, now: .zero)).filter { $0.1.type == .data }
        #expect(targeted.map(\.0) == [3])
        // A forged sender id is overwritten with the connection's own.
        let forged = sends(hub.receive(data(99, seq: 2), from: 2, now: .zero)).filter { $0.1.type == .data }
        #expect(forged.allSatisfy { $0.1.sender.rawValue == 2 })
    }

    @Test("retained frames are replayed to a newly admitted connection, latest per key, in order")
    func retained() throws {
        var hub = SessionHub<Int>(limits: HubLimits())
        admitAndJoin(&hub, 1, id: 1)
        _ = hub.receive(data(1, seq: 1, retain: [1]), from: 1, now: .zero)
        _ = hub.receive(data(1, seq: 2, retain: [2]), from: 1, now: .zero)
        _ = hub.receive(data(1, seq: 3, retain: [1]), from: 1, now: .zero)
        _ = hub.receive(data(1, seq: 4), from: 1, now: .zero)
        _ = hub.connect(2)
        let out = sends(hub.receive(hello(2), from: 2, now: .zero))
        #expect(out.map(\.1.type) == [.welcome, .data, .data])
        #expect(try WelcomePayload(decoding: out[0].1.payload).retainedCount == 2)
        let replayed = out.dropFirst().map { frame -> UInt64 in
            var p = frame.1.payload
            return (try? DataRoute.decode(from: &p))?.senderSequence ?? 0
        }
        #expect(replayed == [2, 3])
        #expect(out.dropFirst().allSatisfy { $0.1.flags.contains(.replayed) })
    }

    @Test("at the retained-key limit a new key is refused, unless an evictable frame makes room: the least recently stamped goes; a restore keeps the same keys")
    func retainedKeyLimit() throws {
        var limits = HubLimits()
        limits.maximumRetainedKeys = 4
        var hub = SessionHub<Int>(limits: limits)
        admitAndJoin(&hub, 1, id: 1)
        var seq: UInt64 = 0
        func retain(_ key: UInt8, evictable: Bool = false) -> FrameType? {
            seq += 1
            let frame = data(1, seq: seq, retain: [key], flags: evictable ? .evictable : [])
            return sends(hub.receive(frame, from: 1, now: .zero)).first { $0.0 == 1 }?.1.type
        }
        func heldKeys(_ hub: inout SessionHub<Int>, connection: Int, id: UInt64) -> [UInt8] {
            _ = hub.connect(connection)
            return sends(hub.receive(hello(id), from: connection, now: .zero)).dropFirst().compactMap { frame in
                var payload = frame.1.payload
                return (try? DataRoute.decode(from: &payload))?.retainKey.first
            }
        }
        // The state, a queue copy: kept for good. Two members' suspension slots: evictable.
        #expect([retain(1), retain(2), retain(10, evictable: true), retain(11, evictable: true)] == [.ack, .ack, .ack, .ack])
        #expect(retain(10, evictable: true) == .ack)  // a slot written again: 11 is now the older one
        // A fifth key: slot 11, the least recently stamped evictable frame, makes room.
        #expect(retain(12, evictable: true) == .ack)
        #expect(hub.counters.retainedEvicted == 1)
        #expect(heldKeys(&hub, connection: 2, id: 2) == [1, 2, 10, 12])
        // A key that is not evictable itself still takes an evictable one's place.
        #expect(retain(3) == .ack)
        #expect(heldKeys(&hub, connection: 3, id: 3) == [1, 2, 12, 3])
        // The held keys are written again freely; with no evictable frame left, a new key is refused.
        #expect(retain(1) == .ack)
        #expect(retain(13, evictable: true) == .ack)  // evicts 12
        #expect(retain(4) == .ack)  // evicts 13
        #expect(retain(5) == .error)
        #expect(hub.counters.retainedEvicted == 4)
        #expect(heldKeys(&hub, connection: 4, id: 4) == [2, 3, 1, 4])

        // A relay restarting on its persisted frames (the resume log holds every write) ends
        // with the same keys.
        var snapshot = try #require(hub.snapshot(of: session))
        snapshot.retained = []
        var restored = SessionHub<Int>(limits: limits)
        restored.restore(snapshot, now: .zero)
        #expect(heldKeys(&restored, connection: 1, id: 9) == [2, 3, 1, 4])
    }

    @Test("the token bucket refuses beyond the burst and refills with the injected time")
    func rateLimit() throws {
        var limits = HubLimits()
        limits.ratePerSecond = 10
        limits.burst = 5
        var hub = SessionHub<Int>(limits: limits)
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        func outcome(_ seq: UInt64, at now: Duration) -> FrameType? {
            sends(hub.receive(data(1, seq: seq), from: 1, now: now)).first { $0.0 == 1 }?.1.type
        }
        let burst = (1...6).map { outcome(UInt64($0), at: .zero) }
        #expect(burst == [.ack, .ack, .ack, .ack, .ack, .error])
        #expect(outcome(7, at: .milliseconds(50)) == .error)   // half a token
        #expect(outcome(8, at: .milliseconds(110)) == .ack)    // one token refilled
        #expect(hub.counters.framesRefused == 2)
    }

    @Test("without a presence grace, a lost connection announces left; the last one out deletes the session")
    func presence() {
        var limits = HubLimits()
        limits.presenceGrace = .zero
        var hub = SessionHub<Int>(limits: limits)
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        let out = sends(hub.disconnect(2))
        #expect(out.map(\.1.type) == [.left])
        #expect(out.first?.0 == 1)
        #expect(hub.sessionCount == 1)
        _ = hub.disconnect(1)
        #expect(hub.sessionCount == 0)
    }
}
