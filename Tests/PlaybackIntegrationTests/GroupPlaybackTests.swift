import ClockSync
import GroupSessions
import Logging
import PlaybackCoordinator
import SessionRelay
import Testing
import TestSupport

/// ``GroupPlayback``, the one library call, over a real relay and its NTP server on loopback.
@Suite("GroupPlayback over a real relay")
struct GroupPlaybackTests {
    static let clip = MediaTimeline(identifier: "clip", duration: 30, frameRate: 25)

    /// A player that records commands and ends on its own when told (as an mpv that quit).
    actor QuittingPlayer: CoordinatedPlayer {
        nonisolated let events: AsyncStream<PlaybackEvent>
        private let continuation: AsyncStream<PlaybackEvent>.Continuation
        private(set) var commands: [PlaybackCommand] = []
        private let quit: AsyncStream<Void>

        init(quit: AsyncStream<Void>) {
            (events, continuation) = AsyncStream.makeStream()
            self.quit = quit
        }

        func handle(_ command: PlaybackCommand) async { commands.append(command) }

        func run(coordinator: PlaybackCoordinator) async throws {
            for await _ in quit { break }
            continuation.finish()
        }
    }

    @Test("host and guest play in step through GroupPlayback; a player that ends makes its member leave")
    func playAndPlayerEnds() async throws {
        try await withLocalRelay { invite in
            let hostSession = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite))
                .activate(TestActivity(item: "clip"), invite: invite)
            try await hostSession.join()
            let guestSession = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite)).accept(invite)
            try await guestSession.join()

            let hostEvents = LockedBox<[PlaybackEvent]>([])
            let controller = LockedBox<PlaybackCoordinator?>(nil)
            let host = Task {
                try await GroupPlayback.coordinate(
                    session: hostSession, timeServer: invite, clock: ContinuousClock(),
                    player: { HeadlessPlayer(participant: "host", items: [Self.clip], reference: $0) },
                    localItem: Self.clip.identifier, name: "host", publishInitialState: true,
                    onEvent: { event in hostEvents.mutate { $0.append(event) } }, started: { coordinator in controller.mutate { $0 = coordinator } })
            }
            defer { host.cancel() }

            let (quit, quitNow) = AsyncStream.makeStream(of: Void.self)
            let guestPlayer = QuittingPlayer(quit: quit)
            let guestPlayback = try await GroupPlayback.prepare(session: guestSession, timeServer: invite)
            #expect(guestPlayback.reference.now() != nil, "prepare returns a synchronised clock")
            let guest = Task {
                try await guestPlayback.run(guestPlayer, localItem: Self.clip.identifier, name: "guest")
            }

            await eventually("the host's coordinator runs and sees both members") {
                if let coordinator = controller.value { return await coordinator.members.count == 2 }
                return false
            }
            try await controller.value!.play()
            await eventually("the guest's player is told to play") {
                await guestPlayer.commands.contains { if case .play = $0.kind { true } else { false } }
            }
            await eventually("the host's headless player presents frames") { hostEvents.value.contains { $0.type == .frame } }

            quitNow.yield()
            try await guest.value
            #expect({ if case .invalidated(.left) = guestSession.state { true } else { false } }(), "the guest left: \(guestSession.state)")
            await eventually("the host sees the guest leave") { hostEvents.value.contains { $0.type == .left } }
            host.cancel()
            _ = try? await host.value
            #expect({ if case .invalidated = hostSession.state { true } else { false } }(), "cancelling leaves the session")
        }
    }
}
