import GroupSessions
import NIOCore
import Testing

@Suite("SessionHub idle timeout: connections that send nothing are closed")
struct SessionHubIdleTests {
    let session = SessionID(high: 8, low: 9)
    let token = Array(repeating: UInt8(4), count: 32)

    func hello(_ id: UInt64) -> Frame {
        Frame(type: .hello, session: session, sender: ParticipantID(rawValue: id),
              payload: HelloPayload(token: token).encoded())
    }

    func ping(_ id: UInt64) -> Frame { Frame(type: .ping, session: session, sender: ParticipantID(rawValue: id), sequence: 1) }

    func sends(_ actions: [HubAction<Int>], to connection: Int) -> [Frame] {
        actions.compactMap { if case .send(let c, let f, _) = $0, c == connection { f } else { nil } }
    }

    func closes(_ actions: [HubAction<Int>]) -> [Int] {
        actions.compactMap { if case .close(let c) = $0 { c } else { nil } }
    }

    func joined(_ limits: HubLimits) -> SessionHub<Int> {
        var hub = SessionHub<Int>(limits: limits)
        for id in 1...2 {
            _ = hub.connect(id, now: .zero)
            _ = hub.receive(hello(UInt64(id)), from: id, now: .zero)
            _ = hub.receive(Frame(type: .join, session: session, sender: ParticipantID(rawValue: UInt64(id))), from: id, now: .zero)
        }
        return hub
    }

    @Test("a member that pings stays; a silent one is closed after the idle timeout, then leaves after the presence grace")
    func silentMemberClosed() {
        var limits = HubLimits()
        limits.idleTimeout = .seconds(45)
        limits.presenceGrace = .seconds(15)
        var hub = joined(limits)
        // Member 1 pings every 5 s (each answered with a pong); member 2 says nothing.
        var now = Duration.zero
        while now < .seconds(40) {
            now += .seconds(5)
            let answer = hub.receive(ping(1), from: 1, now: now)
            #expect(sends(answer, to: 1).map(\.type) == [.pong])
            #expect(closes(hub.tick(now: now)).isEmpty)
        }
        #expect(hub.connectionCount == 2)
        let idle = hub.tick(now: .seconds(45))
        #expect(closes(idle) == [2])
        #expect(sends(idle, to: 1).isEmpty, "no left yet: the member is away for the presence grace")
        #expect(hub.connectionCount == 1)
        #expect(hub.counters.idleConnectionsClosed == 1)
        _ = hub.receive(ping(1), from: 1, now: .seconds(50))
        #expect(sends(hub.tick(now: .seconds(59)), to: 1).isEmpty)
        let expired = sends(hub.tick(now: .seconds(60)), to: 1)
        #expect(expired.map(\.type) == [.left])
        #expect(expired.first?.sender.rawValue == 2)
        _ = hub.receive(ping(1), from: 1, now: .seconds(85))
        #expect(closes(hub.tick(now: .seconds(90))).isEmpty, "member 1 is still heard from")
    }

    @Test("any frame counts as a sign of life; a connection that never sent hello is closed too")
    func anyFrameCounts() {
        var limits = HubLimits()
        limits.idleTimeout = .seconds(10)
        var hub = SessionHub<Int>(limits: limits)
        _ = hub.connect(1, now: .zero)
        _ = hub.connect(2, now: .zero)
        _ = hub.receive(hello(1), from: 1, now: .seconds(9))
        let actions = hub.tick(now: .seconds(10))
        #expect(closes(actions) == [2])
        #expect(closes(hub.tick(now: .seconds(18))).isEmpty)
        #expect(closes(hub.tick(now: .seconds(19))) == [1])
        #expect(hub.counters.idleConnectionsClosed == 2)
        #expect(hub.connectionCount == 0)
    }

    @Test("an idle timeout of zero never closes anyone")
    func disabled() {
        var limits = HubLimits()
        limits.idleTimeout = .zero
        var hub = joined(limits)
        #expect(closes(hub.tick(now: .seconds(86_400))).isEmpty)
        #expect(hub.connectionCount == 2)
    }
}
