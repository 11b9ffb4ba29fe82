import ArgumentParser
import Foundation
import GroupSessions
import Logging
import PlaybackCoordinator
import Synchronization

/// What a `coplay host` / `join` member says about itself when `coplay people` asks: its name, its
/// player and the file it plays. A message of the CLI's own (the coordinator and the browser page
/// ignore it), end-to-end encrypted like every other.
struct CoplayMemberCard: Codable, Sendable, Hashable {
    /// `--name`.
    var name: String
    /// `headless` or `mpv`.
    var player: String
    /// The file the member plays (its name only).
    var file: String?

    /// `coplay people` asks every member for its card.
    struct Request: Codable, Sendable, Hashable {}

    /// Answers every ``Request`` in `session` with `card` until the subscription is cancelled.
    static func answer<Activity>(_ card: CoplayMemberCard, in session: GroupSession<Activity>) -> GroupSessionMessenger.Subscription {
        let messenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        // Handlers run on the session's read loop, never under its lock: a handler may send.
        return messenger.receive(Request.self) { _, _ in try? messenger.send(card) }
    }
}

/// `coplay people [INVITE]`: lists the members of a session with their player, state and delay.
struct PeopleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "people",
        abstract: "List who is in a session: names, players, what each is doing, delays.",
        usage: "coplay people [<invite>] [--json] [<options>]",
        discussion: """
            Joins the session for a moment as a member without a player (as `coplay control` does), \
            listens to the members' presence reports (each sends one a second) and asks the coplay \
            members for their player, then prints one line per member and leaves. The invite comes from \
            --invite-file FILE, COPLAY_INVITE, or the first argument.

            PLAYER is headless or mpv for coplay members, - for others (a browser page). STATE is what \
            the member does: playing or paused (with the group), buffering and the like while it is \
            suspended, "no copy of “TITLE”: sits it out" while the group plays a queue entry the member has no \
            copy of (the others play on; it follows again at the next entry it has), or "other item" when it \
            has not loaded the group's item; "(near copy)" follows when \
            the member plays another encode of the item, in step by timestamp but not frame-identical. DELAY is the largest \
            one-way delay through the relay that member measured lately (- before its first report; for about \
            a minute after a relay restart it counts the messages held meanwhile, and shows as "held during a \
            reconnect"; --json gives the number).

            Examples:
              coplay people --invite-file invite.txt
              coplay people --invite-file invite.txt --json | jq '.members[].name'
            """
    )

    @Argument(help: "The invite (better: --invite-file or COPLAY_INVITE).")
    var invite: String?

    @Flag(help: "Print one JSON object: the session's title, item and state, and its members.")
    var json = false

    @Option(help: ArgumentHelp("How long to listen for the members' reports at most.", valueName: "SECONDS"))
    var listen: Double = 3

    @Option(name: .long, help: "Log level (stderr).")
    var logLevel: String = "notice"

    @OptionGroup(title: "Invite") var inviteOptions: InviteOptions

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    func validate() throws {
        _ = try inviteOptions.invite(argument: invite)
        guard listen.isFinite, (0.5...30).contains(listen) else { throw ValidationError("--listen must be 0.5 to 30 seconds") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    /// One member as listed.
    struct Member: Codable, Sendable {
        var id: String
        var name: String?
        var player: String?
        var file: String?
        var state: String
        var suspended: [String]
        var item: String?
        var delayMs: Double?
        /// `true` when the member plays the group's item from a near copy (another encode, not frame-identical).
        var nearCopy: Bool?
        /// The title of the queue entry the group plays when this member has no copy of it (it sits
        /// the entry out, suspended with `coordinatedPlaybackNotPossible`, and the others play on).
        var missingEntry: String?
    }

    /// The whole listing (`--json`).
    struct Listing: Codable, Sendable {
        var title: String
        /// Where only hosts control: the members the host granted control (by their names when
        /// granted); the holders of the controller invite control too (nothing tells them apart).
        var granted: [String]?
        var item: String?
        var state: String
        var itemTime: Double?
        var rate: Double?
        var members: [Member]
    }

    /// What the listener heard, by participant id.
    final class Heard: Sendable {
        private let state = Mutex<(reports: [String: PresenceReport], cards: [String: CoplayMemberCard])>(([:], [:]))
        func report(_ report: PresenceReport, from id: String) { state.withLock { $0.reports[id] = report } }
        func card(_ card: CoplayMemberCard, from id: String) { state.withLock { $0.cards[id] = card } }
        var snapshot: (reports: [String: PresenceReport], cards: [String: CoplayMemberCard]) { state.withLock { $0 } }
    }

    func run() async throws {
        let invite = try inviteOptions.invite(argument: invite)
        var logger = Logger(label: "coplay.people") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        let listening = Duration.milliseconds(Int(listen * 1000))
        let listing = try await ControlCommand.withCommandMember(
            invite: invite, tls: try relayTLS.configuration(for: invite), logger: logger, name: "people"
        ) { member, coordinator in
            let heard = Heard()
            let messenger = GroupSessionMessenger(session: member.session, deliveryMode: .reliable)
            let presence = messenger.receive(CoordinationMessage.self) { message, context in
                if case .presence(let report) = message { heard.report(report, from: "\(context.source.id)") }
            }
            let cards = messenger.receive(CoplayMemberCard.self) { card, context in heard.card(card, from: "\(context.source.id)") }
            defer {
                presence.cancel()
                cards.cancel()
            }
            try? messenger.send(CoplayMemberCard.Request())
            // Until every member reported (presence comes once a second) and the coplay ones sent their card.
            let start = ContinuousClock.now
            _ = await ControlCommand.poll(for: listening) {
                let others = await coordinator.otherParticipants.map(\.id.rawValue)
                let (reports, cards) = heard.snapshot
                let cardsDone = others.allSatisfy { cards[$0] != nil } || start.duration(to: .now) > .seconds(1)
                return !others.isEmpty && others.allSatisfy { reports[$0] != nil } && cardsDone
            }
            return await Self.listing(member: member, coordinator: coordinator, heard: heard)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            Console.out.line(String(decoding: try encoder.encode(listing), as: UTF8.self))
        } else {
            for line in Self.table(listing) { Console.out.line(line) }
        }
    }

    static func listing(member: PlaybackMember, coordinator: PlaybackCoordinator, heard: Heard) async -> Listing {
        let activity = member.session.activity
        let group = await coordinator.state
        let waiting = await coordinator.isWaiting
        let position = await coordinator.currentItemTime
        let entry = await coordinator.currentEntry
        let (reports, cards) = heard.snapshot
        let groupState: String
        if let group {
            groupState = waiting ? "waiting" : group.rate == 0 ? "paused" : "playing"
        } else {
            groupState = "no state yet"
        }
        var members: [Member] = []
        for participant in await coordinator.otherParticipants {
            let id = participant.id.rawValue
            let report = reports[id]
            let card = cards[id]
            let name = card?.name ?? participant.name ?? report?.name
            if let name, HumanEvents.commandMemberNames.contains(name), card == nil { continue }
            let state: String
            // A member that sits out the entry the group plays: it has no copy of its item.
            let lacks = group?.entry != nil && participant.suspensionReasons.contains(.coordinatedPlaybackNotPossible)
                && report?.items.map { items in !items.contains { $0.item == group?.item } } ?? true
            let missing = lacks ? (entry?.title ?? "the playing entry") : nil
            if let missing {
                state = "no copy of \u{201C}\(missing)\u{201D}: sits it out"
            } else if participant.isSuspended {
                state = participant.suspensionReasons.map { HumanEvents.reasonText($0.description).replacingOccurrences(of: "is ", with: "") }
                    .joined(separator: ", ")
            } else if let item = report?.item, let groupItem = group?.item, item != groupItem {
                state = "other item"
            } else {
                state = groupState
            }
            let groupItem = group?.item ?? activity.item
            let near = report?.items?.contains { $0.item == groupItem && $0.frameIdentical == false } == true
            members.append(Member(
                id: id, name: name, player: card?.player, file: card?.file, state: state,
                suspended: participant.suspensionReasons.map(\.description), item: report?.item,
                delayMs: report.map { Double($0.observedDelay.components.attoseconds) / 1e15 + Double($0.observedDelay.components.seconds) * 1000 },
                nearCopy: near ? true : nil, missingEntry: missing))
        }
        let granted = member.roles.map { roles in
            let book = roles.book
            return book.granted.compactMap { book.statements[$0]?.name }.sorted()
        }
        return Listing(
            title: activity.title, granted: granted, item: group?.item ?? activity.item, state: groupState, itemTime: position,
            rate: group?.rate, members: members)
    }

    /// A member's delay for a person. Above the coordinator's largest lead (2 s) it is no path's delay
    /// but messages held while the relay restarted (the report is a maximum over about a minute).
    static func delayText(_ milliseconds: Double) -> String {
        milliseconds > 2000 ? "- (held during a reconnect)" : String(format: "%.1f ms", milliseconds)
    }

    /// The listing as lines for a person.
    static func table(_ listing: Listing) -> [String] {
        var head = "\u{201C}\(listing.title)\u{201D}: \(listing.state)"
        if let time = listing.itemTime { head += " at \(TimeText.position(time))" }
        if let rate = listing.rate, rate != 0, rate != 1 { head += " (\(HumanEvents.number(rate))×)" }
        let count = listing.members.count
        head += count == 0 ? ", nobody else here" : ", \(count) \(count == 1 ? "member" : "members")"
        if let granted = listing.granted {
            head += "; only hosts control" + (granted.isEmpty ? "" : " (and \(granted.joined(separator: ", ")), granted control)")
        }
        guard count > 0 else { return [head] }
        let rows = [["NAME", "PLAYER", "STATE", "DELAY"]] + listing.members.map { member in
            [
                member.name ?? "member \(member.id.suffix(4))", member.player ?? "-",
                member.nearCopy == true ? "\(member.state) (near copy: not frame-identical)" : member.state,
                member.delayMs.map(delayText) ?? "-",
            ]
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return [head] + rows.map { row in
            row.enumerated().map { column, cell in
                column == 3 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
    }
}
