import ClockSync
import Foundation
import GroupChat
import GroupSessions
import Logging
import MediaProbe
import NIOSSL
import PlaybackCoordinator
import ServiceLifecycle

/// One member of a playback session as the CLI runs it: the session entered through the relay and
/// the library's ``GroupPlayback`` over it (clock, channel, coordinator). Argument handling and
/// error messages only: the wiring is the library's.
struct PlaybackMember: Sendable {
    let invite: Invite
    let playback: GroupPlayback<WatchTogetherActivity, MemberClock>
    let logger: Logger
    /// The member's signing key (its identity, its chat, its commands where it was granted control).
    let memberKey: MemberKey
    /// Where only hosts control (the invite names a host key): who controls, and the gate between
    /// the channel and the coordinator (docs/protocol.md, "Roles").
    let roles: RoleGate<WatchTogetherActivity>?

    var session: GroupSession<WatchTogetherActivity> { playback.session }

    /// The member's local clock: the real one (`ContinuousClock`, i.e. `CLOCK_BOOTTIME`), drifted
    /// in software when `--clock-drift-ppm` asks for it.
    typealias MemberClock = DriftingClock<ContinuousClock>

    /// The coordinator settings the CLI uses (the library's defaults: a lead of at least 120 ms).
    static var coordinatorConfiguration: CoordinatorConfiguration {
        GroupPlayback<WatchTogetherActivity, MemberClock>.Options().coordinator
    }

    /// How a member enters the session.
    enum Entry: Sendable {
        /// Creates the session with this activity.
        case create(WatchTogetherActivity)
        /// Accepts an invite; when a fingerprint is given, refuses a session playing other media.
        case accept(expectedFingerprint: String?, file: String?)
        /// Accepts an invite; `check` sees the session's activity before the member joins and throws
        /// to refuse it (the member's copies do not answer the session's item).
        case acceptChecking(@Sendable (WatchTogetherActivity) throws -> Void)
        /// Comes back to the session of an invite this member created before (`coplay host
        /// --resume`): accepts it when the relay still has it (refusing one that plays another item),
        /// and creates it again with this activity when the relay does not (a relay without its data).
        case resume(WatchTogetherActivity)
    }

    /// Connects to the relay, enters and joins the session, and synchronises with the relay's clock.
    ///
    /// - Parameters:
    ///   - clockDriftPPM: simulate a local clock running this many ppm fast (or slow): the
    ///     time client, the synced clock and the player all read it; event stamps stay true.
    ///   - converge: poll the relay's clock until the estimate is good (see
    ///     ``GroupPlayback/Options/converge``), as a player must; a member that only sends commands
    ///     (`coplay control`) needs no more than a rough clock.
    ///   - tls: client TLS settings for a `coplays://` invite (`--ca`); the system's trust store by default.
    ///   - reconnect: how long the member keeps trying after losing the relay (`--reconnect-for`).
    ///   - memberKey: the member's signing key (a fresh one by default).
    static func open(
        invite: Invite, entry: Entry, clockDriftPPM: Double = 0, converge: Bool = true, tls: TLSConfiguration? = nil,
        reconnect: ReconnectPolicy = ReconnectPolicy(), memberKey: MemberKey = MemberKey(), logger: Logger
    ) async throws -> PlaybackMember {
        let address = "\(invite.host):\(invite.port)"
        let center = GroupActivityCenter<WatchTogetherActivity>(
            transport: RelayTransport(invite: invite, tls: tls), logger: logger, reconnectPolicy: reconnect)
        let session: GroupSession<WatchTogetherActivity>
        do {
            switch entry {
            case .create(let activity): session = try await center.activate(activity, invite: invite)
            case .accept, .acceptChecking: session = try await center.accept(invite)
            case .resume(let activity):
                do {
                    session = try await center.accept(invite)
                } catch let error as GroupSessionError where error.isSameKind(as: .noActivity) {
                    logger.notice("the relay does not have the session any more: making it again under the same invite")
                    session = try await center.activate(activity, invite: invite)
                }
            }
        } catch let error as RelayTransportError {
            throw PlaybackSetupError.relayTransport(error)
        } catch let error as GroupSessionError {
            throw PlaybackSetupError.inviteRefused(address, error)
        } catch {
            throw PlaybackSetupError.relayUnreachable(address, error)
        }
        // Fingerprints compare by value: a v1 (with duration) and a v2 of the same bytes agree.
        if case .accept(let expected?, let file) = entry,
            ContentFingerprint(session.activity.fingerprint) != ContentFingerprint(expected)
        {
            session.leave()
            throw PlaybackSetupError.mediaMismatch(
                file: file ?? "the file", local: expected, session: session.activity.fingerprint,
                title: session.activity.title)
        }
        if case .resume(let activity) = entry, session.activity.item != activity.item {
            session.leave()
            throw PlaybackSetupError.mediaMismatch(
                file: "the first file", local: activity.item, session: session.activity.item, title: session.activity.title)
        }
        if case .acceptChecking(let check) = entry {
            do { try check(session.activity) } catch {
                session.leave()
                throw error
            }
        }
        // Before joining: the role statements and the members' identities that come on joining.
        let roles = RoleGate(session: session, invite: invite, memberKey: memberKey, logger: logger)
        do {
            try await session.join()
        } catch {
            session.leave()
            throw PlaybackSetupError.inviteRefused(address, error)
        }
        var options = GroupPlayback<WatchTogetherActivity, MemberClock>.Options()
        options.converge = converge
        let playback = try await GroupPlayback.prepare(
            session: session, timeServer: invite, clock: MemberClock(ContinuousClock(), driftPPM: clockDriftPPM),
            options: options, gate: roles, logger: logger)
        return PlaybackMember(invite: invite, playback: playback, logger: logger, memberKey: memberKey, roles: roles)
    }

