import ArgumentParser
import Foundation
import PlaybackCoordinator
import ServiceLifecycle

/// `coplay join INVITE FILE`: a headless member that prints events.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join a playback session with your copy of its media and print events.",
        usage: "coplay join [<invite>] <file> [<options>]",
        discussion: """
            The invite comes from --invite-file FILE (as `coplay host --invite-file FILE` writes it, or a \
            file you saved the invite in with mode 0600), from COPLAY_INVITE, or as the first argument \
            (where `ps` shows it, secret included, to every local user).

            FILE must have the same content fingerprint as the host's media, or coplay refuses to join. \
            Events are printed one per line: on a terminal as text for a person (names, titles, \
            positions as h:mm:ss, local times), piped or redirected as JSON Lines (docs/events.md); \
            --events picks one. Frame events with --frames. Stops on SIGINT or SIGTERM, or when the \
            session ends. If the relay restarts, the member reconnects and resumes on its own.

            With --player mpv, coplay starts mpv on FILE (a window and sound when there is a display; \
            --mpv-arg passes options through) and drives it over its JSON IPC; --mpv-socket PATH drives an \
            mpv you run yourself with --input-ipc-server=PATH. Pausing, seeking or changing speed in mpv \
            moves the whole group; quitting mpv leaves the session.

            The headless player's frames are presented by a dedicated real-time thread (SCHED_FIFO when allowed) at the instants \
            of the relay's clock. --item adds media the group can switch to (coplay control INVITE item ID). \
            The simulation options make this member imperfect on purpose, for benchmarks: a drifting \
            local clock (which clock sync must correct) or an imperfect decoder (which the sync \
            controller must correct).

            Examples:
              coplay join --invite-file invite.txt samples/cfr-25.mp4 --name alice
              coplay join --invite-file invite.txt movie.mkv --player mpv --mpv-arg=--fullscreen
              mpv --input-ipc-server=/tmp/mpv.sock movie.mkv & coplay join --invite-file invite.txt movie.mkv --mpv-socket /tmp/mpv.sock
              COPLAY_INVITE="$(cat invite.txt)" coplay join clip.mp4 --events jsonl --frames
              coplay join --invite-file invite.txt clip.mp4 --clock-drift-ppm -100 --start-latency 80 --decoder-drift-ppm 300
            """
    )

    @Argument(help: "The invite printed by `coplay host` (better: --invite-file or COPLAY_INVITE), then your copy of the session's media file.")
    var arguments: [String] = []

    @OptionGroup var options: PlaybackCommandOptions

    @OptionGroup(title: "Invite") var inviteOptions: InviteOptions

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    @OptionGroup(title: "Player") var players: PlayerOptions

    @OptionGroup(title: "Simulation (benchmarks and tests)") var simulation: PlaybackSimulationOptions

    /// The invite given on the command line, if any, and the media file.
    func positionals() throws -> (invite: String?, file: String) {
        switch arguments.count {
        case 1:
            if InviteOptions.looksLikeInvite(arguments[0]) {
                throw ValidationError("after the invite, name your copy of the session's media: coplay join [INVITE] FILE")
            }
            return (nil, arguments[0])
        case 2: return (arguments[0], arguments[1])
        case 0: throw ValidationError("name your copy of the session's media: coplay join --invite-file FILE MEDIA")
        default: throw ValidationError("coplay join takes the invite (optional) and one media file; --item adds others")
        }
    }

    func validate() throws {
        let (invite, _) = try positionals()
        _ = try inviteOptions.invite(argument: invite)
        try players.check(simulation)
    }

    func run() async throws {
        let (inviteText, file) = try positionals()
        let invite = try inviteOptions.invite(argument: inviteText)
        let logger = options.logger("coplay.join")
        let (timeline, info) = try await PlaybackMember.loadMedia(file)
        let extraItems = try await options.extraItems()
        let output = options.output(media: [(timeline, file)] + extraItems)
        let name = options.name ?? "player-\(ProcessInfo.processInfo.processIdentifier)"
        let runner = MemberRunner(
            media: [(timeline, file)] + extraItems, name: name, publishInitialState: false, output: output,
            imperfections: simulation.imperfections, players: players, logger: logger)
        let drift = simulation.clockDriftPPM
        let tls = try relayTLS.configuration(for: invite)
        let reconnect = options.reconnectPolicy
        try await runner.run {
            try await PlaybackMember.open(
                invite: invite, entry: .accept(expectedFingerprint: "\(info.fingerprint)", file: file), clockDriftPPM: drift,
                tls: tls, reconnect: reconnect, logger: logger)
        }
    }
}
