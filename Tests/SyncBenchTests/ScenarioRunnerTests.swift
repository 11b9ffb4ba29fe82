import Foundation
import PropertyBased
import Testing

@testable import SyncBench

@Suite("Scenario runner: action script, stream translation, progress, failure marking")
struct ScenarioRunnerTests {
    // MARK: Action script

    @Test("the standard script has every kind of action, in order, and the relay restart last")
    func standardScript() {
        let script = ActionScript.standard(duration: 60)
        #expect(script.actions.map(\.name) == [
            "play", "lateJoin", "pause", "play", "seek", "rate", "rate", "item", "suspension", "relayRestart",
        ])
        #expect(script.actions.map(\.at) == script.actions.map(\.at).sorted())
        #expect(script.measurementEnd == script.actions.last?.at)
        #expect(script.hasLateJoiner)
        #expect(script.notRunnable.map(\.name) == ["suspension"])
        #expect(script.labels.contains("45.6 suspension (not run)"))
        #expect(script.description.split(separator: "\n").count == script.actions.count)
        // Syncplay follows the play / pause / seek part only.
        #expect(script.syncplayActions.map(\.name) == ["play", "pause", "play", "seek"])
    }

    @Test("short scripts keep play, late joiner, pause, play, seek and the restart; options drop the rest")
    func shortAndTrimmedScripts() {
        #expect(ActionScript.standard(duration: 8).actions.map(\.name) == [
            "play", "lateJoin", "pause", "play", "seek", "relayRestart",
        ])
        let plain = ActionScript.standard(duration: 60, lateJoiner: false, relayRestart: false)
        #expect(!plain.hasLateJoiner)
        #expect(!plain.actions.contains { $0.kind == .relayRestart })
        #expect(plain.measurementEnd == 60)
    }

    @Test("for any duration the script is sorted, within the duration, and ends with the restart")
    func scriptInvariants() async {
        await propertyCheck(input: Gen.double(in: 5...7200)) { duration in
            let script = ActionScript.standard(duration: duration)
            #expect(script.actions.map(\.at) == script.actions.map(\.at).sorted())
            #expect(script.actions.allSatisfy { $0.at >= 0 && $0.at < duration })
            #expect(script.actions.last?.kind == .relayRestart)
            #expect(duration - script.measurementEnd <= 30 || script.measurementEnd == 0.85 * duration)
            #expect(script.actions.first?.kind == .play)
        }
    }

    @Test("control arguments", arguments: [
        (ScenarioAction.Kind.play, ["play"]), (.pause, ["pause"]), (.seek(2), ["seek", "2.0"]),
        (.rate(0.5), ["rate", "0.5"]), (.item, ["item", "ITEM"]),
    ])
    func controlArguments(kind: ScenarioAction.Kind, expected: [String]) {
        #expect(ScenarioAction(at: 1, kind).controlArguments(item: "ITEM") == expected)
    }

    @Test("actions the CLI does not send through control have no control arguments")
    func nonControlActions() {
        for kind: ScenarioAction.Kind in [.lateJoin, .suspension, .relayRestart] {
            #expect(ScenarioAction(at: 1, kind).controlArguments(item: "x") == nil)
        }
        #expect(ScenarioAction(at: 1, .item).controlArguments(item: nil) == nil)
        #expect(!ScenarioAction(at: 1, .suspension).isRunnable)
    }

    // MARK: Scenarios

    @Test("the named scenarios and their defaults")
    func scenarios() throws {
        #expect(BenchScenario.names == ["quiet", "jitter", "asymmetric", "loss", "drift", "crowd", "syncplay"])
        #expect(try BenchScenario.named("quiet").players == 3)
        #expect(try BenchScenario.named("quiet").duration == 60)
        #expect(try BenchScenario.named("crowd").players == 8)
        #expect(try BenchScenario.named("drift").duration == 600)
        #expect(try BenchScenario.named("drift").drift(ofPlayer: 0) == 100)
        #expect(try BenchScenario.named("drift").drift(ofPlayer: 1) == -100)
        #expect(try BenchScenario.named("quiet").drift(ofPlayer: 2) == 0)
        #expect(try BenchScenario.named("jitter").network.upstream.jitter == 0.010)
        #expect(try BenchScenario.named("syncplay").implementation == .syncplay)
        #expect(throws: BenchError.self) { try BenchScenario.named("lunar") }
        let offsets = (0..<8).map(BenchScenario.clockOffset(ofPlayer:))
        #expect(Set(offsets).count == 8)
    }

    // MARK: Translation of coplay's JSON Lines

    static func line(_ fields: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test("frame lines become frame and clock events; commands take effect at the anchor or the stop")
    func translation() {
        var translator = CoplayStreamTranslator(player: "p1")
        var events: [BenchEvent] = []
        func feed(_ fields: [String: Any]) { events += translator.consume(Self.line(fields)) }

        events += translator.consume("some log noise")
        #expect(translator.unreadableLines == 1)
        feed(["type": "stopped", "realtime": 99.0, "index": 0, "referenceTime": 95.0, "detail": "paused", "item": "I"])
        #expect(translator.isReady)
        #expect(translator.item == "I")
        // play accepted at 100, anchored at reference 101.2 (the relay's clock is 1 s ahead of realtime).
        feed(["type": "play", "realtime": 100.0, "referenceTime": 101.2, "rate": 1.0, "itemTime": 0.0])
        // The first frame is at the anchor: the effect, 0.1 ms late.
        feed(["type": "frame", "realtime": 100.2002, "index": 0, "pts": 0.0, "referenceTime": 101.2, "errorMs": 0.1])
        feed(["type": "frame", "realtime": 100.2402, "index": 1, "pts": 0.04, "referenceTime": 101.24, "errorMs": 0.1])
        feed(["type": "pause", "realtime": 100.3, "referenceTime": 101.5, "rate": 0.0])
        feed(["type": "stopped", "realtime": 100.5, "index": 7, "referenceTime": 101.5, "detail": "paused"])

        let frames = events.filter { $0.type == "frame" }
        #expect(frames.map(\.index) == [0, 1])
        #expect(frames.allSatisfy { $0.player == "p1" })
        let clocks = events.filter { $0.type == "clock" }
        #expect(clocks.count == 2)
        // The player's view (101.2 + 0.1 ms) minus realtime (100.2002): 1 s minus 0.1 ms.
        #expect(abs((clocks[0].offset ?? 0) - 0.9999) < 1e-6)
        let effects = events.filter { $0.type == "effect" }
        #expect(effects.map(\.action) == ["play", "pause"])
        #expect(effects.map(\.realtime) == [100.2002, 100.5])
        #expect(translator.frames == 2)
        #expect(translator.firstFrameRealtime == 100.2002)
        #expect(translator.lastFrameRealtime == 100.2402)
    }

    @Test("a seek takes effect at the first frame scheduled at or after its anchor, not before")
    func seekEffect() {
        var translator = CoplayStreamTranslator(player: "p2", clockEvery: 100)
        _ = translator.consume(Self.line(["type": "seek", "realtime": 10.0, "referenceTime": 10.5, "rate": 1.0]))
        let early = translator.consume(Self.line(["type": "frame", "realtime": 10.3, "index": 5, "pts": 0.2, "referenceTime": 10.3]))
        #expect(!early.contains { $0.type == "effect" })
        #expect(!early.contains { $0.type == "clock" })
        let onTime = translator.consume(Self.line(["type": "frame", "realtime": 10.5, "index": 50, "pts": 2.0, "referenceTime": 10.5]))
        #expect(onTime.filter { $0.type == "effect" }.map(\.action) == ["seek"])
    }

    @Test("translated streams feed the analysis: command latency from the runner's command events")
    func translatedAnalysis() {
        var streams: [PlayerEventStream] = []
        for (number, lateness) in [0.0, 0.0003].enumerated() {
            var translator = CoplayStreamTranslator(player: "p\(number + 1)")
            var events: [BenchEvent] = []
            events += translator.consume(Self.line(["type": "play", "realtime": 1000.1, "referenceTime": 1000.5, "rate": 1.0]))
            for index in 0..<50 {
                let scheduled = 1000.5 + Double(index) * 0.04
                events += translator.consume(Self.line([
                    "type": "frame", "realtime": scheduled + lateness, "index": index, "pts": Double(index) * 0.04,
                    "referenceTime": scheduled, "errorMs": 0.0,
                ]))
            }
            streams.append(PlayerEventStream(player: "p\(number + 1)", events: events))
        }
        streams[0].events.append(.command("play", realtime: 1000.0, player: "runner"))
        let analysis = ScenarioAnalysis(
            name: "quiet", streams: streams, configuration: .init(trueOffsets: ["p1": 0, "p2": 0]))
        #expect(analysis.result.frames == 50)
        #expect(abs((analysis.result.p99SkewMs ?? 0) - 0.3) < 0.001)
        #expect(analysis.result.commandLatency?.count == 2)
        #expect(abs((analysis.result.commandLatency?.p50Ms ?? 0) - 500) < 0.001)
        #expect(analysis.result.missedEffects == 0)
        // p2's clock view is 0.3 ms behind the truth.
        #expect(abs((analysis.result.clockOffsetError?.maxMs ?? 0) - 0.3) < 0.001)
    }

    // MARK: Trend, progress, failure marking

    @Test("the skew trend is positive for a growing skew and near zero for a steady one")
    func trend() throws {
        func series(_ skew: (Double) -> Double) -> SkewSeries {
            SkewSeries(players: ["a", "b"], points: (0..<600).map { n in
                let time = Double(n)
                return SkewSeries.Point(time: time, index: n, skewMs: skew(time), deviationMs: [:])
            })
        }
        let growing = try #require(series { 0.2 + $0 / 60 }.trend)  // 1 ms more every minute
        #expect(abs(growing.slopeMsPerMinute - 1) < 1e-9)
        #expect(growing.lastThirdP99Ms > growing.firstThirdP99Ms)
        let steady = try #require(series { 0.2 + 0.1 * sin($0) }.trend)
        #expect(abs(steady.slopeMsPerMinute) < 0.02)
        #expect(SkewSeries(players: [], points: []).trend == nil)
    }

    @Test("the progress line names the scenario, elapsed/total, frames and the current p99")
    func progressLine() {
        #expect(
            ScenarioProgress(scenario: "quiet", elapsed: 12.7, total: 60, frames: 812, p99SkewMs: 0.42).line
                == "bench quiet: 12/60 s, 812 frames, p99 skew 0.420 ms")
        #expect(
            ScenarioProgress(scenario: "loss", elapsed: 0, total: 60, frames: 0, stage: "starting the relay").line
                == "bench loss: 0/60 s, 0 frames (starting the relay)")
    }

    @Test("a failed coplay scenario next to a measured one: FAILED row, incomplete run, no figures")
    func failureMarking() throws {
        var report = BenchReport()
        let streams = [
            PlayerEventStream(player: "p1", events: frames("p1", count: 100)),
            PlayerEventStream(player: "p2", events: frames("p2", count: 100) { _ in 0.0004 }),
        ]
        var measured = ScenarioAnalysis(name: "quiet", streams: streams)
        var row = measured.result
        row.implementation = "coplay"
        row.relayRestart = "lost: p1 exited with status 1"
        measured = ScenarioAnalysis(result: row, series: measured.series)
        report.append(measured)
        var failed = ScenarioResult.failed(name: "jitter", players: 3, error: "player p2 exited with status 1 before the pause at 15.0 s")
        failed.implementation = "coplay"
        report.append(failed)
        var syncplay = ScenarioResult.failed(name: "syncplay", players: 2, error: "mpv is not installed")
        syncplay.implementation = "syncplay"
        report.append(syncplay)

        #expect(!report.isComplete)
        let markdown = report.markdownReport()
        #expect(markdown.contains("INCOMPLETE RUN: 2 scenario(s) failed (jitter, syncplay)"))
        #expect(markdown.contains("| jitter | coplay | 3 | FAILED: player p2 exited with status 1 before the pause at 15.0 s |"))
        #expect(markdown.contains("| syncplay | Syncplay | 2 | FAILED: mpv is not installed |"))
        let quietRow = try #require(markdown.split(separator: "\n").first { $0.hasPrefix("| quiet |") })
        #expect(quietRow.contains("| NOT resumed |"))
        #expect(markdown.contains("relay restart: lost: p1 exited with status 1"))

        let object = try #require(try JSONSerialization.jsonObject(with: report.summaryJSON()) as? [String: Any])
        #expect(object["complete"] as? Bool == false)
        let rows = try #require(object["scenarios"] as? [[String: Any]])
        #expect(rows.map { $0["status"] as? String } == ["ok", "failed", "failed"])
        #expect(rows[0]["p99SkewMs"] is Double)
        #expect(rows[1]["p99SkewMs"] == nil)
        #expect(rows[1]["error"] as? String == "player p2 exited with status 1 before the pause at 15.0 s")
        // Every row in the table: header, separator, three scenarios.
        #expect(markdown.split(separator: "\n").filter { $0.hasPrefix("|") }.count == 5)
    }
}
