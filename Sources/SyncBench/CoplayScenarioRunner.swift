import Foundation
import Logging
import MPVControl
import NIOConcurrencyHelpers
import NIOPosix
import NetworkEmulation

#if canImport(Glibc)
import Glibc
#endif

/// Runs one coplay scenario for real: a relay process, a host, N `coplay join` players (each in its own
/// time namespace, optionally with a software clock drift, each behind its own impairment proxy), and
/// the action script through `coplay control`.
///
/// What runs, all on 127.0.0.1:
/// 1. `coplay serve --listen 127.0.0.1:0 --data-dir WORK/relay-data` (the port is read from its first line).
/// 2. `coplay time query` against the relay: the relay's reference clock minus CLOCK_REALTIME, the truth
///    the players' clock-offset errors are measured against.
/// 3. `coplay host MEDIA --relay 127.0.0.1:PORT` (unimpaired; it prints the invite).
/// 4. Per player, when the network is impaired, a NetworkEmulation `ImpairmentProxy` for TCP and UDP on one port
///    number, and the invite's `HOST:PORT` rewritten to it (the session keys do not depend on it).
/// 5. Per player, `unshare --fork --kill-child=SIGTERM --time --monotonic S --boottime S coplay join
///    INVITE MEDIA --name pN --frames [--clock-drift-ppm PPM]`; its JSON Lines are parsed live by
///    ``CoplayStreamTranslator``. The last player waits for the script's late-join action.
///    In an mpv scenario, the runner first starts the player's mpv (`mpv` + `MPVProcess.baseArguments`
///    + `headlessArguments` + `--input-ipc-server=SOCK`, outside the time namespace) and connects its
///    own ``MPVFrameSampler`` to it, then runs `coplay join INVITE MEDIA --name pN --mpv-socket SOCK`;
///    the player's frames are the sampler's (reference time = realtime + the relay's offset), its
///    accepted commands and stops come from its JSON Lines as usual. After each pause and the
///    suspension has settled, every mpv writes its picture (``PauseFrameCheck``).
///    In a browser scenario the first member is such a headless player and every other one a page of the
///    relay's web client: `python3 scripts/browser-driver.py --link LINK --media MEDIA --page bN` (the link
///    is the host's second line), one headless Chromium each; its lines go to ``LivePlayer``, which dates
///    each of the page's frames by its display time (``BrowserFrameEstimator``).
/// 6. The script: playback commands via `coplay control` (a `command` event is stamped when it is
///    launched), the suspension via `coplay control INVITE suspend SECONDS` (launched in the background,
///    awaited before the next action), the late joiner, the relay restart (`kill -9`, then the same port
///    and data directory).
///
/// Any process that dies before the relay restart fails the scenario with its exit status and last
/// error line. The figures cover the window from the late joiner's first frame to the relay restart;
/// what happens after the restart is reported as ``Run/relayRestart``.
///
/// ```swift
/// let runner = CoplayScenarioRunner(configuration: .init(
///     scenario: try .named("quiet"), script: .standard(duration: 60), coplay: "/usr/bin/coplay",
///     media: "clip.mp4", workDirectory: work), logger: logger)
/// let run = try await runner.run { print($0.line) }
/// ```
package struct CoplayScenarioRunner: Sendable {
    /// What to run.
    package struct Configuration: Sendable {
        /// The scenario (players, network, drift).
        package var scenario: BenchScenario
        /// The action script.
        package var script: ActionScript
        /// The `coplay` executable to spawn.
        package var coplay: String
        /// The media file every member opens.
        package var media: String
        /// Logs and the relay's data directory go here.
        package var workDirectory: URL
        /// Whether to give each player its own time namespace (when `unshare --time` works).
        package var timeNamespaces: Bool
        /// The longest wait for a process to come up, in seconds.
        package var startupTimeout: Double
        /// The impairment proxies' seed (each player's proxy gets `seed + N`).
        package var seed: UInt64
        /// Browser scenarios: `scripts/browser-driver.py` (nil: looked for, see ``findBrowserDriver(near:)``).
        package var browserDriver: String?
        /// Browser scenarios: the Chromium executable the driver starts.
        package var chromium: String

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - scenario: the scenario.
        ///   - script: the action script.
        ///   - coplay: the `coplay` executable.
        ///   - media: the media file.
        ///   - workDirectory: for logs and the relay's data.
        ///   - timeNamespaces: time namespaces per player (default on).
        ///   - startupTimeout: seconds (default 120).
        ///   - seed: impairment seed (default 1).
        ///   - browserDriver: browser scenarios: the driver script (default: looked for).
        ///   - chromium: browser scenarios: Chromium (default `/usr/bin/chromium`).
        package init(
            scenario: BenchScenario, script: ActionScript, coplay: String, media: String, workDirectory: URL,
            timeNamespaces: Bool = true, startupTimeout: Double = 120, seed: UInt64 = 1, browserDriver: String? = nil,
            chromium: String = "/usr/bin/chromium"
        ) {
            self.browserDriver = browserDriver
            self.chromium = chromium
            self.scenario = scenario
            self.script = script
            self.coplay = coplay
            self.media = media
            self.workDirectory = workDirectory
            self.timeNamespaces = timeNamespaces
            self.startupTimeout = startupTimeout
            self.seed = seed
        }
    }

    /// What a run produced.
    package struct Run: Sendable {
        /// One stream per player, trimmed to the measured window; the first also holds the runner's
        /// `command` events (originator `runner`).
        package var streams: [PlayerEventStream]
        /// The relay's reference clock minus CLOCK_REALTIME (seconds), the truth for clock-offset errors.
        package var relayOffset: Double?
        /// `resumed`, or `lost: …` when players did not survive the relay restart; nil without a restart.
        package var relayRestart: String?
        /// Seconds from the late joiner's start to its first presented frame.
        package var lateJoinSeconds: Double?
        /// Whether the players ran in their own time namespaces.
        package var timeNamespaces: Bool
        /// Seconds of the measured window.
        package var measuredSeconds: Double
        /// Remarks on the run's conditions.
        package var notes: [String]
        /// mpv scenarios: what each player's sampler saw (frames, brackets, round trips).
        package var samplerRecords: [MPVFrameSampler.Record] = []
        /// mpv scenarios: the pictures compared at each pause and the suspension.
        package var pauseChecks: [PauseFrameCheck] = []
        /// mpv scenarios: the media's frame rate as mpv reported it.
        package var frameRate: Double?
        /// Re-anchoring seeks (`correction` events with `detail: "seek"`) each player reported inside the
        /// measured window, by player name.
        package var correctionSeeks: [String: Int] = [:]
        /// Browser scenarios: what each page's samples became, by player name.
        package var browsers: [String: LivePlayer.BrowserSummary] = [:]
        /// Browser scenarios: each page's frames dated by its media clock (`currentTime`), by player name.
        package var mediaClockFrames: [String: [BenchEvent]] = [:]
    }

    /// The configuration.
    package let configuration: Configuration
    private let logger: Logger

    /// Creates a runner.
    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// Runs the scenario; every child process is stopped when it returns, throws or is cancelled.
    ///
    /// - Parameter progress: called about once a second.
    /// - Throws: ``BenchError`` saying why the scenario could not run, or `CancellationError`.
    package func run(progress: @escaping @Sendable (ScenarioProgress) -> Void = { _ in }) async throws -> Run {
        let scenario = configuration.scenario
        guard FileManager.default.isExecutableFile(atPath: configuration.coplay) else {
            throw BenchError.scenarioFailed("coplay executable \(configuration.coplay) not found")
        }
        guard FileManager.default.isReadableFile(atPath: configuration.media) else {
            throw BenchError.scenarioFailed("media file \(configuration.media) does not exist or is not readable")
        }
        guard scenario.players >= 2 else { throw BenchError.scenarioFailed("needs at least two players") }
        try FileManager.default.createDirectory(at: configuration.workDirectory, withIntermediateDirectories: true)
        let session = Session()
        do {
            let run = try await run(session: session, progress: progress)
            await session.stopAll()
            return run
        } catch {
            // What the mpv samplers saw helps to understand the failure.
            writeSamplerRecords(await session.stopSamplers())
            await session.stopAll()
            throw error
        }
    }

    /// Writes each mpv sampler's record to `WORK/pN-sampler.jsonl`.
    private func writeSamplerRecords(_ records: [MPVFrameSampler.Record]) {
        for record in records {
            try? record.jsonLines().write(to: configuration.workDirectory.appendingPathComponent("\(record.player)-sampler.jsonl"))
        }
    }

    // MARK: - The run

    /// The processes, proxies and mpv samplers of one run, stopped together.
    final class Session: Sendable {
        private let children = NIOLockedValueBox<[ChildProcess]>([])
        private let proxies = NIOLockedValueBox<[ImpairmentProxy]>([])
        private let samplers = NIOLockedValueBox<[MPVFrameSampler]>([])
        /// The samplers' event loop (one thread of its own, so their stamps do not wait behind the proxies').
        private let samplerGroup = NIOLockedValueBox<MultiThreadedEventLoopGroup?>(nil)
        private let directories = NIOLockedValueBox<[URL]>([])

        func add(_ child: ChildProcess) { children.withLockedValue { $0.append(child) } }
        func add(_ proxy: ImpairmentProxy) { proxies.withLockedValue { $0.append(proxy) } }
        func add(_ sampler: MPVFrameSampler) { samplers.withLockedValue { $0.append(sampler) } }
        /// A directory removed at the end (mpv's sockets).
        func removeAtEnd(_ directory: URL) { directories.withLockedValue { $0.append(directory) } }

        /// The event loop group of the samplers, made on first use.
        var samplerLoops: MultiThreadedEventLoopGroup {
            samplerGroup.withLockedValue { group in
                if let group { return group }
                let made = MultiThreadedEventLoopGroup(numberOfThreads: 1)
                group = made
                return made
            }
        }

        /// Stops every sampler and returns what they saw (each record once: later calls return none).
        func stopSamplers() async -> [MPVFrameSampler.Record] {
            let list = samplers.withLockedValue { list in
                defer { list.removeAll() }
                return list
            }
            var records: [MPVFrameSampler.Record] = []
            for sampler in list { records.append(await sampler.stop()) }
            return records
        }

        func stopAll() async {
            _ = await stopSamplers()
            let list = children.withLockedValue { $0 }
            await withTaskGroup(of: Void.self) { group in
                for child in list { group.addTask { await child.stop() } }
            }
            for proxy in proxies.withLockedValue({ $0 }) { try? await proxy.stop() }
            let group = samplerGroup.withLockedValue { group in
                defer { group = nil }
                return group
            }
            try? await group?.shutdownGracefully()
            for directory in directories.withLockedValue({ $0 }) { try? FileManager.default.removeItem(at: directory) }
        }
    }

    private func log(_ name: String) -> URL { configuration.workDirectory.appendingPathComponent("\(name).log") }

    private func run(session: Session, progress: @escaping @Sendable (ScenarioProgress) -> Void) async throws -> Run {
        let scenario = configuration.scenario
        let script = configuration.script
        let coplay = configuration.coplay
        var notes: [String] = []
        func stage(_ text: String) {
            progress(ScenarioProgress(scenario: scenario.name, elapsed: 0, total: script.duration, frames: 0, stage: text))
        }

        // Clock drift needs `join --clock-drift-ppm`.
        let drifts = (0..<scenario.players).map { scenario.drift(ofPlayer: $0) }
        if drifts.contains(where: { $0 != 0 }) {
            let help = try await Self.output(of: coplay, ["join", "--help"], log: log("join-help"))
            guard help.contains("--clock-drift-ppm") else {
                throw BenchError.scenarioFailed(
                    "this coplay has no `join --clock-drift-ppm` option, so the players' clocks cannot drift")
            }
        }
        let namespaces = configuration.timeNamespaces ? await Self.canUnshareTime() : false
        if configuration.timeNamespaces && !namespaces {
            notes.append("unshare --time is not available here: the players share the machine's monotonic clock")
        }
        // mpv scenarios: the executable, and a short directory for the sockets (a Unix socket path
        // has at most 107 bytes).
        let usesMPV = scenario.mediaPlayer == .mpv
        var mpvExecutable = ""
        var socketDirectory = URL(fileURLWithPath: "/tmp")
        if usesMPV {
            guard let path = try? MPVProcess.findExecutable() else { throw BenchError.missingTool("mpv") }
            mpvExecutable = path
            let version = (try? await Self.output(of: path, ["--version"], log: log("mpv-version"))) ?? ""
            if let line = version.split(separator: "\n").first {
                notes.append("players drive \(line.components(separatedBy: " Copyright").first ?? String(line)) (\(path))")
            }
            socketDirectory = FileManager.default.temporaryDirectory
                .appendingPathComponent("coplay-bench-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
            session.removeAtEnd(socketDirectory)
        }
        // mpv with real sound: a PulseAudio server of the run's own, with a null sink.
        var mpvEnvironment: [String: String] = [:]
        if usesMPV && scenario.audioOutput == .pulse {
            stage("starting the audio server")
            mpvEnvironment = try await startAudioServer(in: socketDirectory.appendingPathComponent("pulse"), session: session)
            notes.append("every mpv plays its sound through a PulseAudio null sink (--ao=pulse, a server of the run's own)")
        }

        // Browser scenarios: Python with Playwright, the driver, Chromium.
        let usesBrowser = scenario.mediaPlayer == .browser
        var python = ""
        var browserDriver = ""
        if usesBrowser {
            (python, browserDriver) = try await browserTools()
        }

        // 1. The relay.
        stage("starting the relay")
        let dataDirectory = configuration.workDirectory.appendingPathComponent("relay-data").path
        let relayPort = Port()
        let relay = try startRelay(listen: "127.0.0.1:0", dataDirectory: dataDirectory, port: relayPort, session: session)
        guard let port = await relayPort.wait(timeout: configuration.startupTimeout, while: relay) else {
            throw BenchError.scenarioFailed("the relay did not start: \(relay.exitDescription)")
        }
        var currentRelay = relay

        // 2. The relay's clock versus CLOCK_REALTIME.
        let offsetBefore = try? await relayOffset(port: port)
        if usesMPV && offsetBefore == nil {
            notes.append("the relay's time server did not answer the runner: sampled mpv frames carry reference = realtime")
        }
        let samplerOffset = offsetBefore ?? 0

        // 3. The host.
        stage("starting the host")
        let inviteBox = Port()
        let linkBox = Port()
        let invite = NIOLockedValueBox<String?>(nil)
        let link = NIOLockedValueBox<String?>(nil)
        let host = try ChildProcess(
            name: "host", executable: coplay,
            arguments: ["host", configuration.media, "--relay", "127.0.0.1:\(port)", "--name", "host", "--log-level", "warning"],
            log: log("host")
        ) { line in
            if line.hasPrefix("coplay://") {
                invite.withLockedValue { if $0 == nil { $0 = line } }
                inviteBox.set(1)
            } else if line.hasPrefix("http://") || line.hasPrefix("https://") {
                // The page link for browsers (second line).
                link.withLockedValue { if $0 == nil { $0 = line } }
                linkBox.set(1)
            }
        }
        session.add(host)
        guard await inviteBox.wait(timeout: configuration.startupTimeout, while: host) != nil,
            let hostInvite = invite.withLockedValue({ $0 })
        else {
            throw BenchError.scenarioFailed("the host did not print an invite: \(host.exitDescription)")
        }
        var pageLink = ""
        if usesBrowser {
            guard await linkBox.wait(timeout: 10, while: host) != nil, let printed = link.withLockedValue({ $0 }) else {
                throw BenchError.scenarioFailed("the host printed no page link for browsers (is the session AES-256-GCM?): \(host.exitDescription)")
            }
            pageLink = printed
        }

        // 4 + 5. Proxies and players.
        let roster = NIOLockedValueBox<[LivePlayer]>([])
        var playerInvites: [String] = []
        var playerLinks: [String] = []
        for number in 0..<scenario.players {
            var playerInvite = hostInvite
            var playerLink = pageLink
            if scenario.network.isImpaired {
                let proxy = ImpairmentProxy(
                    configuration: .init(
                        targetPort: port, transports: .both, upstream: scenario.network.upstream,
                        downstream: scenario.network.downstream, seed: configuration.seed &+ UInt64(number)),
                    logger: logger)
                let proxyPort = try await proxy.start()
                session.add(proxy)
                playerInvite = hostInvite.replacingOccurrences(of: "127.0.0.1:\(port)/", with: "127.0.0.1:\(proxyPort)/")
                // The page's origin and the invite inside its fragment (percent-encoded) both name the relay.
                playerLink = pageLink.replacingOccurrences(of: "127.0.0.1:\(port)/", with: "127.0.0.1:\(proxyPort)/")
                    .replacingOccurrences(of: "127.0.0.1%3A\(port)%2F", with: "127.0.0.1%3A\(proxyPort)%2F")
            }
            playerInvites.append(playerInvite)
            playerLinks.append(playerLink)
        }
        let headlessMembers = scenario.players - scenario.browserPages
        func startPlayer(_ number: Int) async throws -> LivePlayer {
            if usesBrowser && number >= headlessMembers {
                // A page in its own headless Chromium, driven by scripts/browser-driver.py.
                let name = "b\(number - headlessMembers + 1)"
                let player = LivePlayer(name: name, startRealtime: RealtimeClock.now(), browserReferenceOffset: samplerOffset)
                player.process = try ChildProcess(
                    name: name, executable: python,
                    arguments: [
                        browserDriver, "--link", playerLinks[number], "--media", configuration.media, "--page", name,
                        "--chromium", configuration.chromium, "--timeout", "\(Int(configuration.startupTimeout))",
                    ],
                    log: log(name)
                ) { [player] line in player.consume(line) }
                session.add(player.process!)
                return player
            }
            let name = "p\(number + 1)"
            let player = LivePlayer(name: name, startRealtime: RealtimeClock.now(), drivesMPV: usesMPV)
            var arguments = ["join", playerInvites[number], configuration.media, "--name", name]
            if usesMPV {
                // The player's mpv (on the machine's clocks), and the benchmark's own sampler of it.
                let socket = socketDirectory.appendingPathComponent("\(name).sock").path
                let mpv = try ChildProcess(
                    name: "\(name)'s mpv", executable: mpvExecutable,
                    arguments: Self.mpvArguments(scenario, socket: socket, media: configuration.media),
                    log: log("\(name)-mpv"), environment: mpvEnvironment)
                session.add(mpv)
                player.attach(mpv: mpv, sampler: nil)
                let sampler = try await MPVFrameSampler.start(
                    socket: socket, player: name, group: session.samplerLoops, timeout: configuration.startupTimeout,
                    alive: { mpv.isRunning }
                ) { [player] frame in
                    player.consumeSampled(frame, referenceOffset: samplerOffset)
                }
                session.add(sampler)
                player.attach(mpv: mpv, sampler: sampler)
                arguments += ["--mpv-socket", socket]
            } else {
                arguments.append("--frames")
            }
            arguments += ["--log-level", "warning"]
            if drifts[number] != 0 { arguments += ["--clock-drift-ppm", "\(drifts[number])"] }
            var executable = coplay
            if namespaces {
                let offset = "\(BenchScenario.clockOffset(ofPlayer: number))"
                arguments = ["--fork", "--kill-child=SIGTERM", "--time", "--monotonic", offset, "--boottime", offset, coplay]
                    + arguments
                executable = "/usr/bin/unshare"
            }
            player.process = try ChildProcess(name: name, executable: executable, arguments: arguments, log: log(name)) {
                [player] line in player.consume(line)
            }
            session.add(player.process!)
            return player
        }
        let initial = script.hasLateJoiner ? scenario.players - 1 : scenario.players
        stage("starting \(initial) players")
        for number in 0..<initial {
            let player = try await startPlayer(number)
            roster.withLockedValue { $0.append(player) }
        }
        let players = roster.withLockedValue { $0 }
        let readyDeadline = ContinuousClock.now + .seconds(configuration.startupTimeout)
        while !players.allSatisfy(\.isReady) {
            try Task.checkCancellation()
            for player in players where !(player.process?.isRunning ?? false) {
                throw BenchError.scenarioFailed("player \(player.process?.exitDescription ?? player.name) before the script started")
            }
            for player in players where !(player.mpv?.isRunning ?? true) {
                throw BenchError.scenarioFailed("\(player.mpv?.exitDescription ?? player.name) before the script started")
            }
            for player in players where !player.isReady {
                if let error = player.browserError {
                    throw BenchError.scenarioFailed("page \(player.name) did not join: \(error)")
                }
            }
            guard ContinuousClock.now < readyDeadline else {
                let late = players.filter { !$0.isReady }.map(\.name)
                throw BenchError.timeout("players \(late.joined(separator: ", ")) to apply the session's state")
            }
            try await Task.sleep(for: .milliseconds(50))
        }

        // mpv with real sound: each mpv must play through the audio server, not fall back to another output.
        if usesMPV && scenario.audioOutput == .pulse {
            for player in players {
                let output = try? await player.sampler?.connection.get("current-ao").data.string
                guard output == "pulse" else {
                    throw BenchError.scenarioFailed("\(player.name)'s mpv plays through \(output ?? "no audio output"), not pulse")
                }
            }
        }

        // 6. The script.
        var commands: [BenchEvent] = []
        var lateJoiner: LivePlayer?
        var restartRealtime: Double?
        /// The `coplay control suspend` running in the background, and the line it printed.
        var suspending: (control: ChildProcess, arguments: [String], line: NIOLockedValueBox<String?>)?
        /// Waits for the background suspension (it should be done by the next action) and checks it.
        func finishSuspension() async throws {
            guard let pending = suspending else { return }
            suspending = nil
            let status = await pending.control.wait(timeout: 60)
            guard status == 0 else {
                await pending.control.stop()
                throw BenchError.scenarioFailed(
                    "`coplay control \(pending.arguments.joined(separator: " "))` failed: \(pending.control.exitDescription)")
            }
            if let line = pending.line.withLockedValue({ $0 }) { notes.append("suspension: \(line)") }
        }
        let start = ContinuousClock.now
        let scriptStartRealtime = RealtimeClock.now()
        let reporter = Task {
            var lastAnalysis = ContinuousClock.now - .seconds(10)
            var p99: Double?
            while !Task.isCancelled {
                let live = roster.withLockedValue { $0 }
                let now = ContinuousClock.now
                if now - lastAnalysis >= .seconds(2) {
                    lastAnalysis = now
                    p99 = Self.recentP99(live, window: 20)
                }
                let elapsed = Double((now - start).components.seconds)
                progress(ScenarioProgress(
                    scenario: scenario.name, elapsed: elapsed, total: script.duration,
                    frames: live.reduce(0) { $0 + $1.frames }, p99SkewMs: p99))
                try? await Task.sleep(for: .seconds(1))
            }
        }
        defer { reporter.cancel() }

        /// Fails the scenario if a process died before the relay restart.
        func checkAlive(_ list: [LivePlayer], at moment: String) throws {
            for player in list where !(player.process?.isRunning ?? false) {
                throw BenchError.scenarioFailed("player \(player.process?.exitDescription ?? player.name) \(moment)")
            }
            for player in list where !(player.mpv?.isRunning ?? true) {
                throw BenchError.scenarioFailed("\(player.mpv?.exitDescription ?? player.name) \(moment)")
            }
            if !host.isRunning { throw BenchError.scenarioFailed("\(host.exitDescription) \(moment)") }
            if !currentRelay.isRunning { throw BenchError.scenarioFailed("\(currentRelay.exitDescription) \(moment)") }
        }
        func sleep(until deadline: ContinuousClock.Instant, moment: String) async throws {
            while ContinuousClock.now < deadline {
                try Task.checkCancellation()
                try checkAlive(roster.withLockedValue { $0 }, at: moment)
                try await Task.sleep(for: .milliseconds(min(200, max(1, (deadline - ContinuousClock.now).milliseconds))))
            }
        }

        /// mpv scenarios: once every player stopped for the pause (or suspension) launched at `issued`
        /// and 0.3 s more have passed, but at least 0.7 s after the launch, every mpv writes its picture.
        var pauseChecks: [PauseFrameCheck] = []
        func checkPauseFrames(_ action: ScenarioAction, issued: Double, settleBy deadline: Double) async throws {
            let label = String(format: "%.1f %@", action.at, action.name)
            let players = roster.withLockedValue { $0 }
            let effect = action.kind == .pause ? "pause" : "suspension"
            while RealtimeClock.now() < deadline,
                !players.allSatisfy({ ($0.lastEffect(effect) ?? 0) >= issued })
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            let settled = max(RealtimeClock.now() + 0.3, issued + 0.7)
            try await Task.sleep(for: .milliseconds(Int(max(0, settled - RealtimeClock.now()) * 1000)))
            let shots = configuration.workDirectory.appendingPathComponent("screenshots")
            try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
            var taken: [PauseFrameCheck.Shot] = []
            var failures: [String: String] = [:]
            for player in players {
                guard let sampler = player.sampler else { continue }
                let file = shots.appendingPathComponent(String(format: "%04.1f-%@-%@.png", action.at, action.name, player.name))
                try? FileManager.default.removeItem(at: file)
                do {
                    try await sampler.screenshot(to: file.path)
                    let position = try? await sampler.connection.number("time-pos")
                    let paused = try? await sampler.connection.get("pause").data.bool
                    taken.append((player.name, file, position, paused))
                } catch {
                    failures[player.name] = "\(error)"
                }
            }
            let frameRate = players.compactMap { $0.sampler?.frameRate }.first
            pauseChecks.append(PauseFrameCheck.compare(label: label, shots: taken, frameRate: frameRate, failures: failures))
        }

        for action in script.actions {
            let moment = String(format: "before the %@ at %.1f s", action.name, action.at)
            try await sleep(until: start + .milliseconds(Int(action.at * 1000)), moment: moment)
            try await finishSuspension()
            switch action.kind {
            case .play, .pause, .seek, .rate, .item:
                guard let arguments = action.controlArguments(item: roster.withLockedValue { $0.first?.item }) else {
                    throw BenchError.scenarioFailed("no player printed the session's item identifier before the item change")
                }
                let issued = RealtimeClock.now()
                let control = try ChildProcess(
                    name: "control \(action.name)", executable: coplay,
                    arguments: ["control", hostInvite] + arguments + ["--log-level", "warning"],
                    log: log("control-\(commands.count + 1)-\(action.name)"))
                session.add(control)
                let status = await control.wait(timeout: 60)
                guard status == 0 else {
                    await control.stop()
                    throw BenchError.scenarioFailed("`coplay control \(arguments.joined(separator: " "))` failed: \(control.exitDescription)")
                }
                commands.append(.command(action.name, target: action.value, realtime: issued, player: "runner"))
                if usesMPV, action.kind == .pause {
                    try await checkPauseFrames(action, issued: issued, settleBy: issued + 3)
                }
            case .lateJoin:
                let player = try await startPlayer(scenario.players - 1)
                roster.withLockedValue { $0.append(player) }
                lateJoiner = player
            case .suspension:
                // Runs for the suspension's length: in the background, so the script keeps its times.
                guard let arguments = action.controlArguments(item: nil) else { break }
                let line = NIOLockedValueBox<String?>(nil)
                let issued = RealtimeClock.now()
                let control = try ChildProcess(
                    name: "control \(action.name)", executable: coplay,
                    arguments: ["control", hostInvite] + arguments + ["--log-level", "warning"],
                    log: log("control-\(commands.count + 1)-\(action.name)")
                ) { text in
                    if text.hasPrefix("suspend accepted") { line.withLockedValue { $0 = text } }
                }
                session.add(control)
                suspending = (control, arguments, line)
                commands.append(.command(action.name, target: action.value, realtime: issued, player: "runner"))
                if usesMPV {
                    // Within the hold: the stop comes about one control start-up after the launch.
                    try await checkPauseFrames(action, issued: issued, settleBy: issued + 3)
                }
            case .relayRestart:
                try checkAlive(roster.withLockedValue { $0 }, at: "before the relay restart")
                restartRealtime = RealtimeClock.now()
                currentRelay.signal(SIGKILL)
                _ = await currentRelay.wait(timeout: 10)
                let restartedPort = Port()
                currentRelay = try startRelay(
                    listen: "127.0.0.1:\(port)", dataDirectory: dataDirectory, port: restartedPort, session: session)
                guard await restartedPort.wait(timeout: configuration.startupTimeout, while: currentRelay) != nil else {
                    throw BenchError.scenarioFailed("the relay did not restart on port \(port): \(currentRelay.exitDescription)")
                }
            }
        }
        try await finishSuspension()
        let end = start + .milliseconds(Int(script.duration * 1000))
        if restartRealtime == nil {
            try await sleep(until: end, moment: "before the end")
        } else {
            while ContinuousClock.now < end {
                try Task.checkCancellation()
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        reporter.cancel()

        // The outcome.
        let everyone = roster.withLockedValue { $0 }
        for player in everyone where player.isBrowser { player.finishBrowser() }
        if let lateJoiner, lateJoiner.firstFrameRealtime == nil {
            throw BenchError.scenarioFailed("the late joiner \(lateJoiner.name) never presented a frame")
        }
        var relayRestart: String?
        if let restartRealtime {
            let lost = everyone.filter { player in
                !(player.process?.isRunning ?? false) || (player.lastFrameRealtime ?? 0) < restartRealtime + 1
            }
            relayRestart = lost.isEmpty
                ? "resumed"
                : "lost: " + lost.map { player in
                    guard let process = player.process, !process.isRunning else {
                        return "\(player.name) presented no frame from 1 s after the restart"
                    }
                    return process.exitSummary
                }.joined(separator: ", ") + " (logs in the work directory)"
        }
        // Opened 20 ms (half a 25 fps frame) before the late joiner's first frame, so the other players'
        // copies of that frame, presented a little earlier, are inside too (not left unmatched).
        let windowStart = lateJoiner?.firstFrameRealtime.map { $0 - 0.02 } ?? scriptStartRealtime
        let windowEnd = restartRealtime ?? RealtimeClock.now()
        var offsetAfter: Double?
        if restartRealtime == nil { offsetAfter = try? await relayOffset(port: port) }
        let offsets = [offsetBefore, offsetAfter].compactMap { $0 }
        if offsets.isEmpty { notes.append("the relay's time server did not answer the runner: no clock-offset truth") }
        if offsets.count == 2 {
            notes.append(String(format: "relay reference minus CLOCK_REALTIME moved %.3f ms during the run", (offsets[1] - offsets[0]) * 1000))
        }

        let records = await session.stopSamplers()
        if usesMPV {
            for record in records where record.ended != nil {
                notes.append("sampler of \(record.player) stopped early: \(record.ended!)")
            }
            writeSamplerRecords(records)
            // Each frame at the date its neighbours allow (FrameCadence), not only its own bracket.
            for record in records {
                everyone.first { $0.name == record.player }?.redateSampled(record)
            }
        }

        var streams = everyone.map { player in
            PlayerEventStream(
                player: player.name,
                events: player.events.filter { $0.realtime >= windowStart && $0.realtime < windowEnd })
        }
        if !streams.isEmpty {
            streams[0].events += commands.filter { $0.realtime >= windowStart && $0.realtime < windowEnd }
        }
        return Run(
            streams: streams, relayOffset: offsets.isEmpty ? nil : offsets.reduce(0, +) / Double(offsets.count),
            relayRestart: relayRestart,
            lateJoinSeconds: lateJoiner.flatMap { player in player.firstFrameRealtime.map { $0 - player.startRealtime } },
            timeNamespaces: namespaces, measuredSeconds: max(0, windowEnd - windowStart), notes: notes,
            samplerRecords: records, pauseChecks: pauseChecks, frameRate: records.compactMap(\.frameRate).first,
            correctionSeeks: Dictionary(uniqueKeysWithValues: everyone.filter { !$0.isBrowser }.map { player in
                (player.name, player.correctionSeeks.filter { $0 >= windowStart && $0 < windowEnd }.count)
            }),
            browsers: Dictionary(uniqueKeysWithValues: everyone.compactMap { player in player.browserSummary.map { (player.name, $0) } }),
            mediaClockFrames: Dictionary(uniqueKeysWithValues: everyone.filter(\.isBrowser).map { ($0.name, $0.mediaClockFrames) }))
    }

    /// The command line (after the executable) of a player's mpv: coplay's options
    /// (``MPVFrameSampler/mpvArguments(socket:)``), or, for a plain launch, what README tells a person
    /// to type: only the socket, no window or sound device, and the media, playing at once.
    static func mpvArguments(_ scenario: BenchScenario, socket: String, media: String) -> [String] {
        let audio = "--ao=\(scenario.audioOutput.rawValue)"
        switch scenario.mpvLaunch {
        case .configured:
            return MPVFrameSampler.mpvArguments(socket: socket).map { $0 == "--ao=null" ? audio : $0 }
        case .plain:
            return ["--input-ipc-server=\(socket)", "--vo=null", audio, media]
        }
    }

    /// Starts `pulseaudio` with a null sink in `directory` (scripts/audio-server.sh does the same by
    /// hand) and returns the environment its clients need.
    private func startAudioServer(in directory: URL, session: Session) async throws -> [String: String] {
        guard let pulseaudio = SyncplayBaseline.findTool("pulseaudio") else { throw BenchError.missingTool("pulseaudio (scripts/install-deps.sh)") }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("native").path
        // Through a shell that passes SIGTERM on: with pulseaudio as a direct child, Foundation's
        // `Process` stopped noticing that the run's later children exited (measured: a child started
        // after it still read as running 2 s after it exited, so every `coplay control` timed out).
        let command = [
            pulseaudio, "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
            "-L", "'module-native-protocol-unix socket=\(socket) auth-anonymous=1'", "-L", "'module-null-sink sink_name=room'",
        ].joined(separator: " ")
        let server = try ChildProcess(
            name: "pulseaudio", executable: "/bin/sh", arguments: ["-c", "trap 'kill $p' TERM INT; \(command) & p=$!; wait $p"],
            log: log("pulseaudio"), environment: ["PULSE_RUNTIME_PATH": directory.path])
        session.add(server)
        let deadline = ContinuousClock.now + .seconds(configuration.startupTimeout)
        while !FileManager.default.fileExists(atPath: socket) {
            guard server.isRunning, ContinuousClock.now < deadline else {
                throw BenchError.scenarioFailed("the audio server did not start: \(server.exitDescription)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return ["PULSE_SERVER": "unix:\(socket)"]
    }

    // MARK: - Browsers

    /// Python 3 with Playwright, the driver script and Chromium, or the reason the scenario cannot run.
    private func browserTools() async throws -> (python: String, driver: String) {
        guard let python = SyncplayBaseline.findTool("python3") else { throw BenchError.missingTool("python3") }
        guard let driver = configuration.browserDriver ?? Self.findBrowserDriver(near: configuration.coplay),
            FileManager.default.isReadableFile(atPath: driver)
        else {
            throw BenchError.scenarioFailed(
                "scripts/browser-driver.py not found (run from the repository, or pass --browser-driver PATH)")
        }
        guard FileManager.default.isExecutableFile(atPath: configuration.chromium) else {
            throw BenchError.missingTool("Chromium (\(configuration.chromium))")
        }
        let check = try ChildProcess(
            name: "python3", executable: python, arguments: ["-c", "import playwright.sync_api"], log: log("playwright-check"))
        guard await check.wait(timeout: 30) == 0 else {
            await check.stop()
            throw BenchError.missingTool("Playwright for Python (pip install playwright; \(python))")
        }
        return (python, driver)
    }

    /// `scripts/browser-driver.py` of the repository: under the current directory, or in a directory
    /// above the `coplay` executable (`.build/<triple>/debug/coplay` sits three levels under the root).
    package static func findBrowserDriver(near executable: String) -> String? {
        let relative = "scripts/browser-driver.py"
        let here = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(relative).path
        if FileManager.default.isReadableFile(atPath: here) { return here }
        let resolved = (try? FileManager.default.destinationOfSymbolicLink(atPath: executable)).map { target in
            target.hasPrefix("/") ? target : URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(target).path
        } ?? executable
        var directory = URL(fileURLWithPath: resolved).deletingLastPathComponent()
        for _ in 0..<6 {
            let candidate = directory.appendingPathComponent(relative).path
            if FileManager.default.isReadableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    // MARK: - Helpers

    /// A value some reader thread fills in once (a port number), awaited by polling.
    final class Port: Sendable {
        private let value = NIOLockedValueBox<Int?>(nil)
        func set(_ port: Int) { value.withLockedValue { if $0 == nil { $0 = port } } }
        func wait(timeout: Double, while child: ChildProcess) async -> Int? {
            let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
            while ContinuousClock.now < deadline {
                if let port = value.withLockedValue({ $0 }) { return port }
                if !child.isRunning || Task.isCancelled { return nil }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return value.withLockedValue { $0 }
        }
    }

    private func startRelay(listen: String, dataDirectory: String, port: Port, session: Session) throws -> ChildProcess {
        try Self.startRelay(coplay: configuration.coplay, listen: listen, dataDirectory: dataDirectory, port: port, session: session, log: log("relay"))
    }

    /// `coplay serve --listen LISTEN --data-dir DIR`, added to `session`; `port` is set to the port
    /// it says it listens on.
    static func startRelay(coplay: String, listen: String, dataDirectory: String, port: Port, session: Session, log: URL) throws -> ChildProcess {
        let relay = try ChildProcess(
            name: "relay", executable: coplay,
            arguments: ["serve", "--listen", listen, "--data-dir", dataDirectory], log: log
        ) { line in
            // "coplay relay listening on 127.0.0.1:39447"
            if line.contains("listening on"), let colon = line.lastIndex(of: ":"),
                let number = Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            {
                port.set(number)
            }
        }
        session.add(relay)
        return relay
    }

    /// The relay's reference clock minus CLOCK_REALTIME, from `coplay time query --json` on loopback.
    private func relayOffset(port: Int) async throws -> Double {
        try await Self.relayOffset(port: port, coplay: configuration.coplay, log: log("time-query"))
    }

    /// The relay's reference clock minus CLOCK_REALTIME, from `coplay time query --json` on loopback
    /// (`coplay` the binary, `log` where its output goes).
    static func relayOffset(port: Int, coplay: String, log: URL) async throws -> Double {
        let text = try await output(of: coplay, ["time", "query", "127.0.0.1:\(port)", "--json", "--samples", "8"], log: log)
        guard let line = text.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let offset = object["offset"] as? Double
        else { throw BenchError.scenarioFailed("coplay time query printed no offset: \(text)") }
        return offset
    }

    /// Runs a short command to completion (at most 30 s) and returns its standard output.
    static func output(of executable: String, _ arguments: [String], log: URL) async throws -> String {
        let lines = NIOLockedValueBox<[String]>([])
        let child = try ChildProcess(name: URL(fileURLWithPath: executable).lastPathComponent, executable: executable,
            arguments: arguments, log: log) { line in lines.withLockedValue { $0.append(line) } }
        if await child.wait(timeout: 30) == nil { await child.stop() }
        try? await Task.sleep(for: .milliseconds(50))  // let the reader drain the pipe
        return lines.withLockedValue { $0 }.joined(separator: "\n")
    }

    /// Whether this machine lets a child have its own CLOCK_MONOTONIC (root + time namespaces).
    static func canUnshareTime() async -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        guard let child = try? ChildProcess(
            name: "unshare", executable: "/usr/bin/unshare",
            arguments: ["--fork", "--kill-child", "--time", "--monotonic", "1000", "true"],
            log: nil)
        else { return false }
        return await child.wait(timeout: 10) == 0
    }

    /// The p99 skew of the frames the players presented in the last `window` seconds.
    static func recentP99(_ players: [LivePlayer], window: Double) -> Double? {
        let cutoff = RealtimeClock.now() - window
        let streams = players.map { player in
            PlayerEventStream(player: player.name, events: player.events.filter { $0.type == "frame" && $0.realtime >= cutoff })
        }
        guard streams.count >= 2, streams.allSatisfy({ !$0.events.isEmpty }) else { return nil }
        return ScenarioAnalysis(name: "live", streams: streams).result.p99SkewMs
    }

    /// Makes a 25 fps (or `frameRate`, as ffmpeg takes it: `30000/1001`) H.264 test clip (160x90) of
    /// `seconds` with ffmpeg, unless it exists: video only, or with `audio` a 440 Hz stereo AAC track
    /// (48 kHz, 64 kb/s) of the same length beside it.
    ///
    /// - Throws: ``BenchError`` when ffmpeg is missing or fails.
    package static func makeMedia(at url: URL, seconds: Int, audio: Bool = false, frameRate: String = "25") async throws {
        if FileManager.default.fileExists(atPath: url.path) { return }
        guard let ffmpeg = SyncplayBaseline.findTool("ffmpeg") else { throw BenchError.missingTool("ffmpeg") }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let partial = url.deletingLastPathComponent().appendingPathComponent(".partial-" + url.lastPathComponent)
        let child = try ChildProcess(
            name: "ffmpeg", executable: ffmpeg,
            arguments: ["-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=\(frameRate)"]
                + (audio ? ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"] : [])
                + ["-t", "\(seconds)", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]
                + (audio ? ["-c:a", "aac", "-b:a", "64k", "-ac", "2"] : [])
                + ["-f", "mp4", "-y", partial.path],
            log: nil)
        let status = await child.wait(timeout: 600)
        guard status == 0 else {
            await child.stop()
            throw BenchError.scenarioFailed("ffmpeg could not make the test clip: \(child.exitDescription)")
        }
        try FileManager.default.moveItem(at: partial, to: url)
    }
}

extension Duration {
    /// The duration in whole milliseconds (rounded down).
    fileprivate var milliseconds: Int {
        Int(components.seconds) * 1000 + Int(components.attoseconds / 1_000_000_000_000_000)
    }
}
