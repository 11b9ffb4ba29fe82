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
            would. The host then tours: play, seek back, pause, play again, pause. Events are printed as \
            they happen; once a second a summary line shows each player's offset from the group and the \
            p50/p99 frame skew (CLOCK_REALTIME spread of the same frame across players). Ends after \
            --duration seconds.

            Example: coplay demo samples/cfr-25.mp4 --players 3 --duration 10
            """
    )

    @Argument(help: "The media file (default: samples/cfr-25.mp4; make it with scripts/make-samples.sh).")
    var file: String = "samples/cfr-25.mp4"

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
        guard FileManager.default.fileExists(atPath: file) else {
            throw ValidationError("\(file) does not exist (run scripts/make-samples.sh, or name a media file)")
        }
    }

    func run() async throws {
        var logger = Logger(label: "coplay.demo") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .notice
        let (timeline, info) = try await PlaybackMember.loadMedia(file)
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
            EventOutput.printLine("demo: relay on 127.0.0.1:\(port), \(players) players, \(URL(fileURLWithPath: file).lastPathComponent) (\(timeline.frameCount) frames, \(String(format: "%.2f", timeline.duration)) s)")
            let activity = WatchTogetherActivity(
                item: timeline.identifier, fingerprint: "\(info.fingerprint)", title: URL(fileURLWithPath: file).lastPathComponent,
            timeline: timeline)
            var members: [PlaybackMember] = []
            members.append(try await PlaybackMember.open(invite: invite, entry: .create(activity), logger: logger))
            for _ in 1..<players {
                members.append(try await PlaybackMember.open(
                    invite: invite, entry: .accept(expectedFingerprint: "\(info.fingerprint)", file: file), logger: logger))
            }
            for (number, member) in members.enumerated() {
                let isHost = number == 0
                let name = isHost ? "host" : "p\(number)"
                let player = member.headlessPlayer(timeline, name: name)
                group.addTask {
                    try await member.play(
                        player, items: [timeline], name: name, output: output, publishInitialState: isHost,
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

    /// The scripted tour: play, seek back, pause, play, pause, fitted to the media and the run.
    static func tour(_ coordinator: PlaybackCoordinator, media: Double, until end: ContinuousClock.Instant) async {
        let clock = ContinuousClock()
        let length = max(1.0, clock.now.duration(to: end).secondsValue - 1)
        let run = min(media * 0.4, length / 5)
        let steps: [(String, Double, (PlaybackCoordinator) async throws -> Void)] = [
            ("play", 1.0, { try await $0.play() }),
            ("seek", run, { try await $0.coordinateSeek(to: media * 0.1) }),
            ("pause", run, { try await $0.pause() }),
            ("play", 1.0, { try await $0.play() }),
            ("pause", run, { try await $0.pause() }),
        ]
        for (name, wait, step) in steps {
            guard clock.now + .seconds(wait) < end else { return }
            try? await clock.sleep(for: .seconds(wait))
            do { try await step(coordinator) } catch {
                EventOutput.printLine("demo: \(name) failed: \(error)")
            }
        }
    }

    static func printSummary(_ summary: FrameSkewTracker.Summary, label: String) {
        let offsets = summary.offsets.map { String(format: "%@ %+.3f", $0.player, $0.milliseconds) }.joined(separator: ", ")
        EventOutput.printLine(String(
            format: "%@: %d frames seen by every player; skew p50 %.3f ms, p99 %.3f ms, max %.3f ms; offset from group (ms): %@",
            label, summary.frames, summary.p50, summary.p99, summary.max, offsets.isEmpty ? "-" : offsets))
    }
}
