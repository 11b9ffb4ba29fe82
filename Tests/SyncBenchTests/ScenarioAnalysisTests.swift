import Foundation
import PropertyBased
import Testing

@testable import SyncBench

/// Builds a stream of `count` frames at 25 fps starting at `start`, with per-frame offsets (seconds).
func frames(
    _ player: String, count: Int, firstIndex: Int = 0, start: Double = 1000, offset: (Int) -> Double = { _ in 0 }
) -> [BenchEvent] {
    (0..<count).map { n in
        let index = firstIndex + n
        return .frame(index: index, pts: Double(index) / 25, realtime: start + Double(n) / 25 + offset(n), player: player)
    }
}

@Suite("ScenarioAnalysis: skew from synthetic event streams")
struct ScenarioAnalysisTests {
    @Test("constant offsets give a constant skew equal to the spread of the offsets")
    func constantOffsets() {
        let streams = [
            PlayerEventStream(player: "a", events: frames("a", count: 100)),
            PlayerEventStream(player: "b", events: frames("b", count: 100) { _ in 0.0005 }),
            PlayerEventStream(player: "c", events: frames("c", count: 100) { _ in -0.0003 }),
        ]
        let r = ScenarioAnalysis(name: "const", streams: streams).result
        #expect(r.players == 3)
        #expect(r.frames == 100)
        #expect(r.unmatchedFrames == 0)
        #expect(abs((r.p50SkewMs ?? 0) - 0.8) < 1e-6)
        #expect(abs((r.p99SkewMs ?? 0) - 0.8) < 1e-6)
        #expect(abs((r.maxSkewMs ?? 0) - 0.8) < 1e-6)
        #expect(r.within1msShare == 1)
        #expect(r.withinHalfFrameShare == 1)
        #expect(abs((r.frameDurationMs ?? 0) - 40) < 1e-6)
    }

    @Test("percentiles and shares follow the nearest-rank definitions on known skews")
    func knownDistribution() {
        // Frame n has skew (n + 0.5) * 0.1 ms: 0.05, 0.15, ..., 9.95 ms.
        let streams = [
            PlayerEventStream(player: "a", events: frames("a", count: 100)),
            PlayerEventStream(player: "b", events: frames("b", count: 100) { n in (Double(n) + 0.5) * 0.0001 }),
        ]
        let r = ScenarioAnalysis(name: "ramp", streams: streams).result
        #expect(r.frames == 100)
        #expect(abs((r.p50SkewMs ?? 0) - 4.95) < 1e-6)
        #expect(abs((r.p99SkewMs ?? 0) - 9.85) < 1e-6)
        #expect(abs((r.maxSkewMs ?? 0) - 9.95) < 1e-6)
        #expect(abs((r.meanSkewMs ?? 0) - 5.0) < 1e-6)
        #expect(r.within1msShare == 0.1)
        // Half a frame is 20 ms: every frame qualifies.
        #expect(r.withinHalfFrameShare == 1)
    }

    @Test("half-a-frame share uses the frame duration derived from pts")
    func halfFrame() {
        // Skews 0, 10, 30 ms alternate; 30 ms exceeds half a 40 ms frame.
        let skews = [0.0, 0.010, 0.030]
        let streams = [
            PlayerEventStream(player: "a", events: frames("a", count: 99)),
            PlayerEventStream(player: "b", events: frames("b", count: 99) { n in skews[n % 3] }),
        ]
        let r = ScenarioAnalysis(name: "half", streams: streams).result
        #expect(abs((r.withinHalfFrameShare ?? 0) - 2.0 / 3.0) < 1e-9)
        #expect(abs((r.within1msShare ?? 0) - 1.0 / 3.0) < 1e-9)
    }

    @Test("a seek back presents frames twice; each presentation is paired with its own")
    func repeatedFrames() {
        // Both players play frames 0..<50, then seek back and play them again 10 s later.
        let a = frames("a", count: 50) + frames("a", count: 50, start: 1010)
        let b = frames("b", count: 50) { _ in 0.002 } + frames("b", count: 50, start: 1010) { _ in 0.004 }
        let result = ScenarioAnalysis(
            name: "seek", streams: [PlayerEventStream(player: "a", events: a), PlayerEventStream(player: "b", events: b)])
        let r = result.result
        #expect(r.frames == 100)
        #expect(r.unmatchedFrames == 0)
        #expect(abs((r.p50SkewMs ?? 0) - 2) < 1e-6)
        #expect(abs((r.maxSkewMs ?? 0) - 4) < 1e-6)
        // The series is in time order, deviations are symmetric around the mean for two players.
        let times = result.series.points.map(\.time)
        #expect(times == times.sorted())
        for point in result.series.points {
            #expect(abs((point.deviationMs["a"] ?? 0) + (point.deviationMs["b"] ?? 0)) < 1e-6)
        }
    }

    @Test("a frame one player shows an extra time (overshoot before a pause) pairs its tightest presentations")
    func overshoot() {
        // b overshoots a pause by frames 95 and 96, is snapped back, and shows them again 1 s later
        // together with a (2 ms behind it).
        let a = frames("a", count: 95) + frames("a", count: 10, firstIndex: 95, start: 1000 + 95.0 / 25 + 1)
        let b = frames("b", count: 97) + frames("b", count: 10, firstIndex: 95, start: 1000 + 95.0 / 25 + 1) { _ in 0.002 }
        let r = ScenarioAnalysis(
            name: "overshoot",
            streams: [PlayerEventStream(player: "a", events: a), PlayerEventStream(player: "b", events: b)]
        ).result
        #expect(r.frames == 105)
        #expect(r.unmatchedFrames == 2)
        #expect(abs((r.maxSkewMs ?? 0) - 2) < 1e-6)
    }

