import ArgumentParser
import Dispatch
import Foundation
import GroupSessions
import Logging
import MPVControl
import PlaybackCoordinator
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Which player a `coplay host` / `join` member drives.
enum PlayerKind: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// coplay's own headless player (frame events, no picture).
    case headless
    /// mpv, started by coplay or attached with --mpv-socket.
    case mpv
}

/// The player options of `coplay host` and `coplay join`.
struct PlayerOptions: ParsableArguments {
    @Option(name: .long, help: "The player: headless (coplay's own, prints frame events) or mpv (a window and sound when there is a display).")
    var player: PlayerKind = .headless

    @Option(
        name: .customLong("mpv-arg"), parsing: .unconditionalSingleValue,
        help: ArgumentHelp("An option for the mpv coplay starts, e.g. --mpv-arg=--fullscreen. Repeatable.", valueName: "arg"))
    var mpvArguments: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("Drive an mpv you already run with --input-ipc-server=PATH instead of starting one (implies --player mpv).", valueName: "path"))
    var mpvSocket: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Notices on mpv's screen: all (commands, people joining and leaving, waits, catching up), commands (play, pause, seek, speed, item, queue) or off. The terminal's lines are not affected.",
            valueName: "which"))
    var notices: PlaybackNotices.Level = .all

    func validate() throws {
        if player == .headless, !mpvArguments.isEmpty, mpvSocket == nil {
            throw ValidationError("--mpv-arg needs --player mpv")
        }
        if mpvSocket != nil, !mpvArguments.isEmpty {
            throw ValidationError("--mpv-arg applies to an mpv coplay starts; with --mpv-socket, give options to your own mpv")
        }
        if let mpvSocket, mpvSocket.isEmpty { throw ValidationError("--mpv-socket needs a path") }
    }

    /// Refuses the headless decoder's simulation options with mpv (mpv is a real decoder).
    func check(_ simulation: PlaybackSimulationOptions) throws {
        if usesMPV, simulation.startLatency != 0 || simulation.decoderDriftPPM != 0 {
            throw ValidationError("--start-latency and --decoder-drift-ppm simulate the headless player's decoder; they do not apply to mpv")
        }
    }

    /// Whether the member drives mpv.
    var usesMPV: Bool { player == .mpv || mpvSocket != nil }
}

/// Runs one playing member of `host` or `join` with the chosen player: checks the player can play
/// the media before anyone joins, enters the session (`open`), plays until SIGINT/SIGTERM, the end
/// of the session, or (mpv) the person quitting mpv.
struct MemberRunner {
    /// The media: the main file first, then the --item files.
    var media: [(timeline: MediaTimeline, path: String)]
    var name: String
    var publishInitialState: Bool
    /// `host FILE FILE…`: the group's queue to start with (empty: no queue), and its repeat mode.
    var queue: [QueueItem] = []
    var repeatMode: RepeatMode = .off
    /// `host --shuffle`: the queue plays in a shuffled order (not shuffled again when the host
    /// comes back to a session whose queue already is).
    var shuffle = false
    var output: EventOutput
    var imperfections: HeadlessPlayerCore.Imperfections
    var players: PlayerOptions
    var logger: Logger
    /// What the member plays once its session's activity is known (`join`: its copies resolved
    /// against the session's item), in place of ``media``, and the items it plays from near copies.
    var resolve: (@Sendable (PlaybackMember) async throws -> ResolvedMedia)?
    /// Called with the successor's invite when the member moved there (a host removed someone):
    /// `coplay host` prints it and rewrites its invite file.
    var moved: (@Sendable (Invite) -> Void)?

    /// The media a member plays, the session's item first (or, without a copy of it, the member's
    /// own first copy).
    struct ResolvedMedia: Sendable {
        var media: [(timeline: MediaTimeline, path: String)]
        /// Items played from near copies (not frame-identical).
        var nearItems: Set<String> = []
        /// Checked once the coordinator runs (a member without the session's item: that the group's
        /// queue has an entry it has a copy of); what it throws ends the member.
        var check: (@Sendable (PlaybackCoordinator) async throws -> Void)?
    }

