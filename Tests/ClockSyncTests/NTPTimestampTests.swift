import ClockSync
import PropertyBased
import Testing

@Suite("NTP timestamps")
struct NTPTimestampTests {
    @Test("Unix time maps onto the NTP era: 1970 is 2208988800 s after 1900")
    func unixEpoch() {
        let t = NTPTimestamp(unixSeconds: 0)
        #expect(t.seconds == 2_208_988_800)
        #expect(t.fraction == 0)
        #expect(NTPTimestamp(unixSeconds: 1.5).fraction == 0x8000_0000)
        #expect(NTPTimestamp(unixSeconds: 1_800_000_000, nanoseconds: 250_000_000).unixSeconds == 1_800_000_000.25)
    }

    @Test("differences are era-safe across the 2036 wrap")
    func eraWrap() {
        let beforeWrap = NTPTimestamp(seconds: UInt32.max, fraction: 0x8000_0000)   // era 0, last half second
        let afterWrap = NTPTimestamp(seconds: 0, fraction: 0x4000_0000)             // era 1, 0.25 s
        #expect(afterWrap.seconds(since: beforeWrap) == 0.75)
        #expect(beforeWrap.seconds(since: afterWrap) == -0.75)
        #expect(beforeWrap.advanced(bySeconds: 0.75) == afterWrap)
        #expect(afterWrap.duration(since: beforeWrap) == .milliseconds(750))
        // 2036-02-07T06:28:16Z is the wrap; 2040 maps to era 1 and still reads as Unix time.
        #expect(NTPTimestamp(unixSeconds: 2_208_988_800 + 100).unixSeconds == 2_208_988_800 + 100)
    }

    @Test("seconds(since:) and advanced(bySeconds:) are inverse within 1 ns", .tags())
    func inverse() async {
        await propertyCheck(count: 2000, input: Gen.uint64(), Gen.double(in: -2e9...2e9)) { raw, shift in
            let t = NTPTimestamp(rawValue: raw)
            let moved = t.advanced(bySeconds: shift)
            #expect(abs(moved.seconds(since: t) - shift) <= 1e-9 + abs(shift) * 1e-15)
        }
    }

    @Test("Duration conversions agree with the raw 32.32 arithmetic")
    func durations() async {
        await propertyCheck(count: 2000, input: Gen.uint64(), Gen.int64(in: -4_000_000_000_000_000...4_000_000_000_000_000)) { raw, nanos in
            let t = NTPTimestamp(rawValue: raw)
            let d = Duration.nanoseconds(nanos)
            let moved = t.advanced(by: d)
            let back = moved.duration(since: t)
            // 2^-32 s ≈ 0.23 ns resolution.
            #expect(abs((back - d).components.attoseconds) <= 1_000_000_000 && (back - d).components.seconds == 0)
        }
    }

    @Test("the short format holds 16.16 seconds and clamps")
    func shortFormat() {
        #expect(NTPShortFormat(seconds: 1.5).rawValue == 0x0001_8000)
        #expect(NTPShortFormat(seconds: -1).rawValue == 0)
        #expect(NTPShortFormat(seconds: .nan).rawValue == 0)
        #expect(NTPShortFormat(seconds: 1e9).rawValue == UInt32.max)
        #expect(NTPShortFormat(rawValue: 0x0000_0001).seconds == 1.0 / 65_536)
    }

    @Test("offset and delay follow RFC 5905 section 8")
    func sample() {
        let t1 = NTPTimestamp(unixSeconds: 1_000)
        // Server 2 s ahead; 30 ms out, 10 ms back, 1 ms in the server.
        let t2 = t1.advanced(bySeconds: 2 + 0.030)
        let t3 = t2.advanced(bySeconds: 0.001)
        let t4 = t1.advanced(bySeconds: 0.030 + 0.001 + 0.010)
        let sample = NTPSample(t1: t1, t2: t2, t3: t3, t4: t4)
        #expect(abs(sample.offset - (2 + (0.030 - 0.010) / 2)) < 1e-9)
        #expect(abs(sample.delay - 0.040) < 1e-9)
        #expect(abs(sample.localTime.seconds(since: t1) - 0.0205) < 1e-9)
    }

    @Test("a delay below the timestamps' precision (even negative) is raised to 1 µs; the offset is kept")
    func delayFloor() {
        let t1 = NTPTimestamp(unixSeconds: 1_000)
        // The server's 40 µs in hand exceed the 30 µs the client measured: δ = -10 µs from the raw stamps.
        let t2 = t1.advanced(bySeconds: 5 + 0.000_010)
        let t3 = t2.advanced(bySeconds: 0.000_040)
        let t4 = t1.advanced(bySeconds: 0.000_030)
        let sample = NTPSample(t1: t1, t2: t2, t3: t3, t4: t4)
        #expect(sample.delay == NTPSample.minimumDelay)
        #expect(abs(sample.offset - (5 + (0.000_010 + 0.000_020) / 2)) < 1e-9)
        #expect(NTPSample(offset: 0, delay: 0, localTime: t1).delay == 1e-6)
    }

    @Test("offset is exact across an era boundary between client and server")
    func sampleAcrossEras() {
        let t1 = NTPTimestamp(seconds: UInt32.max, fraction: 0)          // client just before the wrap
        let t2 = t1.advanced(bySeconds: 3600.25)                         // server an hour ahead, in era 1
        let sample = NTPSample(t1: t1, t2: t2, t3: t2, t4: t1.advanced(bySeconds: 0.5))
        #expect(abs(sample.offset - 3600.0) < 1e-9)
        #expect(abs(sample.delay - 0.5) < 1e-9)
    }
}
