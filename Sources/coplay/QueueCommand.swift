import ArgumentParser
import Foundation
import Logging
import PlaybackCoordinator

/// `coplay queue INVITE [--json]`: prints the session's queue (joins as a member without a player,
/// asks for the queue, leaves).
struct QueueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue",
        abstract: "Print a session's queue: position, title, duration, who added it, which entry plays.",
        discussion: """
            Joins the session as a member without a player, receives the group's queue from a member \
            (end-to-end encrypted, like everything the members say), prints it and leaves. Positions are \
            those `coplay control INVITE jump N` takes, in the order the group plays (shuffled, when \
            shuffle is on). Who added an entry is the name that member had (--name; `control` for \
            `coplay control … queue add`). --json prints one object: the entries with their ids, item \
            identities and who added them (`addedBy`, the member's id, and `addedByName`), the repeat \
            mode, the shuffle and the playing entry. Edit the queue with `coplay control INVITE queue …`.

            Examples:
              coplay queue --invite-file invite.txt
              coplay queue --invite-file invite.txt --json
            """)

    @Argument(help: "The invite (unless --invite-file or COPLAY_INVITE gives it).")
    var invite: String?

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Option(name: .long, help: "Log level (stderr).")
    var logLevel: String = "notice"

    @OptionGroup(title: "Invite") var inviteOptions: InviteOptions

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    func validate() throws {
        _ = try inviteOptions.invite(argument: invite)
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    func run() async throws {
        let invite = try inviteOptions.invite(argument: self.invite)
        var logger = Logger(label: "coplay.queue") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        let (queue, playing) = try await ControlCommand.withCommandMember(
            invite: invite, tls: try relayTLS.configuration(for: invite), logger: logger, name: "queue"
        ) { _, coordinator in
            guard await ControlCommand.poll(for: .seconds(5), { await coordinator.hasQueue }) else {
                throw PlaybackCoordinatorError.queueNotReceived
            }
            return (await coordinator.queue, await coordinator.state?.entry)
        }
        Console.out.line(json ? Self.json(queue, playing: playing) : Self.table(queue, playing: playing))
    }

    /// The queue for a person: one line per entry, `▶` before the playing one.
    static func table(_ queue: PlayQueue, playing: String?) -> String {
        let order = queue.playOrder
        var lines = ["\(order.count) \(order.count == 1 ? "entry" : "entries"), repeat \(queue.repeatMode.rawValue), shuffle \(queue.shuffleSeed == nil ? "off" : "on")"]
        for (index, entry) in order.enumerated() {
            let mark = entry.id == playing ? "▶" : " "
            let length = entry.duration.map(TimeText.position) ?? "?"
            lines.append("\(mark) \(String(format: "%3d", index + 1))  \(entry.title)  \(length)  added by \(entry.addedByLabel)")
        }
        if order.isEmpty { lines.append("(the queue is empty: a session hosted with one file plays that file alone)") }
        return lines.joined(separator: "\n")
    }

    /// The queue as one JSON object.
    static func json(_ queue: PlayQueue, playing: String?) -> String {
        let entries: [[String: Any]] = queue.playOrder.enumerated().map { index, entry in
            var object: [String: Any] = [
                "position": index + 1, "id": entry.id, "item": entry.item, "title": entry.title, "addedBy": entry.addedBy.rawValue,
                "playing": entry.id == playing,
            ]
            if let duration = entry.duration { object["duration"] = duration }
            if let frameRate = entry.frameRate { object["frameRate"] = frameRate }
            if let name = entry.addedByName { object["addedByName"] = name }
            return object
        }
        var object: [String: Any] = ["entries": entries, "repeat": queue.repeatMode.rawValue, "shuffle": queue.shuffleSeed != nil]
        if let playing { object["playing"] = playing }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
