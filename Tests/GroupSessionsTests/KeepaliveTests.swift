@testable import GroupSessions
import PropertyBased
import Testing

@Suite("Keepalive: when a member pings and when it gives a silent connection up")
struct KeepaliveTests {
    @Test("a ping every interval, whatever arrives; dead once nothing arrived for the timeout")
    func schedule() {
        var keepalive = Keepalive(pingInterval: .seconds(5), livenessTimeout: .seconds(15), now: .zero)
        #expect(keepalive.poll(now: .zero) == .wait(until: .seconds(5)))
        keepalive.heard(at: .seconds(1))
        #expect(keepalive.poll(now: .seconds(5)) == .ping)
        #expect(keepalive.poll(now: .seconds(5)) == .wait(until: .seconds(10)))
        keepalive.heard(at: .seconds(9))  // traffic does not suppress the next ping
        #expect(keepalive.poll(now: .seconds(10)) == .ping)
        #expect(keepalive.poll(now: .seconds(15)) == .ping)
        #expect(keepalive.poll(now: .seconds(20)) == .ping)
        #expect(keepalive.poll(now: .seconds(20)) == .wait(until: .seconds(24)))  // silence deadline first
        #expect(keepalive.poll(now: .seconds(23)) == .wait(until: .seconds(24)))
        #expect(keepalive.poll(now: .seconds(24)) == .dead(silence: .seconds(15)))
    }

    @Test("anything heard pushes the silence deadline back")
    func heardResets() {
        var keepalive = Keepalive(pingInterval: .zero, livenessTimeout: .seconds(3), now: .seconds(100))
        #expect(keepalive.poll(now: .seconds(102)) == .wait(until: .seconds(103)))
        keepalive.heard(at: .seconds(102))
        keepalive.heard(at: .seconds(101))  // out of order: ignored
        #expect(keepalive.poll(now: .seconds(104)) == .wait(until: .seconds(105)))
        #expect(keepalive.poll(now: .seconds(106)) == .dead(silence: .seconds(4)))
    }

    @Test("zero intervals turn each part off", arguments: [
        (Duration.zero, Duration.zero), (.seconds(1), .zero), (.zero, .seconds(1)),
    ])
    func disabled(ping: Duration, timeout: Duration) {
        var keepalive = Keepalive(pingInterval: ping, livenessTimeout: timeout, now: .zero)
        #expect(keepalive.isEnabled == (ping > .zero || timeout > .zero))
        let late = keepalive.poll(now: .seconds(3_600))
        switch (ping > .zero, timeout > .zero) {
        case (false, false): #expect(late == .wait(until: nil))
        case (true, false): #expect(late == .ping)
        default: #expect(late == .dead(silence: .seconds(3_600)))
        }
    }

    @Test("the policy's defaults: ping every 5 s, lost after 15 s of silence")
    func defaults() {
        let policy = ReconnectPolicy()
        #expect(policy.pingInterval == .seconds(5))
        #expect(policy.livenessTimeout == .seconds(15))
        #expect(policy.livenessTimeout >= policy.pingInterval * 2)
        #expect(HubLimits().idleTimeout > policy.pingInterval * 2, "the relay must hear several pings per idle window")
    }

    @Test("a shell that sleeps until each deadline pings exactly every interval and is dead exactly at the timeout")
    func simulated() async {
        await propertyCheck(
            count: 300,
            input: Gen.int(in: 10...1_000), Gen.int(in: 1...3_000), Gen.int(in: 0...700).array(of: 0...30)
        ) { pingMs, timeoutMs, arrivals in
            let interval = Duration.milliseconds(pingMs)
            let timeout = Duration.milliseconds(timeoutMs)
            var keepalive = Keepalive(pingInterval: interval, livenessTimeout: timeout, now: .zero)
            // Frames arrive `arrivals` milliseconds apart; between them the shell sleeps until
            // each deadline the keepalive names.
            var heard = Duration.zero
            var now = Duration.zero
            var pings: [Duration] = []
            var pending = arrivals.map { Duration.milliseconds($0) }
            var nextArrival = pending.isEmpty ? nil : pending.removeFirst()
            var deadAt: (now: Duration, heard: Duration, silence: Duration)?
            var badDeadline = false
            var steps = 0
            while deadAt == nil && steps < 100_000 {
                steps += 1
                switch keepalive.poll(now: now) {
                case .ping:
                    pings.append(now)
                case .dead(let silence):
                    deadAt = (now, heard, silence)
                case .wait(let until):
                    guard let until, until > now, until - heard <= timeout else {
                        badDeadline = true
                        steps = 100_000
                        break
                    }
                    if let arrival = nextArrival, arrival <= until {
                        now = arrival
                        heard = arrival
                        keepalive.heard(at: arrival)
                        nextArrival = pending.isEmpty ? nil : arrival + pending.removeFirst()
                    } else {
                        now = until
                    }
                }
            }
            #expect(!badDeadline, "always a deadline, in the future, no later than the silence deadline")
            // Dead at the first gap between arrivals longer than the timeout (or after the last).
            var expectedDeath: Duration?
            var previous = Duration.zero
            for gap in arrivals.map({ Duration.milliseconds($0) }) where expectedDeath == nil {
                if gap > timeout { expectedDeath = previous + timeout } else { previous += gap }
            }
            #expect(deadAt?.now == (expectedDeath ?? previous + timeout))
            #expect(deadAt?.silence == timeout, "declared dead exactly when the timeout ran out")
            #expect(deadAt.map { $0.now - $0.heard } == timeout)
            let gaps = zip(pings, pings.dropFirst()).map { $1 - $0 }
            #expect(gaps.allSatisfy { $0 == interval }, "pings exactly one interval apart")
            #expect(pings.first == (pings.isEmpty ? nil : interval))
        }
    }
}
