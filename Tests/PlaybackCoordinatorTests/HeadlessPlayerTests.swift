import ClockSync
import Testing
import Logging

@testable import PlaybackCoordinator

/// Collects a stream's elements in the background until `stop()`.
actor Collector<Element: Sendable> {
    private(set) var items: [Element] = []
    func append(_ item: Element) { items.append(item) }

    nonisolated func start(_ stream: AsyncStream<Element>) -> Task<Void, Never> {
        Task { for await item in stream { await self.append(item) } }
    }
}

@Suite("HeadlessPlayer")
struct HeadlessPlayerTests {
    static let clip = MediaTimeline(identifier: "clip", duration: 1, frameRate: 25)

    @Test("on a manual clock it presents every frame exactly at its instant")
    func manualClock() async throws {
        let clock = ManualClock()
        let reference = ManualReference(clock: clock)
        let player = HeadlessPlayer(participant: "p", items: [Self.clip], reference: reference, clock: clock, spinWindow: .zero, logger: Logger(label: "test"))
        let collector = Collector<PlaybackEvent>()
        let collecting = collector.start(player.events)
        let running = Task { await player.run() }
        let start = ReferenceTime(seconds: 0.1)
        await player.handle(PlaybackCommand(
            kind: .play(itemTime: 0, referenceTime: start, rate: 1), originator: "o", expectedItemIdentifier: "clip", revision: 1))

        // Step the clock from sleeper to sleeper, like a scheduler with no work between. The player
        // sleeps until absolute instants, so stepping late changes nothing; the bound is real time
        // (a hang guard, not a speed requirement: a count of yields ran out on a loaded machine).
        let giveUp = ContinuousClock.now + .seconds(120)
        while clock.now.offset < .milliseconds(1200), ContinuousClock.now < giveUp {
            if let deadline = clock.nextDeadline {
                clock.advance(to: deadline)
            }
            await Task.yield()
            for _ in 0..<20 where clock.nextDeadline == nil { await Task.yield() }
        }
        running.cancel()
        await running.value
        // Let the collector drain: wait for the events, not for a number of yields.
        let drained = ContinuousClock.now + .seconds(60)
        while await collector.items.filter({ $0.type == .frame }).count < 25, ContinuousClock.now < drained {
            try await Task.sleep(for: .milliseconds(5))
        }
        collecting.cancel()

        let frames = await collector.items.filter { $0.type == .frame }
        #expect(frames.map(\.index) == Array(0..<25))
        for frame in frames {
            let scheduled = start + .secondsRounded(frame.pts!)
            #expect(frame.referenceTime == scheduled.seconds)
            #expect(frame.errorMs == 0)
        }
    }

    @Test("with start latency and drift, the controller seeks then trims")
    func imperfectCorrects() {
        var core = HeadlessPlayerCore(
            items: [MediaTimeline(identifier: "clip", duration: 60, frameRate: 25)],
            imperfections: .init(startLatency: .milliseconds(80), driftPPM: 300))
        let start = ReferenceTime(seconds: 1)
        _ = core.apply(PlaybackCommand(
            kind: .play(itemTime: 0, referenceTime: start, rate: 1), originator: "o", expectedItemIdentifier: "clip", revision: 1), now: start - .milliseconds(50))
        var outputs: [HeadlessPlayerCore.PlayerOutput] = []
        var steps = 0
        while let wake = core.nextWake, wake < ReferenceTime(seconds: 40), steps < 100_000 {
            steps += 1
            outputs += core.advance(to: wake)
        }
        let corrections = outputs.compactMap { output -> String? in
            if case .correction(let kind, _, _) = output { kind } else { nil }
        }
        #expect(corrections.first == "seek")
        #expect(corrections.contains("trim") && corrections.contains("endTrim"))
        // After the first seconds the presented position is within the trim band of the timeline.
        let late = ReferenceTime(seconds: 39)
        let error = (core.presentedItemTime(at: late)! - core.expectedItemTime(at: late)!) * 1e3
        #expect(abs(error) < 0.6)
    }

