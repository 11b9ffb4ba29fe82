import ArgumentParser
import Foundation
import Logging
import PlaybackCoordinator

/// `coplay control INVITE ACTION [VALUE]`: sends one playback command to a session, then exits.
struct ControlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Send one command to a playback session: play, pause, seek SECONDS, rate R or item ID.",
        discussion: """
            Joins the session as a member without a player, reads its current playback state, proposes \
            the command (scheduled on the relay's clock a little in the future, so every member applies \
            it at the same instant), waits for the relay to confirm it, and leaves. Exits non-zero if the \
            relay is down, refuses the invite, or the session has no playback state.

            Examples:
              coplay control "$INVITE" play
              coplay control "$INVITE" seek 2.5
              coplay control "$INVITE" rate 0.5
              coplay control "$INVITE" item 'v1:…'   (an item the players loaded with --item; ID as `coplay probe` prints it)
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case play, pause, seek, rate, item
    }

    @Argument(help: "The invite printed by `coplay host`.")
    var invite: String

    @Argument(help: "play, pause, seek, rate or item.")
    var action: Action

    @Argument(help: "SECONDS for seek, R for rate, ID for item.")
    var value: String?

    @Option(name: .long, help: "Log level (stderr).")
    var logLevel: String = "notice"

    func validate() throws {
        _ = try PlaybackCommandOptions.invite(invite)
        switch action {
        case .play, .pause:
            if value != nil { throw ValidationError("'\(action.rawValue)' takes no value") }
        case .seek:
            guard let value, let seconds = Double(value), seconds.isFinite, seconds >= 0 else {
                throw ValidationError("seek needs a time in seconds >= 0, e.g. 'seek 2.5'")
            }
        case .rate:
            guard let value, let rate = Double(value), rate.isFinite, rate >= 0 else {
                throw ValidationError("rate needs a rate >= 0, e.g. 'rate 0.5'")
            }
        case .item:
            guard let value, !value.isEmpty else { throw ValidationError("item needs an item identifier") }
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    func run() async throws {
        let invite = try PlaybackCommandOptions.invite(invite)
        var logger = Logger(label: "coplay.control") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        let member = try await PlaybackMember.open(
            invite: invite, entry: .accept(expectedFingerprint: nil, file: nil), logger: logger)
        defer { member.session.leave() }
        let coordinator = PlaybackCoordinator(
            channel: member.channel, reference: member.reference, delegate: CommandOnlyDelegate(),
            configuration: PlaybackMember.coordinatorConfiguration, name: "control", logger: logger)
        let running = Task { await coordinator.run() }
        defer { running.cancel() }

        guard await Self.poll(for: .seconds(5), { await coordinator.state != nil }) else {
            throw PlaybackSetupError.noPlaybackState
        }
        switch action {
        case .play: try await coordinator.play()
        case .pause: try await coordinator.pause()
        case .seek: try await coordinator.coordinateSeek(to: Double(value!)!)
        case .rate: try await coordinator.coordinateRateChange(to: Double(value!)!)
        case .item: try await coordinator.transitionToItem(identifier: value!)
        }
        let me = member.channel.localParticipant
        guard await Self.poll(for: .seconds(10), { await coordinator.state?.originator == me }) else {
            throw PlaybackSetupError.commandNotConfirmed(action.rawValue)
        }
        if let state = await coordinator.state {
            EventOutput.printLine(
                "\(action.rawValue) accepted: revision \(state.revision), item time \(state.anchorItemTime) s, "
                    + "rate \(state.rate), at reference \(state.anchorReferenceTime.seconds)")
        }
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes.
    static func poll(for timeout: Duration, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }
}

/// The delegate of a member that only sends commands: it has no player.
struct CommandOnlyDelegate: PlaybackControlDelegate {
    func handle(_ command: PlaybackCommand) async {}
}
