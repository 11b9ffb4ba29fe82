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

            Example: coplay join 'coplay://127.0.0.1:7000/…#…' samples/cfr-25.mp4 --name alice --frames
            """
    )

    @Argument(help: "The invite printed by `coplay host`.")
    var invite: String

    @Argument(help: "Your copy of the session's media file.")
    var file: String

    @OptionGroup var options: PlaybackCommandOptions

    func validate() throws {
        _ = try PlaybackCommandOptions.invite(invite)
    }

    func run() async throws {
        let invite = try PlaybackCommandOptions.invite(invite)
        let logger = options.logger("coplay.join")
        let (timeline, info) = try await PlaybackMember.loadMedia(file)
        let member = try await PlaybackMember.open(
            invite: invite, entry: .accept(expectedFingerprint: "\(info.fingerprint)", file: file), logger: logger)
        let output = EventOutput(format: options.events, frames: options.frames)
        let name = options.name ?? "player-\(ProcessInfo.processInfo.processIdentifier)"
        let service = PlaybackMemberService(member: member) {
            await member.play(timeline, name: name, output: output, publishInitialState: false)
        }
        try await ServiceGroup(configuration: .init(
            services: [service], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)).run()
    }
}