    @Test("commands for an item the player lacks are ignored and reported")
    func unknownItem() {
        var core = HeadlessPlayerCore(items: [Self.clip])
        let command = PlaybackCommand(
            kind: .play(itemTime: 0, referenceTime: ReferenceTime(seconds: 1), rate: 1), originator: "o",
            expectedItemIdentifier: "other", revision: 1)
        #expect(core.apply(command, now: ReferenceTime(seconds: 0)) == [.ignored(command)])
        #expect(core.nextWake == nil)
    }

    @Test("a late command snaps: the player joins at the current position, never presenting stale frames")
    func lateCommandSnaps() {
        var core = HeadlessPlayerCore(items: [MediaTimeline(identifier: "clip", duration: 60, frameRate: 25)])
        let outputs = core.apply(PlaybackCommand(
            kind: .play(itemTime: 10, referenceTime: ReferenceTime(seconds: 1), rate: 1), originator: "o",
            expectedItemIdentifier: "clip", revision: 1), now: ReferenceTime(seconds: 3.01))
        #expect(outputs.isEmpty)
        // Next frame: item time 12.04 (frame 301) at reference 3.04.
        #expect(core.nextWake == ReferenceTime(seconds: 3.04))
        let presented = core.advance(to: ReferenceTime(seconds: 3.04))
        guard case .frame(let index, let pts, let scheduled, _)? = presented.first else { Issue.record("no frame"); return }
        #expect(index == 301 && abs(pts - 12.04) < 1e-9 && scheduled == ReferenceTime(seconds: 3.04))
    }

    static func command(_ kind: PlaybackCommand.Kind, revision: UInt64 = 1) -> PlaybackCommand {
        PlaybackCommand(kind: kind, originator: "o", expectedItemIdentifier: "clip", revision: revision)
    }

