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
    /// Runs the chat of `member` until cancelled or the session ends, signing with the member's key
    /// (``PlaybackMember/memberKey``: the name's key from the state directory when the person gave
    /// a name, ``MemberKeyStore``), and prints the session's role changes (where only hosts control).
    ///
    /// - Parameters:
    ///   - name: the member's name (``ChatText`` cleans it).
    static func run(member: PlaybackMember, name: String, output: EventOutput, logger: Logger) async {
        let key = member.memberKey
        let chat: ChatChannel<WatchTogetherActivity>
        do {
            chat = try ChatChannel(session: member.session, key: key, name: name, logger: logger)
        } catch {
            output.notice("\(error): this member does not chat")
            return
        }
        let local = PlaybackParticipantID(name)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await chat.run() }
            if let roles = member.roles {
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
            for await state in member.session.states {
                if case .invalidated = state { break }
            }
            group.cancelAll()
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
