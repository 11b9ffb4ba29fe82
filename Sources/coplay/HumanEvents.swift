import Foundation
import PlaybackCoordinator
import Synchronization

/// Playback events as a person reads them (`coplay host` / `join` on a terminal, or `--events text`):
/// the local clock time, then who did what, with members' names, media titles and positions as
/// `h:mm:ss`.
///
/// ```
/// 21:04:05  you joined "cfr-25.mp4" as alice
/// 21:04:05  host is here
/// 21:04:05  the group is paused at 0:00:00 (host)
/// 21:04:09  host played from 0:00:00
/// 21:04:15  bob jumped to 0:01:30
/// 21:04:20  bob: pizza's here
/// ```
///
/// A member's name comes in its first presence report, a moment after it joined: a `joined` line
/// without a name waits for it (up to ``nameWait``), so members show by name, not by id. Members that
/// only send a command or look (`coplay control`, `coplay people`, `coplay queue`) come and go without a line.
final class HumanEvents: Sendable {
    /// How long a `joined` line waits for the member's name before it is printed with a short id.
    static let nameWait: Duration = .seconds(3)
    /// Names of members that only send a command or list the people: their coming and going is not news.
    static let commandMemberNames: Set<String> = ["control", "people", "queue"]

    private struct Pending {
        var member: PlaybackParticipantID
        var realtime: Double
        var since: ContinuousClock.Instant
    }

    private struct State {
        var local: PlaybackParticipantID?
        var localName: String?
        var sessionTitle: String?
        var titles: [String: String] = [:]
        var joinedAt: Double?
        var sawState = false
        var pending: [Pending] = []
        var names: [PlaybackParticipantID: String] = [:]
        var coordinator: PlaybackCoordinator?
        var flusher: Task<Void, Never>?
    }

    private let state = Mutex(State())
    private let colors: Bool
    private let frames: Bool

    /// - Parameters:
    ///   - titles: media titles by item identifier (the files this member has).
    ///   - frames: print frame lines and the player's own stops and trims (`--frames`).
    init(titles: [String: String], frames: Bool) {
        self.frames = frames
        state.withLock { $0.titles = titles }
        let environment = ProcessInfo.processInfo.environment
        colors = Console.out.isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }

    deinit { state.withLock { $0.flusher?.cancel() } }

    /// The member is in the session: its id, its name, and the session's title and item.
    func joined(as local: PlaybackParticipantID, name: String, sessionTitle: String, sessionItem: String) {
        state.withLock {
            $0.local = local
            $0.localName = name
            $0.sessionTitle = sessionTitle
            if $0.titles[sessionItem] == nil { $0.titles[sessionItem] = sessionTitle }
        }
    }

