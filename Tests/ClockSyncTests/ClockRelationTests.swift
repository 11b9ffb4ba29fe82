import ClockSync
import PropertyBased
import Testing

@Suite("SyncedClock mapping")
struct ClockRelationTests {
    func estimate(offset: Double, driftPPM: Double, at local: NTPTimestamp, delay: Double = 100e-6) -> ClockEstimate {
        ClockEstimate(
            localTime: local, offset: offset, driftPPM: driftPPM, driftErrorPPM: 0.1,
            offsetStandardError: 1e-6, bestDelay: delay, worstUsedDelay: delay,
            latestSampleTime: local, usedSamples: 8, totalSamples: 8
        )
    }

    @Test("unsynchronized: reference time is local time and the error bound is infinite")
    func unsynchronized() {
        let clock = ManualClock()
        let synced = SyncedClock(clock: clock)
        #expect(!synced.isSynchronized)
        #expect(synced.errorBound == .infinity)
        #expect(synced.now() == synced.timescale.now())
    }

    @Test("a gross error steps the clock once; a small one is slewed at the configured rate")
    func stepAndSlew() {
        let clock = ManualClock()
        let synced = SyncedClock(clock: clock)
        let t0 = synced.timescale.now()
        synced.update(with: estimate(offset: 5, driftPPM: 0, at: t0), atLocal: t0)
        #expect(abs(synced.now().seconds(since: t0) - 5) < 1e-9)

        // 10 ms correction: slewed at 500 ppm, so 20 s to absorb, and continuous at the update.
        synced.update(with: estimate(offset: 5.010, driftPPM: 0, at: t0), atLocal: t0)
        #expect(abs(synced.now().seconds(since: t0) - 5) < 1e-9)
        #expect(synced.status.steps == 0)
        clock.advance(by: .seconds(10))
        #expect(abs(synced.status.residual - -0.005) < 1e-6)
        clock.advance(by: .seconds(10))
        #expect(abs(synced.status.residual) < 1e-9)
        #expect(abs(synced.now().seconds(since: t0) - 20 - 5.010) < 1e-9)

        // A 2 s correction is gross: stepped.
        synced.update(with: estimate(offset: 7.010, driftPPM: 0, at: t0))
        #expect(synced.status.steps == 1)
        #expect(abs(synced.now().seconds(since: t0) - 20 - 7.010) < 1e-9)
    }

    @Test("localInstant(forReference:) inverts referenceTime(atLocal:) while slewing with drift")
    func inverse() async {
        let clock = ManualClock()
        let synced = SyncedClock(clock: clock)
        let t0 = synced.timescale.now()
        synced.update(with: estimate(offset: -30, driftPPM: 250, at: t0), atLocal: t0)
        synced.update(with: estimate(offset: -30.02, driftPPM: 240, at: t0), atLocal: t0)
        await propertyCheck(count: 300, input: Gen.double(in: -100...10_000)) { seconds in
            let instant = ManualClock.Instant(offset: .milliseconds(Int64(seconds * 1000)))
            let reference = synced.referenceTime(atLocal: instant)
            let back = synced.localInstant(forReference: reference)
            #expect(abs(instant.duration(to: back).seconds) < 1e-8)
        }
    }

    @Test("reference time is monotonic across arbitrary updates within the step threshold")
    func monotonicProperty() async {
        await propertyCheck(
            count: 200,
            input: Gen.double(in: -0.09...0.09).array(of: 1...20), Gen.double(in: -500...500)
        ) { corrections, drift in
            let clock = ManualClock()
            let synced = SyncedClock(clock: clock)
            var previous = synced.now()
            for correction in corrections {
                let now = synced.timescale.now()
                let current = synced.status.offset
                synced.update(with: estimate(offset: current + correction, driftPPM: drift, at: now))
                clock.advance(by: .milliseconds(100))
                let reference = synced.now()
                #expect(reference.seconds(since: previous) > 0)
                previous = reference
            }
            #expect(synced.status.steps == 0)
        }
    }
}
