import Foundation
import Testing

@testable import SyncBench

@Suite("FrameTransitionTracker: time-pos samples -> dated frame presentations, and when to sample")
struct FrameTransitionTrackerTests {
    /// A simulated mpv: paused on `start` (item seconds) until `resume` (realtime), then frames of
    /// `1 / fps` seconds advancing at `speed`, the first change `firstChange` seconds after the resume.
    struct SimulatedMPV {
        var fps = 25.0
        var start = 2.0
        var resume = 1000.0
        var firstChange = 0.013
        var speed = 1.0

        /// The frame on screen (its pts) at realtime `t`.
        func position(at t: Double) -> Double {
            guard t >= resume + firstChange else { return start }
            let frames = Int(((t - resume - firstChange) * speed * fps).rounded(.down)) + 1
            return start + Double(frames) / fps
        }

        /// The instant frame `start + n / fps` appears (n >= 1).
        func appearance(ofStep n: Int) -> Double {
            resume + firstChange + Double(n - 1) / fps / speed
        }
    }

    /// Drives `tracker` against `mpv` from `from` to `to` as the sampler would: each request takes
    /// `roundTrip` seconds and mpv reads its position halfway through; the next request goes out when
    /// the tracker says. Returns the changes and the number of samples.
    func drive(
        _ tracker: inout FrameTransitionTracker, _ mpv: SimulatedMPV, from: Double, to: Double, roundTrip: Double = 0.000_06
    ) -> (changes: [FrameTransitionTracker.Change], samples: Int) {
        var now = from
        var changes: [FrameTransitionTracker.Change] = []
        var samples = 0
        while now < to {
            samples += 1
            if let change = tracker.record(position: mpv.position(at: now + roundTrip / 2), sent: now, received: now + roundTrip) {
                changes.append(change)
            }
            now = max(tracker.nextSample(after: now + roundTrip), now + roundTrip)
        }
        return (changes, samples)
    }

    @Test("a change of frame is dated at the midpoint of the last sample before it and the first after it")
    func bracketing() {
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
        #expect(tracker.record(position: 1.0, sent: 100.000, received: 100.0002) == nil)
        #expect(tracker.record(position: 1.0, sent: 100.001, received: 100.0012) == nil)
        let change = tracker.record(position: 1.04, sent: 100.002, received: 100.0024)
        guard case .frame(let frame)? = change else {
            Issue.record("expected a frame, got \(String(describing: change))")
            return
        }
        #expect(frame.index == 26)
        #expect(frame.pts == 1.04)
        #expect(abs(frame.before - 100.0011) < 1e-9)   // the midpoint of the last sample showing 1.00
        #expect(abs(frame.after - 100.0022) < 1e-9)    // the midpoint of the first showing 1.04
        #expect(abs(frame.realtime - 100.00165) < 1e-9)
        #expect(abs(frame.bracket - 0.0011) < 1e-9)
        // The event it becomes, through the translator: a frame at the bracket's midpoint, no clock event.
        var translator = CoplayStreamTranslator(player: "p1")
        let events = translator.sampledFrame(index: frame.index, pts: frame.pts, realtime: frame.realtime, referenceTime: frame.realtime + 3)
        #expect(events == [.frame(index: 26, pts: 1.04, realtime: frame.realtime, player: "p1")])
        #expect(translator.frames == 1 && translator.firstFrameRealtime == frame.realtime)
    }

    @Test("forward steps of up to three frames are presentations; seeks, steps back and no position are not")
    func jumps() {
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
        var t = 10.0
        func sample(_ position: Double?) -> FrameTransitionTracker.Change? {
            t += 0.001
            return tracker.record(position: position, sent: t, received: t + 0.0001)
        }
        _ = sample(4.0)
        guard case .frame(let two)? = sample(4.08) else { Issue.record("a two-frame step is a presentation"); return }
        #expect(two.index == 102)
        guard case .jump(let back)? = sample(4.04) else { Issue.record("a step back is a jump"); return }
        #expect(back.from == 4.08 && back.to == 4.04)
        guard case .jump? = sample(2.0) else { Issue.record("a seek is a jump"); return }
        guard case .jump? = sample(2.16) else { Issue.record("a four-frame step is a jump"); return }
        #expect(sample(nil) == nil)
        // After a sample without position (another file loading): a jump from the last position, not a frame.
        guard case .jump(let reload)? = sample(2.2) else { Issue.record("the position after none is a jump"); return }
        #expect(reload.from == 2.16 && reload.to == 2.2 && !reload.newFile)
        guard case .frame? = sample(2.24) else { Issue.record("expected a frame"); return }
    }