    @Test("a frame one player showed before a pause and the other only after the resume is not paired across the pause")
    func notAcrossAPause() {
        // a shows frame 50 and then pauses 2 s; b had stopped at 49 and shows 50 only after the resume.
        let a = frames("a", count: 51) + frames("a", count: 20, firstIndex: 51, start: 1000 + 51.0 / 25 + 2)
        let b = frames("b", count: 50) + frames("b", count: 21, firstIndex: 50, start: 1000 + 51.0 / 25 + 2 - 1.0 / 25)
        let r = ScenarioAnalysis(
            name: "pause",
            streams: [PlayerEventStream(player: "a", events: a), PlayerEventStream(player: "b", events: b)],
            configuration: .init(pairingWindow: 5)
        ).result
        #expect((r.maxSkewMs ?? 0) < 100, "paired across the 2 s pause: \(r.maxSkewMs ?? 0) ms")
        #expect(r.unmatchedFrames == 2)
    }

    @Test("frames some player never presents are unmatched, not part of the skew")
    func missingFrames() {
        let streams = [
            PlayerEventStream(player: "a", events: frames("a", count: 100)),
            PlayerEventStream(player: "b", events: frames("b", count: 100).filter { $0.index! % 10 != 0 }),
        ]
        let r = ScenarioAnalysis(name: "missing", streams: streams).result
        #expect(r.frames == 90)
        #expect(r.unmatchedFrames == 10)
        #expect(r.maxSkewMs == 0)
    }

    @Test("a skew beyond the pairing window is reported as unmatched frames, never as a small skew")
    func beyondPairingWindow() {
        let streams = [
            PlayerEventStream(player: "a", events: frames("a", count: 50)),
            PlayerEventStream(player: "b", events: frames("b", count: 50) { _ in 3 }),
        ]
        let r = ScenarioAnalysis(
            name: "far", streams: streams, configuration: .init(pairingWindow: 2)
        ).result
        #expect(r.frames == 0)
        #expect(r.unmatchedFrames == 100)
        #expect(r.p99SkewMs == nil)
        let wide = ScenarioAnalysis(name: "far", streams: streams, configuration: .init(pairingWindow: 5)).result
        #expect(abs((wide.p50SkewMs ?? 0) - 3000) < 1e-3)
    }

    @Test("command-to-effect latency pairs each command with the first matching effect on every other player")
    func commandLatency() {
        let a: [BenchEvent] = [
            .command("play", realtime: 100, player: "a"),
            .effect("play", realtime: 100.001, player: "a"),
            .command("pause", realtime: 110, player: "a"),
        ]
        let b: [BenchEvent] = [
            .effect("play", realtime: 100.120, player: "b"),
            .effect("play", realtime: 100.500, player: "b"),  // later duplicate: ignored
            .effect("pause", realtime: 110.200, player: "b"),
        ]
        let c: [BenchEvent] = [
            .effect("play", realtime: 100.080, player: "c"),
            // c never pauses.
            .effect("pause", realtime: 99, player: "c"),  // before the command: ignored
        ]
        let r = ScenarioAnalysis(
            name: "cmd",
            streams: [
                PlayerEventStream(player: "a", events: a), PlayerEventStream(player: "b", events: b),
                PlayerEventStream(player: "c", events: c),
            ]
        ).result
        let latency = try! #require(r.commandLatency)
        #expect(latency.count == 3)
        #expect(abs(latency.p50Ms - 120) < 1e-3)
        #expect(abs(latency.maxMs - 200) < 1e-3)
        #expect(r.missedEffects == 1)
    }

    @Test("clock-offset error compares estimates with the true offset from the event or the configuration")
    func clockError() {
        let a: [BenchEvent] = [
            .clock(offset: 0.0102, trueOffset: 0.010, realtime: 1, player: "a"),
            .clock(offset: 0.0095, trueOffset: 0.010, realtime: 2, player: "a"),
        ]
        let b: [BenchEvent] = [.clock(offset: -0.2003, realtime: 1, player: "b")]
        let streams = [PlayerEventStream(player: "a", events: a), PlayerEventStream(player: "b", events: b)]
        let r = ScenarioAnalysis(name: "clock", streams: streams, configuration: .init(trueOffsets: ["b": -0.2]))
            .result
        let error = try! #require(r.clockOffsetError)
        #expect(error.count == 3)
        #expect(abs(error.maxMs - 0.5) < 1e-6)
        #expect(abs(error.p50Ms - 0.3) < 1e-6)
        let without = ScenarioAnalysis(name: "clock", streams: streams).result
        #expect(without.clockOffsetError?.count == 2)
    }

    @Test("for any constant per-player offsets, every skew equals their spread and p50 <= p99 <= max")
    func constantOffsetProperty() async {
        await propertyCheck(input: Gen.double(in: -0.05...0.05).array(of: 2...6)) { offsets in
            let streams = offsets.enumerated().map { number, offset in
                PlayerEventStream(player: "p\(number)", events: frames("p\(number)", count: 30) { _ in offset })
            }
            let r = ScenarioAnalysis(name: "prop", streams: streams).result
            let spread = (offsets.max()! - offsets.min()!) * 1000
            #expect(r.frames == 30)
            #expect(abs((r.maxSkewMs ?? -1) - spread) < 1e-3)
            #expect((r.p50SkewMs ?? 0) <= (r.p99SkewMs ?? 0))
            #expect((r.p99SkewMs ?? 0) <= (r.maxSkewMs ?? 0))
        }
    }
}
