import ArgumentParser
import Foundation
import GroupSessions
import Logging
import PlaybackCoordinator
import Synchronization

/// `coplay demo`: an embedded relay and N players in one process, a scripted tour, a live sync summary.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a relay and several players in one process on a sample and show how closely they agree.",
        discussion: """
            Starts a relay (TCP + NTP on a free loopback port), a host and N-1 joiners, each with its own \
            group-session connection, NTP time client and headless player, exactly as `coplay host`/`join` \
            would. The files make the group's queue, repeated (one file: queued twice), so the players \
            move from the end of one entry to the start of the next on the shared clock, as `coplay host \
            A B --repeat all` does. The host tours: play, seek back (when the run is long enough), and, \
            once the queue has moved on, pause. Events are printed as they happen; once a second a summary line shows each player's \
            offset from the group and the p50/p99 frame skew (CLOCK_REALTIME spread of the same frame \
            across players); the final line adds the transitions every player showed and how far apart \
            their first frames of the next entry were. Ends after --duration seconds.

            Example: coplay demo samples/cfr-25.mp4 samples/cfr-60.mp4 --players 3 --duration 10
            """
    )

    @Argument(help: "The media files, queued in order (default: samples/cfr-25.mp4 samples/cfr-60.mp4; make them with scripts/make-samples.sh).")
    var files: [String] = ["samples/cfr-25.mp4", "samples/cfr-60.mp4"]

    @Option(name: .long, help: "How many players (2-16).")
    var players: Int = 3

    @Option(name: .long, help: "How long to run, in seconds (5-600).")
    var duration: Double = 10

    @Option(name: .long, help: "How to print events: text or jsonl.")
    var events: EventFormat = .text

    @Flag(name: .long, help: "Also print one event per presented frame.")
    var frames = false

    func validate() throws {
        guard (2...16).contains(players) else { throw ValidationError("--players must be 2-16") }
        guard duration.isFinite, (5...600).contains(duration) else { throw ValidationError("--duration must be 5-600 seconds") }
        for file in files where !FileManager.default.fileExists(atPath: file) {
            throw ValidationError("\(file) does not exist (run scripts/make-samples.sh, or name a media file)")
        }
        guard !files.isEmpty else { throw ValidationError("name a media file (or none, for the samples)") }
    }

    func run() async throws {
        var logger = Logger(label: "coplay.demo") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .notice
        var copies: [MemberMedia.Copy] = []
        for file in files { copies.append(try await MemberMedia.named(file)) }
        // One file: queued twice (the queue still moves on at its end).
        let queued = copies.count == 1 ? [copies[0], copies[0]] : copies
        let timeline = copies[0].timeline
        let timelines = copies.map(\.timeline)
        let tracker = FrameSkewTracker(players: players)
        let output = EventOutput(format: events, frames: frames, tap: { tracker.record($0) })
        let (bound, boundContinuation) = AsyncStream.makeStream(of: Int.self)
        let relay = RelayService(host: "127.0.0.1", port: 0, timeRateLimit: nil, logger: logger) { _, port in
            boundContinuation.yield(port)
            boundContinuation.finish()
        }
        let clock = ContinuousClock()
        let end = clock.now + .seconds(duration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await relay.run() }
            var ports = bound.makeAsyncIterator()
            guard let port = await ports.next() else { throw RelayStartError(detail: "the embedded relay did not start") }
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let described = queued.map { copy in
                "\(URL(fileURLWithPath: copy.path).lastPathComponent) (\(copy.timeline.frameCount) frames, \(String(format: "%.2f", copy.timeline.duration)) s)"
            }
            EventOutput.printLine("demo: relay on 127.0.0.1:\(port), \(players) players, a queue repeating \(described.joined(separator: ", then "))")
            let activity = WatchTogetherActivity(
                item: timeline.identifier, fingerprint: copies[0].fingerprint, title: URL(fileURLWithPath: copies[0].path).lastPathComponent,
                timeline: timeline)
            var members: [PlaybackMember] = []
            members.append(try await PlaybackMember.open(invite: invite, entry: .create(activity), logger: logger))
            for _ in 1..<players {
                members.append(try await PlaybackMember.open(
                    invite: invite, entry: .accept(expectedFingerprint: copies[0].fingerprint, file: copies[0].path), logger: logger))
            }
            for (number, member) in members.enumerated() {
                let isHost = number == 0
                let name = isHost ? "host" : "p\(number)"
                let player = member.headlessPlayer(timeline, name: name, extraItems: Array(timelines.dropFirst()))
                group.addTask {
                    try await member.play(
                        player, items: timelines, name: name, output: output, publishInitialState: isHost,
                        queue: isHost ? queued.map(\.queueItem) : [], repeatMode: .all,
                        started: { coordinator in
                            if isHost { await Self.tour(coordinator, media: timeline.duration, until: end) }
                        })
                }
            }
            group.addTask {
                while clock.now < end {
                    try await clock.sleep(for: .seconds(1))
                    Self.printSummary(tracker.summary, label: "sync")
                }
            }
            try await clock.sleep(until: end)
            for member in members { member.session.leave() }
            try await clock.sleep(for: .milliseconds(200))
            group.cancelAll()
        }
        Self.printSummary(tracker.summary, label: "final")
    }

    /// The scripted tour, fitted to the first entry and the run: play, seek back within the first
    /// entry (when there is time), let the queue move on at its end (and on, repeating), pause 1.5 s
    /// before the run ends.
    static func tour(_ coordinator: PlaybackCoordinator, media: Double, until end: ContinuousClock.Instant) async {
        let clock = ContinuousClock()
        let length = max(1.0, clock.now.duration(to: end).secondsValue - 1)
        let run = min(media * 0.4, length / 5)
        var steps: [(String, Duration, (PlaybackCoordinator) async throws -> Void)] = [("play", .seconds(1), { try await $0.play() })]
        // A seek back only when the run leaves time to reach the first entry's end after it.
        if length > 2 * media + 3 { steps.append(("seek", .seconds(run), { try await $0.coordinateSeek(to: media * 0.1) })) }
        for (name, wait, step) in steps {
            guard clock.now + wait < end else { return }
            try? await clock.sleep(for: wait)
            do { try await step(coordinator) } catch {
                EventOutput.printLine("demo: \(name) failed: \(error)")
            }
        }
        // The queue moves on by itself meanwhile; everyone stops on one frame before the end.
        try? await clock.sleep(until: end - .milliseconds(1500))
        do { try await coordinator.pause() } catch { EventOutput.printLine("demo: pause failed: \(error)") }
    }

    static func printSummary(_ summary: FrameSkewTracker.Summary, label: String) {
        let offsets = summary.offsets.map { String(format: "%@ %+.3f", $0.player, $0.milliseconds) }.joined(separator: ", ")
        var line = String(
            format: "%@: %d frames seen by every player; skew p50 %.3f ms, p99 %.3f ms, max %.3f ms; offset from group (ms): %@",
            label, summary.frames, summary.p50, summary.p99, summary.max, offsets.isEmpty ? "-" : offsets)
        if label == "final" {
            let transitions = summary.transitions
            line += transitions.isEmpty
                ? "; no transition to the next entry seen by every player"
                : String(
                    format: "; %d %@ to the next entry, first frames within %.3f ms (max)", transitions.count,
                    transitions.count == 1 ? "transition" : "transitions", transitions.max()!)
        }
        EventOutput.printLine(line)
    }
}
