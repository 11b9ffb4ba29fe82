import ClockSync
import Logging
import PlaybackCoordinator
import PropertyBased
import Testing

@Suite("SyncedClock as the coordinator's reference time")
struct ReferenceTimeAdapterTests {
    @Test("NTP timestamps and reference times convert both ways to the nanosecond (NTP era 0: 1970-2036)")
    func ntpRoundTrip() async {
        await propertyCheck(input: Gen.int64(in: 0...2_085_978_495_999_999_999)) { nanoseconds in
            let reference = ReferenceTime(nanoseconds: nanoseconds)
            #expect(ReferenceTime(ntp: reference.ntpTimestamp) == reference)
        }
    }

    @Test("the Unix epoch and a known instant map onto NTP seconds")
    func knownValues() {
        #expect(ReferenceTime(nanoseconds: 0).ntpTimestamp.seconds == UInt32(NTPTimestamp.unixEpochOffset))
        let ntp = NTPTimestamp(unixSeconds: 1_700_000_000, nanoseconds: 500_000_000)
        #expect(ReferenceTime(ntp: ntp).nanoseconds == 1_700_000_000_500_000_000)
    }

    @Test("nil until synchronized, then the synced clock's time; local and reference map both ways")
    func followsSyncedClock() {
        let clock = ManualClock()
        let anchor = NTPTimestamp(unixSeconds: 1_800_000_000, nanoseconds: 0)
        let synced = SyncedClock(timescale: LocalTimescale(clock: clock, anchorTime: anchor), logger: Logger(label: "test"))
        let source = SyncedReferenceTimeSource(synced)
        #expect(source.now() == nil)
        #expect(source.errorBound == nil)
        #expect(source.referenceTime(atLocal: .seconds(1)) == nil)
        #expect(source.localTime(atReference: ReferenceTime(nanoseconds: 0)) == nil)

        // The reference clock runs 2.5 s ahead of the local timescale.
        clock.advance(by: .seconds(10))
        let local = synced.timescale.now()
        synced.update(with: ClockEstimate(
            localTime: local, offset: 2.5, driftPPM: 0, driftErrorPPM: 0, offsetStandardError: 0,
            bestDelay: 0.0002, worstUsedDelay: 0.0002, latestSampleTime: local, usedSamples: 8, totalSamples: 8))

        let expected = ReferenceTime(nanoseconds: 1_800_000_012_500_000_000)
        let now = try! #require(source.now())
        #expect(abs((now - expected).nanosecondsValue) < 1_000)
        let bound = try! #require(source.errorBound)
        #expect(bound > .zero && bound < .milliseconds(1))

        let atLocal = try! #require(source.referenceTime(atLocal: .seconds(20)))
        #expect(abs((atLocal - ReferenceTime(nanoseconds: 1_800_000_022_500_000_000)).nanosecondsValue) < 1_000)
        let back = try! #require(source.localTime(atReference: atLocal))
        #expect(abs((back - .seconds(20)).nanosecondsValue) < 1_000)

        // Time moves with the local clock.
        clock.advance(by: .milliseconds(40))
        let later = try! #require(source.now())
        #expect(abs((later - now - .milliseconds(40)).nanosecondsValue) < 1_000)
    }
}
