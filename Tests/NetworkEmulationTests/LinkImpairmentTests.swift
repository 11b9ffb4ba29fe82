import PropertyBased
import Testing

@testable import NetworkEmulation

@Suite("LinkImpairment: the sans-IO scheduling core")
struct LinkImpairmentTests {
    func deliveries(_ link: inout LinkImpairment, count: Int, spacing: UInt64 = 1_000_000) -> [UInt64?] {
        (0..<count).map { n in
            if case .deliver(let at) = link.schedule(size: 100, arrival: UInt64(n) * spacing) { at } else { nil }
        }
    }

    @Test("equal seeds give equal schedules, different seeds different ones")
    func seeded() {
        let profile = ImpairmentProfile(delay: 0.02, jitter: 0.01, loss: 0.1)
        var a = LinkImpairment(profile: profile, mode: .datagram, seed: 7)
        var b = LinkImpairment(profile: profile, mode: .datagram, seed: 7)
        var c = LinkImpairment(profile: profile, mode: .datagram, seed: 8)
        let x = deliveries(&a, count: 200)
        #expect(x == deliveries(&b, count: 200))
        #expect(x != deliveries(&c, count: 200))
    }

    @Test("datagram loss stays within a binomial bound", arguments: [0.01, 0.1, 0.5])
    func binomialLoss(p: Double) {
        let n = 20_000
        var link = LinkImpairment(profile: .init(loss: p), mode: .datagram, seed: 3)
        let dropped = deliveries(&link, count: n).filter { $0 == nil }.count
        let sigma = (Double(n) * p * (1 - p)).squareRoot()
        #expect(abs(Double(dropped) - Double(n) * p) <= 5 * sigma)
        #expect(link.counters.dropped == dropped)
    }

    @Test("every delay is within the distribution's bounds and the mean is near the base delay",
          arguments: JitterDistribution.allCases)
    func jitterBounds(distribution: JitterDistribution) {
        let profile = ImpairmentProfile(delay: 0.030, jitter: 0.005, distribution: distribution)
        var link = LinkImpairment(profile: profile, mode: .datagram, seed: 11)
        let n = 20_000
        let delays = deliveries(&link, count: n).enumerated().map { n, at in Double(at! - UInt64(n) * 1_000_000) / 1e9 }
        #expect(delays.allSatisfy { $0 >= profile.minimumDelay - 1e-9 })
        #expect(delays.allSatisfy { $0 <= profile.delay + 5 * profile.jitter + 1e-9 })
        let mean = delays.reduce(0, +) / Double(n)
        // Every distribution has mean `delay` (truncation aside): within 5 standard errors of it.
        #expect(abs(mean - profile.delay) < 5 * profile.jitter / Double(n).squareRoot() + 1e-4)
    }

    @Test("a bandwidth cap spaces packets by size / bandwidth")
    func bandwidth() {
        var link = LinkImpairment(profile: .init(delay: 0.01, bandwidth: 100_000), mode: .datagram, seed: 1)
        var last: UInt64 = 0
        for _ in 0..<100 {
            if case .deliver(let at) = link.schedule(size: 1000, arrival: 0) { last = at }
        }
        // 100 kB at 100 kB/s takes 1 s, then 10 ms of delay.
        #expect(last == 1_010_000_000)
    }

    @Test("stream mode never drops, keeps order, and turns loss into the retransmission penalty")
    func streamLoss() {
        let profile = ImpairmentProfile(delay: 0.01, loss: 0.2, streamLossPenalty: 0.1)
        var link = LinkImpairment(profile: profile, mode: .stream, seed: 5)
        let times = deliveries(&link, count: 1000).map { $0! }
        #expect(times == times.sorted())
        #expect(link.counters.dropped == 0)
        #expect(link.counters.penalized > 100 && link.counters.penalized < 300)
        #expect(times.enumerated().allSatisfy { n, at in at >= UInt64(n) * 1_000_000 + 10_000_000 })
    }

    @Test("for any profile and arrivals, stream deliveries are ordered and never earlier than the minimum delay")
    func streamProperty() async {
        await propertyCheck(
            input: Gen.double(in: 0...0.05), Gen.double(in: 0...0.05), Gen.double(in: 0...0.5),
            Gen.int(in: 0...5_000_000).array(of: 1...200)
        ) { delay, jitter, loss, gaps in
            let profile = ImpairmentProfile(delay: delay, jitter: jitter, loss: loss)
            var link = LinkImpairment(profile: profile, mode: .stream, seed: 9)
            var arrival: UInt64 = 0
            var previous: UInt64 = 0
            for gap in gaps {
                arrival += UInt64(gap)
                guard case .deliver(let at) = link.schedule(size: 1448, arrival: arrival) else {
                    Issue.record("a stream chunk was dropped")
                    return
                }
                #expect(at >= previous)
                #expect(Double(at) >= Double(arrival) + profile.minimumDelay * 1e9 - 1)
                previous = at
            }
        }
    }

    @Test("bad profiles are rejected with a readable error")
    func validation() {
        #expect(throws: NetworkEmulationError.self) { try ImpairmentProfile(delay: -1).validate() }
        #expect(throws: NetworkEmulationError.self) { try ImpairmentProfile(loss: 1.5).validate() }
        #expect(throws: NetworkEmulationError.self) { try ImpairmentProfile(bandwidth: 0).validate() }
        let message = "\(NetworkEmulationError.invalidProfile("loss must be within 0...1"))"
        #expect(message == "invalid impairment: loss must be within 0...1")
    }
}
