import ArgumentParser
import Foundation
import PlaybackCoordinator
import ServiceLifecycle

/// `coplay join INVITE FILE`: a headless member that prints events.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join a playback session with your copy of its media and print events.",
        discussion: """
            FILE must have the same content fingerprint as the host's media, or coplay refuses to join. \
            Events are printed one per line (JSON Lines per docs/events.md, or text); frame events with \
            --frames. Stops on SIGINT or SIGTERM, or when the session ends.

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
              coplay join 'coplay://127.0.0.1:7000/…#…' samples/cfr-25.mp4 --name alice --frames
              coplay join "$INVITE" movie.mkv --player mpv --mpv-arg=--fullscreen
              mpv --input-ipc-server=/tmp/mpv.sock movie.mkv & coplay join "$INVITE" movie.mkv --mpv-socket /tmp/mpv.sock
              coplay join "$INVITE" clip.mp4 --clock-drift-ppm -100 --start-latency 80 --decoder-drift-ppm 300
            """
    )

    @Argument(help: "The invite printed by `coplay host`.")
    var invite: String

    @Argument(help: "Your copy of the session's media file.")
    var file: String

    @OptionGroup var options: PlaybackCommandOptions

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    @OptionGroup(title: "Player") var players: PlayerOptions

    @OptionGroup(title: "Simulation (benchmarks and tests)") var simulation: PlaybackSimulationOptions

    func validate() throws {
        _ = try PlaybackCommandOptions.invite(invite)
        try players.check(simulation)
    }

    func run() async throws {
        let invite = try PlaybackCommandOptions.invite(invite)
        let logger = options.logger("coplay.join")
        let (timeline, info) = try await PlaybackMember.loadMedia(file)
        let extraItems = try await options.extraItems()
        let output = EventOutput(format: options.events, frames: options.frames)
        let name = options.name ?? "player-\(ProcessInfo.processInfo.processIdentifier)"
        let runner = MemberRunner(
            media: [(timeline, file)] + extraItems, name: name, publishInitialState: false, output: output,
            imperfections: simulation.imperfections, players: players, logger: logger)
        let drift = simulation.clockDriftPPM
        let tls = try relayTLS.configuration(for: invite)
        try await runner.run {
            try await PlaybackMember.open(
                invite: invite, entry: .accept(expectedFingerprint: "\(info.fingerprint)", file: file), clockDriftPPM: drift,
                tls: tls, logger: logger)
        }
    }
}
