import ClockSync
import Foundation
import GroupSessions
import Logging
import MediaProbe
import PlaybackCoordinator
import ServiceLifecycle

/// One member of a playback session as the CLI runs it: a group session through the relay, a
/// `TimeClient` against the relay's NTP server, a `PlaybackCoordinator` over both, and (for
/// players) a `HeadlessPlayer`. Glue only: every part is a library type.
struct PlaybackMember: Sendable {
    let invite: Invite
    let session: GroupSession<WatchTogetherActivity>
    let channel: GroupSessionCoordinationChannel<WatchTogetherActivity>
    let timeClient: TimeClient<MemberClock>
    let reference: SyncedReferenceTimeSource<MemberClock>
    let logger: Logger

    /// The member's local clock: the real one (`ContinuousClock`, i.e. `CLOCK_BOOTTIME`), drifted
    /// in software when `--clock-drift-ppm` asks for it.
    typealias MemberClock = DriftingClock<ContinuousClock>

    /// The coordinator settings the CLI uses: a lead of at least 120 ms, so that members on a busy
    /// machine (or a slow link) still get each command before it applies.
    static var coordinatorConfiguration: CoordinatorConfiguration {
        var configuration = CoordinatorConfiguration()
        configuration.minimumLead = .milliseconds(120)
        return configuration
    }

    /// How a member enters the session.
    enum Entry: Sendable {
        /// Creates the session with this activity.
        case create(WatchTogetherActivity)
        /// Accepts an invite; when a fingerprint is given, refuses a session playing other media.
        case accept(expectedFingerprint: String?, file: String?)
    }

    /// Connects to the relay, enters and joins the session, and synchronises with the relay's clock.
    ///
    /// - Parameters:
    ///   - clockDriftPPM: simulate a local clock running this many ppm fast (or slow): the
    ///     time client, the synced clock and the player all read it; event stamps stay true.
    ///   - converge: poll the relay's clock until the estimate is good (`TimeClient.converge`: 8
    ///     requests on a quiet path, up to 128 (2.6 s) under heavy jitter) before returning, as a
    ///     player must; a member that only sends commands (`coplay control`) needs no more than a
    ///     rough clock (8 requests), since every player applies a command at the same reference instant.
    static func open(
        invite: Invite, entry: Entry, clockDriftPPM: Double = 0, converge: Bool = true, logger: Logger
    ) async throws -> PlaybackMember {
        let address = "\(invite.host):\(invite.port)"
        let center = GroupActivityCenter<WatchTogetherActivity>(
            transport: RelayTransport(invite: invite), logger: logger)
        let session: GroupSession<WatchTogetherActivity>
        do {
            switch entry {
            case .create(let activity): session = try await center.activate(activity, invite: invite)
            case .accept: session = try await center.accept(invite)
            }
        } catch let error as GroupSessionError {
            throw PlaybackSetupError.inviteRefused(address, error)
        } catch {
            throw PlaybackSetupError.relayUnreachable(address, error)
        }
        if case .accept(let expected?, let file) = entry, session.activity.fingerprint != expected {
            session.leave()
            throw PlaybackSetupError.mediaMismatch(
                file: file ?? "the file", local: expected, session: session.activity.fingerprint,
                title: session.activity.title)
        }
        do {
            try await session.join()
        } catch {
            session.leave()
            throw PlaybackSetupError.inviteRefused(address, error)
        }

        let synced = SyncedClock(
            clock: MemberClock(ContinuousClock(), driftPPM: clockDriftPPM), configuration: .playback, logger: logger)
        let client: TimeClient<MemberClock>
        do {
            let transport = try await UDPTimeTransport.connect(
                host: invite.host, port: invite.port, timescale: synced.timescale)
            var configuration = TimeClient<MemberClock>.Configuration.playback
            configuration.timeout = .milliseconds(500)
            client = TimeClient(transport: transport, syncedClock: synced, configuration: configuration, logger: logger)
            if converge {
                _ = try await client.converge()
            } else {
                _ = try await client.measure(samples: 8, interval: .milliseconds(20))
            }
        } catch {
            session.leave()
            throw PlaybackSetupError.timeServerSilent(address, error)
        }
        return PlaybackMember(
            invite: invite, session: session, channel: GroupSessionCoordinationChannel(session: session, logger: logger),
            timeClient: client, reference: SyncedReferenceTimeSource(client: client), logger: logger)
    }

