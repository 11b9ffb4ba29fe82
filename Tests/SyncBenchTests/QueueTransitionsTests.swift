import Foundation
import Testing

@testable import SyncBench

@Suite("QueueTransitions: the queue scenario's figures from members' frames and mpv samples")
struct QueueTransitionsTests {
    /// Reference = CLOCK_REALTIME + 10 s.
    static let offset = 10.0

    /// A headless member's frames: `item` at `rate` from reference `from` (item time 0) until `to`,
    /// each presented `late` seconds after its instant.
    static func frames(_ item: String, rate: Double, from: Double, to: Double, late: Double = 0, firstLate: Double = 0) -> [QueueTransitions.Frame] {
        var frames: [QueueTransitions.Frame] = []
        var k = 0
        while from + Double(k) / rate < to - 1e-9 {
            let reference = from + Double(k) / rate
            frames.append(.init(realtime: reference - offset + late + (k == 0 ? firstLate : 0), referenceTime: reference, item: item, index: k, pts: Double(k) / rate))
            k += 1
        }
        return frames
    }

    static func step(_ pts: Double, rate: Double, at realtime: Double) -> FrameTransitionTracker.Transition {
        .init(index: Int((pts * rate).rounded()), pts: pts, before: realtime - 0.000_1, after: realtime + 0.000_1)
    }

    @Test("spreads, offsets and gaps per transition; a late first frame is a gap over the limit; an early mpv switch is counted")
    func figures() throws {
        let group: [QueueTransitions.GroupTransition] = [
            .init(referenceTime: 1010, item: "B", entry: "e2", reason: "end"),
            .init(referenceTime: 1012, item: "A", entry: "e3", reason: "next", label: "next (shuffled)"),
        ]
        let h1 = Self.frames("A", rate: 25, from: 1008, to: 1010, late: 0.000_2) + Self.frames("B", rate: 30, from: 1010, to: 1012, late: 0.000_2)
            + Self.frames("A", rate: 25, from: 1012, to: 1013, late: 0.000_2)
        // h2 shows B's first frame 2 ms late: its gap is 42 ms after A's 40 ms frames.
        let h2 = Self.frames("A", rate: 25, from: 1008, to: 1010, late: 0.000_7)
            + Self.frames("B", rate: 30, from: 1010, to: 1012, late: 0.000_7, firstLate: 0.002)
            + Self.frames("A", rate: 25, from: 1012, to: 1013, late: 0.000_7)
        // m1: A's frames up to 1.96, then B appears 3 ms after the instant and moves 1 ms after it;
        // B's last frame, then A appears 10 ms early (shown before its instant) and moves on time.
        var m1 = MPVFrameSampler.Record(player: "m1")
        m1.transitions = (1..<50).map { Self.step(Double($0) / 25, rate: 25, at: 998 + Double($0) / 25) }
        m1.jumps.append(.init(from: 1.96, to: 0, realtime: 1000.003))
        m1.transitions += (1..<60).map { Self.step(Double($0) / 30, rate: 30, at: 1000.001 + Double($0) / 30) }
        m1.jumps.append(.init(from: 59.0 / 30, to: 0, realtime: 1001.990))
        m1.transitions += (1..<25).map { Self.step(Double($0) / 25, rate: 25, at: 1002 + Double($0) / 25) }

        let figures = QueueTransitions.analyze(
            transitions: group, headless: ["h1": h1, "h2": h2], mpv: ["m1": m1], relayOffset: Self.offset)
        #expect(figures.transitions.count == 2)
        #expect(figures.missing == 0)
        #expect(figures.labels == ["end": 1, "next (shuffled)": 1])
        let first = figures.transitions[0]
        #expect(abs(first.headlessOffsetMs["h1"]! - 0.2) < 1e-6)
        #expect(abs(first.headlessOffsetMs["h2"]! - 2.7) < 1e-6)
        #expect(abs(first.headlessSpreadMs! - 2.5) < 1e-6)
        #expect(abs(first.headlessGapMs["h1"]! - 40) < 1e-6)
        #expect(abs(first.headlessGapMs["h2"]! - 42) < 1e-6)
        #expect(abs(first.previousFrameIntervalMs! - 40) < 1e-6)
        #expect(abs(first.mpvSwitchMs["m1"]! - 3) < 1e-6)
        #expect(abs(first.mpvStartMs["m1"]! - 1) < 1e-6)
        #expect(abs(first.mpvGapMs["m1"]! - (1000.003 - (998 + 49.0 / 25)) * 1000) < 1e-6)
        let second = figures.transitions[1]
        #expect(abs(second.headlessGapMs["h1"]! - 1000.0 / 30) < 1e-6)
        #expect(abs(second.mpvSwitchMs["m1"]! + 10) < 1e-6)
        #expect(abs(second.mpvStartMs["m1"]!) < 1e-6)
        // h2's 42 ms after 40 ms frames is 2 ms over: the one gap over the limit.
        #expect(figures.headlessGapsOverLimit == 1)
        #expect(figures.mpvEarlySwitches == 1)
        #expect(figures.headlessSpread?.count == 2)
        #expect(abs(figures.headlessSpread!.maxMs - 2.5) < 1e-6)
        #expect(figures.summaryLines.count >= 4)
    }

