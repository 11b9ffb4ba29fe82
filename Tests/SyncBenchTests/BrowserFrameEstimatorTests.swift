import Foundation
import Testing

@testable import SyncBench

/// A simulated headless Chromium: frames of a 25 fps clip shown on a 60 Hz frame clock, each on the
/// first tick at or after its media time comes (plus `pipeline` ms), as `requestVideoFrameCallback`
/// reports them.
private struct SimulatedPage {
    /// The media clock: wall ms at which media time 0 would be reached at `rate`.
    var originMs: Double
    var rate = 1.0
    var trim = 1.0
    var tickPhaseMs = 3.7
    var tickMs = 1000.0 / 60
    var pipelineMs = 0.0
    var frameInterval = 0.04

    /// Read the media clock (`currentTime`) in the callbacks.
    var readsClock = false

    /// The samples of frames `first..<end` (frame numbers).
    func samples(_ frames: Range<Int>, paused: Bool = false) -> [BrowserFrameEstimator.Sample] {
        frames.map { frame in
            let pts = Double(frame) * frameInterval
            let due = originMs + pts * 1000 / (rate * trim) + pipelineMs
            let tick = (((due - tickPhaseMs) / tickMs).rounded(.up)) * tickMs + tickPhaseMs
            // The callback runs a little before the frame's display; the media clock is continuous.
            let clockMs = tick - 6.1
            return BrowserFrameEstimator.Sample(
                wallMs: tick, mediaTime: pts, clockMs: readsClock ? clockMs : nil,
                currentTime: readsClock ? (clockMs - originMs) / 1000 * rate * trim : nil, rate: rate * trim, trim: trim,
                paused: paused)
        }
    }
}

@Suite("BrowserFrameEstimator: rVFC samples -> frames dated by their display time; the media clock beside")
struct BrowserFrameEstimatorTests {
    static let origin = 1_795_000_000_000.0  // ms of CLOCK_REALTIME

    /// The estimator after `samples`, and the frames of its windows dated by the display origin.
    private func run(_ samples: [BrowserFrameEstimator.Sample], configuration: BrowserFrameEstimator.Configuration = .init(frameInterval: 0.04))
        -> (BrowserFrameEstimator, [BrowserFrameEstimator.Frame])
    {
        let (estimator, windows) = windows(samples, configuration: configuration)
        return (estimator, windows.flatMap { $0.frames(latency: nil) })
    }

    private func windows(_ samples: [BrowserFrameEstimator.Sample], configuration: BrowserFrameEstimator.Configuration = .init(frameInterval: 0.04))
        -> (BrowserFrameEstimator, [BrowserFrameEstimator.Window])
    {
        var estimator = BrowserFrameEstimator(configuration: configuration)
        var windows: [BrowserFrameEstimator.Window] = []
        for sample in samples { windows += estimator.add(sample) }
        windows += estimator.finish()
        return (estimator, windows)
    }

    @Test("display time: every playing frame is dated when it is shown (the 60 Hz cadence in it); paused and seeking ones are not")
    func displayTime() throws {
        let page = SimulatedPage(originMs: Self.origin, tickPhaseMs: 3.7)
        var samples = page.samples(0..<50)
        samples += page.samples(50..<51, paused: true)
        var seeking = page.samples(51..<52)[0]
        seeking.seeking = true
        samples.append(seeking)
        let estimator = BrowserFrameEstimator(configuration: .init(frameInterval: 0.04))
        let frames = samples.compactMap { estimator.displayedFrame($0) }
        #expect(frames.count == 50)
        for (frame, sample) in zip(frames, samples) {
            #expect(frame.realtime == sample.wallMs / 1000)
            #expect(frame.index == Int((sample.mediaTime / 0.04).rounded()))
        }
        // 25 fps on 60 Hz: each frame 0...13.3 ms after the least-lag one, in five levels 3.33 ms apart.
        let lags = frames.map { ($0.realtime - (Self.origin / 1000 + $0.pts)) * 1000 }
        let least = try #require(lags.min())
        let levels = Set(lags.map { (($0 - least) / (1000.0 / 60 / 5)).rounded() })
        #expect(levels == [0, 1, 2, 3, 4], "\(lags)")
        #expect(least >= 0 && least < 3.34)
        // The first frame of a run is dated too (nothing settles out).
        #expect(frames.first?.index == 0)
        #expect(estimator.displayedFrame(BrowserFrameEstimator.Sample(wallMs: 1, mediaTime: 1, rate: 0)) == nil)
    }