    @Test("a seek command alone moves the position at its instant and keeps playing")
    func seekWhilePlaying() {
        var core = HeadlessPlayerCore(items: [MediaTimeline(identifier: "clip", duration: 60, frameRate: 25)])
        let t = { (seconds: Double) in ReferenceTime(seconds: seconds) }
        _ = core.apply(Self.command(.play(itemTime: 0, referenceTime: t(1), rate: 1)), now: t(0.5))
        // The seek arrives early (before the play is due), for reference 2.0 (item time 1.0 on the old timeline).
        #expect(core.apply(Self.command(.seek(itemTime: 10, referenceTime: t(2), completionDueDate: t(2)), revision: 2), now: t(0.6))
            .isEmpty)
        var frames: [(Int, ReferenceTime)] = []
        while let wake = core.nextWake, wake <= t(2.1) {
            for case .frame(let index, _, let scheduled, _) in core.advance(to: wake) { frames.append((index, scheduled)) }
        }
        // Old timeline up to frame 24 (item 0.96 at 1.96), then frame 250 (item 10.0) exactly at 2.0.
        #expect(frames.map(\.0) == Array(0...24) + [250, 251, 252])
        #expect(frames.first { $0.0 == 250 }?.1 == t(2))
        #expect(frames.first { $0.0 == 251 }?.1 == t(2.04))
        #expect(core.expectedItemTime(at: t(3)) == 11)
    }

    @Test("a seek command while paused shows the new frame at its instant and stays paused")
    func seekWhilePaused() {
        var core = HeadlessPlayerCore(items: [MediaTimeline(identifier: "clip", duration: 60, frameRate: 25)])
        let t = { (seconds: Double) in ReferenceTime(seconds: seconds) }
        _ = core.apply(Self.command(.pause(itemTime: 3, referenceTime: t(1))), now: t(1))
        _ = core.apply(Self.command(.seek(itemTime: 5, referenceTime: t(2), completionDueDate: t(2)), revision: 2), now: t(1.5))
        #expect(core.advance(to: t(1.999)).isEmpty)
        let outputs = core.advance(to: t(2))
        #expect(outputs == [.stopped(index: 125, itemTime: 5, at: t(2), item: "clip", waiting: false)])
        #expect(core.nextWake == nil)
        #expect(core.expectedItemTime(at: t(9)) == 5)
    }

    @Test("a seek then a play for the same instant (as the coordinator sends them) is one jump")
    func seekThenPlay() {
        var core = HeadlessPlayerCore(items: [MediaTimeline(identifier: "clip", duration: 60, frameRate: 25)])
        let t = { (seconds: Double) in ReferenceTime(seconds: seconds) }
        _ = core.apply(Self.command(.pause(itemTime: 0, referenceTime: t(1))), now: t(1))
        _ = core.apply(Self.command(.seek(itemTime: 4, referenceTime: t(2), completionDueDate: t(2)), revision: 2), now: t(1.5))
        _ = core.apply(Self.command(.play(itemTime: 4, referenceTime: t(2), rate: 1), revision: 2), now: t(1.5))
        let outputs = core.advance(to: t(2))
        #expect(outputs == [.frame(index: 100, pts: 4, scheduled: t(2), item: "clip")])
        // A seek for an instant that already has a play scheduled does not displace it.
        _ = core.apply(Self.command(.play(itemTime: 20, referenceTime: t(3), rate: 1), revision: 3), now: t(2.5))
        _ = core.apply(Self.command(.seek(itemTime: 20, referenceTime: t(3), completionDueDate: t(3)), revision: 3), now: t(2.5))
        var last: Int?
        while let wake = core.nextWake, wake <= t(3) {
            for case .frame(let index, _, _, _) in core.advance(to: wake) { last = index }
        }
        #expect(last == 500)
        #expect(core.nextWake == t(3.04))
    }

    /// Both timings: the cooperative loop and the dedicated presentation thread (which sleeps on
    /// CLOCK_BOOTTIME while this reference is CLOCK_MONOTONIC: only differences of the two matter).
    @Test("on the real clock it presents frames in order, never early, through to the last", arguments: [false, true])
    func realClock(dedicatedThread: Bool) async throws {
        let reference = MonotonicReferenceTimeSource()
        let timeline = MediaTimeline(identifier: "clip", duration: 2, frameRate: 50)
        let player = HeadlessPlayer(
            participant: "p", items: [timeline], reference: reference,
            presentationThread: dedicatedThread ? PresentationThread.Configuration() : nil, logger: Logger(label: "test"))
        let collector = Collector<PlaybackEvent>()
        let collecting = collector.start(player.events)
        let running = Task { await player.run() }
        let start = reference.now()! + .milliseconds(300)
        await player.handle(PlaybackCommand(
            kind: .play(itemTime: 0, referenceTime: start, rate: 1), originator: "o", expectedItemIdentifier: "clip", revision: 1))
        // Generous bound: the run takes 2.3 s on an idle machine.
        let deadline = ContinuousClock.now + .seconds(30)
        while await !collector.items.contains(where: { $0.index == 99 }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        running.cancel()
        await running.value
        collecting.cancel()
        let frames = await collector.items.filter { $0.type == .frame }
        let indices = frames.map(\.index!)
        // A stalled machine may make the player start late or drop late frames (as a real one
        // does), so only order, completion and "never early" are asserted.
        #expect(indices.last == 99)
        #expect(indices == indices.sorted() && Set(indices).count == indices.count)
        #expect(frames.allSatisfy { $0.errorMs! >= 0 })  // the spin never presents early
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.realtime <= $1.realtime })
        let errors = frames.map(\.errorMs!).sorted()
        if !errors.isEmpty {
            print("real-clock wake-up error (thread: \(dedicatedThread)) over \(errors.count) frames: median \(errors[errors.count / 2]) ms, max \(errors.last!) ms")
        }
    }
}
