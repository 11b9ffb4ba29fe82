import ArgumentParser
import Foundation
import GroupChat
import GroupSessions
import Logging
import NIOSSL
import PlaybackCoordinator

/// `coplay chat INVITE "text"`: sends one chat message to a session and leaves.
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Send one chat message to a session.",
        usage: "coplay chat [<invite>] <text> [--name NAME] [<options>]",
        discussion: """
            Joins the session only to send TEXT, waits for the relay to confirm it and leaves. It runs no \
            player and no coordinator: the others see the message, not a member coming and going. The \
            message is end-to-end encrypted like everything in the session (the relay cannot read it) and \
            signed with the signing key of NAME (kept in the state directory, one per name, so a person's \
            messages carry the same key each time; the others show the name alone, or NAME#TAG when \
            several keys use the name). The relay keeps the last 50 messages for members that join later.

            Limits: at most 500 characters; line breaks become spaces and control characters are \
            removed. Each member sends at most 5 messages in 10 s.

            Inside `coplay host` and `coplay join` on a terminal, a line typed and Enter sends it as chat.

            Examples:
              coplay chat --invite-file invite.txt "back in 5 minutes" --name alice
              COPLAY_INVITE="$(cat invite.txt)" coplay chat "pizza's here 🍕"
            """
    )

    @Argument(
        help: ArgumentHelp(
            "[INVITE] TEXT: the invite (unless --invite-file or COPLAY_INVITE gives it), then the message.",
            valueName: "text"))
    var words: [String] = []

    @Option(help: "The name the others see (default: your user name). Its signing key is kept in the state directory.")
    var name: String?

    @Option(name: .long, help: "Log level (stderr).")
    var logLevel: String = "notice"

    @OptionGroup(title: "Invite") var inviteOptions: InviteOptions

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    /// The invite (if given as an argument) and the text.
    func parsed() throws -> (invite: String?, text: String) {
        switch words.count {
        case 1: return (nil, words[0])
        case 2 where InviteOptions.looksLikeInvite(words[0]): return (words[0], words[1])
        case 0: throw ValidationError("say what to send: coplay chat [INVITE] \"TEXT\"")
        default: throw ValidationError("put the message in quotes: coplay chat [INVITE] \"TEXT\" (got \(words.count) words)")
        }
    }

    /// `--name`, else the user name, else `chat`.
    var senderName: String {
        if let name { return name }
        let user = ProcessInfo.processInfo.environment["USER"] ?? ""
        return user.isEmpty ? "chat" : user
    }

    func validate() throws {
        let (invite, text) = try parsed()
        _ = try inviteOptions.invite(argument: invite)
        do {
            _ = try ChatText.sendable(text)
            _ = try ChatText.name(senderName)
        } catch { throw ValidationError("\(error)") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    func run() async throws {
        let (inviteText, text) = try parsed()
        let invite = try inviteOptions.invite(argument: inviteText)
        var logger = Logger(label: "coplay.chat") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        let key = try MemberKeyStore.key(for: try ChatText.name(senderName))
        let session = try await Self.joinedSession(invite: invite, tls: try relayTLS.configuration(for: invite), logger: logger)
        do {
            let chat = try ChatChannel(session: session, key: key, name: senderName, logger: logger)
            let entry = try await chat.send(text)
            await session.leave(waitingUpTo: .seconds(2))
            withExtendedLifetime(chat) {}
            Console.out.line("sent as \(entry.label): \(entry.text)")
        } catch {
            await session.leave(waitingUpTo: .seconds(2))
            throw error
        }
    }

    /// Accepts the invite (not joining yet), with the CLI's errors for an unreachable relay or a
    /// refused invite.
    static func acceptedSession(
        invite: Invite, tls: NIOSSL.TLSConfiguration?, logger: Logger
    ) async throws -> GroupSession<WatchTogetherActivity> {
        let address = "\(invite.host):\(invite.port)"
        let center = GroupActivityCenter<WatchTogetherActivity>(transport: RelayTransport(invite: invite, tls: tls), logger: logger)
        do {
            return try await center.accept(invite)
        } catch let error as RelayTransportError {
            throw PlaybackSetupError.relayTransport(error)
        } catch let error as GroupSessionError {
            throw PlaybackSetupError.inviteRefused(address, error)
        } catch {
            throw PlaybackSetupError.relayUnreachable(address, error)
        }
    }

    /// Accepts the invite and joins, with the CLI's errors for an unreachable relay or a refused invite.
    static func joinedSession(
        invite: Invite, tls: NIOSSL.TLSConfiguration?, logger: Logger
    ) async throws -> GroupSession<WatchTogetherActivity> {
        let session = try await acceptedSession(invite: invite, tls: tls, logger: logger)
        do {
            try await session.join()
        } catch {
            session.leave()
            throw PlaybackSetupError.inviteRefused("\(invite.host):\(invite.port)", error)
        }
        return session
    }
}
