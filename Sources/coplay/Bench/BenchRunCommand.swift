import ArgumentParser
import Dispatch
import Foundation
import Logging
import SyncBench

#if canImport(Glibc)
import Glibc
#endif

/// `coplay bench [run] --scenario NAME`: the scenario runner of issue 6 (the default `bench` subcommand).
struct BenchRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run timing-accuracy scenarios: coplay players (and Syncplay) under an action script.",
        discussion: """
            For each coplay scenario: a relay (`coplay serve`), a host, N `coplay join --frames` players, \
            each in its own time namespace and, on an impaired network, behind its own impairment proxy \
            (TCP + UDP), and an action script through `coplay control` (play, late joiner, pause, play, \
            seek, rate changes, item change, a suspension through `coplay control suspend`, relay restart). In the \
            `mpv` and `mpv-jitter` scenarios each player is `coplay join --mpv-socket` driving an mpv the runner \
            starts (--vo=null --ao=null); the benchmark samples each mpv's time-pos itself and dates every frame \
            change, and compares the mpvs' pictures (screenshots) at each pause. The `syncplay` scenario runs \
            syncplay-server and two Syncplay clients driving mpv on the same media, measured by the same \
            sampler, under the play/pause/seek part of the same script.

            `mpv-plain` (in the default run), `mpv-plain-av`, `mpv-audio` and `mpv-plain-audio` (run only when \
            named) are mpv scenarios too: `-plain` starts each mpv as README tells a person to \
            (`mpv --input-ipc-server=SOCK --vo=null --ao=null MEDIA`, playing at once, none of coplay's options), \
            `-av` plays a clip with an audio track, and `-audio` also plays it through a PulseAudio server with a \
            null sink that the runner starts (`--ao=pulse`; needs `pulseaudio`, scripts/install-deps.sh). \
            --rate R plays the script at rate R (set right after the first play, and restored after the 0.5 phase).

            Writes summary.json, report.md, skew.svg and each player's event stream to --out, prints the \
            Markdown table, and exits non-zero if any scenario could not run (its row says FAILED and why).

            The `browser` and `browser-audio` scenarios (run only when named) have one headless `coplay join` \
            and pages of the relay's web client, each in its own headless Chromium driven by \
            scripts/browser-driver.py (Playwright for Python, the system Chromium); each page's frames are dated \
            by its media-clock origin from requestVideoFrameCallback. `browser-audio` plays a clip with an audio track.

            The `queue` scenario (run only when named) measures the shared queue's transitions: a host whose \
            queue cycles through short clips of 5 frame rates (1,000 entries, repeat all), 3 headless and 3 mpv \
            members (--headless N, --mpv N; --mpv 0 runs headless only), and `coplay control` one-shots for \
            next, previous, jump, shuffle and wrap-arounds until --transitions N (50) transitions were seen. At \
            every transition: the spread of the next entry's first frame over the members, each headless \
            member's gap from one entry's last frame to the next's first, and for mpv (through its IPC) when \
            time-pos switched to the next entry and when its first frame began; then a late joiner of the \
            long queue (time to its first frame in step). Writes queue-transitions.json beside the report.

            Scenarios: \(BenchScenario.names.joined(separator: ", ")); without --scenario: \
            \(BenchScenario.defaultNames.joined(separator: ", ")) (docs/benchmarks.md).

            Examples:
              coplay bench --scenario quiet
              coplay bench --scenario quiet,jitter --players 2 --duration 30 --out /tmp/bench
              coplay bench --scenario mpv,mpv-jitter,syncplay --out /tmp/bench-mpv
              coplay bench --scenario browser,browser-audio --out /tmp/bench-browser
              coplay bench --scenario mpv-plain,mpv-plain-av,mpv-plain-audio --rate 1.25 --out /tmp/bench-plain
              coplay bench --scenario queue --out /tmp/bench-queue
              coplay bench --scenario queue --mpv 0 --transitions 20 --queue-entries 100
            """
    )

    @Option(
        name: .customLong("scenario"),
        help: "Scenario name(s), repeatable or comma separated (default: all).")
    var scenarios: [String] = []

    @Option(help: "Players per scenario (overrides each scenario's default; at least 2).")
    var players: Int?

    @Option(help: "Seconds per scenario (overrides each scenario's default; at least 5).")
    var duration: Double?

    @Option(help: "The group's playback rate for coplay scenarios' scripts (default 1).")
    var rate: Double = 1

    @Option(help: "Output directory (default: bench-results/<UTC timestamp>).")
    var out: String?

    @Option(help: "Media file for every player, mpv and Syncplay included (default: a generated 25 fps clip long enough for the script).")
    var media: String?

    @Option(help: "The coplay executable to spawn (default: this one).")
    var coplay: String?

    @Flag(help: "Leave the relay restart out of the action script.")
    var noRelayRestart = false

    @Option(help: "Seed of the impairment proxies.")
    var seed: UInt64 = 1

    @Option(help: "browser scenarios: the page driver (default: scripts/browser-driver.py of this repository).")
    var browserDriver: String?

    @Option(help: "browser scenarios: the Chromium executable.")
    var chromium: String = "/usr/bin/chromium"

    @Option(help: "queue scenario: headless members (default 3).")
    var headless: Int?

    @Option(help: "queue scenario: mpv members (default 3; 0 runs headless only).")
    var mpv: Int?

    @Option(help: "queue scenario: transitions to measure (default 50).")
    var transitions: Int?

    @Option(help: "queue scenario: entries in the host's queue (default 1000).")
    var queueEntries: Int?

    @Option(help: "Log level (stderr).")
    var logLevel: String = "warning"

    /// The names asked for, in order, without repeats (all when none).
    var selectedNames: [String] {
        let names = scenarios.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        var seen = Set<String>()
        return (names.isEmpty ? BenchScenario.defaultNames : names).filter { seen.insert($0).inserted }
    }

    func validate() throws {
        for name in selectedNames where !BenchScenario.names.contains(name) {
            throw ValidationError(
                "unknown scenario '\(name)' (known: \(BenchScenario.names.joined(separator: ", ")))")
        }
        if let players, players < 2 || players > 32 { throw ValidationError("--players must be within 2...32") }
        if let duration, !(duration >= 5 && duration <= 7200) {
            throw ValidationError("--duration must be within 5...7200 seconds")
        }
        if !(rate >= 0.25 && rate <= 4) { throw ValidationError("--rate must be within 0.25...4") }
        if headless != nil || mpv != nil || transitions != nil || queueEntries != nil, !selectedNames.contains("queue") {
            throw ValidationError("--headless, --mpv, --transitions and --queue-entries apply to the queue scenario (--scenario queue)")
        }
        if let headless, !(0...16).contains(headless) { throw ValidationError("--headless must be within 0...16") }
        if let mpv, !(0...16).contains(mpv) { throw ValidationError("--mpv must be within 0...16") }
        if (headless ?? 3) + (mpv ?? 3) < 2 { throw ValidationError("the queue scenario needs at least two members (--headless plus --mpv)") }
        if let transitions, !(1...10_000).contains(transitions) { throw ValidationError("--transitions must be within 1...10000") }
        if let queueEntries, !(5...5_000).contains(queueEntries) { throw ValidationError("--queue-entries must be within 5...5000") }
        if let coplay, !FileManager.default.isExecutableFile(atPath: coplay) {
            throw ValidationError("--coplay \(coplay) is not an executable file")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
    }

    func run() async throws {
        var logger = Logger(label: "coplay.bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .warning
        let scenarios = try selectedNames.map { name in
            var scenario = try BenchScenario.named(name)
            if let players {
                // Syncplay's baseline is two clients.
                if scenario.implementation == .coplay { scenario.players = players }
            }
            if let duration { scenario.duration = duration }
            if scenario.implementation == .coplay { scenario.rate = rate }
            if var queue = scenario.queue {
                if let headless { queue.headless = headless }
                if let mpv { queue.mpv = mpv }
                if let transitions { queue.transitions = transitions }
                if let queueEntries { queue.entries = queueEntries }
                scenario.queue = queue
                scenario.players = queue.headless + queue.mpv
            }
            return scenario
        }
        let output = URL(fileURLWithPath: out ?? "bench-results/\(Self.timestamp())")
        let executable = coplay ?? Self.currentExecutable()
        let suite = ScenarioSuite(
            configuration: .init(
                scenarios: scenarios, coplay: executable, media: media, output: output,
                relayRestart: !noRelayRestart, seed: seed, browserDriver: browserDriver, chromium: chromium),
            logger: logger)
        for scenario in scenarios where scenario.implementation == .coplay && scenario.queue == nil {
            let script = suite.script(for: scenario)
            Console.err.write("bench \(scenario.name): action script\n\(script)\n")
            break
        }

        // SIGINT / SIGTERM cancel the run; the runners stop their children on cancellation.
        let task = Task { await suite.run { progress in ProgressLine.shared.show(progress.line) } }
        let sources = [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                Console.err.write("\nbench: interrupted, stopping every child process\n")
                task.cancel()
            }
            source.resume()
            return source
        }
        let report = await task.value
        for source in sources { source.cancel() }
        ProgressLine.shared.finish()

        let written = try report.write(to: output)
        print(report.markdownReport())
        Console.err.write("bench: wrote \(written.map(\.path).joined(separator: ", "))\n")
        if !report.isComplete {
            let failed = report.entries.filter { !$0.result.succeeded }
            for entry in failed {
                Console.err.write("Error: scenario \(entry.result.name) FAILED: \(entry.result.error ?? "")\n")
            }
            throw ExitCode.failure
        }
    }

    static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss"
        return formatter.string(from: Date())
    }

    /// This process's executable (`/proc/self/exe`), falling back to argv[0].
    static func currentExecutable() -> String {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return path }
        return URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    }
}

/// The progress line on standard error: rewritten in place on a terminal, one line every 5 s otherwise.
final class ProgressLine: Sendable {
    static let shared = ProgressLine()
    private let state = ProgressLineState()
    private let terminal = isatty(STDERR_FILENO) == 1

    func show(_ line: String) {
        state.update { last in
            let now = Date()
            if terminal {
                Console.err.write("\r\u{1B}[K\(line)")
            } else if now.timeIntervalSince(last) >= 5 {
                Console.err.write("\(line)\n")
                return now
            }
            return last
        }
    }

    func finish() {
        if terminal { Console.err.write("\n") }
    }
}

/// The last time a progress line was printed, under a lock.
final class ProgressLineState: @unchecked Sendable {
    // @unchecked: `last` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var last = Date.distantPast

    func update(_ body: (Date) -> Date) {
        lock.withLock { last = body(last) }
    }
}
