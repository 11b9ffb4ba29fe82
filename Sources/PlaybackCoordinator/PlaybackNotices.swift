/// Short notices for people watching, made from playback events: what an mpv member shows on its
/// on-screen display and the page over its video ("alice paused at 12:34", "waiting for carol
/// (loading)", "dave joined").
///
/// Feed it every event in order; it answers the text to show, or `nil`. It says nothing of what a
/// member already saw on joining (the group's state as it was, the members already there), and
/// nothing of the local player's own corrections. ``Level/commands`` keeps the commands (play, pause,
/// seek, speed, item and the queue's), ``Level/off`` nothing. The page's `notices.js` says the same
/// in the same words: both are checked against `Tests/Vectors/notices/notices.json`.
///
/// ```swift
/// var notices = PlaybackNotices(level: .all, local: me)
/// for await event in coordinator.events {
///     if let text = notices.notice(for: event) { show(text) }
/// }
/// ```
public struct PlaybackNotices: Sendable {
    /// Which notices are shown.
    public enum Level: String, Sendable, CaseIterable, Codable {
        /// Every notice: commands, people joining and leaving, waits, catching up, chat.
        case all
        /// Only commands: play, pause, seek, speed, item, and the queue's (next, previous, jump,
        /// edits, the next entry at an entry's end).
        case commands
        /// None.
        case off
    }

    /// Which notices are shown.
    public var level: Level
    /// The local member: its own actions read "you …", its own joining and leaving are not news.
    public var local: PlaybackParticipantID?
    /// Titles by queue entry id or item identifier (entries first).
    public var titles: [String: String]

    private var ownJoin: Double?
    private var sawState = false

    /// Creates a formatter.
    public init(level: Level = .all, local: PlaybackParticipantID? = nil, titles: [String: String] = [:]) {
        self.level = level
        self.local = local
        self.titles = titles
    }

    /// The event types ``Level/commands`` keeps.
    public static let commandTypes: Set<String> = [
        "play", "pause", "seek", "rate", "item", "next", "previous", "jump", "queueChanged", "itemChanged",
    ]

    /// The notice for `event` (the next in order), or `nil` when it is none at this level.
    public mutating func notice(for event: PlaybackEvent) -> String? {
        let isLocal = event.originator != nil && event.originator == local
        switch event.type {
        case .joined where isLocal:
            ownJoin = event.referenceTime ?? ownJoin ?? 0
            return nil
        case .joined:
            // Members listed when this one joined were there already: not news.
            guard let ownJoin, let at = event.referenceTime, at > ownJoin else { return nil }
        case .play, .pause, .seek, .rate, .item:
            // The first state is what the group was doing when this member came (or its own start).
            defer { sawState = true }
            guard sawState else { return nil }
        default:
            break
        }
        guard level != .off, level == .all || Self.commandTypes.contains(event.type.rawValue) else { return nil }
        return Self.text(for: event, local: local, titles: titles)
    }

