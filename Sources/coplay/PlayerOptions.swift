import ArgumentParser
import Dispatch
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
    var output: EventOutput
    var imperfections: HeadlessPlayerCore.Imperfections
    var players: PlayerOptions
    var logger: Logger

    func run(open: @escaping @Sendable () async throws -> PlaybackMember) async throws {
        let items = media.map(\.timeline.identifier)
        guard players.usesMPV else {
            let member = try await open()
            let player = member.headlessPlayer(
                media[0].timeline, name: name, extraItems: media.dropFirst().map(\.timeline), imperfections: imperfections)
            try await serve(member) { try await member.play(player, items: items, name: name, output: output, publishInitialState: publishInitialState) }
            return
        }
        // The connection is stamped with the shared clock once there is one.
        let reference = LateReference()
        let mpvItems = media.map { MPVPlayer.Item(timeline: $0.timeline, path: $0.path) }
        let leavingRate = Mutex<Double?>(nil)
        /// Whether the member runs (from then on its service group handles SIGINT/SIGTERM).
        let serving = Mutex(false)
        let body: @Sendable (MPVConnection) async throws -> Void = { [name, output, publishInitialState, logger] mpv in
            // Before joining: a file mpv cannot play is an error now, not a broken member later.
            try await MPVPlayer.preload(mpvItems[0], on: mpv)
            let member = try await open()
            reference.set(member.playback.reference)
            let player = MPVPlayer(
                connection: mpv, items: mpvItems, reference: member.playback.reference, participant: PlaybackParticipantID(name),
                logger: logger)
            serving.withLock { $0 = true }
            do {
                try await serve(member) { try await member.play(player, items: items, name: name, output: output, publishInitialState: publishInitialState) }
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
            let mpv = try await MPVConnection.connect(path: socket, stamp: reference.stamp)
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

    private func serve(_ member: PlaybackMember, _ body: @escaping @Sendable () async throws -> Void) async throws {
        try await PlaybackMemberService(member: member, body: body).runUntilDone(logger: logger)
    }
}

/// A reference clock set once the member has one, read by the mpv connection's stamps (NaN before).
final class LateReference: Sendable {
    private let reference = Mutex<(any ReferenceTimeSource)?>(nil)

    func set(_ reference: any ReferenceTimeSource) { self.reference.withLock { $0 = reference } }

    var stamp: @Sendable () -> Double {
        { [self] in reference.withLock { $0 }?.now()?.seconds ?? .nan }
    }
}
