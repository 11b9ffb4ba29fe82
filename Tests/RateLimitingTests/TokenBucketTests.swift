import PropertyBased
import RateLimiting
import Testing

@Suite("TokenBucket")
struct TokenBucketTests {
    @Test("starts full: the burst passes, then the sustained rate")
    func burstThenRate() {
        var bucket = TokenBucket(capacity: 4, rate: 2, now: .zero)
        let times: [Duration] = [.zero, .zero, .zero, .zero, .zero, .milliseconds(499), .milliseconds(500), .milliseconds(500)]
        let passed = times.map { bucket.take(now: $0) }
        #expect(passed == [true, true, true, true, false, false, true, false])
        // A long pause refills up to the capacity, never beyond.
        bucket.refill(now: .seconds(60))
        #expect(bucket.tokens == 4)
    }

    @Test("time going backwards adds nothing and does not move the refill point")
    func backwards() {
        var bucket = TokenBucket(capacity: 1, rate: 1, now: .seconds(10))
        let passed = [bucket.take(now: .seconds(10)), bucket.take(now: .seconds(5))]
        #expect(passed == [true, false])
        #expect(bucket.updated == .seconds(10))
        let later = bucket.take(now: .seconds(11))
        #expect(later)
    }

    @Test("check, then spend; new limits keep the tokens but never above the capacity")
    func spendAndLimits() {
        var bucket = TokenBucket(capacity: 10, rate: 1, now: .zero)
        #expect(bucket.hasToken)
        bucket.spend()
        #expect(bucket.tokens == 9)
        bucket.setLimits(capacity: 3, rate: 5)
        #expect(bucket.tokens == 3 && bucket.capacity == 3 && bucket.rate == 5)
        #expect(bucket.isFull(at: .zero))
        for _ in 0..<3 { bucket.spend() }
        #expect(!bucket.hasToken)
        #expect(!bucket.isFull(at: .milliseconds(500)))
        #expect(bucket.isFull(at: .milliseconds(600)))
        bucket.spend()
        #expect(bucket.tokens == 0)
    }

    @Test("a zero rate never refills")
    func zeroRate() {
        var bucket = TokenBucket(capacity: 1, rate: 0, now: .zero)
        let passed = [bucket.take(now: .zero), bucket.take(now: .seconds(1_000_000))]
        #expect(passed == [true, false])
    }

    @Test("for any arrivals, what passes in a window is at most capacity + rate * window")
    func boundProperty() async {
        await propertyCheck(
            input: Gen.int(in: 1...20), Gen.int(in: 0...50), Gen.int(in: 0...2_000).array(of: 1...200)
        ) { capacity, rate, gaps in
            var bucket = TokenBucket(capacity: Double(capacity), rate: Double(rate), now: .zero)
            var now = Duration.zero
            var passed = 0
            for gap in gaps {
                now += .milliseconds(gap)
                if bucket.take(now: now) { passed += 1 }
                #expect(bucket.tokens >= 0 && bucket.tokens <= Double(capacity))
            }
            let seconds = Double(now.components.seconds) + Double(now.components.attoseconds) * 1e-18
            #expect(Double(passed) <= Double(capacity) + Double(rate) * seconds + 1e-9)
        }
    }
}
