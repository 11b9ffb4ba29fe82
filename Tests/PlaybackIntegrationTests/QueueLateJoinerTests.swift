import GroupSessions
import Logging
import PlaybackCoordinator
import SessionRelay
import Testing
import TestSupport

/// A late joiner of a session with a 1,000-entry queue, over a real relay and its time server on
/// loopback, with coplay's headless players: it receives the queue and the position, and its first
/// frame is the host's frame of the same instant.
@Suite("A late joiner of a long queue")
struct QueueLateJoinerTests {
    /// Five items of different frame rates, long enough that the entry does not end during the test.
    static let items: [MediaTimeline] = [
        MediaTimeline(identifier: "ep-25", duration: 600, frameRate: 25),
        MediaTimeline(identifier: "ep-30", duration: 600, frameRate: 30),
        MediaTimeline(identifier: "ep-24", duration: 600, frameRate: 24),
        MediaTimeline(identifier: "ep-50", duration: 600, frameRate: 50),
        MediaTimeline(identifier: "ep-2997", duration: 600, frameRate: 30_000.0 / 1_001),
    ]
    static let entries = 1_000
    /// The entry the group plays when the joiner arrives (1-based, as `coplay queue` prints it).
    static let position = 737

    @Test("receives a 1,000-entry queue and the position, and shows the host's frame of the same instant")
    func lateJoinerOfLongQueue() async throws {
        try await withLocalRelay { invite in
            let items = Self.items
            let known = Set(items.map(\.identifier))
            // What each member reports it can play (the group refuses an entry nobody has).
            let summaries = items.map { PresenceReport.ItemSummary(item: $0.identifier, duration: $0.duration) }
            let queue = (0..<Self.entries).map { number in
                let item = items[number % items.count]
                return QueueItem(
                    item: item.identifier, title: "Episode \(number + 1) of a rather long series.mkv", duration: item.duration,
                    frameRate: Double(item.frameCount) / item.duration)
            }
            let hostSession = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"))
                .activate(TestActivity(item: items[0].identifier), invite: invite)
            try await hostSession.join()
            let hostPlayback = try await GroupPlayback.prepare(session: hostSession, timeServer: invite)
            let hostEvents = LockedBox<[PlaybackEvent]>([])
            let hostBox = LockedBox<PlaybackCoordinator?>(nil)
            let host = Task {
                try await hostPlayback.run(
                    HeadlessPlayer(
                        participant: "host", items: items, reference: hostPlayback.reference,
                        presentationThread: PresentationThread.Configuration(), logger: Logger(label: "test")),
                    localItem: items[0].identifier, canPresent: { known.contains($0) }, name: "host", items: summaries,
                    publishInitialState: true, queue: queue, repeatMode: .all,
                    onEvent: { event in hostEvents.mutate { $0.append(event) } },
                    started: { coordinator in hostBox.mutate { $0 = coordinator } })
            }
            defer { host.cancel() }
            await eventually("the host queued 1,000 entries") {
                if let coordinator = hostBox.value { return await coordinator.queue.entries.count == Self.entries }
                return false
            }
            let hostCoordinator = try #require(hostBox.value)
            let target = try #require(await hostCoordinator.queue.entry(atPosition: Self.position))
            // The jump first, then play once it applied (a play proposed before would be anchored on
            // the state before the jump, and, ordered after it, win).
            try await hostCoordinator.coordinateJump(toPosition: Self.position)
            await eventually("the group is at entry \(Self.position)") { await hostCoordinator.currentEntry?.id == target.id }
            try await hostCoordinator.play()
            await eventually("the host plays entry \(Self.position)") {
                hostEvents.value.contains { $0.type == .frame && $0.item == target.item && ($0.pts ?? 0) > 1 }
            }

            // The late joiner: from its first connection to its first frame.
            let clock = ContinuousClock()
            let connecting = clock.now
            let joinerSession = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test")).accept(invite)
            try await joinerSession.join()
            let joinerPlayback = try await GroupPlayback.prepare(session: joinerSession, timeServer: invite)
            let clockSynchronized = clock.now
            let joinerEvents = LockedBox<[(event: PlaybackEvent, at: ContinuousClock.Instant)]>([])
            let joinerBox = LockedBox<PlaybackCoordinator?>(nil)
            let joiner = Task {
                try await joinerPlayback.run(
                    HeadlessPlayer(
                        participant: "joiner", items: items, reference: joinerPlayback.reference,
                        presentationThread: PresentationThread.Configuration(), logger: Logger(label: "test")),
                    localItem: items[0].identifier, canPresent: { known.contains($0) }, name: "joiner", items: summaries,
                    onEvent: { event in joinerEvents.mutate { $0.append((event, clock.now)) } },
                    started: { coordinator in joinerBox.mutate { $0 = coordinator } })
            }
            defer { joiner.cancel() }
            await eventually("the joiner presents a frame") { joinerEvents.value.contains { $0.event.type == .frame } }
            let first = try #require(joinerEvents.value.first { $0.event.type == .frame })
            await eventually("the joiner has the queue") {
                if let coordinator = joinerBox.value { return await coordinator.hasQueue }
                return false
            }
            let queueAt = clock.now
            let events = joinerEvents.value
            let received = events.first { $0.event.type == .queueChanged && $0.event.detail == "received" }

            // The right queue, the right entry, the right frame.
            let joinerCoordinator = try #require(joinerBox.value)
            let hostQueue = await hostCoordinator.queue
            #expect(await joinerCoordinator.queue == hostQueue)
            #expect(await joinerCoordinator.queue.entries.count == Self.entries)
            #expect(await joinerCoordinator.currentEntry?.id == target.id)
            #expect(first.event.item == target.item, "the joiner's first frame is of \(first.event.item ?? "no item"), not entry \(Self.position)'s \(target.item)")
            #expect(events.allSatisfy { $0.event.type != .frame || $0.event.item == target.item }, "the joiner showed another entry first")
            await eventually("the host presents the joiner's first frame") {
                hostEvents.value.contains { $0.type == .frame && $0.item == first.event.item && $0.index == first.event.index }
            }
            let hostFrame = try #require(hostEvents.value.first { $0.type == .frame && $0.item == first.event.item && $0.index == first.event.index })
            let offset = first.event.realtime - hostFrame.realtime
            let interval = 1 / (target.frameRate ?? 25)
            // In step: the same frame at the same instant, within half a frame interval (generous: the
            // two headless players share this machine's clock and typically agree within a millisecond).
            #expect(abs(offset) < interval / 2, "the joiner showed frame \(first.event.index ?? -1) \(offset * 1000) ms after the host")
            // And it stays in step: its next frames too.
            await eventually("the joiner presents 25 frames") { joinerEvents.value.filter { $0.event.type == .frame }.count >= 25 }
            let later = joinerEvents.value.filter { $0.event.type == .frame }.prefix(25)
            var worst = 0.0
            for frame in later {
                if let match = hostEvents.value.first(where: { $0.type == .frame && $0.item == frame.event.item && $0.index == frame.event.index }) {
                    worst = max(worst, abs(frame.event.realtime - match.realtime))
                }
            }
            #expect(worst < interval / 2)
            let toFrame = connecting.duration(to: first.at)
            print(String(
                format: "late joiner of a %d-entry queue (entry %d, %@): first frame %.3f s after connecting (clock synchronized after %.3f s, queue received after %@, seen by the test after %.3f s), frame %d, %.3f ms from the host's; its first 25 frames within %.3f ms of the host's",
                Self.entries, Self.position, target.item, toFrame.secondsValue, connecting.duration(to: clockSynchronized).secondsValue,
                received.map { String(format: "%.3f s", connecting.duration(to: $0.at).secondsValue) } ?? "–",
                connecting.duration(to: queueAt).secondsValue,
                first.event.index ?? -1, offset * 1000, worst * 1000))
        }
    }
}
