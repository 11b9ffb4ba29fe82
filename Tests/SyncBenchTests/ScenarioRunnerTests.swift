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
        // The suspension runs (coplay control suspend), held 2 s, done well before the restart at 51 s.
        #expect(script.actions.first { $0.name == "suspension" }?.kind == .suspension(2))
        #expect(script.labels.contains("45.6 suspension 2.0 s"))
        #expect(!script.labels.contains { $0.contains("not run") })
        #expect(!script.description.contains("not run"))
        #expect(script.description.split(separator: "\n").count == script.actions.count)
        // Syncplay follows the play / pause / seek part only.
        #expect(script.syncplayActions.map(\.name) == ["play", "pause", "play", "seek"])
    }

    @Test("short scripts keep play, late joiner, pause, play, seek and the restart; options drop the rest")
    func shortAndTrimmedScripts() {
        #expect(ActionScript.standard(duration: 8).actions.map(\.name) == [
            "play", "lateJoin", "pause", "play", "seek", "relayRestart",
        ])
        // 20 s: the suspension at 15.2 s is held 0.7 s (40 % of the 1.8 s to the restart).
        let twenty = ActionScript.standard(duration: 20)
        #expect(twenty.actions.first { $0.name == "suspension" }?.value == 0.7)
        #expect(twenty.labels.contains("15.2 suspension 0.7 s"))
        let plain = ActionScript.standard(duration: 60, lateJoiner: false, relayRestart: false)
        #expect(!plain.hasLateJoiner)
        #expect(!plain.actions.contains { $0.kind == .relayRestart })
        #expect(plain.measurementEnd == 60)
    }

    @Test("a script at another rate sets it right after the first play and returns to it after the 0.5 phase")
    func scriptAtRate() {
        let script = ActionScript.standard(duration: 60, rate: 1.25)
        #expect(script.actions.map(\.name) == [
            "play", "rate", "lateJoin", "pause", "play", "seek", "rate", "rate", "item", "suspension", "relayRestart",
        ])
        #expect(script.actions.filter { $0.name == "rate" }.map(\.kind) == [.rate(1.25), .rate(0.5), .rate(1.25)])
        #expect(abs(script.actions[1].at - 1.7) < 1e-9)
        // At rate 1 the script is the standard one.
        #expect(ActionScript.standard(duration: 60, rate: 1) == ActionScript.standard(duration: 60))
    }

    @Test("an mpv scenario's mpv command line: coplay's options, or README's plain one playing the media; the audio output")
    func mpvCommandLines() throws {
        let configured = CoplayScenarioRunner.mpvArguments(try .named("mpv"), socket: "/s", media: "/m.mp4")
        #expect(configured.contains("--video-timing-offset=0") && configured.contains("--ao=null") && configured.contains("--pause"))
        #expect(!configured.contains("/m.mp4"))
        #expect(CoplayScenarioRunner.mpvArguments(try .named("mpv-audio"), socket: "/s", media: "/m.mp4").contains("--ao=pulse"))
        #expect(CoplayScenarioRunner.mpvArguments(try .named("mpv-plain"), socket: "/s", media: "/m.mp4") == [
            "--input-ipc-server=/s", "--vo=null", "--ao=null", "/m.mp4",
        ])
        #expect(CoplayScenarioRunner.mpvArguments(try .named("mpv-plain-audio"), socket: "/s", media: "/m.mp4") == [
            "--input-ipc-server=/s", "--vo=null", "--ao=pulse", "/m.mp4",
        ])
    }

    @Test("a member's re-anchoring seeks are read from its correction lines, and nothing else is")
    func correctionSeekLines() {
        #expect(LivePlayer.correctionSeekTime(#"{"type":"correction","v":1,"realtime":12.5,"player":"ma","errorMs":32.5,"detail":"seek"}"#) == 12.5)
        #expect(LivePlayer.correctionSeekTime(#"{"type":"correction","v":1,"realtime":12.5,"rate":1.001,"errorMs":-0.4,"detail":"speed"}"#) == nil)
        #expect(LivePlayer.correctionSeekTime(#"{"type":"seek","v":1,"realtime":12.5,"detail":"seek"}"#) == nil)
        #expect(LivePlayer.correctionSeekTime("not json \"correction\" \"seek\"") == nil)
        let player = LivePlayer(name: "p1", startRealtime: 0, drivesMPV: true)
        player.consume(#"{"type":"correction","v":1,"realtime":3.0,"errorMs":32.5,"detail":"seek"}"#)
        player.consume(#"{"type":"correction","v":1,"realtime":4.0,"detail":"user seek","itemTime":2}"#)
        player.consume(#"{"type":"correction","v":1,"realtime":5.0,"errorMs":-33,"detail":"seek"}"#)
        #expect(player.correctionSeeks == [3.0, 5.0])
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
            // The suspension is held 0.5 ... 2 s and ends before the next action starts.
            for (position, action) in script.actions.enumerated() {
                guard case let .suspension(hold) = action.kind else { continue }
                #expect(hold >= 0.5 && hold <= 2)
                let next = position + 1 < script.actions.count ? script.actions[position + 1].at : duration
                #expect(action.at + hold < next, "held \(hold) s from \(action.at) s, next action at \(next) s")
            }
        }
    }

    @Test("control arguments", arguments: [
        (ScenarioAction.Kind.play, ["play"]), (.pause, ["pause"]), (.seek(2), ["seek", "2.0"]),
        (.rate(0.5), ["rate", "0.5"]), (.item, ["item", "ITEM"]), (.suspension(2), ["suspend", "2.0"]),
    ])
    func controlArguments(kind: ScenarioAction.Kind, expected: [String]) {
        #expect(ScenarioAction(at: 1, kind).controlArguments(item: "ITEM") == expected)
    }

    @Test("actions the CLI does not send through control have no control arguments")
    func nonControlActions() {
        for kind: ScenarioAction.Kind in [.lateJoin, .relayRestart] {
            #expect(ScenarioAction(at: 1, kind).controlArguments(item: "x") == nil)
        }
        #expect(ScenarioAction(at: 1, .item).controlArguments(item: nil) == nil)
        // The suspension needs no item.
        #expect(ScenarioAction(at: 1, .suspension(0.7)).controlArguments(item: nil) == ["suspend", "0.7"])
        #expect(ScenarioAction(at: 1, .suspension(0.7)).valueLabel == "0.7 s")
        #expect(ScenarioAction(at: 1, .seek(2)).valueLabel == "2.0")
    }

    // MARK: Scenarios

    @Test("the named scenarios and their defaults")
    func scenarios() throws {
        #expect(BenchScenario.names == [
            "quiet", "jitter", "asymmetric", "loss", "drift", "crowd", "mpv", "mpv-jitter", "mpv-plain", "mpv-plain-av", "mpv-audio",
            "mpv-plain-audio", "syncplay", "browser", "browser-audio", "queue",
        ])
        // The queue scenario: 3 headless and 3 mpv members, 50 transitions, a 1,000-entry queue.
        let queue = try #require(try BenchScenario.named("queue").queue)
        #expect(queue == BenchScenario.QueueOptions(headless: 3, mpv: 3, transitions: 50, entries: 1_000))
        #expect(try BenchScenario.named("quiet").queue == nil)
        // The browser scenarios, queue, and the mpv ones with an audio track run only when named: `coplay bench`
        // alone (and CI) leaves them out.
        #expect(BenchScenario.defaultNames == [
            "quiet", "jitter", "asymmetric", "loss", "drift", "crowd", "mpv", "mpv-jitter", "mpv-plain", "syncplay",
        ])
        #expect(try BenchScenario.named("browser").mediaPlayer == .browser)
        #expect(try BenchScenario.named("browser").browserPages == 2)
        #expect(try BenchScenario.named("browser").audio == false)
        #expect(try BenchScenario.named("browser-audio").audio == true)
        #expect(try BenchScenario.named("browser-audio").network.isImpaired == false)
        #expect(try BenchScenario.named("quiet").browserPages == 0)
        #expect(try BenchScenario.named("mpv").mediaPlayer == .mpv)
        #expect(try BenchScenario.named("mpv").players == 3)
        #expect(try BenchScenario.named("mpv-jitter").network.upstream.jitter == 0.010)
        #expect(try BenchScenario.named("mpv-jitter").mediaPlayer == .mpv)
        #expect(try BenchScenario.named("mpv").mpvLaunch == .configured && BenchScenario.named("mpv").audioOutput == .null)
        for (name, launch, audio, output) in [
            ("mpv-plain", BenchScenario.MPVLaunch.plain, false, BenchScenario.AudioOutput.null), ("mpv-plain-av", .plain, true, .null),
            ("mpv-audio", .configured, true, .pulse), ("mpv-plain-audio", .plain, true, .pulse),
        ] {
            let scenario = try BenchScenario.named(name)
            #expect(scenario.mediaPlayer == .mpv && scenario.mpvLaunch == launch && scenario.audio == audio && scenario.audioOutput == output, "\(name)")
            #expect(scenario.rate == 1 && scenario.players == 3 && !scenario.network.isImpaired, "\(name)")
        }
        #expect(try BenchScenario.named("quiet").mediaPlayer == .headless)
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

    @Test("a waiting suspension takes effect at the player's waiting stop and resumes at the first frame after its end")
    func suspensionEffects() {
        var translator = CoplayStreamTranslator(player: "p1", clockEvery: 1000)
        var events: [BenchEvent] = []
        func feed(_ fields: [String: Any]) { events += translator.consume(Self.line(fields)) }
        for index in 0..<5 {
            feed(["type": "frame", "realtime": 99.8 + Double(index) * 0.04, "index": index, "pts": Double(index) * 0.04,
                  "referenceTime": 100.0 + Double(index) * 0.04])
        }
        // A pause's stop or a suspension the group does not wait for must not count.
        feed(["type": "suspensionBegan", "realtime": 99.9, "referenceTime": 100.1, "reason": "interruption", "waits": false])
        feed(["type": "suspensionBegan", "realtime": 99.95, "referenceTime": 100.17, "reason": "buffering", "waits": true])
        feed(["type": "stopped", "realtime": 99.9, "referenceTime": 100.1, "detail": "paused", "index": 4])
        #expect(!events.contains { $0.type == "effect" })
        feed(["type": "stopped", "realtime": 99.9701, "referenceTime": 100.17, "detail": "waiting", "index": 4])
        feed(["type": "suspensionEnded", "realtime": 101.9, "referenceTime": 102.17, "reason": "buffering", "waits": true, "timedOut": false])
        // A frame scheduled before the end (a late line) is not the resume; the one at the end is.
        feed(["type": "frame", "realtime": 101.95, "index": 4, "pts": 0.16, "referenceTime": 100.16])
        feed(["type": "frame", "realtime": 102.0101, "index": 5, "pts": 0.2, "referenceTime": 102.21])
        feed(["type": "frame", "realtime": 102.0501, "index": 6, "pts": 0.24, "referenceTime": 102.25])
        let effects = events.filter { $0.type == "effect" }
        #expect(effects.map(\.action) == ["suspension", "resume"])
        #expect(effects.map(\.realtime) == [99.9701, 102.0101])
        #expect(effects.allSatisfy { $0.player == "p1" })
    }

    @Test("suspension figures: stop and resume spreads, held time, command latency; skew pairs frames across the gap")
    func suspensionAnalysis() throws {
        // Two players present frames 0..49, stop (a 2 s wait), then present 50..99; p2 is 0.3 ms late throughout.
        var streams: [PlayerEventStream] = []
        for (number, lateness) in [0.0, 0.0003].enumerated() {
            let player = "p\(number + 1)"
            var events = frames(player, count: 50, offset: { _ in lateness })
                + frames(player, count: 50, firstIndex: 50, start: 1004, offset: { _ in lateness })
            events.append(.effect("suspension", realtime: 1001.96 + lateness, player: player))
            events.append(.effect("resume", realtime: 1004 + lateness, player: player))
            streams.append(PlayerEventStream(player: player, events: events))
        }
        streams[0].events.append(.command("suspension", target: 2, realtime: 1001.0, player: "runner"))
        let result = ScenarioAnalysis(name: "quiet", streams: streams).result
        #expect(result.frames == 100)
        #expect(result.unmatchedFrames == 0)
        #expect(abs((result.p99SkewMs ?? 0) - 0.3) < 1e-6)
        let suspensions = try #require(result.suspensions)
        #expect(suspensions.count == 1 && suspensions.unresumed == 0)
        #expect(abs((suspensions.stopSpreadMs ?? 0) - 0.3) < 1e-6)
        #expect(abs((suspensions.resumeSpreadMs ?? 0) - 0.3) < 1e-6)
        #expect(abs((suspensions.held?.p50Ms ?? 0) - 2040) < 1e-6)
        #expect(suspensions.held?.count == 2)
        // The suspension command's latency runs from the launch to each player's stop.
        #expect(result.commandLatency?.count == 2)
        #expect(abs((result.commandLatency?.p50Ms ?? 0) - 960) < 1e-6)
        #expect(result.missedEffects == 0)

        // A player that never resumes is counted, and its missing resume leaves no resume spread.
        streams[1].events.removeAll { $0.action == "resume" }
        let stuck = try #require(ScenarioAnalysis(name: "quiet", streams: streams).result.suspensions)
        #expect(stuck.unresumed == 1 && stuck.resumeSpreadMs == nil && stuck.held?.count == 1)
        // No suspension effects, no figures.
        #expect(ScenarioAnalysis(name: "quiet", streams: streams.map { stream in
            PlayerEventStream(player: stream.player, events: stream.events.filter { $0.type == "frame" })
        }).result.suspensions == nil)

        var report = BenchReport()
        report.append(ScenarioAnalysis(name: "quiet", streams: streams))
        #expect(report.markdownReport().contains("1 suspension(s): players stopped within 0.300 ms and resumed within – ms of each other, presenting nothing for 2.040 s (p50), 1 stop(s) never resumed"))
        let object = try #require(try JSONSerialization.jsonObject(with: report.summaryJSON()) as? [String: Any])
        let row = try #require((object["scenarios"] as? [[String: Any]])?.first)
        #expect((row["suspensions"] as? [String: Any])?["count"] as? Int == 1)
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