    private func resolved(_ member: PlaybackMember) async throws -> ResolvedMedia {
        if let resolve { return try await resolve(member) }
        return ResolvedMedia(media: media)
    }

    /// Media titles (file names) by item identifier, for people.
    static func titles(_ media: [(timeline: MediaTimeline, path: String)]) -> [String: String] {
        var titles: [String: String] = [:]
        for (timeline, path) in media where titles[timeline.identifier] == nil {
            titles[timeline.identifier] = URL(fileURLWithPath: path).lastPathComponent
        }
        return titles
    }

    /// `host --shuffle`: shuffles the group's queue once it is there, unless it already is.
    static func shuffleIfAsked(_ asked: Bool, _ coordinator: PlaybackCoordinator) async {
        guard asked, await coordinator.hasQueue, await coordinator.queue.shuffleSeed == nil else { return }
        try? await coordinator.editQueue(.shuffle(seed: UInt32.random(in: 1...UInt32.max)))
    }

    func run(open: @escaping @Sendable () async throws -> PlaybackMember) async throws {
        // Once in the session, its loss is the cause of whatever else fails after (mpv closed by
        // the teardown, a player that stopped): report that, not the consequence.
        let opened = OpenedMember()
        let chats = Mutex<[Task<Void, Never>]>([])
        defer { chats.withLock { $0.forEach { $0.cancel() } } }
        // Chat messages also go where the player shows notices (mpv's screen), once there is one.
        var chatOutput = output
        let tap = output.tap
        let chatNotices = NoticeSink()
        chatOutput.tap = { event in
            tap?(event)
            chatNotices.send(event)
        }
        let open: @Sendable () async throws -> PlaybackMember = { [chatOutput, output, name, logger, moved] in
            let member = try await open()
            opened.set(member)
            let chat = Task {
                await MemberChat.run(member: member, name: name, output: chatOutput, logger: logger, moved: moved)
            }
            chats.withLock { $0.append(chat) }
            output.human?.joined(
                as: member.playback.channel.localParticipant, name: name, sessionTitle: member.session.activity.title,
                sessionItem: member.session.activity.item)
            return member
        }
        do {
            try await runPlayer(open: open, chatNotices: chatNotices)
        } catch {
            if let member = opened.member, let removed = member.sessions.removedBy { throw Self.removedError(removed) }
            if let member = opened.member, let lost = PlaybackMemberService.lossError(member) { throw lost }
            throw error
        }
        output.human?.stop()
        if let member = opened.member, let removed = member.sessions.removedBy { throw Self.removedError(removed) }
    }

    /// A host removed this member: one line on standard error, exit status 3 (docs/events.md, `removed`).
    static func removedError(_ host: String?) -> ExitCode {
        _ = Console.err.line("coplay: you were removed from this session by \(host ?? "a host")")
        return ExitCode(3)
    }

