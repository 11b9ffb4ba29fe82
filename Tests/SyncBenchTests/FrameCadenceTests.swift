import Testing

@testable import SyncBench

@Suite("FrameCadence: frames re-dated from their neighbours")
struct FrameCadenceTests {
    typealias Transition = FrameTransitionTracker.Transition

    /// A 25 fps run from `start`: frame k changes at `start + k x 40 ms / speed + offsets[k]`, bracketed by
    /// `widths[k]` (the change at `position` of the way through its bracket).
    static func record(
        frames: Int, speed: Double = 1, widths: (Int) -> Double, offsets: (Int) -> Double = { _ in 0 }, position: (Int) -> Double = { _ in 0.5 }
    ) -> MPVFrameSampler.Record {
        var record = MPVFrameSampler.Record(player: "p1")
        record.frameRate = 25
        record.speeds = [(realtime: 99, speed: speed)]
        record.transitions = (0..<frames).map { k in
            let change = 100 + Double(k) * 0.04 / speed + offsets(k)
            let width = widths(k)
            let before = change - width * position(k)
            return Transition(index: 50 + k, pts: Double(50 + k) * 0.04, before: before, after: before + width)
        }
        return record
    }

    @Test("a frame with a 6 ms bracket between tight neighbours is dated within their allowance, on the cadence")
    func wideBetweenTight() throws {
        // Frame 5's change sits at the very start of its 6 ms bracket: its midpoint is 3 ms late.
        let record = Self.record(frames: 11, speed: 1.25, widths: { $0 == 5 ? 0.006 : 0.0004 }, position: { $0 == 5 ? 0 : 0.5 })
        let dated = FrameCadence.redate(record)
        #expect(dated.count == 11)
        let truth = 100 + 5 * 0.04 / 1.25
        #expect(abs(record.transitions[5].realtime - truth) > 0.0029)
        #expect(abs(dated[5].realtime - truth) <= dated[5].uncertainty + 1e-9)
        #expect(dated[5].uncertainty <= FrameCadence.jitter + 0.0003)
        // The tight frames keep (at most) their own brackets.
        for k in [0, 4, 6, 10] {
            #expect(dated[k].uncertainty <= record.transitions[k].bracket / 2 + 1e-12)
            #expect(abs(dated[k].realtime - record.transitions[k].realtime) <= record.transitions[k].bracket / 2 + 1e-12)
        }
    }

    @Test("a frame measured tightly off the cadence (mpv late by 3 ms) stays where it was measured")
    func lateFrameStays() {
        let record = Self.record(frames: 9, widths: { _ in 0.0004 }, offsets: { $0 == 4 ? 0.003 : 0 })
        let dated = FrameCadence.redate(record)
        #expect(abs(dated[4].realtime - record.transitions[4].realtime) <= 0.0002 + 1e-12)
    }

    @Test("a jump or a pause between frames ends the run: no neighbour across it is used")
    func runsEnd() {
        var record = Self.record(frames: 6, widths: { $0 == 3 ? 0.006 : 0.0004 }, position: { $0 == 3 ? 0 : 0.5 })
        // A seek between frames 2 and 3 and a pause between 3 and 4: frame 3 is alone.
        record.jumps = [.init(from: 1, to: 2, realtime: record.transitions[3].before - 0.001)]
        record.pauses = [.init(realtime: record.transitions[4].before - 0.001, paused: false)]
        let dated = FrameCadence.redate(record)
        #expect(dated[3].realtime == record.transitions[3].realtime)
        #expect(dated[3].uncertainty == record.transitions[3].bracket / 2)
    }
}
