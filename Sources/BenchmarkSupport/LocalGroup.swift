import Logging
import PlaybackCoordinator

/// Several coordinated headless players in one process, on one in-memory hub and this machine's
/// monotonic clock: the building block of `coplay bench group` (and of a demo without a relay).
///
/// ```swift
/// let group = await LocalGroup.make(players: 3, item: clip)
/// let running = Task { await group.run() }
/// try await group.coordinators[0].play()
/// for await event in group.events { print(event.jsonLine) }
/// ```
package final class LocalGroup: Sendable {
    /// The members' coordinators, in order (`player1`, `player2`, ...).
    package let coordinators: [PlaybackCoordinator]
    /// The members' players, in the same order.
    package let players: [HeadlessPlayer]
    /// Every coordinator and player event, merged.
    package let events: AsyncStream<PlaybackEvent>
    private let continuation: AsyncStream<PlaybackEvent>.Continuation

    private init(coordinators: [PlaybackCoordinator], players: [HeadlessPlayer]) {
        self.coordinators = coordinators
        self.players = players
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1 << 20))
    }

    /// Creates the group (not yet running).
    ///
    /// - Parameters:
    ///   - count: number of members (at least 1).
    ///   - items: the media every member can present (the first is loaded).
    ///   - configuration: coordinator tuning for every member.
    ///   - spinWindow: the players' busy-wait window.
    package static func make(
        players count: Int, items: [MediaTimeline], configuration: CoordinatorConfiguration = .init(),
        spinWindow: Duration = .milliseconds(2)
    ) async -> LocalGroup {
        let hub = InMemoryCoordinationHub()
        let reference = MonotonicReferenceTimeSource()
        let itemIDs = Set(items.map(\.identifier))
        var coordinators: [PlaybackCoordinator] = []
        var players: [HeadlessPlayer] = []
        for index in 1...max(1, count) {
            let name = PlaybackParticipantID("player\(index)")
            let player = HeadlessPlayer(participant: name, items: items, reference: reference, spinWindow: spinWindow, logger: .current)
            let coordinator = PlaybackCoordinator(
                channel: await hub.connect(name), reference: reference, delegate: player, configuration: configuration,
                localItem: items.first?.identifier, canPresent: { itemIDs.contains($0) }, logger: .current)
            players.append(player)
            coordinators.append(coordinator)
        }
        return LocalGroup(coordinators: coordinators, players: players)
    }

    /// Runs every member until the task is cancelled; then finishes ``events``.
    package func run() async {
        await withTaskGroup(of: Void.self) { group in
            for (coordinator, player) in zip(coordinators, players) {
                group.addTask { await coordinator.run() }
                group.addTask { await player.run() }
                group.addTask { [continuation] in for await event in coordinator.events { continuation.yield(event) } }
                group.addTask { [continuation] in for await event in player.events { continuation.yield(event) } }
            }
            await group.waitForAll()
        }
        continuation.finish()
    }
}