    private func runPlayer(open: @escaping @Sendable () async throws -> PlaybackMember, chatNotices: NoticeSink) async throws {
        let human = output.human
        guard players.usesMPV else {
            let member = try await open()
            let resolved = try await resolved(member)
            let media = resolved.media
            let player = member.headlessPlayer(
                media[0].timeline, name: name, extraItems: media.dropFirst().map(\.timeline), imperfections: imperfections)
            try await serve(member, file: media[0].path) {
                try await member.play(
                    player, items: media.map(\.timeline), name: name, output: output, publishInitialState: publishInitialState,
                    nearItems: resolved.nearItems, queue: queue, repeatMode: repeatMode, started: { [shuffle, queue] coordinator in
                        human?.attach(coordinator)
                        await Self.shuffleIfAsked(shuffle && !queue.isEmpty, coordinator)
                        try await resolved.check?(coordinator)
                    })
            }
            return
        }
        // The connection is stamped with the shared clock once there is one.
        let reference = LateReference()
        let leavingRate = Mutex<Double?>(nil)
        /// Whether the member runs (from then on its service group handles SIGINT/SIGTERM).
        let serving = Mutex(false)
        let firstNamed = media.first.map { MPVPlayer.Item(timeline: $0.timeline, path: $0.path) }
        let notices = players.notices
        let body: @Sendable (MPVConnection) async throws -> Void = { [name, output, publishInitialState, queue, repeatMode, logger] mpv in
            // Before joining: a file mpv cannot play is an error now, not a broken member later.
            if let firstNamed { try await MPVPlayer.preload(firstNamed, on: mpv) }
            let member = try await open()
            let resolved = try await resolved(member)
            let items = resolved.media.map(\.timeline)
            let mpvItems = resolved.media.map { MPVPlayer.Item(timeline: $0.timeline, path: $0.path) }
            reference.set(member.playback.reference)
            // Once the session is lost, mpv closing in the teardown is a consequence, not news: its
            // notices would come before the error that says why ("mpv quit" when the relay forgot the session).
            var playerLogger = logger
            playerLogger.handler = QuietAfterLoss(wrapping: logger.handler) { PlaybackMemberService.lossError(member) != nil }
            var configuration = MPVPlayer.Configuration()
            configuration.notices = notices
            let player = MPVPlayer(
                connection: mpv, items: mpvItems, reference: member.playback.reference, participant: PlaybackParticipantID(name),
                configuration: configuration, logger: playerLogger)
            // Every event also goes to mpv's screen as a notice (at the --notices level).
            var output = output
            let tap = output.tap
            output.tap = { event in
                tap?(event)
                player.notify(event)
            }
            chatNotices.set { player.notify($0) }
            serving.withLock { $0 = true }
            do {
                try await serve(member, file: mpvItems[0].path) { [output] in
                    try await member.play(
                        player, items: items, name: name, output: output, publishInitialState: publishInitialState,
                        nearItems: resolved.nearItems, queue: queue, repeatMode: repeatMode, started: { [shuffle, queue] coordinator in
                        human?.attach(coordinator)
                        await Self.shuffleIfAsked(shuffle && !queue.isEmpty, coordinator)
                        try await resolved.check?(coordinator)
                    })
                }
            } catch {
                let rate = await player.groupRate()
                leavingRate.withLock { $0 = rate }
                throw error
            }
            let rate = await player.groupRate()
            leavingRate.withLock { $0 = rate }
        }
        if let socket = players.mpvSocket {
            // A person's own mpv: set what the adapter needs (or refuse, naming it), and put the
            // person's values back when the member leaves (MPVAttachment).
            let mpv = try await Self.connectToMPV(socket, stamp: reference.stamp)
            let attached: MPVAttachment.Attached
            do { attached = try await MPVAttachment.attach(to: mpv) } catch {
                await mpv.close()
                throw error
            }
            // A SIGINT/SIGTERM before the member runs (loading, joining) cancels the set-up, so that the
            // person's values still come back; once it runs, leaving handles them.
            let work = Task { try await body(mpv) }
            let signals = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { if !serving.withLock({ $0 }) { work.cancel() } }
                source.resume()
                return source
            }
            defer { for source in signals { source.cancel() } }
            do { try await withTaskCancellationHandler { try await work.value } onCancel: { work.cancel() } } catch {
                await attached.detach(on: mpv, rate: leavingRate.withLock { $0 })
                await mpv.close()
                if error is CancellationError { throw PlaybackSetupError.interrupted("the person's mpv settings were put back") }
                throw error
            }
            await attached.detach(on: mpv, rate: leavingRate.withLock { $0 })
            await mpv.close()
        } else {
            var arguments = players.mpvArguments
            if !MPVProcess.hasDisplay { arguments = MPVProcess.headlessArguments + arguments }
            try await MPVProcess.run(arguments: arguments, stamp: reference.stamp) { mpv in
                // The options are coplay's already; this binds the frame-step key as for an attached mpv.
                _ = try await MPVAttachment.attach(to: mpv)
                try await body(mpv)
            }
        }
    }

    /// Connects to the mpv the person runs, with an error that says what to do when there is none.
    static func connectToMPV(_ socket: String, stamp: @escaping @Sendable () -> Double) async throws -> MPVConnection {
        let start = "start mpv with --input-ipc-server=\(socket) (e.g. mpv --input-ipc-server=\(socket) FILE &), or let coplay start it: --player mpv"
        var status = stat()
        guard lstat(socket, &status) == 0 else {
            if errno == ENOENT { throw PlaybackSetupError.mpvUnreachable("no mpv at \(socket): nothing made that socket; \(start)") }
            throw PlaybackSetupError.mpvUnreachable("cannot use --mpv-socket \(socket): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFSOCK else {
            throw PlaybackSetupError.mpvUnreachable("\(socket) is not a socket, so not mpv's: \(start)")
        }
        do {
            return try await MPVConnection.connect(path: socket, stamp: stamp)
        } catch {
            // mpv's connection error is text: ask the socket itself why it refuses (only now: a probe
            // connection to a working mpv is not free, mpv sees a client come and go).
            switch ConnectionFailure.connectUnix(socket) {
            case ECONNREFUSED?:
                throw PlaybackSetupError.mpvUnreachable("no mpv listens at \(socket) any more (the mpv that made it has quit): \(start)")
            case EACCES?:
                throw PlaybackSetupError.mpvUnreachable("not allowed to connect to \(socket) (is its mpv another user's?)")
            default:
                throw PlaybackSetupError.mpvUnreachable("cannot connect to the mpv at \(socket): \(error)")
            }
        }
    }

    private func serve(_ member: PlaybackMember, file: String, _ body: @escaping @Sendable () async throws -> Void) async throws {
        let card = CoplayMemberCard(
            name: name, player: players.usesMPV ? "mpv" : "headless", file: URL(fileURLWithPath: file).lastPathComponent)
        try await PlaybackMemberService(member: member, output: output, card: card, body: body).runUntilDone(logger: logger)
    }
}