    @Test("an mpv member that reaches the next entry 400 ms late, past its first frames, is a late entry; its start is where item time 0 lies")
    func lateEntry() throws {
        let group: [QueueTransitions.GroupTransition] = [.init(referenceTime: 1010, item: "B", entry: "e2", reason: "jump")]
        var m1 = MPVFrameSampler.Record(player: "m1")
        m1.transitions = (1..<50).map { Self.step(Double($0) / 25, rate: 25, at: 998 + Double($0) / 25) }
        m1.jumps.append(.init(from: 1.96, to: 0.4, realtime: 1000.390))
        m1.transitions += (13..<60).map { Self.step(Double($0) / 30, rate: 30, at: 1000.002 + Double($0) / 30) }
        let figures = QueueTransitions.analyze(transitions: group, headless: [:], mpv: ["m1": m1], relayOffset: Self.offset)
        let row = figures.transitions[0]
        #expect(abs(row.mpvEnteredAtMs["m1"]! - 400) < 1e-6)
        #expect(abs(row.mpvSwitchMs["m1"]! - 390) < 1e-6)
        #expect(abs(row.mpvStartMs["m1"]! - 2) < 1e-6)
        #expect(figures.mpvLateEntries == 1)
        #expect(figures.mpvEarlySwitches == 0)
    }

    @Test("a member whose first frame after the instant is of another item is missing, not measured")
    func wrongItem() {
        let group: [QueueTransitions.GroupTransition] = [.init(referenceTime: 1010, item: "B", entry: "e2", reason: "jump")]
        let stale = Self.frames("A", rate: 25, from: 1008, to: 1011)  // kept playing A
        let figures = QueueTransitions.analyze(transitions: group, headless: ["h1": stale], mpv: [:], relayOffset: Self.offset)
        #expect(figures.transitions[0].missing == ["h1"])
        #expect(figures.missing == 1)
        #expect(figures.headlessSpread == nil)
    }

    @Test("an entry still paused on its first frame when the next replaces it: the change of file at the same position is the switch")
    func switchAtTheSamePosition() {
        let group: [QueueTransitions.GroupTransition] = [.init(referenceTime: 1010, item: "C", entry: "e3", reason: "next")]
        var m1 = MPVFrameSampler.Record(player: "m1")
        // B opened paused at 0 long before; C's first frame replaces it 4 ms early and plays on time.
        m1.jumps.append(.init(from: 2.96, to: 0, realtime: 998.3, newFile: true))
        m1.jumps.append(.init(from: 0, to: 0, realtime: 999.996, newFile: true))
        m1.transitions = (1..<25).map { Self.step(Double($0) / 24, rate: 24, at: 1000 + Double($0) / 24) }
        let row = QueueTransitions.analyze(transitions: group, headless: [:], mpv: ["m1": m1], relayOffset: Self.offset).transitions[0]
        #expect(row.missing.isEmpty)
        #expect(abs(row.mpvSwitchMs["m1"]! + 4) < 1e-6)
        #expect(abs(row.mpvStartMs["m1"]!) < 1e-6)
        // Without the word of another file, 0 to 0 is no switch.
        m1.jumps[1].newFile = false
        #expect(QueueTransitions.analyze(transitions: group, headless: [:], mpv: ["m1": m1], relayOffset: Self.offset).transitions[0].missing == ["m1"])
    }
}
