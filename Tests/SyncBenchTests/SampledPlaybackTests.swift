import Testing

@testable import SyncBench

@Suite("SampledPlayback: frames and effects from sampled positions")
struct SampledPlaybackTests {
    /// Samples every 20 ms of a player that plays at rate 1 from position `from` starting at `start`,
    /// with a symmetric IPC round trip of 1 ms.
    func playing(_ player: String, start: Double, from: Double, seconds: Double, rate: Double = 1) -> [PositionSample] {
        stride(from: 0.0, to: seconds, by: 0.02).map { t in
            PositionSample(
                player: player, sent: start + t - 0.0005, received: start + t + 0.0005, position: from + rate * t,
                paused: false)
        }
    }

    @Test("frame N is placed where the interpolated position crosses N / fps")
    func frameCrossings() {
        let converter = SampledPlayback(frameRate: 25)
        let events = converter.frames(playing("a", start: 1000, from: 2.01, seconds: 4), player: "a")
        #expect(events.first?.index == 51)
        #expect(events.count == 99)  // frames 51...149 lie in (2.01, 5.99]
        for event in events {
            let expected = 1000 + (Double(event.index!) / 25 - 2.01)
            #expect(abs(event.realtime - expected) < 1e-6)
            #expect(event.pts == Double(event.index!) / 25)
        }
    }

    @Test("a skewed pair of players gives exactly that skew through the whole analysis")
    func endToEnd() {
        let a = playing("a", start: 1000, from: 0, seconds: 10)
        let b = playing("b", start: 1000.0371, from: 0, seconds: 10)
        let streams = SampledPlayback(frameRate: 25).streams(samples: a + b, commands: [], players: ["a", "b"])
        let r = ScenarioAnalysis(name: "sampled", streams: streams, configuration: .init(method: "sampled")).result
        #expect((r.frames ?? 0) > 240)
        #expect(abs((r.p50SkewMs ?? 0) - 37.1) < 1e-3)
        #expect(abs((r.maxSkewMs ?? 0) - 37.1) < 1e-3)
    }

    @Test("no frames while paused, across a seek, or at an implausible rate")
    func noFalseFrames() {
        var samples = playing("a", start: 1000, from: 0, seconds: 1)
        samples += (0..<10).map { n in
            PositionSample(player: "a", sent: 1001 + Double(n) * 0.02, received: 1001 + Double(n) * 0.02, position: 1, paused: true)
        }
        // A seek from 1 s to 20 s between two samples, then steady again.
        samples += playing("a", start: 1001.2, from: 20, seconds: 1)
        // Fast forward at 4x: rejected.
        samples += playing("a", start: 1002.2, from: 40, seconds: 1, rate: 4)
        let events = SampledPlayback(frameRate: 25).frames(samples.sorted { $0.realtime < $1.realtime }, player: "a")
        let indices = Set(events.map(\.index!))
        #expect(indices.allSatisfy { (1...25).contains($0) || (501...525).contains($0) })
        #expect(!indices.contains(where: { (26...500).contains($0) }))
    }

    @Test("effects are dated between the last sample without and the first sample with the effect")
    func effects() {
        let pauseAt = 1001.0
        let samples = stride(from: 0.0, to: 2, by: 0.02).map { t in
            PositionSample(
                player: "b", sent: 1000 + t, received: 1000 + t, position: min(t, 1.13),
                paused: 1000 + t >= pauseAt + 0.13)
        }
        let commands: [BenchEvent] = [.command("pause", id: "c1", realtime: pauseAt, player: "a")]
        let effects = SampledPlayback(frameRate: 25).effects(samples, commands: commands, player: "b")
        #expect(effects.count == 1)
        let effect = try! #require(effects.first)
        #expect(effect.action == "pause")
        #expect(effect.id == "c1")
        #expect(abs(effect.realtime - (pauseAt + 0.13)) <= 0.02)
    }
}
