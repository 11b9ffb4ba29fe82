import Foundation
import Testing

@testable import SyncBench

/// Frame events of a member presenting 25 fps frames: on their instants (`tickPhaseMs` nil, the
/// headless member), or on the first tick of a 60 Hz frame clock at or after `originMs + pts + offset`
/// (a page), the offset given per frame.
private func member(
    _ name: String, frames: Range<Int>, originMs: Double, tickPhaseMs: Double? = nil, offsetMs: (Int) -> Double = { _ in 0 }
) -> PlayerEventStream {
    let tick = 1000.0 / 60
    return PlayerEventStream(
        player: name,
        events: frames.map { frame in
            let pts = Double(frame) * 0.04
            let due = originMs + pts * 1000 + offsetMs(frame)
            let shown = tickPhaseMs.map { phase in ((due - phase) / tick).rounded(.up) * tick + phase } ?? due
            return .frame(index: frame, pts: pts, realtime: shown / 1000, player: name)
        })
}

@Suite("DisplaySpread: per-second display origins against the headless member")
struct DisplaySpreadTests {
    static let origin = 1_000_000.0  // ms
    /// The least-lag frames come this long after their tick-aligned instant (never exactly on a tick,
    /// so rounding cannot push them to the next one).
    static let epsilon = 0.01

    @Test("pages in step: origins at the least lag, not the cadence; the per-frame skew keeps the 60 Hz cadence")
    func inStep() throws {
        // Both pages' pictures at the group's instants on their least-lag frames (tick phase = origin).
        let phase = (Self.origin + Self.epsilon).truncatingRemainder(dividingBy: 1000.0 / 60)
        let streams = [
            member("p1", frames: 0..<500, originMs: Self.origin),
            member("b1", frames: 0..<500, originMs: Self.origin, tickPhaseMs: phase),
            member("b2", frames: 0..<500, originMs: Self.origin, tickPhaseMs: phase),
        ]
        let analysis = ScenarioAnalysis(name: "browser", streams: streams)
        let spread = try #require(DisplaySpread(series: analysis.series, reference: "p1", pages: ["b1", "b2"]))
        #expect(spread.spread.count >= 19)
        #expect(abs(spread.spread.p99Ms - Self.epsilon) < 1e-6, "\(spread.spread)")
        #expect((spread.pagesSpread?.maxMs ?? 1) < 1e-6)
        #expect(spread.tickApartSeconds == 0)
        // Per frame, against a member presenting every frame on its instant, the cadence is 0...13.3 ms.
        #expect((analysis.result.p99SkewMs ?? 0) > 13)
    }

    @Test("a page 4.5 ms late and a page a tick later for three seconds: offsets, spread and tick-apart seconds")
    func offsetAndTick() throws {
        let tick = 1000.0 / 60
        let phase = (Self.origin + 4.5 + Self.epsilon).truncatingRemainder(dividingBy: tick)
        // b2 slips a whole tick late from frame 250 (10 s) to frame 325 (13 s), then is placed back.
        let streams = [
            member("p1", frames: 0..<500, originMs: Self.origin),
            member("b1", frames: 0..<500, originMs: Self.origin, tickPhaseMs: phase, offsetMs: { _ in 4.5 }),
            member("b2", frames: 0..<500, originMs: Self.origin, tickPhaseMs: phase, offsetMs: { (250..<325).contains($0) ? 4.5 + tick : 4.5 }),
        ]
        let analysis = ScenarioAnalysis(name: "browser", streams: streams)
        let spread = try #require(DisplaySpread(series: analysis.series, reference: "p1", pages: ["b1", "b2"]))
        let b1 = try #require(spread.offsets["b1"])
        #expect(abs(b1.p50Ms - 4.5) < 0.02 && abs(b1.maxMs - 4.5) < 0.02, "\(b1)")
        let b2 = try #require(spread.offsets["b2"])
        #expect(abs(b2.p50Ms - 4.5) < 0.02)
        #expect(abs(b2.maxMs - 4.5 - tick) < 0.02, "\(b2)")
        #expect(spread.tickApartSeconds == 3, "\(spread.seconds.map { $0.pagesSpreadMs ?? -1 })")
        #expect(abs(spread.spread.maxMs - 4.5 - tick) < 0.02)
        #expect(abs((spread.pagesSpread?.maxMs ?? 0) - tick) < 0.02)
        // Outside the slip the pages agree and the spread is b1's 4.5 ms.
        #expect(abs(spread.spread.p50Ms - 4.5) < 0.02)
        #expect(spread.seconds.allSatisfy { $0.originsMs["p1"] == 0 })
    }

    @Test("a page early by 2 ms at half speed (80 ms frames on 60 Hz)")
    func halfSpeed() throws {
        let tick = 1000.0 / 60
        let phase = (Self.origin - 2 + Self.epsilon).truncatingRemainder(dividingBy: tick)
        func halfSpeed(_ name: String, tickPhase: Double?, offsetMs: Double) -> PlayerEventStream {
            PlayerEventStream(
                player: name,
                events: (0..<250).map { frame in
                    let pts = Double(frame) * 0.04
                    let due = Self.origin + pts * 2000 + offsetMs
                    let shown = tickPhase.map { p in ((due - p) / tick).rounded(.up) * tick + p } ?? due
                    return .frame(index: frame, pts: pts, realtime: shown / 1000, player: name)
                })
        }
        let streams = [
            halfSpeed("p1", tickPhase: nil, offsetMs: 0), halfSpeed("b1", tickPhase: phase, offsetMs: -2),
        ]
        let analysis = ScenarioAnalysis(name: "browser", streams: streams)
        let spread = try #require(DisplaySpread(series: analysis.series, reference: "p1", pages: ["b1"]))
        #expect(spread.pagesSpread == nil)
        #expect(abs((spread.offsets["b1"]?.p50Ms ?? 0) + 2) < 0.02)
        #expect(abs(spread.spread.p99Ms - 2) < 0.02)
    }

    @Test("seconds with too few shared frames are left out; an unknown reference gives nothing")
    func sparse() {
        let streams = [
            member("p1", frames: 0..<3, originMs: Self.origin), member("b1", frames: 0..<3, originMs: Self.origin + 1),
        ]
        let series = ScenarioAnalysis(name: "x", streams: streams).series
        #expect(DisplaySpread(series: series, reference: "p1", pages: ["b1"]) == nil)
        let enough = [
            member("p1", frames: 0..<50, originMs: Self.origin), member("b1", frames: 0..<50, originMs: Self.origin + 1),
        ]
        #expect(DisplaySpread(series: ScenarioAnalysis(name: "x", streams: enough).series, reference: "zz", pages: ["b1"]) == nil)
        let spread = DisplaySpread(series: ScenarioAnalysis(name: "x", streams: enough).series, reference: "p1", pages: ["b1"])
        #expect(spread?.spread.count == 2)
        #expect(abs((spread?.spread.maxMs ?? 0) - 1) < 1e-6)
    }
}
