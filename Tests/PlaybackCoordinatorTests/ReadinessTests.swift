import TestSupport
import Testing
import Logging

@testable import PlaybackCoordinator

/// A player that is not ready makes the coordinator suspend it, and the group waits; ready ends it.
@Suite("Player readiness drives suspensions")
struct ReadinessTests {
    static func makeGroup(grace: Duration) async -> (coordinators: [PlaybackCoordinator], collector: Collector<PlaybackEvent>, tasks: [Task<Void, Never>]) {
        let hub = InMemoryCoordinationHub()
        let reference = MonotonicReferenceTimeSource()
        var coordinators: [PlaybackCoordinator] = []
        var tasks: [Task<Void, Never>] = []
        let collector = Collector<PlaybackEvent>()
        for name in ["ana", "ben"] {
            var configuration = CoordinatorConfiguration()
            configuration.readinessGrace = grace
            let coordinator = PlaybackCoordinator(
                channel: await hub.connect(PlaybackParticipantID(name)), reference: reference, delegate: RecordingDelegate(),
                configuration: configuration, localItem: "clip", name: name, logger: Logger(label: "test"))
            coordinators.append(coordinator)
            tasks.append(Task { await coordinator.run() })
            tasks.append(collector.start(coordinator.events))
        }
        return (coordinators, collector, tasks)
    }

    @Test("seeking past the grace period begins a buffering suspension that makes the group wait; ready ends it")
    func notReadySuspends() async throws {
        let (coordinators, collector, tasks) = await Self.makeGroup(grace: .milliseconds(20))
        defer { for task in tasks { task.cancel() } }
        await eventually { await coordinators[0].members.count == 2 }
        try await coordinators[0].play()
        await eventually { await coordinators[1].state?.rate == 1 }

        coordinators[1].reportReadiness(.seeking)
        await eventually {
            await collector.items.filter { $0.type == .suspensionBegan && $0.reason == "buffering" && $0.waits == true }.count == 2
        }
        await eventually { await coordinators[0].isWaiting }
        coordinators[1].reportReadiness(.ready)
        await eventually {
            await collector.items.filter { $0.type == .suspensionEnded && $0.reason == "buffering" }.count == 2
        }
        await eventually { await !coordinators[0].isWaiting }
        // Both members name the same member as suspended.
        let began = await collector.items.filter { $0.type == .suspensionBegan }
        #expect(Set(began.map(\.originator)) == ["ben"])
    }

    @Test("a starved player suspends with stallRecovery")
    func starvedIsStallRecovery() async throws {
        let (coordinators, collector, tasks) = await Self.makeGroup(grace: .zero)
        defer { for task in tasks { task.cancel() } }
        await eventually { await coordinators[0].members.count == 2 }
        try await coordinators[0].play()
        coordinators[0].reportReadiness(.starved)
        await eventually {
            await collector.items.contains { $0.type == .suspensionBegan && $0.reason == "stallRecovery" }
        }
        coordinators[0].reportReadiness(.ready)
        await eventually {
            await collector.items.contains { $0.type == .suspensionEnded && $0.reason == "stallRecovery" }
        }
    }

    @Test("a player ready again within the grace period costs the group nothing")
    func shortSeekIsFree() async throws {
        let (coordinators, collector, tasks) = await Self.makeGroup(grace: .milliseconds(300))
        defer { for task in tasks { task.cancel() } }
        await eventually { await coordinators[0].members.count == 2 }
        try await coordinators[0].play()
        coordinators[1].reportReadiness(.seeking)
        coordinators[1].reportReadiness(.ready)
        coordinators[1].reportReadiness(.loading)
        coordinators[1].reportReadiness(.ready)
        // Well past the grace period (a wait for something that must not happen, not a timing bound),
        // and a later event proves the channel was delivering meanwhile: no suspension was begun.
        try await Task.sleep(for: .milliseconds(900))
        try await coordinators[0].pause()
        await eventually { await collector.items.filter { $0.type == .pause }.count == 2 }
        #expect(await !collector.items.contains { $0.type == .suspensionBegan })
    }
}
