import ArgumentParser
import Foundation
import GroupSessions
import Logging
import PlaybackCoordinator

/// Options shared by `coplay host` and `coplay join`.
struct PlaybackCommandOptions: ParsableArguments {
    @Option(name: .long, help: "Your name in events (default: host, or player-<pid>).")
    var name: String?

    @Option(
        name: .long,
        help: "How to print events: text (lines for a person: names, titles, h:mm:ss) or jsonl (JSON Lines, docs/events.md). Default: text on a terminal, jsonl when piped or redirected.")
    var events: EventFormat?

    @Flag(name: .long, help: "Also print one event per presented frame.")
    var frames = false

    @Option(
        name: .customLong("item"),
        help: ArgumentHelp(
            "Another media file this player can switch to when the group changes item (`coplay control INVITE item ID`, ID = its stream identity as `coplay probe` prints it). Repeatable.",
            valueName: "file"))
    var items: [String] = []

    @Option(
        name: .customLong("media-dir"),
        help: ArgumentHelp(
            "A folder of your media, searched recursively: every video file in it is a copy this member can play, found by its stream identity (a remux in another container counts). Identified once and cached ($XDG_CACHE_HOME/coplay/fingerprints.json), so the next start is instant. Repeatable.",
            valueName: "dir"))
    var mediaDirs: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "How long to keep trying to reach the relay after losing it (a restart, a network change) before giving up: seconds, 1 to 86400.",
            valueName: "seconds"))
    var reconnectFor: Double = 30

    @Option(name: .long, help: "Log level (stderr): trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
        if let name, name.isEmpty { throw ValidationError("--name must not be empty") }
        guard reconnectFor.isFinite, (1...86400).contains(reconnectFor) else {
            throw ValidationError("--reconnect-for needs seconds between 1 and 86400 (got \(reconnectFor))")
        }
        do { try MediaFolderScan.check(mediaDirs) } catch { throw ValidationError("\(error)") }
    }

    /// How the member reconnects: ``ReconnectPolicy``'s defaults, giving up after `--reconnect-for`.
    var reconnectPolicy: ReconnectPolicy {
        var policy = ReconnectPolicy()
        policy.giveUpAfter = .secondsRounded(reconnectFor)
        return policy
    }

    /// The member's copies: `named` files and the `--item` files (probed in full), then the video files
    /// of the `--media-dir` folders (through the fingerprint cache; a line on standard error says what
    /// the scan found, and long scans report progress there).
    func copies(named: [String]) async throws -> MemberMedia {
        var media = MemberMedia()
        for path in named + items { media.copies.append(try await MemberMedia.named(path)) }
        guard !mediaDirs.isEmpty else { return media }
        var cache = FingerprintCache()
        let result = try await MediaFolderScan.scan(mediaDirs, cache: &cache) { Console.err.line("coplay: \($0)") }
        Console.err.line("coplay: \(result.summary(mediaDirs))")
        let known = Set(media.copies.map(\.path).map { URL(fileURLWithPath: $0).standardizedFileURL.path })
        media.copies += MemberMedia.found(result).filter { !known.contains($0.path) }
        return media
    }

    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        return logger
    }

    /// How events are printed for a member playing `media` (``EventFormat/resolved(_:)``).
    func output(media: [(timeline: MediaTimeline, path: String)]) -> EventOutput {
        let format = EventFormat.resolved(events)
        var output = EventOutput(format: format, frames: frames)
        if format == .text { output.human = HumanEvents(titles: MemberRunner.titles(media), frames: frames) }
        return output
    }

    static func invite(_ text: String) throws -> Invite {
        do { return try Invite(parsing: text) } catch {
            throw ValidationError(
                "'\(text.prefix(60))\(text.count > 60 ? "…" : "")' is not a coplay invite (coplay://HOST:PORT/SESSION?…#SECRET, as coplay host prints it): \(error)")
        }
    }
}