    @Test("pictures a whole tick late while the media clock is on time: display time shows it, the media-clock dating does not")
    func tickLateHiddenByMediaClock() throws {
        // Frames 0..<250 (10 s) with the clock read; from frame 175 on Chromium shows every frame a tick later.
        let page = SimulatedPage(originMs: Self.origin, tickPhaseMs: 5.2, readsClock: true)
        var samples = page.samples(0..<175)
        var late = page
        late.pipelineMs = 1000.0 / 60
        samples += late.samples(175..<250).map { sample in
            // The media clock itself did not move (what currentTime says is the on-time clock).
            var moved = sample
            moved.clockMs = sample.wallMs - 1000.0 / 60 - 6.1
            moved.currentTime = (moved.clockMs! - Self.origin) / 1000
            return moved
        }
        let (_, windows) = windows(samples)
        let latency = try #require(BrowserFrameEstimator.displayLatency(of: windows))
        let byClock = windows.flatMap { $0.frames(latency: latency) }.filter { $0.index >= 190 }
        let estimator = BrowserFrameEstimator(configuration: .init(frameInterval: 0.04))
        let byDisplay = samples.compactMap { estimator.displayedFrame($0) }.filter { $0.index >= 190 }
        #expect(!byClock.isEmpty && !byDisplay.isEmpty)
        let clockLate = byClock.map { ($0.realtime - (Self.origin / 1000 + $0.pts)) * 1000 }.min()!
        let displayLate = byDisplay.map { ($0.realtime - (Self.origin / 1000 + $0.pts)) * 1000 }.min()!
        #expect(clockLate < 3.34, "media clock dating: \(clockLate) ms")
        #expect(displayLate >= 1000.0 / 60 - 1e-3, "display time: \(displayLate) ms")
    }

    @Test("steady playback: every frame dated at origin + pts, within one 60 Hz lag step; the first 0.3 s left out")
    func steadyPlayback() throws {
        let page = SimulatedPage(originMs: Self.origin)
        let (estimator, frames) = run(page.samples(0..<250))  // 10 s
        #expect(estimator.samples == 250)
        // 0.3 s of settling (frames 0...7), and the end of the run too short for a window of 0.5 s.
        #expect(estimator.droppedSamples >= 7 && estimator.droppedSamples <= 9 + 14)
        #expect(estimator.usedSamples + estimator.droppedSamples == 250)
        #expect(estimator.windows >= 16)
        #expect(frames.count == estimator.usedSamples)
        for frame in frames {
            #expect(frame.index == Int((frame.pts / 0.04).rounded()))
            let error = (frame.realtime - (Self.origin / 1000 + frame.pts)) * 1000
            // The least-lag level of 25 fps on 60 Hz: 0 ... 3.33 ms after the true media clock.
            #expect(error >= -1e-3 && error < 1000.0 / 60 / 5 + 1e-3, "frame \(frame.index): \(error) ms")
        }
        // One origin for the whole run (the phase of the media clock against the ticks does not move).
        let origins = Set(frames.map { (($0.realtime - $0.pts) * 1e6).rounded() })
        #expect(origins.count == 1)
    }

