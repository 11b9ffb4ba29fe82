import ClockSync
import Foundation
import GroupChat
import GroupSessions
import Logging
import MediaProbe
import NIOSSL
import PlaybackCoordinator
import ServiceLifecycle
import Synchronization

/// One member of a playback session as the CLI runs it: the session entered through the relay and
/// the library's ``GroupPlayback`` over it (clock, channel, coordinator). Argument handling and
/// error messages only: the wiring is the library's.
struct PlaybackMember: Sendable {
    let invite: Invite
    let playback: GroupPlayback<WatchTogetherActivity, MemberClock>
    let logger: Logger
    /// The member's signing key (its identity, its chat, its commands where it was granted control).
    let memberKey: MemberKey
    /// The session the member is in now, and where it moves when a host removes someone.
    let sessions: MemberSessions
    /// How it reached the relay (a successor session is reached the same way).
    var tls: TLSConfiguration?
    var reconnect = ReconnectPolicy()

    /// The session the member is in now (a successor's once it moved there).
    var session: GroupSession<WatchTogetherActivity> { sessions.current }

    /// Where only hosts control (the invite names a host key): who controls in the session the
    /// member is in now, and the gate between its channel and the coordinator (docs/protocol.md,
    /// "Roles"). Each session has its own (a successor's is made before its join).
    var roles: RoleGate<WatchTogetherActivity>? { sessions.roles }

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
        return PlaybackMember(
            invite: invite, playback: playback, logger: logger, memberKey: memberKey, sessions: MemberSessions(session, roles: roles),
            tls: tls, reconnect: reconnect)
    }

    /// Opens and joins the successor session `invite` names (a host removed someone and sealed
    /// this member the invite), on the same relay, as this member reached the old one, with the
    /// successor's own ``RoleGate`` made before its join (its host key is the successor's; the
    /// grants the remover re-issued there are retained, so they count from the start).
    ///
    /// - Throws: ``PlaybackSetupError/successorWithoutHostKey`` when this member's session had a
    ///   host key and the successor's invite has none (everyone would control there); the relay's
    ///   refusal or loss.
    func openSuccessor(_ invite: Invite) async throws -> MemberSessions.Opened {
        if roles != nil && invite.hostKey == nil { throw PlaybackSetupError.successorWithoutHostKey }
        let center = GroupActivityCenter<WatchTogetherActivity>(
            transport: RelayTransport(invite: invite, tls: tls), logger: logger, reconnectPolicy: reconnect)
        let session = try await center.accept(invite)
        let roles = RoleGate(session: session, invite: invite, memberKey: memberKey, logger: logger)
        do { try await session.join() } catch {
            session.leave()
            throw error
        }
        return MemberSessions.Opened(session: session, roles: roles)
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
            publishInitialState: publishInitialState, queue: queue, repeatMode: repeatMode, succession: sessions.succession,
            onEvent: { output.print($0) }, started: started)
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
                let moves = member.sessions.succession.moves
                group.addTask { await reportConnection(member.session) }
                // A move to a successor session: the answers and the connection reports follow.
                group.addTask {
                    for await session in moves {
                        let answering = card.map { CoplayMemberCard.answer($0, in: session) }
                        let nearCopies = NearCopyWatch.start(session: session, name: card?.name, output: output)
                        await reportConnection(session)
                        answering?.cancel()
                        nearCopies.cancel()
                    }
                }
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
    private func reportConnection(_ session: GroupSession<WatchTogetherActivity>) async {
        let relay = "\(member.invite.host):\(member.invite.port)"
        var lost = false
        for await state in session.connectionStates {
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

/// The session a member is in now, and its moves: a host's removal of someone moves everyone else
/// to a successor session (docs/protocol.md, "Removing a member"), and the member's playback, chat
/// and answers follow it there.
final class MemberSessions: Sendable {
    /// Where the playback learns of a move.
    let succession = PlaybackSuccession<WatchTogetherActivity>()

    /// A session this member joined, with its own role gate (`nil` where everyone controls).
    struct Opened: Sendable {
        var session: GroupSession<WatchTogetherActivity>
        var roles: RoleGate<WatchTogetherActivity>?
    }

    private struct State {
        var current: Opened
        var moving = false
        /// Set when a host removed this member: the host's label, if it said who it is.
        var removedBy: String??
        /// The invites this member moved with, latest last.
        var invites: [Invite] = []
    }
    private let state: Mutex<State>

    init(_ session: GroupSession<WatchTogetherActivity>, roles: RoleGate<WatchTogetherActivity>?) {
        state = Mutex(State(current: Opened(session: session, roles: roles)))
    }

    /// The session the member is in now.
    var current: GroupSession<WatchTogetherActivity> { state.withLock { $0.current.session } }

    /// The role gate of the session the member is in now.
    var roles: RoleGate<WatchTogetherActivity>? { state.withLock { $0.current.roles } }

    /// The invite of the session the member is in now, when it moved (`nil`: the one it started with).
    var currentInvite: Invite? { state.withLock { $0.invites.last } }

    /// Whether a host removed this member, and who (`.some(nil)`: a host that did not say who it is).
    var removedBy: String?? { state.withLock { $0.removedBy } }

    /// Records that a host removed this member.
    func removed(by host: String?) { state.withLock { $0.removedBy = .some(host) } }

    /// Moves to the session `open` opens and joins, with its gate (it starts now; the playback
    /// takes it when the current session ends).
    func move(to invite: Invite, _ open: @escaping @Sendable () async -> Opened?) {
        state.withLock { $0.moving = true }
        succession.expect { [self] in
            let opened = await open()
            self.state.withLock { state in
                if let opened {
                    state.current = opened
                    state.invites.append(invite)
                }
                state.moving = false
            }
            return opened.map { PlaybackSuccession.Successor(session: $0.session, gate: $0.roles) }
        }
    }

    /// The session after `session` once it ended, with its gate: the successor the member moved
    /// to, or `nil` when it did not move (waits while a move is being opened, at most 30 s).
    func next(after session: GroupSession<WatchTogetherActivity>) async -> Opened? {
        for _ in 0..<3_000 {
            let (current, moving) = state.withLock { ($0.current, $0.moving) }
            if current.session.id != session.id { return current }
            if !moving { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}