    /// What the queue benchmark missed in 22 of 38 changes of file of one mpv (`coplay bench --scenario
    /// queue`, 28 Nov, checked against `scripts/mpv-ipc-positions.py`): an entry opened paused on its
    /// first frame and replaced, before it ever played, by the next entry's first frame. `time-pos` read
    /// 0, then nothing while the file opened, then 0 again, and the change of picture was not seen.
    @Test("a change of file at the same position (first frame to first frame) is a jump once mpv's start-file says so, also when the event is read late")
    func fileChangeAtTheSamePosition() {
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 30))
        tracker.pauseChanged(true, at: 19.9)
        _ = tracker.record(position: 0, sent: 20.000, received: 20.0001)
        // start-file, then no position while the next file opens (at 24 fps), then its first frame.
        #expect(tracker.fileStarted(at: 20.0030) == nil)
        #expect(tracker.record(position: nil, sent: 20.005, received: 20.0051) == nil)
        tracker.frameRateChanged(24)
        #expect(tracker.configuration.frameRate == 24)
        guard case .jump(let change)? = tracker.record(position: 0, sent: 20.010, received: 20.0101) else {
            Issue.record("the next file's first frame is a change of picture")
            return
        }
        #expect(change.from == 0 && change.to == 0 && change.newFile)
        #expect(abs(change.realtime - (20.00505 + 20.01005) / 2) < 1e-9)  // between the last sample without a position and the first with one
        // The same again, with the start-file handled after the reply that showed the new first frame.
        #expect(tracker.record(position: nil, sent: 21.000, received: 21.0001) == nil)
        #expect(tracker.record(position: 0, sent: 21.010, received: 21.0101) == nil)  // no word of another file yet
        guard case .jump(let late)? = tracker.fileStarted(at: 20.995) else {
            Issue.record("a start-file read late still names the position that followed it")
            return
        }
        #expect(late.newFile && abs(late.realtime - (21.00005 + 21.01005) / 2) < 1e-9)
        // A reload of the same picture without start-file (a seek that briefly has no position) is no change.
        #expect(tracker.record(position: nil, sent: 22.000, received: 22.0001) == nil)
        #expect(tracker.record(position: 0, sent: 22.010, received: 22.0101) == nil)
        #expect(tracker.fileStarted(at: 22.5) == nil)  // too late for that one: waits for the next position
        guard case .jump(let next)? = tracker.record(position: 0, sent: 22.600, received: 22.6001) else {
            Issue.record("the first position read after a start-file is the new file's")
            return
        }
        #expect(next.newFile && next.from == 0 && next.to == 0)
        // Playing on from there: frames at 24 fps.
        tracker.pauseChanged(false, at: 22.7)
        guard case .frame(let frame)? = tracker.record(position: 1.0 / 24, sent: 22.75, received: 22.7501) else {
            Issue.record("expected a frame")
            return
        }
        #expect(frame.index == 1)
    }

    @Test("playing steadily: every frame found, each bracket within the dense interval, sparse sampling between changes")
    func steadyPlayback() {
        let mpv = SimulatedMPV()
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
        tracker.pauseChanged(true, at: 999)
        tracker.pauseChanged(false, at: mpv.resume + 0.0001)
        let (changes, samples) = drive(&tracker, mpv, from: 999.5, to: mpv.resume + 10)
        let frames = changes.compactMap { change -> FrameTransitionTracker.Transition? in
            if case .frame(let frame) = change { frame } else { nil }
        }
        #expect(changes.count == frames.count)
        #expect(frames.count == 250)
        for (n, frame) in frames.enumerated() {
            #expect(frame.index == 51 + n)
            let appeared = mpv.appearance(ofStep: n + 1)
            #expect(frame.before <= appeared && appeared <= frame.after, "frame \(frame.index)")
            // Dense sampling (0.25 ms + a round trip) brackets every change, the first after the resume too.
            #expect(frame.bracket <= 0.000_25 + 0.000_06 + 1e-9, "frame \(frame.index): \(frame.bracket * 1000) ms")
        }
        #expect(tracker.missedPredictions == 0)
        // Per 40 ms frame: 8 sparse samples at most and ~13 dense ones (a 3 ms window every 0.25 ms): far
        // fewer than sampling every 0.25 ms throughout (160 per frame).
        #expect(samples < 250 * 25, "\(samples) samples for 250 frames")
        // Mid-frame, the next sample waits (sparse); next to a predicted change it comes at once (dense).
        let predicted = tracker.predictedChange!
        #expect(tracker.nextSample(after: predicted - 0.02) == predicted - 0.02 + 0.005)
        #expect(tracker.nextSample(after: predicted - 0.003) == predicted - 0.0015 - frames.last!.bracket / 2)
    }

    @Test("a pause samples every 1 ms for 0.1 s (a snap to the group's frame), then sparsely; a resume after a frame shown while paused looks densely only around a whole frame later")
    func pauseAndResume() {
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
        _ = tracker.record(position: 3, sent: 9.99, received: 9.9901)
        tracker.pauseChanged(true, at: 10)
        _ = tracker.record(position: 3, sent: 10, received: 10.0001)
        #expect(tracker.nextSample(after: 10.0001) == 10.0011)
        // A snap forward one frame while paused: shown then, bracketed within the settling interval.
        guard case .frame(let snap)? = tracker.record(position: 3.04, sent: 10.0011, received: 10.0012) else {
            Issue.record("a one-frame snap is a presentation")
            return
        }
        #expect(snap.index == 76 && snap.bracket < 0.0012)
        #expect(tracker.nextSample(after: 10.0012) == 10.0012 + 0.001)
        #expect(tracker.nextSample(after: 10.2) == 10.205)  // settled: sparse
        #expect(tracker.predictedChange == nil)
        _ = tracker.record(position: 3, sent: 10.2, received: 10.2001)   // snapped back: a jump, a frame shown while paused
        // mpv resumes at 11 (its notification read at once, or 2 ms late); the first change comes a frame later.
        for (notified, firstChange) in [(11.0, 0.0403), (11.002, 0.040), (11.0, 0.0415)] {
            var resumed = tracker
            let mpv = SimulatedMPV(start: 3, resume: 11, firstChange: firstChange)
            _ = resumed.record(position: 3, sent: 10.99, received: 10.9901)
            resumed.pauseChanged(false, at: notified)
            #expect(resumed.nextSample(after: notified) == notified + 0.005, "sparse until the window")
            let (changes, samples) = drive(&resumed, mpv, from: notified, to: 11.045)
            guard case .frame(let first)? = changes.first else {
                Issue.record("no frame after the resume")
                continue
            }
            #expect(first.index == 76)
            #expect(first.bracket <= 0.000_31 + 1e-9, "first change \(firstChange) s after the resume: bracket \(first.bracket * 1000) ms")
            // A 9 ms window every 0.25 ms and sparse samples before it: not ~170 samples (dense throughout).
            #expect(samples < 50, "\(samples) samples to the first change")
        }
        // Paused mid-frame while playing (15 ms into a frame that appeared at 20.0): the rest of the frame after the resume.
        var midFrame = FrameTransitionTracker(configuration: .init(frameRate: 25))
        midFrame.pauseChanged(false, at: 19)
        _ = midFrame.record(position: 1.00, sent: 19.9998, received: 19.9999)
        _ = midFrame.record(position: 1.04, sent: 20.0001, received: 20.0002)
        midFrame.pauseChanged(true, at: 20.015)
        midFrame.pauseChanged(false, at: 21)
        #expect(abs((midFrame.predictedChange ?? 0) - 21.025) < 1e-6)
    }

    @Test("a resume whose frame on screen has an unknown age samples densely until the first change, whenever it comes")
    func resumeUnknownPhase() {
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
        tracker.pauseChanged(true, at: 10)
        _ = tracker.record(position: 3, sent: 10, received: 10.0001)
        for firstChange in [0.0008, 0.02, 0.039] {
            var resumed = tracker
            let mpv = SimulatedMPV(start: 3, resume: 11, firstChange: firstChange)
            _ = resumed.record(position: 3, sent: 10.99, received: 10.9901)
            resumed.pauseChanged(false, at: 11)
            let (changes, _) = drive(&resumed, mpv, from: 11, to: 11.1)
            guard case .frame(let first)? = changes.first else {
                Issue.record("no frame after the resume")
                continue
            }
            #expect(first.index == 76)
            #expect(first.bracket <= 0.000_31 + 1e-9, "first change \(firstChange) s after the resume: bracket \(first.bracket * 1000) ms")
        }
    }

    @Test("a speed change moves the prediction: the rest of the frame runs at the new speed")
    func speedChange() throws {
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
        tracker.pauseChanged(false, at: 19)
        _ = tracker.record(position: 1.00, sent: 20.000, received: 20.0001)
        _ = tracker.record(position: 1.04, sent: 20.001, received: 20.0011)   // a change dated 20.00055
        let start = 20.00055
        #expect(abs(try #require(tracker.predictedChange) - (start + 0.04)) < 1e-9)
        // Half way through the frame the speed halves: 20 ms of media left take 40 ms.
        tracker.speedChanged(0.5, at: start + 0.02)
        #expect(abs(try #require(tracker.predictedChange) - (start + 0.06)) < 1e-9)
        // A whole frame at 0.5 after that.
        var slow = SimulatedMPV(start: 1.04, resume: start + 0.06 - 0.08, firstChange: 0.08, speed: 0.5)
        slow.fps = 25
        let (changes, _) = drive(&tracker, slow, from: start + 0.03, to: start + 0.3)
        let frames = changes.compactMap { change -> FrameTransitionTracker.Transition? in
            if case .frame(let frame) = change { frame } else { nil }
        }
        #expect(frames.map(\.index) == [27, 28, 29])
        #expect(frames.allSatisfy { $0.bracket <= 0.000_31 + 1e-9 })
        #expect(tracker.missedPredictions == 0)
    }

    @Test("a change that does not come when predicted counts as a miss; it is looked for every 1 ms, then sparsely")
    func missedPrediction() {
        var tracker = FrameTransitionTracker(configuration: .init(frameRate: 25))
        tracker.pauseChanged(false, at: 0)
        _ = tracker.record(position: 0.0, sent: 1.000, received: 1.0001)
        _ = tracker.record(position: 0.04, sent: 1.0002, received: 1.0003)
        let predicted = tracker.predictedChange!
        _ = tracker.record(position: 0.04, sent: predicted + 0.002, received: predicted + 0.0021)
        #expect(tracker.missedPredictions == 1)
        // Looked for every millisecond for half a frame, then sparsely.
        #expect(tracker.nextSample(after: predicted + 0.0021) == predicted + 0.0021 + 0.001)
        #expect(tracker.nextSample(after: predicted + 0.021) == predicted + 0.021 + 0.005)
        // The late change is still a presentation, with its wider bracket; predictions resume from it.
        guard case .frame(let late)? = tracker.record(position: 0.08, sent: predicted + 0.007, received: predicted + 0.0071) else {
            Issue.record("expected a frame")
            return
        }
        #expect(late.bracket > 0.004)
        #expect(tracker.predictedChange != nil)
    }

    @Test("Syncplay's effects come from the sampler's record: pause notifications and the position after a seek")
    func sampledEffects() {
        var record = MPVFrameSampler.Record(player: "b", frameRate: 25)
        record.pauses = [.init(realtime: 999, paused: true), .init(realtime: 1000.21, paused: false), .init(realtime: 1005.3, paused: true)]
        record.transitions = [.init(index: 10, pts: 0.4, before: 1001.0, after: 1001.0002)]
        record.jumps = [.init(from: 4.1, to: 10.0, realtime: 1007.4)]
        let commands: [BenchEvent] = [
            .command("play", id: "c1", realtime: 1000, player: "a"),
            .command("pause", id: "c2", realtime: 1005, player: "a"),
            .command("seek", target: 10, id: "c3", realtime: 1007, player: "a"),
        ]
        let streams = SampledPlayback().streams(records: [record], commands: commands)
        let effects = streams[0].events.filter { $0.type == "effect" }
        #expect(effects == [
            .effect("play", id: "c1", realtime: 1000.21, player: "b"),
            .effect("pause", id: "c2", realtime: 1005.3, player: "b"),
            .effect("seek", id: "c3", realtime: 1007.4, player: "b"),
        ])
        #expect(streams[0].events.filter { $0.type == "frame" } == [.frame(index: 10, pts: 0.4, realtime: 1001.0001, player: "b")])
    }
}

