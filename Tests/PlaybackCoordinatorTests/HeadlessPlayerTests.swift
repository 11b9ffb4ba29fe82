import Testing

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
        let player = HeadlessPlayer(participant: "p", items: [Self.clip], reference: reference, clock: clock, spinWindow: .zero)
        let collector = Collector<PlaybackEvent>()
        let collecting = collector.start(player.events)
        let running = Task { await player.run() }
        let start = ReferenceTime(seconds: 0.1)
        await player.handle(PlaybackCommand(
            kind: .play(itemTime: 0, referenceTime: start, rate: 1), originator: "o", expectedItemIdentifier: "clip", revision: 1))

        // Step the clock from sleeper to sleeper (bounded), like a scheduler with no work between.
        var steps = 0
        while clock.now.offset < .milliseconds(1200), steps < 10_000 {
            steps += 1
            if let deadline = clock.nextDeadline {
                clock.advance(to: deadline)
            }
            await Task.yield()
            for _ in 0..<20 where clock.nextDeadline == nil { await Task.yield() }
        }
        running.cancel()
        await running.value
        // Let the collector drain.
        for _ in 0..<100 { await Task.yield() }
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

    @Test("on the real clock it presents frames in order, never early, through to the last")
    func realClock() async throws {
        let reference = MonotonicReferenceTimeSource()
        let timeline = MediaTimeline(identifier: "clip", duration: 2, frameRate: 50)
        let player = HeadlessPlayer(participant: "p", items: [timeline], reference: reference)
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
            print("real-clock wake-up error over \(errors.count) frames: median \(errors[errors.count / 2]) ms, max \(errors.last!) ms")
        }
    }
}