    /// Probes a file for its frame timeline and fingerprint.
    static func loadMedia(_ path: String) async throws -> (MediaTimeline, MediaInfo) {
        let info = try await MediaProbe.probe(URL(fileURLWithPath: path), options: .init(scanPackets: true))
        return (try MediaTimeline(info: info), info)
    }

    /// Plays `timeline` in step with the group until the session ends or `stop` is signalled,
    /// printing events.
    ///
    /// - Parameters:
    ///   - name: the player's name in events.
    ///   - publishInitialState: the host publishes "paused at 0" so the group has a state.
    ///   - extraItems: other media the player can switch to when the group changes item.
    ///   - imperfections: simulated decoder imperfections (start latency, decoder drift).
    ///   - started: called with the coordinator once it runs (the demo drives its tour through it).
    func play(
        _ timeline: MediaTimeline, name: String, output: EventOutput, publishInitialState: Bool,
        extraItems: [MediaTimeline] = [],
        imperfections: HeadlessPlayerCore.Imperfections = .init(),
        started: @escaping @Sendable (PlaybackCoordinator, HeadlessPlayer) async -> Void = { _, _ in }
    ) async {
        let player = HeadlessPlayer(
            participant: PlaybackParticipantID(name), items: [timeline] + extraItems, reference: reference,
            presentationThread: PresentationThread.Configuration(), imperfections: imperfections, logger: logger)
        let itemIDs = Set(([timeline] + extraItems).map(\.identifier))
        let coordinator = PlaybackCoordinator(
            channel: channel, reference: reference, delegate: player, configuration: Self.coordinatorConfiguration,
            localItem: timeline.identifier, canPresent: { itemIDs.contains($0) }, name: name, logger: logger)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [timeClient] in try? await timeClient.run() }
            group.addTask { await player.run() }
            group.addTask { for await event in player.events { output.print(event) } }
            group.addTask { for await event in coordinator.events { output.print(event) } }
            group.addTask {
                if publishInitialState {
                    do { try await coordinator.pause() } catch {
                        logger.notice("could not publish the initial state", metadata: ["error": "\(error)"])
                    }
                }
                await started(coordinator, player)
            }
            await coordinator.run()
            group.cancelAll()
        }
    }
}

/// Runs a member until SIGINT/SIGTERM (leaving the session cleanly) or until the session ends.
struct PlaybackMemberService: Service, CustomStringConvertible {
    let member: PlaybackMember
    let body: @Sendable () async -> Void

    /// Names the member without its invite (the invite holds the session's secret, and a
    /// `ServiceGroupError` prints the service it is about).
    var description: String { "playback member \(member.session.localParticipant.id)" }

    /// Runs the member until SIGTERM/SIGINT or the end of its session. Leaving and a session ended
    /// by a member are a normal end; a session lost to the network or refused is a
    /// ``PlaybackSetupError/sessionLost(_:)`` (a clear message and a non-zero exit).
    func runUntilDone(logger: Logger) async throws {
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: self, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        if case .invalidated(let reason) = member.session.state {
            switch reason {
            case .left, .ended: return
            case .refused, .connectionLost: throw PlaybackSetupError.sessionLost(reason)
            }
        }
    }

    func run() async throws {
        await withGracefulShutdownHandler {
            await body()
        } onGracefulShutdown: {
            member.session.leave()
        }
    }
}
