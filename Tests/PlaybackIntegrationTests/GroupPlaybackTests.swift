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
            let hostSession = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"))
                .activate(TestActivity(item: "clip"), invite: invite)
            try await hostSession.join()
            let guestSession = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test")).accept(invite)
            try await guestSession.join()

            let hostEvents = LockedBox<[PlaybackEvent]>([])
            let controller = LockedBox<PlaybackCoordinator?>(nil)
            let host = Task {
                try await GroupPlayback.coordinate(
                    session: hostSession, timeServer: invite, clock: ContinuousClock(),
                    player: { HeadlessPlayer(participant: "host", items: [Self.clip], reference: $0, logger: Logger(label: "test")) },
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

    @Test("a fleet invite: a dead first time server is skipped after its first 8 requests, and a time server that stops answering is left for the next node (a timeSource event)")
    func timeServerFailover() async throws {
        // The relay answers no NTP on its port (a dead first node's time server); two more nodes' time servers do.
        try await withLocalRelay(withTime: false) { relayOnly in
            let servers = (0..<2).map { _ in
                TimeServer(configuration: .init(host: "127.0.0.1", port: 0), clock: ContinuousClock(), logger: Logger(label: "test.time"))
            }
            let tasks = servers.map { server in Task { try await server.run() } }
            defer {
                for server in servers { server.shutdown() }
                for task in tasks { task.cancel() }
            }
            var ports: [Int] = []
            for server in servers {
                let address = try await server.boundAddress()
                ports.append(try #require(address.port))
            }
            var invite = relayOnly
            invite.otherRelays = ports.map { RelayAddress(host: "127.0.0.1", port: $0) }
            let session = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"))
                .activate(TestActivity(item: "clip"), invite: invite)
            try await session.join()

            let clock = ContinuousClock()
            let start = clock.now
            let playback = try await GroupPlayback.prepare(session: session, timeServer: invite)
            let elapsed = start.duration(to: clock.now)
            #expect(playback.timeClient.currentSource.name == "127.0.0.1:\(ports[0])")
            #expect(elapsed < .seconds(3), "prepare took \(elapsed) past the dead first node")

            let events = LockedBox<[PlaybackEvent]>([])
            let run = Task {
                try await playback.run(
                    HeadlessPlayer(participant: "host", items: [Self.clip], reference: playback.reference, logger: Logger(label: "test")),
                    localItem: Self.clip.identifier, name: "host", publishInitialState: true,
                    onEvent: { event in events.mutate { $0.append(event) } })
            }
            defer { run.cancel() }
            await eventually("the move past the dead first node is reported once playback runs") {
                events.value.contains { $0.type == .timeSource }
            }
            let updates = playback.reference.syncedClock.status.updates
            servers[0].shutdown()
            await eventually("the clock moves to the third node") {
                events.value.filter { $0.type == .timeSource }.count == 2
            }
            let moves = events.value.filter { $0.type == .timeSource }.compactMap(\.detail)
            #expect(moves == [
                "from 127.0.0.1:\(invite.port) to 127.0.0.1:\(ports[0]) (no answer)",
                "from 127.0.0.1:\(ports[0]) to 127.0.0.1:\(ports[1]) (no answer)",
            ])
            await eventually("the clock is updated from the third node") {
                playback.reference.syncedClock.status.updates > updates + 2
                    && playback.timeClient.currentSource.name == "127.0.0.1:\(ports[1])"
            }
            #expect(playback.reference.syncedClock.status.steps == 0)
            run.cancel()
            _ = try? await run.value
        }
    }
}
