import GroupSessions
import NIOCore
import Testing

@Suite("SessionHub resume: presence grace, resume log, sender deduplication")
struct SessionHubResumeTests {
    let session = SessionID(high: 5, low: 6)
    let token = Array(repeating: UInt8(3), count: 32)

    func hello(_ id: UInt64, resumeAfter: UInt64? = nil) -> Frame {
        Frame(type: .hello, session: session, sender: ParticipantID(rawValue: id),
              payload: HelloPayload(token: token, resumeAfter: resumeAfter).encoded())
    }

    func data(_ id: UInt64, seq: UInt64, unreliable: Bool = false) -> Frame {
        var payload = ByteBuffer()
        DataRoute(senderSequence: seq).encode(into: &payload)
        payload.writeRepeatingByte(9, count: 16)
        return Frame(type: .data, flags: unreliable ? .unreliable : [], session: session,
                     sender: ParticipantID(rawValue: id), payload: payload)
    }

    func sends(_ actions: [HubAction<Int>], to connection: Int? = nil) -> [Frame] {
        actions.compactMap {
            if case .send(let c, let f, _) = $0, connection == nil || c == connection { f } else { nil }
        }
    }

    func admitAndJoin(_ hub: inout SessionHub<Int>, _ connection: Int, id: UInt64) {
        _ = hub.connect(connection)
        _ = hub.receive(hello(id), from: connection, now: .zero)
        _ = hub.receive(Frame(type: .join, session: session, sender: ParticipantID(rawValue: id)), from: connection, now: .zero)
    }

    @Test("a lost member stays joined for the grace period, then left is announced; the last one deletes the session")
    func grace() {
        var limits = HubLimits()
        limits.presenceGrace = .seconds(15)
        var hub = SessionHub<Int>(limits: limits)
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        #expect(sends(hub.disconnect(2)).isEmpty)
        #expect(sends(hub.tick(now: .seconds(14))).isEmpty)
        #expect(hub.participantCount == 1)
        let expired = sends(hub.tick(now: .seconds(16)), to: 1)
        #expect(expired.map(\.type) == [.left])
        #expect(expired.first?.sender.rawValue == 2)
        _ = hub.disconnect(1)
        #expect(hub.sessionCount == 1)
        _ = hub.tick(now: .seconds(40))
        #expect(hub.sessionCount == 0)
    }

    @Test("resume: no joined/left, missed frames replayed in order, own acks replayed, re-sent frames dropped")
    func resume() {
        var hub = SessionHub<Int>(limits: HubLimits())
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        _ = hub.receive(data(1, seq: 1), from: 1, now: .zero)  // stamp 3, delivered to 2
        _ = hub.disconnect(2)
        _ = hub.receive(data(1, seq: 2), from: 1, now: .zero)  // stamp 4, missed
        _ = hub.receive(data(1, seq: 3, unreliable: true), from: 1, now: .zero)  // stamp 5, unreliable: not replayed
        _ = hub.receive(data(1, seq: 4), from: 1, now: .zero)  // stamp 6, missed
        // Member 2 had sent seq 1 (stamped 7 by the relay only now: it was in flight) and seq 2.
        _ = hub.connect(3)
        let resumed = sends(hub.receive(hello(2, resumeAfter: 3), from: 3, now: .zero), to: 3)
        #expect(resumed.map(\.type) == [.welcome, .data, .data])
        #expect(resumed.dropFirst().map(\.sequence) == [4, 6])
        #expect(resumed.dropFirst().allSatisfy { $0.flags.contains(.replayed) })
        let first = sends(hub.receive(data(2, seq: 1), from: 3, now: .zero))
        #expect(first.map(\.type).sorted { $0.rawValue < $1.rawValue } == [.data, .ack])
        // Connection lost again before the ack arrived; resume after 6: the ack of stamp 7 is replayed.
        _ = hub.disconnect(3)
        _ = hub.connect(4)
        let again = sends(hub.receive(hello(2, resumeAfter: 6), from: 4, now: .zero), to: 4)
        #expect(again.map(\.type) == [.welcome, .ack])
        #expect(again.last?.sequence == 7)
        // The member re-sends seq 1 (unacked from its view) and then seq 2: the first is a duplicate.
        #expect(sends(hub.receive(data(2, seq: 1), from: 4, now: .zero)).isEmpty)
        #expect(sends(hub.receive(data(2, seq: 2), from: 4, now: .zero), to: 1).map(\.sequence) == [8])
        #expect(hub.counters.duplicatesDropped == 1)
        #expect(hub.participantCount == 2)
    }

    @Test("resume is refused with cannotResume when the log no longer covers the gap, or the member expired")
    func refusals() throws {
        var limits = HubLimits()
        limits.resumeLogFrames = 2
        var hub = SessionHub<Int>(limits: limits)
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        _ = hub.disconnect(2)
        for seq in 1...5 { _ = hub.receive(data(1, seq: UInt64(seq)), from: 1, now: .zero) }
        _ = hub.connect(3)
        let refused = hub.receive(hello(2, resumeAfter: 2), from: 3, now: .zero)
        let error = try #require(sends(refused, to: 3).first)
        #expect(try ErrorPayload(decoding: error.payload).code == .cannotResume)
        #expect(refused.contains { if case .close(3) = $0 { true } else { false } })

        _ = hub.tick(now: .seconds(60))  // member 2 expires
        _ = hub.connect(4)
        let expired = sends(hub.receive(hello(2, resumeAfter: 7), from: 4, now: .seconds(60)), to: 4)
        #expect(try expired.first.map { try ErrorPayload(decoding: $0.payload).code } == .cannotResume)
    }

    @Test("snapshot and restore keep the sequence, members (away), retained frames and the resume log")
    func snapshotRestore() throws {
        var hub = SessionHub<Int>(limits: HubLimits())
        admitAndJoin(&hub, 1, id: 1)
        admitAndJoin(&hub, 2, id: 2)
        for seq in 1...3 { _ = hub.receive(data(1, seq: UInt64(seq)), from: 1, now: .zero) }
        let snapshot = try #require(hub.snapshot(of: session))
        #expect(snapshot.sequence == 5)
        #expect(snapshot.log.count == 5)

        var restored = SessionHub<Int>(limits: HubLimits())
        restored.restore(snapshot, now: .zero)
        #expect(restored.sessionCount == 1)
        #expect(restored.participantCount == 0)  // both away until they resume
        _ = restored.connect(7)
        let resumed = sends(restored.receive(hello(2, resumeAfter: 3), from: 7, now: .zero), to: 7)
        #expect(resumed.map(\.sequence) == [5, 4, 5])
        _ = restored.connect(8)
        #expect(sends(restored.receive(data(1, seq: 3), from: 8, now: .zero)).count == 1)  // not joined on 8: refused
        let resumed1 = sends(restored.receive(hello(1, resumeAfter: 5), from: 9, now: .zero), to: 9)
        #expect(resumed1.isEmpty)  // 9 never connected: ignored
        _ = restored.connect(9)
        _ = restored.receive(hello(1, resumeAfter: 5), from: 9, now: .zero)
        #expect(sends(restored.receive(data(1, seq: 3), from: 9, now: .zero)).isEmpty)  // duplicate after restart
        #expect(sends(restored.receive(data(1, seq: 4), from: 9, now: .zero), to: 7).map(\.sequence) == [6])
    }
}