    @Test("the media clock read beside the frames: continuous origin, plus the display latency measured on the same page")
    func clockOrigin() throws {
        for phase in [0.5, 4.2, 9.1, 15.0] {
            let page = SimulatedPage(originMs: Self.origin, tickPhaseMs: phase, pipelineMs: 9, readsClock: true)
            let (_, windows) = windows(page.samples(0..<250))
            let window = try #require(windows.first)
            // The clock origin is the media clock's, exactly; its spread is nil noise here.
            #expect(abs(try #require(window.clockOrigin) - Self.origin / 1000) < 1e-6)
            #expect((window.clockSpreadMs ?? 1) < 1e-3)
            // Display latency: the pipeline plus the least-lag level of this frame-clock phase.
            let latency = try #require(BrowserFrameEstimator.displayLatency(of: windows))
            #expect(latency * 1000 >= 9 - 1e-3 && latency * 1000 < 9 + 3.34, "phase \(phase): \(latency * 1000) ms")
            // Frames dated by clock origin + latency equal those dated by the display origin when steady.
            let byClock = windows.flatMap { $0.frames(latency: latency) }
            let byDisplay = windows.flatMap { $0.frames(latency: nil) }
            for (a, b) in zip(byClock, byDisplay) { #expect(abs(a.realtime - b.realtime) < 1e-6) }
        }
    }

    @Test("a media clock that slides by 2 ms: the clock-dated frames follow it, the display origin only in 3.3 ms steps")
    func clockResolution() throws {
        let first = SimulatedPage(originMs: Self.origin, tickPhaseMs: 2, readsClock: true)
        var samples = first.samples(0..<100)
        // A 2 ms jump of the media clock mid-run (as a correction would make, in one go for the test).
        let moved = SimulatedPage(originMs: Self.origin + 2, tickPhaseMs: 2, readsClock: true)
        samples += moved.samples(100..<200)
        let (_, windows) = windows(samples)
        let latency = try #require(BrowserFrameEstimator.displayLatency(of: windows))
        let before = try #require(windows.first { $0.frames.last!.index < 100 })
        let after = try #require(windows.last)
        let step = (try #require(after.clockOrigin) - (try #require(before.clockOrigin))) * 1000
        #expect(abs(step - 2) < 1e-3)
        // The display origin moved by a whole 3.33 ms step or not at all.
        let displayStep = (after.displayOrigin - before.displayOrigin) * 1000
        #expect(abs(displayStep) < 1e-3 || abs(abs(displayStep) - 1000.0 / 60 / 5) < 1e-3, "\(displayStep)")
        #expect(after.frames(latency: latency).allSatisfy { $0.realtime.isFinite })
    }

    @Test("two pages on different frame-clock phases: their frames differ by at most one lag step (3.3 ms)")
    func twoPhases() {
        let a = run(SimulatedPage(originMs: Self.origin, tickPhaseMs: 0.5).samples(0..<125)).1
        let b = run(SimulatedPage(originMs: Self.origin, tickPhaseMs: 9.1).samples(0..<125)).1
        let times = Dictionary(uniqueKeysWithValues: b.map { ($0.index, $0.realtime) })
        let differences = a.compactMap { frame in times[frame.index].map { abs(frame.realtime - $0) * 1000 } }
        #expect(differences.count > 100)
        #expect(differences.allSatisfy { $0 < 1000.0 / 60 / 5 + 1e-3 }, "\(differences.max() ?? 0) ms")
        // Dating the frames when they were shown would have differed by up to a whole tick.
    }

    @Test("a page that lags by 5 ms shows up 5 ms late, and one odd early frame does not move the origin")
    func offsetAndOutlier() {
        var samples = SimulatedPage(originMs: Self.origin + 5).samples(0..<50)
        samples[30].wallMs -= 12  // a callback stamped early once
        let (_, frames) = run(samples)
        let errors = frames.map { ($0.realtime - (Self.origin / 1000 + $0.pts)) * 1000 }
        #expect(errors.allSatisfy { $0 >= 5 - 1e-3 && $0 < 5 + 3.34 }, "\(errors)")
    }

    @Test("pauses, seeks and rate changes end a run: no window spans them; too-short runs are dropped")
    func runsSplit() {
        let page = SimulatedPage(originMs: Self.origin)
        var samples = page.samples(0..<40)
        // Paused on frame 40 (shown after a pause), then a seek: playing from frame 500 with a new origin.
        samples += page.samples(40..<41, paused: true)
        let later = SimulatedPage(originMs: Self.origin + 3000 - 500 * 40)
        samples += later.samples(500..<540)
        // A rate change to 0.5 (the group's): a new run at the new rate.
        let lastWall = samples.last!.wallMs
        let slow = SimulatedPage(originMs: lastWall + 40 - 540 * 80, rate: 0.5)
        samples += slow.samples(540..<580)
        // A run too short for a window (0.3 s settling + fewer than 10 frames).
        let short = SimulatedPage(originMs: samples.last!.wallMs + 2000 - 900 * 40)
        samples += short.samples(900..<915)
        let (estimator, frames) = run(samples)
        #expect(!frames.contains { $0.index == 40 })  // the paused frame
        #expect(!frames.contains { $0.index >= 900 })  // the short run
        // Each run's frames are on its own timeline: origin + pts / rate.
        for frame in frames {
            let expected: Double
            switch frame.index {
            case ..<40: expected = Self.origin / 1000 + frame.pts
            case 500..<540: expected = later.originMs / 1000 + frame.pts
            default: expected = slow.originMs / 1000 + frame.pts / 0.5
            }
            let error = (frame.realtime - expected) * 1000
            #expect(error >= -1e-3 && error < 3.34, "frame \(frame.index): \(error) ms")
        }
        #expect(frames.contains { $0.index >= 540 })
        #expect(estimator.droppedSamples >= 15)
    }

    @Test("a correction trim does not end the run: the origin uses the group's rate (element rate / trim)")
    func trimKeepsRun() {
        var page = SimulatedPage(originMs: Self.origin)
        var samples = page.samples(0..<50)
        // The page trims by +1 % from frame 50 on: the element's media clock runs faster.
        let switchMs = samples.last!.wallMs
        page.trim = 1.01
        page.originMs = switchMs + 40 - 50 * 40 / 1.01
        samples += page.samples(50..<100)
        let (estimator, frames) = run(samples)
        // One run: only the first 0.3 s and the last partial window are left out.
        #expect(estimator.droppedSamples <= 9 + 14)
        #expect(samples[60].nominalRate == 1)
        // Frames after the trim come earlier and earlier on the group's timeline: the drift is measured.
        let late = frames.filter { $0.index >= 80 }.map { ($0.realtime - (Self.origin / 1000 + $0.pts)) * 1000 }
        #expect(late.allSatisfy { $0 < 0 }, "\(late)")
    }

    @Test("samples without a trim use the element's rate")
    func noTrim() {
        let sample = BrowserFrameEstimator.Sample(wallMs: 1, mediaTime: 1, rate: 0.5)
        #expect(sample.nominalRate == 0.5)
        #expect(BrowserFrameEstimator.Sample(wallMs: 1, mediaTime: 1, rate: 1.02, trim: 1.02).nominalRate == 1)
    }

    @Test("LivePlayer of a page: driver lines -> a frame event per frame shown (display time), effects from the page's own events")
    func livePlayerOfAPage() throws {
        let offset = 0.25  // the relay's reference minus CLOCK_REALTIME (s)
        let player = LivePlayer(name: "b1", startRealtime: 0, browserReferenceOffset: offset)
        #expect(player.isBrowser)
        player.consume(#"{"type":"driver","page":"b1","realtime":1,"detail":"started","chromium":"156.0"}"#)
        player.consume(#"{"type":"calibration","page":"b1","realtime":1,"offsetMs":0.1,"rttMs":0.8}"#)
        #expect(!player.isReady)
        player.consume(#"{"type":"ready","page":"b1","realtime":1,"frameInterval":0.04,"firstFrameTime":0,"hasAudio":false}"#)
        #expect(player.isReady)
        // The group plays from 0 at reference origin + offset; the page accepted it.
        let origin = Self.origin / 1000
        player.consume(
            #"{"type":"play","page":"b1","realtime":\#(origin - 0.1),"itemTime":0,"rate":1,"referenceTime":\#(origin + offset),"item":"x"}"#)
        let encoder = JSONEncoder()
        for sample in SimulatedPage(originMs: Self.origin, readsClock: true).samples(0..<100) {
            var line = String(decoding: try encoder.encode(sample), as: UTF8.self)
            line = #"{"type":"sample","page":"b1","realtime":0,"# + line.dropFirst()
            player.consume(line)
        }
        // A pause: the driver's `stopped` (from the element's pause event) is the pause's effect.
        player.consume(#"{"type":"pause","page":"b1","realtime":\#(origin + 4.1),"itemTime":4.2,"rate":0,"referenceTime":\#(origin + 4.2 + offset)}"#)
        player.consume(#"{"type":"stopped","page":"b1","realtime":\#(origin + 4.2),"referenceTime":\#(origin + 4.2 + offset),"detail":"paused"}"#)
        player.finishBrowser()
        let events = player.events
        let frames = events.filter { $0.type == "frame" }
        // Every frame shown, dated when it was shown.
        let shown = SimulatedPage(originMs: Self.origin, readsClock: true).samples(0..<100)
        #expect(frames.count == 100)
        #expect(zip(frames, shown).allSatisfy { $0.realtime == $1.wallMs / 1000 && $0.index == Int(($1.mediaTime / 0.04).rounded()) })
        #expect(frames.allSatisfy { $0.player == "b1" && $0.index != nil })
        let effects = events.filter { $0.type == "effect" }.map { $0.action ?? "" }
        #expect(effects == ["play", "pause"])
        // The play's effect is the first frame shown (not the first dated one, 0.3 s later).
        let play = try #require(events.first { $0.type == "effect" && $0.action == "play" })
        #expect(play.realtime < origin + 0.02)
        let summary = try #require(player.browserSummary)
        #expect(summary.samples == 100 && summary.displayedFrames == 100)
        #expect(summary.usedSamples > 0 && summary.usedSamples < 100)  // the media-clock windows leave the settling out
        #expect(summary.calibrationOffsetMs == 0.1 && summary.chromium == "156.0" && summary.hasAudio == false)
        #expect(summary.displayLatencyMs != nil)
        #expect(player.mediaClockFrames.count == summary.usedSamples)
        #expect(player.firstFrameRealtime != nil)
    }

    @Test("a page whose media has no frame grid is reported, not measured wrong")
    func noGrid() {
        let player = LivePlayer(name: "b1", startRealtime: 0, browserReferenceOffset: 0)
        player.consume(#"{"type":"ready","page":"b1","realtime":1,"frameInterval":null}"#)
        #expect(!player.isReady)
        #expect(player.browserError?.contains("frame grid") == true)
        player.consume(#"{"type":"error","page":"b1","realtime":1,"detail":"Wrong video: clip.mp4 is not the session's media"}"#)
        #expect(player.browserError?.hasPrefix("Wrong video") == true)
    }
}
