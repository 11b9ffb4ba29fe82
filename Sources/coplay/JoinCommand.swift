import ArgumentParser
import Foundation
import GroupChat
import PlaybackCoordinator
import ServiceLifecycle
import Synchronization

/// `coplay join INVITE FILE`: a headless member that prints events.
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "Join a playback session with your copy of its media and print events.",
        usage: "coplay join [<invite>] <file>... [<options>]\n       coplay join [<invite>] --media-dir <dir> [<options>]",
        discussion: """
            The invite comes from --invite-file FILE (as `coplay host --invite-file FILE` writes it, or a \
            file you saved the invite in with mode 0600), from COPLAY_INVITE, or as the first argument \
            (where `ps` shows it, secret included, to every local user). When a host removes someone and \
            this member moves to the new session, coplay rewrites --invite-file FILE with the new invite it \
            received (a viewer's, or a controller's for a co-host), so the same command run again rejoins \
            the group.

            Your copy plays frame-identical when it has the session's video packets: the host's file, or a \
            remux of it into another container (ffmpeg -c copy), recognised by its stream identity \
            (`coplay probe` prints it). Another encode whose duration is within \(MemberMedia.nearTolerance) s \
            of the session's joins as a near copy, aligned by timestamp: you and everyone else are told \
            it is not frame-identical (unless the host refuses near copies: coplay host --exact-copies). \
            Anything else is refused. --media-dir DIR (repeatable) looks for your copy in a folder and its \
            subfolders instead of, or besides, FILE: every video file there is identified once (size, \
            both ends, the first and last video packets) and cached in \
            $XDG_CACHE_HOME/coplay/fingerprints.json (~/.cache/coplay/… without it), so the next start \
            is instant; a folder's files must match exactly (a folder of episodes holds many files of \
            about one length, so durations say nothing there). Every file found is an item the group can \
            switch to.

            Several files (coplay join INVITE ep1.mkv ep2.mkv ep3.mkv) are your copies of the entries of \
            the group's queue (`coplay host A B C`, `coplay control INVITE queue add`): each plays when the \
            group reaches its entry. Without a copy of the session's first item you still join, if the \
            queue has an entry you have (else coplay says what the session plays and exits). When the \
            group plays an entry you have no copy of, you sit it out (a missingEntry event, and `coplay \
            people` says so) while the others play on, and you follow again, in step, from the start of \
            the next entry you have.

            Events are printed one per line: on a terminal as text for a person (names, titles, \
            positions as h:mm:ss, local times), piped or redirected as JSON Lines (docs/events.md); \
            --events picks one. Frame events with --frames. Stops on SIGINT or SIGTERM, or when the \
            session ends. If the relay restarts, the member reconnects and resumes on its own.

            With --player mpv, coplay starts mpv on FILE (a window and sound when there is a display; \
            --mpv-arg passes options through) and drives it over its JSON IPC; --mpv-socket PATH drives an \
            mpv you run yourself with --input-ipc-server=PATH. Pausing, seeking or changing speed in mpv \
            moves the whole group; quitting mpv leaves the session. mpv's IPC runs on a thread of its \
            own (SCHED_FIFO when allowed: root, CAP_SYS_NICE or an RLIMIT_RTPRIO), so that a start is \
            written at its instant even on a busy machine.

            The headless player's frames are presented by a dedicated real-time thread (SCHED_FIFO when allowed) at the instants \
            of the relay's clock. --item adds media the group can switch to (coplay control INVITE item ID). \
            The simulation options make this member imperfect on purpose, for benchmarks: a drifting \
            local clock (which clock sync must correct) or an imperfect decoder (which the sync \
            controller must correct).

            Examples:
              coplay join --invite-file invite.txt samples/cfr-25.mp4 --name alice
              coplay join --invite-file invite.txt --media-dir ~/Videos --name alice
              coplay join --invite-file invite.txt episode-1.mkv episode-3.mkv --name alice
              coplay join --invite-file invite.txt movie.mkv --player mpv --mpv-arg=--fullscreen
              mpv --input-ipc-server=/tmp/mpv.sock movie.mkv & coplay join --invite-file invite.txt movie.mkv --mpv-socket /tmp/mpv.sock
              COPLAY_INVITE="$(cat invite.txt)" coplay join clip.mp4 --events jsonl --frames
              coplay join --invite-file invite.txt clip.mp4 --clock-drift-ppm -100 --start-latency 80 --decoder-drift-ppm 300
            """
    )

    @Argument(help: "The invite printed by `coplay host` (better: --invite-file or COPLAY_INVITE), then your copy of the session's media file (several: your copies of the queue's entries).")
    var arguments: [String] = []

    @OptionGroup var options: PlaybackCommandOptions

    @OptionGroup(title: "Invite") var inviteOptions: InviteOptions

    @OptionGroup(title: "TLS relay") var relayTLS: RelayTLSOptions

    @OptionGroup(title: "Player") var players: PlayerOptions

    @OptionGroup(title: "Simulation (benchmarks and tests)") var simulation: PlaybackSimulationOptions

    /// The invite given on the command line, if any, and the media files (none with --media-dir).
    func positionals() throws -> (invite: String?, files: [String]) {
        let folders = !options.mediaDirs.isEmpty
        var files = arguments[...]
        var invite: String?
        if let first = files.first, InviteOptions.looksLikeInvite(first) {
            invite = first
            files = files.dropFirst()
        }
        if let another = files.first(where: InviteOptions.looksLikeInvite) {
            throw ValidationError("'\(another.prefix(24))…' looks like a second invite: coplay join takes one invite, then your media files")
        }
        if files.isEmpty && !folders {
            throw invite == nil
                ? ValidationError("name your copy of the session's media: coplay join --invite-file FILE MEDIA (or --media-dir DIR)")
                : ValidationError("after the invite, name your copy of the session's media: coplay join [INVITE] FILE (or --media-dir DIR)")
        }
        return (invite, Array(files))
    }

    func validate() throws {
        let (invite, _) = try positionals()
        _ = try inviteOptions.invite(argument: invite)
        try players.check(simulation)
    }

    func run() async throws {
        let (inviteText, files) = try positionals()
        let invite = try inviteOptions.invite(argument: inviteText)
        let logger = options.logger("coplay.join")
        let copies = try await options.copies(named: files)
        guard !copies.copies.isEmpty else {
            throw PlaybackSetupError.noCopies(folders: options.mediaDirs)
        }
        let output = options.output(media: copies.allItems)
        let name = options.name ?? "player-\(ProcessInfo.processInfo.processIdentifier)"
        let resolution = Mutex<MemberMedia.Resolution?>(nil)
        let check: @Sendable (WatchTogetherActivity) throws -> Void = { activity in
            guard let found = copies.resolve(activity) else {
                if let refused = copies.refusedNearCopy(activity) {
                    throw PlaybackSetupError.exactCopiesRequired(file: refused.path, title: activity.title)
                }
                // No copy of the session's first item: the member may still have later entries of
                // its queue (checked once the queue is in, below).
                return
            }
            resolution.withLock { $0 = found }
        }
        var runner = MemberRunner(
            media: copies.copies.filter(\.named).map { ($0.timeline, $0.path) }, name: name, publishInitialState: false,
            output: output, imperfections: simulation.imperfections, players: players, logger: logger,
            resolve: { member in
                let activity = member.session.activity
                guard let found = resolution.withLock({ $0 }) else { return try await Self.withoutFirstItem(copies, activity: activity, output: output) }
                let media = try await copies.items(for: activity, resolution: found)
                var near: Set<String> = []
                if case .near(let copy, let difference) = found {
                    near.insert(activity.item)
                    let detail = String(format: "%@, duration %+.3f s", URL(fileURLWithPath: copy.path).lastPathComponent, difference)
                    output.print(PlaybackEvent(
                        type: .nearCopy, realtime: Date().timeIntervalSince1970, player: PlaybackParticipantID(name),
                        originator: member.playback.channel.localParticipant, originatorName: name, item: activity.item,
                        detail: detail))
                }
                return MemberRunner.ResolvedMedia(media: media, nearItems: near)
            })
        // A host removed someone: this member moved to the successor session. Its new invite (the
        // viewer invite, or the controller invite for a co-host) is what `coplay control` needs now,
        // and what --invite-file holds from now on (the same command run again rejoins the group).
        let inviteFile = inviteOptions.inviteFile
        runner.moved = { [output] next in
            if let inviteFile {
                do { try InviteOptions.write(next, to: inviteFile) } catch {
                    output.notice("could not write the new invite to \(inviteFile): \(error)")
                }
            }
            let where_ = inviteFile.map { " (also in \($0))" } ?? ""
            output.notice("the session moved (someone was removed); this member's new invite\(where_): \(next)")
        }
        let memberKey = MemberKeyStore.memberKey(name: name, persistent: options.name != nil) { output.notice($0) }
        let drift = simulation.clockDriftPPM
        let tls = try relayTLS.configuration(for: invite)
        let reconnect = options.reconnectPolicy
        try await runner.run {
            try await PlaybackMember.open(
                invite: invite, entry: .acceptChecking(check), clockDriftPPM: drift, tls: tls, reconnect: reconnect,
                memberKey: memberKey, logger: logger)
        }
    }

    /// What a member plays that has no copy of the session's first item (the activity's): its own
    /// copies, sitting out what the group plays until it reaches an entry of the queue the member
    /// has; once the queue is in, a member with none of its entries ends with the reason.
    static func withoutFirstItem(
        _ copies: MemberMedia, activity: WatchTogetherActivity, output: EventOutput
    ) async throws -> MemberRunner.ResolvedMedia {
        var media = copies.allItems
        // The first copy plays from its exact frames, as a named file does.
        if let first = copies.copies.first, !first.exactFrames {
            let probed = try await MemberMedia.named(first.path)
            media[0] = (probed.timeline, probed.path)
        }
        let items = Set(media.map(\.timeline.identifier))
        output.notice("none of your files is “\(activity.title)”, the session's first item: you sit out what you have no copy of and play from the entries of the group's queue you have")
        return MemberRunner.ResolvedMedia(media: media, check: { coordinator in
            // The queue comes from a member's answer, or the relay's copy within a few seconds.
            guard await ControlCommand.poll(for: .seconds(10), { await coordinator.hasQueue }) else { return }
            let queue = await coordinator.queue
            guard !queue.entries.contains(where: { items.contains($0.item) || ($0.fingerprint.map(items.contains) ?? false) }) else { return }
            throw PlaybackSetupError.noCopyInQueue(copies, activity: activity, entries: queue.entries.count)
        })
    }
}
