import GroupSessions
import Logging
import PlaybackCoordinator
import SessionRelay
import Testing
import TestSupport

/// The group's queue over a real relay: concurrent edits converge, a late joiner receives the queue.
@Suite("The queue over a real relay")
struct QueueRelayTests {
    /// A player that takes commands and does nothing (the queue is what is checked here).
    actor SilentPlayer: CoordinatedPlayer {
        nonisolated let events: AsyncStream<PlaybackEvent>
        init() { events = AsyncStream { _ in } }
        func handle(_ command: PlaybackCommand) async {}
        func run(coordinator: PlaybackCoordinator) async throws {
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        }
    }

    /// Three members each make 200 random edits at once: every queue ends identical; a late joiner
    /// receives it, 1,000 more entries included.
    @Test
    func concurrentEdits() async throws {
        try await withLocalRelay { invite in
            var sessions: [GroupSession<TestActivity>] = []
            let first = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"))
                .activate(TestActivity(item: "clip"), invite: invite)
            try await first.join()
            sessions.append(first)
            for _ in 0..<2 {
                let session = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test")).accept(invite)
                try await session.join()
                sessions.append(session)
            }
            var coordinators: [PlaybackCoordinator] = []
            var tasks: [Task<Void, Error>] = []
            defer { for task in tasks { task.cancel() } }
            for (index, session) in sessions.enumerated() {
                let playback = try await GroupPlayback.prepare(session: session, timeServer: invite)
                let box = LockedBox<PlaybackCoordinator?>(nil)
                tasks.append(Task {
                    try await playback.run(
                        SilentPlayer(), localItem: "clip", name: "m\(index)", publishInitialState: index == 0,
                        started: { coordinator in box.mutate { $0 = coordinator } })
                })
                await eventually("member \(index) runs and has the queue") {
                    if let coordinator = box.value { return await coordinator.hasQueue }
                    return false
                }
                coordinators.append(box.value!)
            }

            // 200 edits each, at once, naming the entries each member sees at that moment.
            await withTaskGroup(of: Void.self) { group in
                for (index, coordinator) in coordinators.enumerated() {
                    group.addTask {
                        var random = SystemRandomNumberGenerator()
                        for step in 0..<200 {
                            let ids = await coordinator.queue.entries.map(\.id)
                            let some = { (random: inout SystemRandomNumberGenerator) -> String in
                                ids.isEmpty ? "none" : ids[Int.random(in: 0..<ids.count, using: &random)]
                            }
                            let edit: QueueEdit
                            switch Int.random(in: 0..<10, using: &random) {
                            case 0..<4:
                                let entries: [QueueEntry]
                                do {
                                    entries = try await coordinator.makeQueueEntries([
                                        QueueItem(item: "clip", title: "m\(index) \(step)", duration: 30, frameRate: 25)
                                    ])
                                } catch {
                                    Issue.record("member \(index) entries: \(error)")
                                    entries = []
                                }
                                edit = .add(entries, at: Bool.random(using: &random) ? .end : .after(some(&random)))
                            case 4..<6: edit = .remove([some(&random)])
                            case 6..<8: edit = .move(some(&random), to: Bool.random(using: &random) ? .start : .after(some(&random)))
                            case 8: edit = .repeatMode(RepeatMode.allCases.randomElement(using: &random)!)
                            default: edit = .shuffle(seed: Bool.random(using: &random) ? UInt32.random(in: 0...1000, using: &random) : nil)
                            }
                            do { try await coordinator.editQueue(edit) } catch { Issue.record("member \(index) edit \(step): \(error)") }
                        }
                    }
                }
            }
            // Then one marker entry each: the relay keeps each member's order, so a member that has
            // applied all three markers has applied all 600 edits. (Equal queues alone are no sign:
            // under load every member can still be at the same early point.)
            for (index, coordinator) in coordinators.enumerated() {
                let marker = try await coordinator.makeQueueEntries([QueueItem(item: "clip", title: "done m\(index)", duration: 30, frameRate: 25)])
                try await coordinator.editQueue(.add(marker, at: .end))
            }
            await eventually("every member applied every edit") {
                for coordinator in coordinators {
                    let titles = Set(await coordinator.queue.entries.map(\.title))
                    if !(0..<3).allSatisfy({ titles.contains("done m\($0)") }) { return false }
                }
                return true
            }
            let reference = await coordinators[0].queue
            for coordinator in coordinators { #expect(await coordinator.queue == reference) }
            #expect(reference.entries.count > 20, "the edits left \(reference.entries.count) entries")

            // A long queue: 1,000 more entries (in edits of 200, each inside a message's size limit).
            let long = try await coordinators[0].makeQueueEntries((0..<1_000).map { number in
                QueueItem(item: "clip", title: "A rather long episode title, number \(number).mkv", duration: 1_420.5, frameRate: 23.976)
            })
            for start in stride(from: 0, to: long.count, by: 200) {
                try await coordinators[0].editQueue(.add(Array(long[start..<start + 200]), at: .end))
            }
            let total = reference.entries.count + 1_000
            await eventually("every member has the long queue") {
                var queues: [PlayQueue] = []
                for coordinator in coordinators { queues.append(await coordinator.queue) }
                return queues.allSatisfy { $0 == queues[0] && $0.entries.count == total }
            }
            let longQueue = await coordinators[0].queue

            // A late joiner receives the same queue.
            let late = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test")).accept(invite)
            try await late.join()
            let playback = try await GroupPlayback.prepare(session: late, timeServer: invite)
            let box = LockedBox<PlaybackCoordinator?>(nil)
            tasks.append(Task {
                try await playback.run(SilentPlayer(), localItem: "clip", name: "late", started: { coordinator in box.mutate { $0 = coordinator } })
            })
            await eventually("the late joiner has the queue") {
                if let coordinator = box.value { return await coordinator.hasQueue }
                return false
            }
            #expect(await box.value?.queue == longQueue)
            #expect(await box.value?.queue.entries.count == total)
        }
    }
}
