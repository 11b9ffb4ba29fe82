import ArgumentParser
import Foundation
import GroupChat
import GroupSessions
import Logging
import MediaProbe
import NIOSSL
import PlaybackCoordinator
import Synchronization

/// `coplay control INVITE ACTION [VALUE]`: sends one playback command to a session (or holds a
/// suspension for a while), then exits.
struct ControlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "control",
        abstract: "Send one command to a playback session: play, pause, seek TIME, rate R, item ID, suspend SECONDS, a queue command or edit, or remove NAME.",
        usage: "coplay control [<invite>] <action> [<value>] [<options>]",
        discussion: """
            ACTION is one of: play, pause, seek TIME, rate R, item ID, suspend SECONDS, or a queue command \
            (next, previous, jump N, repeat MODE, shuffle on|off, queue add|remove|move|clear; below); one \
            command per run. \
            The invite comes from --invite-file FILE (as `coplay host --invite-file FILE` \
            writes it), from COPLAY_INVITE, or as the first argument (where `ps` shows it to every local user).

            Joins the session as a member without a player, reads its current playback state, proposes \
            the command (scheduled on the relay's clock a little in the future, so every member applies \
            it at the same instant), waits for the relay to confirm it, and leaves. Exits non-zero if the \
            relay is down, refuses the invite, or the session has no playback state.

            seek TIME takes seconds (90, 2.5), M:SS (1:30) or H:MM:SS (1:02:03). rate R is 0 (paused) or \
            between 0.0625 and 16 (what every player coplay drives can present). item ID is a stream \
            identity as `coplay probe` prints it (v3:…; a file fingerprint, v2:…, still works for members with those bytes). The group does not know which members loaded that \
            item (host/join --item): a member without it keeps its current item and ignores the group's \
            commands until the group returns to an item it has.

            Queue commands (a session hosted with several files, `coplay host A B C`): next, previous, \
            jump N (N is a position as `coplay queue` prints it), repeat off|one|all, shuffle on|off. The \
            group moves from the start of the chosen entry, playing or paused as it was.

            Queue edits: queue add FILE… [--next] probes the files (as `coplay host` does) and adds them \
            at the end, or right after the playing entry with --next; queue remove N… removes the \
            entries at those positions; queue move N M moves entry N to position M; queue clear empties \
            the queue (the playing entry plays to its end). Positions are those `coplay queue` prints; \
            the command reads the group's queue first and names the entries by their ids, so an edit \
            someone makes at the same moment cannot make it act on another entry. Members play an entry \
            from their own copy (join FILE…, --item, --media-dir): a member without one sits it out \
            while the others play on, and rejoins at the next entry it has. A missing file, a file that \
            is not playable video, or a position the queue does not have is an error (non-zero exit).

            remove NAME (a session hosted with --control hosts, and its controller invite): removes the member \
            NAME (as people see it: alice, or alice#3f9a2c when several use the name). Everyone else moves to \
            a new session under a fresh secret and host key, which each of them receives sealed to its own \
            key, and plays on without a jump; the removed member's player stops ("you were removed from \
            this session by NAME", exit status 3) and its invite opens nothing of the new session. \
            Controllers stay controllers and viewers viewers; the grants in force, but the removed \
            member's, are re-issued there by the new host key. Prints the new controller invite and viewer \
            invite; `coplay host` prints its new invite too and rewrites its --invite-file. Only the \
            controller invite removes (a granted viewer cannot); in a session where everyone controls, \
            nobody can (remove is refused).

            suspend SECONDS suspends this member as a player would while it buffers: every player stops \
            at the same instant and the group waits; SECONDS later (at most the group's suspension \
            timeout, \(Int(PlaybackMember.coordinatorConfiguration.suspensionTimeout.secondsValue)) s) the \
            suspension ends and everyone resumes in step from where they stopped. The command waits until the \
            relay has confirmed the begin and the end, prints one line and leaves. On SIGINT or SIGTERM it \
            ends the suspension at once (and exits non-zero). --reason picks the reason the players' \
            suspensionBegan events show: buffering (default) or stallRecovery, the reasons the group waits for.

            Examples:
              coplay control --invite-file invite.txt play
              coplay control --invite-file invite.txt pause
              coplay control --invite-file invite.txt seek 1:30
              coplay control --invite-file invite.txt rate 0.5
              coplay control --invite-file invite.txt item 'v3:…'   (an item the players loaded with --item or --media-dir; ID as `coplay probe` prints it)
              coplay control --invite-file invite.txt next
              coplay control --invite-file invite.txt jump 3
              coplay control --invite-file invite.txt repeat all
              coplay control --invite-file invite.txt queue add episode-3.mkv episode-4.mkv
              coplay control --invite-file invite.txt queue add trailer.mp4 --next
              coplay control --invite-file invite.txt queue remove 2
              coplay control --invite-file invite.txt queue move 4 1
              coplay control --invite-file invite.txt queue clear
              coplay control --invite-file invite.txt suspend 2
              coplay control --invite-file invite.txt remove bob
              COPLAY_INVITE="$(cat invite.txt)" coplay control suspend 1.5 --reason stallRecovery
              coplay control --invite-file invite.txt grant bob     (a session hosted with --control hosts: the controller invite)
              coplay control --invite-file invite.txt revoke bob

            Where only hosts control (coplay host --control hosts), the commands above count only from \
            the controller invite, or from a viewer invite whose --name a host granted control (its key \
            from the state directory, as `coplay join --name` uses); with any other viewer invite the \
            command fails before sending anything ("only hosts control this session"), exit non-zero. \
            grant NAME gives the member named NAME control, revoke NAME takes it back (the controller \
            invite only): NAME is a member's name as the others see it (alice, or alice#3f9a2c when two \
            keys use the name), among the members present; the change counts from the next command on.
            """
    )

    enum Action: String, ExpressibleByArgument, CaseIterable {
        case play, pause, seek, rate, item, suspend, next, previous, jump, `repeat`, shuffle, queue, grant, revoke, remove
    }

    /// The suspension reasons the group waits for (`PlaybackMember.coordinatorConfiguration`'s
    /// waiting reasons).
    enum WaitingReason: String, ExpressibleByArgument, CaseIterable {
        case buffering, stallRecovery

        var reason: SuspensionReason {
            switch self {
            case .buffering: .buffering
            case .stallRecovery: .stallRecovery
            }
        }
    }

    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "[INVITE] ACTION [VALUE]: the invite (unless --invite-file or COPLAY_INVITE gives it), then play, pause, seek TIME, rate R, item ID, suspend SECONDS, next, previous, jump N, repeat MODE, shuffle on|off, queue add FILE…|remove N…|move N M|clear, or remove NAME.",
            valueName: "command"))
    var words: [String] = []

    @Option(name: .long, help: "suspend only: the suspension's reason, buffering (default) or stallRecovery.")
    var reason: WaitingReason?

    @Flag(name: .long, help: "queue add only: add the files right after the playing entry instead of at the end.")
    var next = false
    @Option(
        name: .long,
        help: "The name the others' events and notices give the command (\"alice paused at 12:34\"). This member is not announced as joining or leaving.")
    var name: String = "control"

    @Option(name: .long, help: "Log level (stderr).")
    var logLevel: String = "notice"

    @OptionGroup(title: "Invite") var inviteOptions: InviteOptions

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    /// The command line's words split into the invite (if given there), the action and its value.
    struct Parsed {
        var invite: String?
        var action: Action
        var value: String?
        /// `queue`: the words after it (the verb and its files or positions).
        var queueWords: [String] = []
    }

    /// Splits ``words``.
    ///
    /// - Throws: `ValidationError` for no action, an unknown one, or more words than one command takes.
    func parsed() throws -> Parsed {
        // Unrecognized input lands here too (so that `rate -1` reads as a value): an unknown option is an error.
        if let option = words.first(where: { $0.hasPrefix("-") && Double($0) == nil }) {
            throw ValidationError("unknown option '\(option)' (see coplay control --help)")
        }
        var rest = words[...]
        var invite: String?
        if let first = rest.first, InviteOptions.looksLikeInvite(first) {
            invite = first
            rest = rest.dropFirst()
        }
        let verbs = Action.allCases.map(\.rawValue).joined(separator: ", ")
        guard let word = rest.popFirst() else { throw ValidationError("say what to do: \(verbs)") }
        guard let action = Action(rawValue: word) else {
            if InviteOptions.looksLikeInvite(word) {
                throw ValidationError("one invite only, before the action")
            }
            throw ValidationError("unknown action '\(word)': coplay control knows \(verbs)")
        }
        if action == .queue { return Parsed(invite: invite, action: action, value: nil, queueWords: Array(rest)) }
        let value = rest.popFirst()
        let takesValue = ![.play, .pause, .next, .previous].contains(action)
        if let extra = takesValue ? rest.first : value {
            throw ValidationError(
                "'\(extra)': coplay control sends one command per run (run it again for the next one, e.g. coplay control --invite-file FILE pause)")
        }
        return Parsed(invite: invite, action: action, value: value)
    }

    func validate() throws {
        let parsed = try parsed()
        _ = try inviteOptions.invite(argument: parsed.invite)
        let value = parsed.value
        switch parsed.action {
        case .play, .pause:
            break  // parsed() refused a value
        case .seek:
            guard let value, TimeText.seconds(value) != nil else {
                throw ValidationError(
                    "seek needs a time: seconds (90, 2.5), M:SS (1:30) or H:MM:SS (1:02:03)\(value.map { " (got '\($0)')" } ?? "")")
            }
        case .rate:
            let rates = CoordinatorCore.playingRates
            guard let value, let rate = Double(value), rate == 0 || rates.contains(rate) else {
                throw ValidationError(
                    "rate needs 0 (paused) or a rate between \(rates.lowerBound) and \(rates.upperBound), e.g. 'rate 0.5' (got '\(value ?? "")')")
            }
        case .item:
            guard let value, !value.isEmpty else { throw ValidationError("item needs an item identifier") }
            // coplay's players name items by stream identity (or, older ones, by file fingerprint):
            // anything else can be no one's item.
            guard StreamIdentity(value) != nil || ContentFingerprint(value) != nil else {
                throw ValidationError(
                    "item needs a stream identity as `coplay probe` prints it (v3:SHA256; a file fingerprint v2:SIZE:SHA256 works too), got '\(value)'")
            }
        case .suspend:
            _ = try Self.suspension(value)
        case .remove:
            guard let value, !value.isEmpty else {
                throw ValidationError("remove needs the member's name as people see it (alice, or alice#3f9a2c)")
            }
            do { try RemoveMember.check(try inviteOptions.invite(argument: parsed.invite)) } catch let refusal as RemoveMember.Refusal {
                throw ValidationError(refusal.description)
            }
        case .next, .previous:
            break
        case .jump:
            guard let value, let position = Int(value), position >= 1 else {
                throw ValidationError("jump needs a position in the queue, 1 or more, as `coplay queue` prints it (got '\(value ?? "")')")
            }
        case .repeat:
            guard let value, RepeatMode(rawValue: value) != nil else {
                throw ValidationError("repeat needs off, one or all (got '\(value ?? "")')")
            }
        case .shuffle:
            guard let value, ["on", "off"].contains(value) else { throw ValidationError("shuffle needs on or off (got '\(value ?? "")')") }
        case .grant, .revoke:
            guard let value, !value.isEmpty else { throw ValidationError("\(parsed.action.rawValue) needs a member's name, as the others see it (alice, or alice#3f9a2c)") }
            let invite = try inviteOptions.invite(argument: parsed.invite)
            guard invite.onlyHostsControl else {
                throw ValidationError("\(parsed.action.rawValue): this session lets everyone control (it was hosted without --control hosts): there is nothing to grant")
            }
            guard invite.controls else {
                throw ValidationError("\(parsed.action.rawValue) needs the controller invite (the one coplay host --control hosts printed): this is a viewer invite")
            }
        case .queue:
            if case .add(let files, _) = try QueueChange(words: parsed.queueWords, next: next) {
                for file in files where !FileManager.default.fileExists(atPath: file) {
                    throw ValidationError("queue add: no file at \(file)")
                }
            }
        }
        if reason != nil && parsed.action != .suspend { throw ValidationError("--reason applies to suspend only") }
        if next && parsed.action != .queue { throw ValidationError("--next applies to queue add only") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
        if name.isEmpty { throw ValidationError("--name must not be empty") }
    }

    func run() async throws {
        let parsed = try parsed()
        let invite = try inviteOptions.invite(argument: parsed.invite)
        var logger = Logger(label: "coplay.control") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .notice
        if parsed.action == .suspend {
            var control = SuspendControl(
                invite: invite, duration: try Self.suspension(parsed.value), reason: (reason ?? .buffering).reason, logger: logger)
            control.name = name
            control.tls = try relayTLS.configuration(for: invite)
            Console.out.line(try await control.runUntilDone())
            return
        }
        if parsed.action == .remove {
            let removal = RemoveMember(
                invite: invite, target: parsed.value ?? "", name: name, tls: try relayTLS.configuration(for: invite), logger: logger)
            let outcome = try await removal.run()
            Console.out.line("removed \(outcome.removed): \(outcome.moved.count) member(s) moved to a new session (\(outcome.moved.joined(separator: ", ")))")
            for label in outcome.leftBehind {
                Console.out.line("note: \(label) announced no sealing key (an older coplay, or the page): it stays in the old session, which has ended")
            }
            if !outcome.grants.isEmpty {
                Console.out.line("control granted in the new session too: \(outcome.grants.joined(separator: ", "))")
            }
            Console.out.line("controller invite: \(outcome.successor)")
            Console.out.line("viewer invite: \(outcome.successor.viewer)")
            return
        }
        if parsed.action == .queue {
            let change = try QueueChange(words: parsed.queueWords, next: next)
            // Files are probed before joining: a file that cannot be queued costs no session traffic.
            var items: [QueueItem] = []
            if case .add(let files, _) = change {
                for file in files {
                    do { items.append(try await MemberMedia.named(file).queueItem) } catch {
                        throw PlaybackSetupError.unplayable(file, error)
                    }
                }
            }
            try await Self.withCommandMember(
                invite: invite, tls: try relayTLS.configuration(for: invite), logger: logger, name: name, commands: true
            ) { member, coordinator in
                try await Self.editQueue(change, items: items, through: coordinator, as: member.playback.channel.localParticipant)
            }
            return
        }
        if parsed.action == .grant || parsed.action == .revoke {
            _ = try await Self.withCommandMember(invite: invite, tls: try relayTLS.configuration(for: invite), logger: logger, name: name) {
                member, _ in
                Console.out.line(try await Self.changeRole(parsed.action == .grant ? .grant : .revoke, of: parsed.value ?? "", in: member))
            }
            return
        }
        try await Self.withCommandMember(
            invite: invite, tls: try relayTLS.configuration(for: invite), logger: logger, name: name, commands: true
        ) { member, coordinator in
            try await send(parsed, through: coordinator, as: member.playback.channel.localParticipant)
        }
    }

    /// Grants or revokes control of the member the others see as `name`, signed by the host key;
    /// returns the line to print once the relay confirmed it.
    ///
    /// - Throws: ``PlaybackSetupError/unknownMember(_:)`` when no member present, or several,
    ///   answer to `name` (listing who is there).
    static func changeRole(_ action: RoleStatement.Action, of name: String, in member: PlaybackMember) async throws -> String {
        guard let roles = member.roles, let seed = member.invite.hostSeed else {
            throw PlaybackSetupError.onlyHostsControl(name: name)
        }
        // The members announce who they are to each member that joins: give them a moment.
        let local = member.session.localParticipant.id
        let others = { member.session.activeParticipants.map(\.id).filter { $0 != local } }
        _ = await poll(for: .seconds(3)) { Set(others()).isSubset(of: Set(roles.directory.identities.keys)) }
        let directory = roles.directory
        let present = Set(others())
        // Label → (name, key) of the members present (one key can be present twice: one entry).
        var labels: [String: (name: String, key: MemberPublicKey)] = [:]
        for identity in directory.identities.values where present.contains(identity.participant) {
            labels[directory.label(name: identity.name, key: identity.key)] = (identity.name, identity.key)
        }
        let known = labels.keys.sorted().joined(separator: ", ")
        let there = known.isEmpty ? "no member has said who it is" : "here: \(known)"
        // The label as shown (alice, alice#3f9a2c), or a plain name that several keys share.
        var matches = labels.filter { $0.key == name }
        if matches.isEmpty { matches = labels.filter { $0.value.name == name } }
        guard matches.count == 1, let (label, (plainName, key)) = matches.first else {
            if matches.isEmpty { throw PlaybackSetupError.unknownMember("no member named '\(name)' is in the session (\(there))") }
            throw PlaybackSetupError.unknownMember(
                "'\(name)' is more than one member (\(matches.keys.sorted().joined(separator: ", "))): name one of them")
        }
        let hostKey = try MemberKey(seed: seed)
        if key == hostKey.publicKey { return "\(label) holds the controller invite: it always controls" }
        let issuedAt = UInt64(max(0, Date().timeIntervalSince1970 * 1e9))
        let statement = try RoleStatement(
            signedBy: hostKey, session: member.session.id, action: action, key: key, name: plainName, issuedAt: issuedAt)
        try await RoleGate.publish(statement, on: member.session)
        return action == .grant
            ? "grant accepted: \(label) controls the session from its next command" : "revoke accepted: \(label) no longer controls the session"
    }

    /// Proposes the (non-suspend) action through `coordinator` and prints the relay-confirmed state.
    private func send(_ parsed: Parsed, through coordinator: PlaybackCoordinator, as me: PlaybackParticipantID) async throws {
        let action = parsed.action
        if action == .item {
            // What the members have comes in their presence reports, about once a second: hear from
            // everyone before checking the change against it. A member still silent after that (a
            // loaded machine) may have the item: then the change goes out, and members without it
            // say so (commandIgnored), rather than refusing what someone could play.
            let heard = await Self.poll(for: .seconds(4)) { await coordinator.heardFromEveryMember }
            if heard, let problem = await coordinator.itemUnavailability(parsed.value ?? "") { throw problem }
        }
        if [.next, .previous, .jump, .repeat, .shuffle].contains(action) {
            try await sendQueueCommand(parsed, through: coordinator, as: me)
            return
        }
        switch action {
        case .play: try await coordinator.play()
        case .pause: try await coordinator.pause()
        case .seek: try await coordinator.coordinateSeek(to: TimeText.seconds(parsed.value ?? "") ?? 0)
        case .rate: try await coordinator.coordinateRateChange(to: Double(parsed.value ?? "") ?? 0)
        case .item: try await coordinator.transitionToItem(identifier: parsed.value ?? "")
        case .suspend, .next, .previous, .jump, .repeat, .shuffle, .queue, .grant, .revoke, .remove: return  // handled by SuspendControl and below
        }
        guard await Self.poll(for: .seconds(10), { await coordinator.state?.originator == me }) else {
            throw PlaybackSetupError.commandNotConfirmed(action.rawValue)
        }
        if let state = await coordinator.state {
            Console.out.line(
                "\(action.rawValue) accepted: revision \(state.revision), item time \(state.anchorItemTime) s "
                    + "(\(TimeText.position(state.anchorItemTime))), rate \(state.rate), at reference \(state.anchorReferenceTime.seconds)")
        }
    }

    /// Sends a queue command once the group's queue arrived; prints what the group does.
    private func sendQueueCommand(_ parsed: Parsed, through coordinator: PlaybackCoordinator, as me: PlaybackParticipantID) async throws {
        guard await Self.poll(for: .seconds(5), { await coordinator.hasQueue }) else { throw PlaybackCoordinatorError.queueNotReceived }
        // Moving to an entry is checked against what the members have (their presence reports,
        // about once a second), as `item` is.
        if [.next, .previous, .jump].contains(parsed.action) {
            _ = await Self.poll(for: .seconds(4)) { await coordinator.heardFromEveryMember }
        }
        let before = await coordinator.queue
        switch parsed.action {
        case .next: try await coordinator.coordinateNext()
        case .previous: try await coordinator.coordinatePrevious()
        case .jump: try await coordinator.coordinateJump(toPosition: Int(parsed.value ?? "") ?? 0)
        case .repeat: try await coordinator.editQueue(.repeatMode(RepeatMode(rawValue: parsed.value ?? "") ?? .off))
        case .shuffle:
            try await coordinator.editQueue(.shuffle(seed: parsed.value == "on" ? UInt32.random(in: 0...UInt32.max) : nil))
        default: return
        }
        if [.repeat, .shuffle].contains(parsed.action) {
            guard await Self.poll(for: .seconds(10), { await coordinator.queue != before }) else {
                throw PlaybackSetupError.commandNotConfirmed(parsed.action.rawValue)
            }
            let queue = await coordinator.queue
            Console.out.line("\(parsed.action.rawValue) accepted: repeat \(queue.repeatMode.rawValue), shuffle \(queue.shuffleSeed == nil ? "off" : "on")")
            return
        }
        guard await Self.poll(for: .seconds(10), { await coordinator.state?.originator == me }) else {
            throw PlaybackSetupError.commandNotConfirmed(parsed.action.rawValue)
        }
        if let entry = await coordinator.currentEntry {
            let position = await coordinator.queue.position(of: entry.id).map { "\($0)" } ?? "?"
            Console.out.line("\(parsed.action.rawValue) accepted: entry \(position), \(entry.title)")
        }
    }

    /// Makes a queue edit once the group's queue arrived, waits until the relay ordered it, and
    /// prints what changed.
    ///
    /// - Throws: ``PlaybackCoordinatorError/queueNotReceived`` without the queue,
    ///   ``QueueChange/ValidationFailure`` for a position the queue does not have,
    ///   ``PlaybackSetupError/commandNotConfirmed(_:)`` when the edits did not come back in time.
    static func editQueue(
        _ change: QueueChange, items: [QueueItem], through coordinator: PlaybackCoordinator, as me: PlaybackParticipantID
    ) async throws {
        guard await poll(for: .seconds(5), { await coordinator.hasQueue }) else { throw PlaybackCoordinatorError.queueNotReceived }
        let queue = await coordinator.queue
        let playing = await coordinator.state?.entry
        let entries = items.isEmpty ? [] : try await coordinator.makeQueueEntries(items)
        let edits = try change.edits(in: queue, playing: playing, adding: entries)
        let word = "queue \(change.verb)"
        guard !edits.isEmpty else {
            Console.out.line("\(word): nothing to change")
            return
        }
        // The relay's order is the confirmation: one queueChanged event of this member per edit.
        let confirmed = Confirmations()
        let counting = Task {
            for await event in coordinator.events where event.type == .queueChanged && event.originator == me {
                confirmed.add()
            }
        }
        defer { counting.cancel() }
        for edit in edits { try await coordinator.editQueue(edit) }
        guard await poll(for: .seconds(10), { confirmed.count >= edits.count }) else {
            throw PlaybackSetupError.commandNotConfirmed(word)
        }
        // The edit made this member publish the queue's retained copy: out before leaving.
        _ = await coordinator.flush()
        let after = await coordinator.queue
        Console.out.line("\(word) accepted: \(change.outcome(before: queue, after: after, added: entries))")
        // Entries are played from each member's own copy: say which ones nobody here has yet
        // (members report what they have about once a second).
        if !entries.isEmpty, await poll(for: .seconds(2), { await coordinator.heardFromEveryMember }) {
            for entry in entries where await coordinator.itemUnavailability(entry.item) != nil {
                Console.out.line(
                    "note: no member has a copy of \u{201C}\(entry.title)\u{201D}: when the group reaches it, members without one sit it out and the group plays on")
            }
        }
    }

    /// The suspension length `suspend SECONDS` asks for.
    ///
    /// - Throws: `ValidationError` unless SECONDS is a finite number above 0 and at most the
    ///   coordinator's suspension timeout (the group stops waiting for a suspension after that).
    static func suspension(_ value: String?) throws -> Duration {
        let maximum = PlaybackMember.coordinatorConfiguration.suspensionTimeout.secondsValue
        guard let value else { throw ValidationError("suspend needs a time in seconds above 0, e.g. 'suspend 2'") }
        guard let seconds = Double(value), seconds.isFinite, seconds > 0 else {
            throw ValidationError("suspend needs a time in seconds above 0, e.g. 'suspend 2' (got '\(value)')")
        }
        guard seconds <= maximum else {
            throw ValidationError(
                "suspend \(value): at most \(maximum) s, the group's suspension timeout (the group stops waiting after that)")
        }
        return .secondsRounded(seconds)
    }

    /// Runs `body` with a member that only sends commands: it accepts the invite with a rough clock
    /// (commands apply at one reference instant on every player, so it needs no converged clock),
    /// runs a coordinator without a player, waits for the session's playback state, and leaves after.
    ///
    /// - Throws: the member's setup errors; ``PlaybackSetupError/noPlaybackState`` when the session
    ///   has no playback state within 5 s; with `commands` (the member is to send commands),
    ///   ``PlaybackSetupError/onlyHostsControl(name:)`` for a viewer without a grant; whatever
    ///   `body` throws.
    static func withCommandMember<T: Sendable>(
        invite: Invite, tls: TLSConfiguration? = nil, logger: Logger, name: String = "control", commands: Bool = false,
        _ body: (PlaybackMember, PlaybackCoordinator) async throws -> T
    ) async throws -> T {
        // With a viewer invite, commands are signed with the name's own key (a host may have granted it control).
        let viewer = invite.onlyHostsControl && !invite.controls
        let memberKey = viewer ? MemberKeyStore.memberKey(name: name, persistent: true) : MemberKey()
        let member = try await PlaybackMember.open(
            invite: invite, entry: .accept(expectedFingerprint: nil, file: nil), converge: false, tls: tls, memberKey: memberKey,
            logger: logger)

        // One-shot: the others announce neither its joining nor its leaving (PresenceReport.oneShot).
        let coordinator = member.playback.makeCoordinator(delegate: CommandOnlyDelegate(), name: name, oneShot: true)
        let running = Task { await coordinator.run() }
        defer { running.cancel() }
        // The process exits right after: leave only once the relay has been told, or the others
        // would list this member until the relay's presence grace ran out.
        do {
            guard await poll(for: .seconds(5), { await coordinator.state != nil }) else {
                throw PlaybackSetupError.noPlaybackState
            }
            // A viewer without a grant: refused before its command goes (the retained statements
            // come with the retained state; a grant may follow it by a moment).
            if commands, let roles = member.roles, await !poll(for: .milliseconds(500), { roles.controls }) {
                throw PlaybackSetupError.onlyHostsControl(name: name)
            }
            // Its name goes out before its command, so every member's event names it (`--name`), and
            // says it is one-shot, so nobody announces its joining and leaving.
            try await coordinator.announce()
            let result = try await body(member, coordinator)
            await member.session.leave(waitingUpTo: .seconds(2))
            return result
        } catch {
            await member.session.leave(waitingUpTo: .seconds(2))
            throw error
        }
    }

    /// Polls `condition` every 10 ms until it holds or `timeout` passes (or the task is cancelled).
    static func poll(for timeout: Duration, _ condition: () async -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline && !Task.isCancelled {
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

/// Counts confirmations seen by another task.
final class Confirmations: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}
