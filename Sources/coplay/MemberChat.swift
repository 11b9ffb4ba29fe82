import Foundation
import GroupChat
import GroupSessions
import Logging
import PlaybackCoordinator

#if canImport(Glibc)
import Glibc
#endif

/// The chat of `coplay host` and `join`: the member announces its name bound to its key, prints
/// every chat message as a `chat` event (JSON Lines) or a line for a person ("alice: hello"), and,
/// when its standard input is a terminal, sends each line typed there.
enum MemberChat {
    /// Runs the chat of `member` until cancelled or the session ends (following the member to
    /// each successor session it moves to), and prints the session's role changes (where only
    /// hosts control).
    ///
    /// - Parameters:
    ///   - name: the member's name (``ChatText`` cleans it).
    ///   - moved: called with the successor's invite when this member moved there (a host removed someone).
    static func run(
        member: PlaybackMember, name: String, output: EventOutput, logger: Logger, moved: (@Sendable (Invite) -> Void)? = nil
    ) async {
        // The member's key (the name's key from the state directory when the person gave a name,
        // ``MemberKeyStore``), the same one that signs its commands where only hosts control.
        let key = member.memberKey
        var session = member.session
        var roles = member.roles
        while !Task.isCancelled {
            await run(in: session, roles: roles, member: member, key: key, name: name, output: output, logger: logger, moved: moved)
            guard let next = await member.sessions.next(after: session) else { return }
            session = next.session
            roles = next.roles
        }
    }

    /// The chat in one session, until it ends; a host's removal of someone is handled here
    /// (``handle(_:member:name:output:logger:moved:)``).
    private static func run(
        in session: GroupSession<WatchTogetherActivity>, roles: RoleGate<WatchTogetherActivity>?, member: PlaybackMember,
        key: MemberKey, name: String,
        output: EventOutput, logger: Logger, moved: (@Sendable (Invite) -> Void)?
    ) async {
        let chat: ChatChannel<WatchTogetherActivity>
        do {
            chat = try ChatChannel(session: session, key: key, name: name, logger: logger) { outcome in
                handle(outcome, in: session, member: member, name: name, output: output, logger: logger, moved: moved)
            }
        } catch {
            output.notice("\(error): this member does not chat")
            return
        }
        let local = PlaybackParticipantID(name)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await chat.run() }
            // This session's role changes (each session has its own gate).
            if let roles {
                group.addTask {
                    for await var event in roles.events {
                        event.player = local
                        output.print(event)
                    }
                }
            }
            group.addTask {
                for await entry in chat.entries {
                    output.print(event(entry, player: local))
                }
            }
            if isatty(STDIN_FILENO) == 1 {
                group.addTask {
                    for await line in terminalLines() where !ChatText.cleaned(line).isEmpty {
                        do { try await chat.send(line) } catch { output.notice("\(error)") }
                    }
                }
            }
            // The session's end (or the member's) ends the chat.
            for await state in session.states {
                if case .invalidated = state { break }
            }
            group.cancelAll()
        }
    }

    /// A host removed someone (docs/protocol.md, "Removing a member"). Called on the session's read
    /// loop, before the session's end: the move starts here, so the playback finds it when the
    /// session ends.
    static func handle(
        _ outcome: RemovalOutcome, in session: GroupSession<WatchTogetherActivity>, member: PlaybackMember, name: String,
        output: EventOutput, logger: Logger, moved: (@Sendable (Invite) -> Void)?
    ) {
        let local = PlaybackParticipantID(name)
        switch outcome {
        case .moved(let text, let removed, let by):
            let invite: Invite
            do { invite = try Invite(parsing: text) } catch {
                output.notice("a host removed \(removed), but the successor invite sealed to this member is not an invite (\(error)): staying behind")
                return
            }
            output.print(PlaybackEvent(
                type: .moved, realtime: Date().timeIntervalSince1970, player: local, originatorName: removed, detail: "moved"))
            logger.info("moving to the successor session", metadata: ["by": "\(by ?? "?")", "successor": "\(invite.session)"])
            member.sessions.move(to: invite) {
                do {
                    // The successor's own role gate comes with it (made before its join).
                    let next = try await member.openSuccessor(invite)
                    moved?(invite)
                    return next
                } catch {
                    output.notice("could not open the successor session (\(error)): this member stops with the old one")
                    return nil
                }
            }
        case .removed(let by):
            member.sessions.removed(by: by)
            output.print(PlaybackEvent(type: .removed, realtime: Date().timeIntervalSince1970, player: local, originatorName: by))
            // Off the read loop (it runs under the session's lock): stop now, whether or not the host ends the session.
            Task { session.leave() }
        case .leftBehind(let removed, _):
            output.print(PlaybackEvent(
                type: .moved, realtime: Date().timeIntervalSince1970, player: local, originatorName: removed, detail: "left behind"))
        }
    }

    /// A chat entry as an event (docs/events.md, `chat`).
    static func event(_ entry: ChatEntry, player: PlaybackParticipantID) -> PlaybackEvent {
        PlaybackEvent(
            type: .chat, realtime: Date().timeIntervalSince1970, player: player,
            originator: PlaybackParticipantID(entry.sender.description), originatorName: entry.label,
            detail: entry.isHistory ? "history" : nil, text: entry.text, key: entry.key.text, sentAt: entry.sentAt)
    }

    /// The lines typed on the terminal, read on a thread of their own (a blocking read never holds the
    /// cooperative pool); finishes at end of input (Ctrl-D).
    ///
    /// Only while the member is the terminal's foreground job: `coplay host … &` must not be stopped
    /// by SIGTTIN for reading the terminal in the background. SIGTTIN is ignored (a read that races a
    /// move to the background then fails instead of stopping the process), and the foreground is
    /// checked again every half second.
    static func terminalLines() -> AsyncStream<String> {
        signal(SIGTTIN, SIG_IGN)
        return AsyncStream { continuation in
            let thread = Thread {
                while true {
                    guard tcgetpgrp(STDIN_FILENO) == getpgrp() else {
                        Thread.sleep(forTimeInterval: 0.5)
                        continue
                    }
                    guard let line = readLine(strippingNewline: true) else { break }
                    continuation.yield(line)
                }
                continuation.finish()
            }
            thread.start()
        }
    }
}