    /// The words for one event, without the state ``notice(for:)`` keeps (first state, members
    /// already there) and without a level: `nil` for events that are no notice.
    ///
    /// - Parameters:
    ///   - event: the event.
    ///   - local: the local member (its actions read "you …").
    ///   - titles: titles by queue entry id or item identifier.
    public static func text(for event: PlaybackEvent, local: PlaybackParticipantID?, titles: [String: String]) -> String? {
        let isLocal = event.originator != nil && event.originator == local
        let who = isLocal ? "you" : (event.originatorName ?? event.originator.map { "member \($0.rawValue.suffix(4))" } ?? "someone")
        let at = position(event.itemTime ?? 0)
        let title = event.entry.flatMap { titles[$0] } ?? event.item.flatMap { titles[$0] }
        switch event.type {
        case .play:
            let rate = event.rate ?? 1
            return rate == 1 ? "\(who) played from \(at)" : "\(who) played at \(number(rate))× from \(at)"
        case .pause:
            return "\(who) paused at \(at)"
        case .seek:
            return "\(who) moved to \(at)"
        case .rate:
            let rate = event.rate ?? 0
            return rate == 0 ? "\(who) paused at \(at)" : "\(who) changed the speed to \(number(rate))×"
        case .item:
            return "\(who) switched to \(title.map(quoted) ?? "another video")"
        case .next:
            return "\(who) skipped to \(title.map(quoted) ?? "the next entry")"
        case .previous:
            return "\(who) went back to \(title.map(quoted) ?? "the previous entry")"
        case .jump:
            return "\(who) jumped to \(title.map(quoted) ?? "another entry")"
        case .itemChanged:
            guard event.reason == "end" else { return nil }  // a command's own notice said it
            return "next: \(title ?? "the next entry")"
        case .queueChanged:
            guard event.originator != nil else { return nil }  // received on joining
            return "\(who) \(queueEdit(event.detail ?? ""))"
        case .itemEnded:
            return "\(title.map(quoted) ?? "the video") ended"
        case .joined:
            return isLocal ? nil : "\(who) joined"
        case .left:
            return isLocal ? nil : "\(who) left"
        case .suspensionBegan:
            guard event.waits == true else { return nil }
            return "waiting for \(who) (\(waitReason(event.reason)))"
        case .suspensionEnded:
            guard event.waits == true, event.detail != "member left" else { return nil }
            if event.timedOut == true { return "stopped waiting for \(who)" }
            return isLocal ? "you are ready" : "\(who) is ready"
        case .caughtUp:
            let seconds = Int((abs(event.errorMs ?? 0) / 1000).rounded())
            return (event.errorMs ?? 0) < 0
                ? "\(who) caught up after \(seconds) s away" : "\(who) was \(seconds) s ahead and jumped back in step"
        case .chat:
            // A message as it came (history from before this member joined is not news).
            guard event.detail != "history", let text = event.text else { return nil }
            return "\(who): \(text)"
        case .roleChanged:
            let name = event.text ?? "a member"
            return event.detail == "grant" ? "\(name) may control the session now" : "\(name) no longer controls the session"
        default:
            return nil
        }
    }

    /// A position as people read it: `12:34` under an hour, `1:02:03` from an hour on (whole
    /// seconds, rounded down: the second on screen).
    public static func position(_ seconds: Double) -> String {
        let whole = seconds.isFinite ? max(0, Int(seconds.rounded(.down))) : 0
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        let ss = s < 10 ? "0\(s)" : "\(s)"
        if h > 0 { return "\(h):\(m < 10 ? "0\(m)" : "\(m)"):\(ss)" }
        return "\(m):\(ss)"
    }

    /// A rate as people read it: `1.25`, `2`, `0.5` (at most four decimals).
    public static func number(_ value: Double) -> String {
        let scaled = Int((value * 10_000).rounded())
        var text = "\(scaled / 10_000)"
        var fraction = scaled % 10_000
        guard fraction != 0 else { return text }
        var digits = ""
        for _ in 0..<4 {
            digits += "\(fraction / 1000)"
            fraction = fraction % 1000 * 10
        }
        while digits.hasSuffix("0") { digits.removeLast() }
        text += "." + digits
        return text
    }

    private static func quoted(_ text: String) -> String { "\u{201C}\(text)\u{201D}" }

    /// A queue edit as its event's `detail` words it (`CoordinatorCore.describe`), shortened.
    static func queueEdit(_ detail: String) -> String {
        let words = detail.split(separator: " ")
        func entries(_ count: Substring) -> String { count == "1" ? "1 entry" : "\(count) entries" }
        switch words.first {
        case "added" where words.count > 1: return "added \(entries(words[1]))"
        case "removed" where words.count > 1: return "removed \(entries(words[1]))"
        case "moved": return "moved an entry"
        case "cleared": return "cleared the queue"
        case "repeat" where words.count > 1: return "set repeat to \(words[1])"
        case "shuffle" where words.count > 1: return "turned shuffle \(words[1])"
        default: return "changed the queue"
        }
    }

    /// Why the group waits, in a word or two.
    static func waitReason(_ reason: String?) -> String {
        switch reason {
        case "buffering": "loading"
        case "stallRecovery": "stalled"
        case "userChangingTime": "changing the time"
        case "interruption": "interrupted"
        case "userActionRequired": "needs to act"
        case "playingInterstitial": "interstitial"
        case let other? where other.hasPrefix("custom:"): String(other.dropFirst("custom:".count))
        case let other?: other
        case nil: "suspended"
        }
    }
}
