import ClockSync
import Testing

@Suite("LocalTimescale")
struct LocalTimescaleTests {
    @Test("anchored to the system clock between two monotonic reads: the anchor lies between system times read around the creation, and later readings match the system clock within half the reported uncertainty")
    func anchor() {
        let clock = ContinuousClock()
        for _ in 0..<200 {
            let before = NTPTimestamp.systemNow()
            let timescale = LocalTimescale(clock: clock)
            let after = NTPTimestamp.systemNow()
            #expect(timescale.anchorTime.seconds(since: before) >= 0)
            #expect(after.seconds(since: timescale.anchorTime) >= 0)
            #expect(timescale.anchorUncertainty >= .zero && timescale.anchorUncertainty < .milliseconds(100))
            // The timescale's error against the system clock is its anchor's: at most half the bracket
            // (1 µs for the timestamps' rounding).
            let half = Double(timescale.anchorUncertainty.components.attoseconds) * 1e-18 / 2
                + Double(timescale.anchorUncertainty.components.seconds) / 2 + 1e-6
            let system0 = NTPTimestamp.systemNow()
            let now = timescale.now()
            let system1 = NTPTimestamp.systemNow()
            #expect(now.seconds(since: system0) >= -half)
            #expect(system1.seconds(since: now) >= -half)
        }
    }

    @Test("a manual clock or a given anchor time anchors with no uncertainty")
    func exact() {
        let manual = LocalTimescale(clock: ManualClock())
        #expect(manual.anchorUncertainty == .zero)
        let given = LocalTimescale(clock: ContinuousClock(), anchorTime: NTPTimestamp(unixSeconds: 1_800_000_000, nanoseconds: 0))
        #expect(given.anchorUncertainty == .zero)
        #expect(given.anchorTime == NTPTimestamp(unixSeconds: 1_800_000_000, nanoseconds: 0))
    }
}