    /// The coordinator runs: names of members that joined without one are looked up there.
    func attach(_ coordinator: PlaybackCoordinator) {
        state.withLock { state in
            state.coordinator = coordinator
            guard state.flusher == nil else { return }
            state.flusher = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(200))
                    await self?.flush()
                }
            }
        }
    }

    /// Stops looking up names.
    func stop() { state.withLock { $0.flusher?.cancel() } }

    /// A line that is not an event (the connection to the relay), stamped with the time now.
    func notice(_ text: String) {
        emit(realtime: Date().timeIntervalSince1970, text)
    }

    func print(_ event: PlaybackEvent) {
        // A chat label is not a presence name: a member that only sent a message (`coplay chat`)
        // stays unnamed, so its coming and going prints nothing.
        if event.type != .chat, let name = event.originatorName, let id = event.originator {
            state.withLock { $0.names[id] = name }
        }
        switch event.type {
        case .joined: joined(event)
        case .left: left(event)
        case .queueChanged:
            // Entries this member has no copy of are named by their titles in the queue.
            learnTitles()
            if let text = describe(event) { emit(realtime: event.realtime, text) }
        case .chat:
            // History shows when it was said, not when it arrived.
            let history = event.detail == "history"
            let by = label(event.originator, name: event.originatorName)
            emit(realtime: history ? event.sentAt ?? event.realtime : event.realtime, "\(bold(by)): \(event.text ?? "")\(history ? dim("  (before you joined)") : "")")
        default:
            if let text = describe(event) { emit(realtime: event.realtime, text) }
        }
    }

    // MARK: Membership

    private func joined(_ event: PlaybackEvent) {
        guard let member = event.originator else { return }
        let (isLocal, name) = state.withLock { state -> (Bool, String?) in
            if member == state.local {
                state.joinedAt = event.realtime
                return (true, state.localName)
            }
            return (false, state.names[member])
        }
        if isLocal {
            let title = state.withLock { $0.sessionTitle } ?? "the session"
            emit(realtime: event.realtime, "you joined \(quoted(title)) as \(bold(name ?? member.rawValue))")
            return
        }
        guard let name else {
            state.withLock { $0.pending.append(Pending(member: member, realtime: event.realtime, since: .now)) }
            return
        }
        printJoin(member: member, name: name, realtime: event.realtime)
    }

    private func printJoin(member: PlaybackParticipantID, name: String?, realtime: Double) {
        if let name, Self.commandMemberNames.contains(name) { return }
        let label = name ?? "member \(member.rawValue.suffix(4))"
        // Members listed within a moment of our own join were there before us.
        let here = state.withLock { state in state.joinedAt.map { realtime - $0 < 2 } ?? true }
        emit(realtime: realtime, here ? "\(bold(label)) is here" : "\(bold(label)) joined")
    }

    private func left(_ event: PlaybackEvent) {
        guard let member = event.originator else { return }
        let (wasPending, name) = state.withLock { state -> (Bool, String?) in
            let pending = state.pending.contains { $0.member == member }
            state.pending.removeAll { $0.member == member }
            return (pending, event.originatorName ?? state.names[member])
        }
        // A member that came and went before saying its name: a command, not a person.
        if wasPending && name == nil { return }
        if let name, Self.commandMemberNames.contains(name) { return }
        emit(realtime: event.realtime, "\(bold(name ?? "member \(member.rawValue.suffix(4))")) left")
    }

    /// Prints the `joined` lines whose member's name is now known, or that waited long enough.
    private func flush() async {
        guard let coordinator = state.withLock({ $0.coordinator }), state.withLock({ !$0.pending.isEmpty }) else { return }
        var known: [PlaybackParticipantID: String] = [:]
        for participant in await coordinator.otherParticipants {
            if let name = participant.name { known[participant.id] = name }
        }
        let ready = state.withLock { state -> [(Pending, String?)] in
            for (id, name) in known { state.names[id] = name }
            var ready: [(Pending, String?)] = []
            state.pending.removeAll { pending in
                let name = state.names[pending.member]
                guard name != nil || pending.since.duration(to: .now) >= Self.nameWait else { return false }
                ready.append((pending, name))
                return true
            }
            return ready
        }
        for (pending, name) in ready { printJoin(member: pending.member, name: name, realtime: pending.realtime) }
    }

    /// Takes the titles of the queue's entries (those of files this member has stay as they are).
    private func learnTitles() {
        guard let coordinator = state.withLock({ $0.coordinator }) else { return }
        Task { [weak self] in
            let entries = await coordinator.queue.entries
            self?.state.withLock { state in
                for entry in entries where state.titles[entry.item] == nil { state.titles[entry.item] = entry.title }
            }
        }
    }

    // MARK: Events

    private func describe(_ event: PlaybackEvent) -> String? {
        let by = bold(label(event.originator, name: event.originatorName))
        let at = event.itemTime.map(TimeText.position) ?? "?"
        switch event.type {
        case .play, .pause, .seek, .rate, .item:
            let first = state.withLock { state in
                defer { state.sawState = true }
                return !state.sawState
            }
            let rate = event.rate ?? 0
            if first {
                let item = event.item.map { " \(quoted(title($0)))" } ?? ""
                let how = rate == 0 ? "paused at \(at)" : "playing\(speed(rate)) from \(at)"
                // Right after joining, the names of the members already there are not known yet.
                let known = event.originatorName != nil || event.originator == state.withLock({ $0.local })
                let who = known ? " (last command by \(by))" : ""
                return "the group\(item) is \(how)\(who)"
            }
            switch event.type {
            case .play: return "\(by) played\(speed(rate)) from \(at)"
            case .pause: return "\(by) paused at \(at)"
            case .seek: return "\(by) jumped to \(at)\(rate == 0 ? " (paused)" : "")"
            case .rate: return rate == 0 ? "\(by) paused at \(at)" : "\(by) set the speed to \(Self.number(rate))× at \(at)"
            default: return "\(by) switched to \(quoted(title(event.item ?? ""))) at \(at)\(rate == 0 ? " (paused)" : "")"
            }
        case .next, .previous, .jump:
            let verb = event.type == .jump ? "jumped" : "moved"
            let to = event.type == .jump ? "to" : "on to the \(event.type.rawValue) entry,"
            return "\(by) \(verb) \(to) \(quoted(title(event.item ?? "")))"
        case .itemChanged:
            // A command's own line said it; an entry's end is nobody's command.
            return event.reason == "end" ? "next in the queue: \(quoted(title(event.item ?? "")))" : nil
        case .queueChanged:
            guard event.originator != nil else { return "received the group's queue" }
            // The edit in words (`CoordinatorCore.describe`) reads as a verb, except the modes.
            let detail = event.detail ?? "changed the queue"
            if detail.hasPrefix("repeat ") { return "\(by) set repeat to \(detail.dropFirst("repeat ".count))" }
            if detail.hasPrefix("shuffle ") { return "\(by) turned \(detail)" }
            return "\(by) \(detail)"
        case .itemEnded:
            return "\(quoted(title(event.item ?? ""))) ended at \(at): everyone holds its last frame"
        case .commandIgnored:
            return "not following \(by): the group plays \(quoted(title(event.item ?? ""))), which this player does not have"
        case .missingEntry:
            let what = event.detail.map(quoted) ?? quoted(title(event.item ?? ""))
            return "you have no copy of \(what): the others play it; you follow again at the next entry you have"
        case .suspensionBegan:
            let isLocal = event.originator != nil && event.originator == state.withLock({ $0.local })
            // This member's own: the missingEntry line said it.
            if isLocal && event.reason == "coordinatedPlaybackNotPossible" { return nil }
            let what = isLocal ? "are suspended (\(event.reason ?? "no reason"))" : Self.reasonText(event.reason)
            return event.waits == true ? "\(by) \(what): everyone waits at \(at)" : "\(by) \(what) (the group plays on)"
        case .suspensionEnded:
            if event.detail == "member left" { return "\(by) left while suspended: the group plays on" }
            if event.timedOut == true { return "the group stopped waiting for \(by) (it took too long)" }
            let isLocal = event.originator != nil && event.originator == state.withLock({ $0.local })
            if event.reason == "coordinatedPlaybackNotPossible" {
                return isLocal ? "you follow the group again" : "\(by) follows the group again"
            }
            return event.waits == true ? "\(by) \(isLocal ? "are" : "is") ready: everyone plays on" : nil
        case .frame:
            return "frame \(event.index.map(String.init) ?? "?") at \(Self.precise(event.pts ?? event.itemTime ?? .nan))"
        case .stopped:
            guard frames else { return nil }
            let why = event.detail == "waiting" ? "waiting" : "stopped"
            return "\(why) on frame \(event.index.map(String.init) ?? "?") at \(Self.precise(event.itemTime ?? .nan))"
        case .correction:
            return correction(event)
        case .timeSource:
            return "the clock now follows another relay node (\(event.detail ?? ""))"
        case .unsupportedMessage:
            return "\(by) sent a \(event.detail ?? "coordination message this coplay cannot read: update coplay")"
        case .nearCopy:
            let isLocal = event.originator != nil && event.originator == state.withLock({ $0.local })
            let copy = isLocal ? "your copy" : "\(by)'s copy"
            return "\(copy) of \(quoted(title(event.item ?? ""))) is another encode (\(event.detail ?? "the same duration")): "
                + "it plays in step by timestamp but is not frame-identical"
        case .caughtUp:
            // "alice caught up after 20 s away" (its laptop slept, its process was stopped).
            return PlaybackNotices.text(for: event, local: state.withLock { $0.local }, titles: [:])
        case .moved:
            let removed = bold(event.originatorName ?? "a member")
            return event.detail == "left behind"
                ? "\(removed) was removed: the others moved to a new session, and this member was not given its invite"
                : "\(removed) was removed: everyone else moved to a new session (playing on)"
        case .removed:
            return "you were removed from this session by \(bold(event.originatorName ?? "a host"))"
        case .roleChanged:
            let name = event.text ?? "a member"
            return event.detail == "grant" ? "\(name) may control the session now" : "\(name) no longer controls the session"
        case .messageRejected:
            return frames ? "ignored a message from \(by): \(event.reason ?? "?") (\(event.count ?? 0) so far)" : nil
        case .joined, .left, .chat:
            return nil
        }
    }

    private func correction(_ event: PlaybackEvent) -> String? {
        let error = event.errorMs.map { String(format: "%+.1f ms", $0) } ?? ""
        switch event.detail {
        case "user pause": return "you paused in mpv: pausing everyone"
        case "user play": return "you pressed play in mpv: playing for everyone"
        case "user speed": return "you changed the speed in mpv to \(Self.number(event.rate ?? 1))×: changing it for everyone"
        case "user seek": return "you jumped in mpv to \(event.itemTime.map(TimeText.position) ?? "?"): moving everyone"
        case "user next": return "you pressed next in mpv: moving everyone to the queue's next entry"
        case "user previous": return "you pressed previous in mpv: moving everyone to the queue's previous entry"
        case "user jump": return "you chose another entry in mpv's playlist: moving everyone there"
        case "seek": return "resynchronized with a jump (was \(error) off)"
        default: return frames ? "\(event.detail ?? "correction") \(error)" : nil
        }
    }

    // MARK: Formatting

    private func label(_ member: PlaybackParticipantID?, name: String?) -> String {
        let local = state.withLock { $0.local }
        if let member, member == local { return "you" }
        if let name { return name }
        guard let member else { return "someone" }
        return state.withLock { $0.names[member] } ?? "member \(member.rawValue.suffix(4))"
    }

    private func title(_ item: String) -> String {
        state.withLock { $0.titles[item] } ?? "item \(item.prefix(14))…"
    }

    private func speed(_ rate: Double) -> String { rate == 1 || rate == 0 ? "" : " at \(Self.number(rate))×" }

    private func emit(realtime: Double, _ text: String) {
        let time = TimeText.clock(realtime)
        Console.out.line(colors ? "\u{1B}[2m\(time)\u{1B}[0m  \(text)" : "\(time)  \(text)")
    }

    private func bold(_ text: String) -> String { colors ? "\u{1B}[1m\(text)\u{1B}[0m" : text }

    private func dim(_ text: String) -> String { colors ? "\u{1B}[2m\(text)\u{1B}[0m" : text }

    private func quoted(_ text: String) -> String { "\u{201C}\(text)\u{201D}" }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%g", value)
    }

    /// `h:mm:ss.mmm`.
    static func precise(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "?" }
        let millis = Int((seconds * 1000).rounded())
        return String(format: "%d:%02d:%02d.%03d", millis / 3_600_000, millis / 60_000 % 60, millis / 1000 % 60, millis % 1000)
    }

    /// What a suspension reason means, as "<member> is …".
    static func reasonText(_ reason: String?) -> String {
        switch reason {
        case "buffering": "is buffering"
        case "stallRecovery": "is recovering from a stall"
        case "userActionRequired": "needs its person to act"
        case "userChangingTime": "is changing the time"
        case "interruption": "was interrupted"
        case "playingInterstitial": "is playing an interstitial"
        case "coordinatedPlaybackNotPossible": "cannot play in step right now"
        case let other?: "is suspended (\(other))"
        case nil: "is suspended"
        }
    }
}
