import MPVControl
import PlaybackCoordinator
import Testing

@Suite("AudioClock: the error from mpv's audio-pts")
struct AudioClockTests {
    static func t(_ seconds: Double) -> ReferenceTime { ReferenceTime(seconds: 1000 + seconds) }
    static let motion = CommandSchedule.Motion(item: "clip", itemTime: 3, referenceTime: t(0), rate: 1.25, revision: 1, waiting: false)

    @Test("each sample is an error estimate: a player 4 ms behind is measured 4 ms behind from three samples")
    func behind() throws {
        var clock = AudioClock()
        for elapsed in [0.05, 0.06, 0.07] {
            #expect(clock.error(for: Self.motion) == nil)
            clock.record(position: 3 + 1.25 * elapsed - 0.004, at: Self.t(elapsed), roundTrip: 0.0001)
        }
        let error = try #require(clock.error(for: Self.motion))
        #expect(abs(error + 0.004) < 1e-9)
    }

    @Test("a stalled start: the clock stands still, the error grows at once")
    func stall() throws {
        var clock = AudioClock()
        // Ran for 100 ms, then stood still at 3.125 for 200 ms.
        for ms in stride(from: 10, through: 300, by: 10) {
            let elapsed = Double(ms) / 1000
            clock.record(position: 3 + 1.25 * min(elapsed, 0.1), at: Self.t(elapsed), roundTrip: 0.0001)
        }
        let error = try #require(clock.error(for: Self.motion))
        // The median of the last five (0.26-0.3 s): 0.18 s of standing still, at 1.25x.
        #expect(abs(error + 1.25 * 0.18) < 1e-9)
    }

    @Test("samples with long round trips, before `since` or too old are not used; a reset forgets everything")
    func filters() {
        var clock = AudioClock()
        clock.record(position: 3.5, at: Self.t(0.01), roundTrip: 0.0001)  // far off, but old
        for elapsed in [0.3, 0.31, 0.32] {
            clock.record(position: 3 + 1.25 * elapsed, at: Self.t(elapsed), roundTrip: 0.0001)
        }
        clock.record(position: 9, at: Self.t(0.33), roundTrip: 0.005)  // delayed reply
        #expect(clock.error(for: Self.motion).map { abs($0) < 1e-9 } == true)
        #expect(clock.error(for: Self.motion, since: Self.t(0.315)) == nil)
        #expect(clock.error(for: Self.motion, since: Self.t(0.315), minimumSamples: 1).map { abs($0) < 1e-9 } == true)
        clock.reset()
        #expect(clock.error(for: Self.motion, minimumSamples: 1) == nil)
    }
}