@Suite("PauseFrameCheck: pictures compared at a pause")
struct PauseFrameCheckTests {
    @Test("identical files are identical; a different picture or a player still playing fails the pause")
    func compare() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-shots-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func file(_ name: String, _ bytes: [UInt8]) throws -> URL {
            let url = directory.appendingPathComponent(name)
            try Data(bytes).write(to: url)
            return url
        }
        let a = try file("a.png", [1, 2, 3])
        let b = try file("b.png", [1, 2, 3])
        let c = try file("c.png", [9, 9, 9])
        let same = PauseFrameCheck.compare(
            label: "15.0 pause", shots: [("p1", a, 3.6, true), ("p2", b, 3.6, true)], frameRate: 25)
        #expect(same.identical)
        #expect(same.line == "15.0 pause: identical (frame 90 on p1, p2)")
        let different = PauseFrameCheck.compare(label: "15.0 pause", shots: [("p1", a, 3.6, true), ("p2", c, 3.64, true)], frameRate: 25)
        #expect(!different.identical)
        #expect(different.detail == "different: p2 (frame 91) differs from p1 (frame 90)")
        let playing = PauseFrameCheck.compare(label: "15.0 pause", shots: [("p1", a, 3.6, true), ("p2", b, 3.6, false)], frameRate: 25)
        #expect(!playing.identical)
        #expect(playing.detail.hasPrefix("not paused: p2"))
        let missing = PauseFrameCheck.compare(label: "x", shots: [("p1", a, nil, true)], failures: ["p2": "mpv answered 'error'"])
        #expect(!missing.identical && missing.detail.contains("p2"))
        let summary = PauseFrames([same, different, playing])
        #expect(summary.pauses == 3 && summary.identical == 1)
        #expect(summary.summary == "identical frames on 1 of 3 pauses")
    }
}
