import ArgumentParser
import Foundation
import GroupChat
import GroupSessions
import PlaybackCoordinator
import ServiceLifecycle

/// `coplay host FILE [FILE…]`: creates a session, prints its invite, and plays as a member (several
/// files: the group's queue).
struct HostCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "host",
        abstract: "Create a playback session for FILE (several files: a queue), print its invite, and play as a member.",
        discussion: """
            The first line of standard output is the invite (coplay://HOST:PORT/SESSION?aead=...#SECRET): \
            give it to `coplay join` and `coplay control`. The second is the link for browsers \
            (http://HOST:PORT/#invite=...): the page the relay serves joins the session, end-to-end \
            encrypted, and plays each person's own copy. The session starts paused at 0; events follow, \
            one per line (on a terminal as text for a person, piped as JSON Lines; --events picks one). \
            The relay must be running (`coplay serve`). Stops on SIGINT or SIGTERM.

            --invite-file FILE also writes the invite to FILE (mode 0600, readable by you only) once the \
            session exists: `coplay join --invite-file FILE` and `coplay control --invite-file FILE` read it \
            there, so the secret never appears in a process's arguments. When someone is removed \
            (`coplay control INVITE remove NAME`) and the host moves to the new session, it prints the new \
            invite and rewrites FILE with it (--resume then comes back to the new session). The host keeps running when the \
            reader of its output goes away (`coplay host … | head -1`): it stops printing and plays on.

            Several files make the group's queue, in that order: at the end of one entry every player \
            moves to the next at the same instant (--repeat all starts over after the last; one repeats \
            the entry). `coplay control INVITE next`, `previous`, `jump N`, `repeat MODE`, `shuffle on|off` \
            move through it and `coplay queue INVITE` prints it. Members need a copy of each entry they \
            are to play (the files on their command line, --item or --media-dir).

            --control hosts makes a session where only hosts control: the printed invite is the \
            controller invite (whoever holds it controls, as a co-host); `coplay invite INVITE --viewer \
            [--link]` derives the viewer invite (and its browser link) from it, offline: viewers watch in \
            step, but their commands (play, pause, seek, queue) count nowhere until a host grants them \
            control: `coplay control CONTROLLER_INVITE grant NAME` (revoke NAME takes it back). \
            --control everyone (the default) lets everyone who holds the invite control.

            --player mpv plays in mpv instead of the headless player (see `coplay join --help`). \
            --item and --media-dir add media the group can switch to (coplay control INVITE item ID); the \
            simulation options are those of `coplay join`.

            The session's item is FILE's video stream identity (`coplay probe` prints it, v3:…): members \
            whose copy has the same video packets, in any container, play it frame-identical. By default \
            a member with another encode whose duration is within \(MemberMedia.nearTolerance) s of FILE's \
            joins too, as a near copy, aligned by timestamp, and everyone is told it is not frame-identical; \
            --exact-copies refuses near copies.

            Examples:
              coplay host samples/cfr-25.mp4 --relay 127.0.0.1:7000 --invite-file invite.txt
              coplay host samples/cfr-25.mp4 --relay 127.0.0.1:7000 --events jsonl --frames > host.jsonl &
              coplay host a.mp4 b.mp4 --repeat all --relay 127.0.0.1:7000 --invite-file show.txt --resume   (an installation: a restart comes back to the same session)
            """
    )

    @Argument(help: "The media file to play; several files make the group's queue, played in order.")
    var files: [String]

    /// The session's item: the first file.
    var file: String { files[0] }

    @Option(name: .customLong("repeat"), help: ArgumentHelp("With several files: what follows the end of an entry: off (stop after the last), one (the same entry again) or all (the first after the last).", valueName: "MODE"))
    var repeatMode: RepeatMode = .off

    @Flag(help: "With several files: after the first, play them in one shuffled order every member agrees on (coplay control INVITE shuffle off goes back to the order given).")
    var shuffle = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The relay (TCP and UDP time); several nodes of one relay service (coplay serve --store) separated by commas all go into the invite.",
            valueName: "host:port[,host:port…]"))
    var relay: String = "127.0.0.1:7000"

    /// The first relay address (the session is created there) and the others of the service.
    func relays() throws -> (first: String, others: [RelayAddress]) {
        let parts = relay.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        var others: [RelayAddress] = []
        for part in parts.dropFirst() {
            do { others.append(try RelayAddress(parsing: part)) } catch {
                throw ValidationError("--relay \(relay): \"\(part)\" is not HOST:PORT (\(error))")
            }
        }
        return (parts[0], others)
    }

    @Option(
        help: ArgumentHelp(
            "The session's cipher: aes-256-gcm (browsers can join) or chacha20-poly1305 (native members only).",
            valueName: "NAME"))
    var cipher: String = PayloadSuite.aes256GCM.rawValue

    @Flag(help: "The relay speaks TLS (coplay serve --tls): the invite says coplays:// and members verify the relay.")
    var tls = false

    // Unconditional: a pin is base64url, and one in 64 begins with "-", which would otherwise be taken
    // for an option ("Missing value for '--pin <PIN>'", found by RelayTLSCLITests with a random key).
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Pin the relay's public key in the invite (the pin `coplay serve --tls` prints): members accept that key alone, so a self-signed relay works. Implies --tls.",
            valueName: "PIN"))
    var pin: String?

    @Option(
        name: .customLong("invite-file"),
        help: ArgumentHelp(
            "Also write the invite to FILE (mode 0600) once the session exists, for join/control --invite-file.",
            valueName: "FILE"))
    var inviteFile: String?

    @Flag(
        help: ArgumentHelp(
            "With --invite-file FILE: come back to the session whose invite FILE holds (its queue, position and members) instead of making a new one; without FILE yet, make one and write it there.",
            discussion: "For installations a supervisor restarts: `coplay host A B C --repeat all --invite-file /var/lib/show/invite.txt --resume`. A relay that lost the session (no data directory) gets it again under the same invite."))
    var resume = false

    /// Who may control the session.
    enum Control: String, ExpressibleByArgument, CaseIterable {
        case everyone, hosts
    }

    @Option(
        help: ArgumentHelp(
            "Who controls the session: everyone (whoever holds the invite) or hosts (the invite printed is the controller invite; `coplay invite INVITE --viewer` makes the viewers'; `coplay control INVITE grant NAME` gives a viewer control; `coplay control INVITE remove NAME` removes someone).",
            valueName: "WHO"))
    var control: Control = .everyone

    @Flag(
        name: .customLong("exact-copies"),
        help: "Accept only members whose copy has FILE's video packets (the same file, or a remux of it): refuse near copies (another encode of the same duration).")
    var exactCopies = false

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    @OptionGroup var options: PlaybackCommandOptions

    @OptionGroup(title: "Player") var players: PlayerOptions

    @OptionGroup(title: "Simulation (benchmarks and tests)") var simulation: PlaybackSimulationOptions

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("name the media file to play (several: the group's queue)") }
        _ = try TimeEndpoint(parsing: try relays().first)
        _ = try suite()
        if let pin, Invite.keyPin(parsing: pin) == nil {
            throw ValidationError("--pin \(pin) is not a key pin (43 base64url characters, as coplay serve --tls prints it)")
        }
        try players.check(simulation)
        if resume && inviteFile == nil {
            throw ValidationError("--resume needs --invite-file FILE: the file that holds (or will hold) the session's invite")
        }
        if let inviteFile {
            let directory = URL(fileURLWithPath: inviteFile).deletingLastPathComponent().path
            guard FileManager.default.isWritableFile(atPath: directory) else {
                throw ValidationError("--invite-file \(inviteFile): cannot write in \(directory)")
            }
        }
    }

    func suite() throws -> PayloadSuite {
        guard let suite = PayloadSuite(rawValue: cipher.lowercased()) else {
            let known = PayloadSuite.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("unknown --cipher \(cipher) (known: \(known))")
        }
        return suite
    }

    func run() async throws {
        let (firstRelay, otherRelays) = try relays()
        let endpoint = try TimeEndpoint(parsing: firstRelay)
        let logger = options.logger("coplay.host")
        let copies = try await options.copies(named: files)
        let media = copies.allItems
        let timeline = media[0].timeline
        let fingerprint = copies.copies[0].fingerprint
        let keyPin = pin.flatMap(Invite.keyPin(parsing:))
        // --resume: the session this host made before, when its invite file is there.
        let resumed = try inviteFile.flatMap { path -> Invite? in
            guard resume, FileManager.default.fileExists(atPath: path) else { return nil }
            return try PlaybackCommandOptions.invite(try InviteOptions.read(path))
        }
        let invite = try resumed ?? { () throws -> Invite in
            var invite = Invite.generate(
                host: endpoint.host, port: endpoint.port, suite: try suite(), usesTLS: tls || keyPin != nil, relayKeyPin: keyPin)
            invite.otherRelays = otherRelays
            return control == .hosts ? invite.withNewHostKey() : invite
        }()
        if let resumed {
            // The invite file holds the session's invite: a controller invite keeps its host key.
            if resumed.onlyHostsControl && !resumed.controls {
                throw ValidationError("--resume: \(inviteFile ?? "the invite file") holds a viewer invite: a host comes back with the controller invite")
            }
            if resumed.onlyHostsControl != (control == .hosts) && control == .hosts {
                throw ValidationError("--resume --control hosts: the session in \(inviteFile ?? "the invite file") lets everyone control (it was hosted without --control hosts)")
            }
        }
        let clientTLS = try relayTLS.configuration(for: invite)
        let activity = { () -> WatchTogetherActivity in
            var activity = WatchTogetherActivity(
                item: timeline.identifier, fingerprint: fingerprint, title: URL(fileURLWithPath: file).lastPathComponent,
                timeline: timeline)
            if exactCopies { activity.exactCopies = true }
            return activity
        }()
        let output = options.output(media: media)
        let inviteFile = self.inviteFile
        let name = options.name ?? "host"
        var runner = MemberRunner(
            media: media, name: name, publishInitialState: true, output: output,
            imperfections: simulation.imperfections, players: players, logger: logger)
        let memberKey = MemberKeyStore.memberKey(name: name, persistent: options.name != nil) { output.notice($0) }
        // A host removed someone: this member moved to the successor session; say where it is now.
        runner.moved = { [output] next in
            if let inviteFile {
                do { try InviteOptions.write(next, to: inviteFile) } catch {
                    output.notice("could not write the new invite to \(inviteFile): \(error)")
                }
            }
            let where_ = inviteFile.map { " (also in \($0))" } ?? ""
            if output.human != nil {
                EventOutput.printLine("the session moved (someone was removed); its new invite\(where_):")
                EventOutput.printLine("  \(next)")
                if next.controls && next.onlyHostsControl { EventOutput.printLine("viewer invite: \(next.viewer)") }
            } else {
                output.notice("the session moved (someone was removed); its new invite\(where_): \(next)")
                if next.controls && next.onlyHostsControl { output.notice("viewer invite: \(next.viewer)") }
            }
        }
        if files.count > 1 {
            runner.queue = copies.copies.prefix(files.count).map(\.queueItem)
            runner.repeatMode = repeatMode
            runner.shuffle = shuffle
        }
        let drift = simulation.clockDriftPPM
        let reconnect = options.reconnectPolicy
        try await runner.run {
            let member = try await PlaybackMember.open(
                invite: invite, entry: resumed == nil ? .create(activity) : .resume(activity), clockDriftPPM: drift, tls: clientTLS, reconnect: reconnect,
                memberKey: memberKey, logger: logger)
            if let inviteFile, resumed == nil { try InviteOptions.write(invite, to: inviteFile) }
            let page = invite.suite == .aes256GCM
                ? invite.webPageURL() : "(browsers cannot join a \(invite.suite) session: host with --cipher aes-256-gcm)"
            if output.human != nil {
                // For a person: what each line is. (Piped, the invite stays the first line, the link the second.)
                EventOutput.printLine("invite (it holds the session's secret: share it privately)\(inviteFile.map { ", also in \($0)" } ?? ""):")
                EventOutput.printLine("  \(invite)")
                EventOutput.printLine("in a browser: \(page)")
                EventOutput.printLine("others join with: coplay join --invite-file FILE THEIR-COPY   (FILE holding the invite)")
                if invite.onlyHostsControl {
                    EventOutput.printLine("only hosts control: this is the controller invite (whoever holds it controls); for viewers:")
                    EventOutput.printLine("  coplay invite --invite-file FILE --viewer [--link]   (grant one control: coplay control --invite-file FILE grant NAME)")
                }
            } else {
                EventOutput.printLine("\(invite)")
                EventOutput.printLine(page)
                if invite.onlyHostsControl {
                    output.notice("only hosts control: the invite above is the controller invite; `coplay invite INVITE --viewer [--link]` prints the viewers'")
                }
            }
            return member
        }
    }
}

extension RepeatMode: ExpressibleByArgument {}