    /// Probes a file for its frame timeline, fingerprint and stream identity (one read of every packet).
    static func loadMedia(_ path: String) async throws -> (MediaTimeline, MediaInfo) {
        let info = try await MediaProbe.probe(URL(fileURLWithPath: path), options: .init(scanPackets: true, streamIdentity: true))
        return (try MediaTimeline(info: info), info)
    }

    /// A headless player of `timeline` (and `extraItems`) on this member's clock.
    func headlessPlayer(
        _ timeline: MediaTimeline, name: String, extraItems: [MediaTimeline] = [],
        imperfections: HeadlessPlayerCore.Imperfections = .init()
    ) -> HeadlessPlayer {
        HeadlessPlayer(
            participant: PlaybackParticipantID(name), items: [timeline] + extraItems, reference: playback.reference,
            presentationThread: PresentationThread.Configuration(), imperfections: imperfections, logger: logger)
    }

    /// Plays with `player` in step with the group until the session ends, the player ends, or the
    /// task is cancelled, printing events.
    ///
    /// - Parameters:
    ///   - items: every item the player can present (the first is loaded): their identifiers and
    ///     durations go to the coordinator (the group stops at an item's end).
    ///   - name: the player's name in events.
    ///   - publishInitialState: the host publishes "paused at 0" so the group has a state.
    ///   - started: called with the coordinator once it runs (the demo drives its tour through it).
    ///   - nearItems: the items this member plays from a near copy (another encode, not frame-identical):
    ///     its presence reports say so (`PresenceReport.ItemSummary.frameIdentical` false).
    func play<Player: CoordinatedPlayer>(
        _ player: Player, items: [MediaTimeline], name: String, output: EventOutput, publishInitialState: Bool,
        nearItems: Set<String> = [], queue: [QueueItem] = [], repeatMode: RepeatMode = .off,
        started: @escaping @Sendable (PlaybackCoordinator) async throws -> Void = { _ in }
    ) async throws {
        let itemIDs = Set(items.map(\.identifier))
        var summaries: [PresenceReport.ItemSummary] = []
        for item in items where !summaries.contains(where: { $0.item == item.identifier }) {
            summaries.append(PresenceReport.ItemSummary(
                item: item.identifier, duration: item.duration, frameIdentical: nearItems.contains(item.identifier) ? false : nil))
        }
        try await playback.run(
            player, localItem: items.first?.identifier, canPresent: { itemIDs.contains($0) }, name: name, items: summaries,
            publishInitialState: publishInitialState, queue: queue, repeatMode: repeatMode, onEvent: { output.print($0) }, started: started)
    }
}

/// Runs a member until SIGINT/SIGTERM (leaving the session cleanly) or until the session ends.
struct PlaybackMemberService: Service, CustomStringConvertible {
    let member: PlaybackMember
    let output: EventOutput
    /// What the member answers `coplay people`.
    var card: CoplayMemberCard?
    let body: @Sendable () async throws -> Void

    /// Names the member without its invite (the invite holds the session's secret, and a
    /// `ServiceGroupError` prints the service it is about).
    var description: String { "playback member \(member.session.localParticipant.id)" }

    /// Runs the member until SIGTERM/SIGINT or the end of its session. Leaving and a session ended
    /// by a member are a normal end; a session lost to the network or refused is a
    /// ``PlaybackSetupError/sessionLost(_:relay:)`` (a clear message and a non-zero exit), also when
    /// something else failed because of it.
    func runUntilDone(logger: Logger) async throws {
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: self, successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch {
            if let lost = Self.lossError(member) { throw lost }
            throw error
        }
        if let lost = Self.lossError(member) { throw lost }
    }

    /// The error for a session that ended for this member by refusal or a lost relay, `nil` while it
    /// runs or after it was left or ended.
    static func lossError(_ member: PlaybackMember) -> PlaybackSetupError? {
        guard case .invalidated(let reason) = member.session.state else { return nil }
        switch reason {
        case .left, .ended: return nil
        case .refused, .connectionLost:
            return PlaybackSetupError.sessionLost(reason, relay: "\(member.invite.host):\(member.invite.port)")
        }
    }

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await reportConnection() }
                let answering = card.map { CoplayMemberCard.answer($0, in: member.session) }
                let nearCopies = NearCopyWatch.start(session: member.session, name: card?.name, output: output)
                defer {
                    answering?.cancel()
                    nearCopies.cancel()
                }
                try await body()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            member.session.leave()
        }
    }

    /// Tells the person when the relay goes away and when the session resumed.
    private func reportConnection() async {
        let relay = "\(member.invite.host):\(member.invite.port)"
        var lost = false
        for await state in member.session.connectionStates {
            switch state {
            case .reconnecting where !lost:
                lost = true
                output.notice("lost the relay at \(relay) (restarting, or the network failed): reconnecting…")
            case .connected where lost:
                lost = false
                output.notice("reconnected to the relay at \(relay): the session resumed, nothing lost")
            default:
                break
            }
        }
    }
}