/// A log handler that drops everything below warning once `quiet` says so.
struct QuietAfterLoss: LogHandler {
    var wrapped: any LogHandler
    let quiet: @Sendable () -> Bool

    init(wrapping wrapped: any LogHandler, quiet: @escaping @Sendable () -> Bool) {
        self.wrapped = wrapped
        self.quiet = quiet
    }

    var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { wrapped.metadataProvider }
        set { wrapped.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        if event.level < .warning, quiet() { return }
        wrapped.log(event: event)
    }
}

/// The member once it is in the session, for the error that ends the run.
final class OpenedMember: Sendable {
    private let value = Mutex<PlaybackMember?>(nil)
    func set(_ member: PlaybackMember) { value.withLock { $0 = member } }
    var member: PlaybackMember? { value.withLock { $0 } }
}

/// A reference clock set once the member has one, read by the mpv connection's stamps (NaN before).
final class LateReference: Sendable {
    private let reference = Mutex<(any ReferenceTimeSource)?>(nil)

    func set(_ reference: any ReferenceTimeSource) { self.reference.withLock { $0 = reference } }

    var stamp: @Sendable () -> Double {
        { [self] in reference.withLock { $0 }?.now()?.seconds ?? .nan }
    }
}

extension PlaybackNotices.Level: ExpressibleByArgument {}

/// Where events go besides the output once a player that shows notices exists (chat on mpv's screen).
final class NoticeSink: Sendable {
    private let target = Mutex<(@Sendable (PlaybackEvent) -> Void)?>(nil)

    func set(_ notify: @escaping @Sendable (PlaybackEvent) -> Void) { target.withLock { $0 = notify } }

    func send(_ event: PlaybackEvent) { target.withLock { $0 }?(event) }
}
