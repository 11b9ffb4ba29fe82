import Foundation
import Logging
import MPVControl
import NetworkEmulation
import NIOCore
import NIOPosix

/// Runs the Syncplay baseline for real: `syncplay-server` and two `syncplay --no-gui` clients, each
/// driving its own mpv (`--vo=null --ao=null`), all on loopback; an action script injected into the
/// first client's mpv; each mpv's frames seen by the benchmark's own ``MPVFrameSampler`` (the same
/// sampler, media and script as the mpv scenarios).
///
/// Syncplay passes arguments after `--` to mpv, and takes the IPC socket path from
/// `--input-ipc-server` when one is given; mpv accepts several clients on that socket, so the runner
/// samples beside Syncplay's own connection. Syncplay's configuration lives in a private
/// `XDG_CONFIG_HOME` (shared playlists off, unpause always allowed, the media directory known), so the
/// user's own settings never leak in. Syncplay's sync thresholds are left at their defaults.
///
/// Every process is stopped when the run ends, fails or is cancelled.
///
/// ```swift
/// let run = try await SyncplayBaseline(configuration: .init(duration: 30), logger: logger).run()
/// let analysis = ScenarioAnalysis(name: "syncplay", streams: run.streams,
///                                 configuration: .init(frameDuration: 1 / run.frameRate, method: "transitions"))
/// ```
package struct SyncplayBaseline: Sendable {
    /// What to run.
    package struct Configuration: Sendable {
        /// Seconds of action script and sampling.
        package var duration: Double
        /// The sampler's sparse interval (seconds): the longest gap between two samples of one player
        /// away from a predicted frame change (``FrameTransitionTracker/Configuration/sparseInterval``).
        package var sampleInterval: Double
        /// The media file; nil makes the scenarios' 25 fps clip of duration + 30 s in the work directory.
        package var media: String?
        /// The players' names; the first one receives the actions.
        package var players: [String]
        /// Where to keep the media, sockets, configuration and logs; nil for a fresh temporary directory
        /// that is removed afterwards.
        package var workDirectory: URL?
        /// The longest wait for the processes to come up (seconds).
        package var startupTimeout: Double
        /// The network between the clients and the server: anything but `quiet` puts an
        /// `ImpairmentProxy` in front of syncplay-server (each client's TCP connection gets its own links).
        package var network: NetworkCondition
        /// The impairment proxy's random seed.
        package var seed: UInt64
        /// The action script run on the first client; nil for ``PlayerAction/defaultScript(duration:)``.
        package var script: [PlayerAction]?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - duration: seconds (default 30).
        ///   - sampleInterval: the sampler's sparse interval, seconds (default 0.005).
        ///   - players: names (default `a`, `b`).
        ///   - workDirectory: nil for a temporary one.
        ///   - startupTimeout: seconds (default 30).
        ///   - network: the network condition (default quiet loopback).
        ///   - seed: the impairment proxy's seed.
        ///   - script: the action script; nil for the default one.
        ///   - media: the media file; nil for a generated clip.
        package init(
            duration: Double = 30, sampleInterval: Double = 0.005, players: [String] = ["a", "b"],
            workDirectory: URL? = nil, startupTimeout: Double = 30, network: NetworkCondition = .quiet, seed: UInt64 = 1,
            script: [PlayerAction]? = nil, media: String? = nil
        ) {
            self.script = script
            self.network = network
            self.seed = seed
            self.duration = duration
            self.sampleInterval = sampleInterval
            self.media = media
            self.players = players
            self.workDirectory = workDirectory
            self.startupTimeout = startupTimeout
        }
    }

    /// What a run produced.
    package struct Run: Sendable {
        /// The players' event streams (the sampler's frames, commands, effects).
        package var streams: [PlayerEventStream]
        /// What each player's sampler saw.
        package var samplerRecords: [MPVFrameSampler.Record]
        /// The command events issued.
        package var commands: [BenchEvent]
        /// The media's frame rate as mpv reported it.
        package var frameRate: Double
        /// The pictures compared at each pause.
        package var pauseChecks: [PauseFrameCheck]
        /// Syncplay's version line.
        package var syncplayVersion: String
        /// mpv's version line.
        package var mpvVersion: String
    }

    /// The configuration.
    package let configuration: Configuration
    private let logger: Logger

    /// Creates a runner.
    package init(configuration: Configuration = Configuration(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The programs the baseline needs, by name.
    package static let requiredTools = ["syncplay", "syncplay-server", "mpv", "ffmpeg"]

    /// The sampler's knobs under this configuration (the frame rate is mpv's).
    var samplerConfiguration: FrameTransitionTracker.Configuration {
        FrameTransitionTracker.Configuration(frameRate: 25, sparseInterval: configuration.sampleInterval)
    }

    /// The path of `name` on `PATH`, or nil.
    package static func findTool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs the baseline.
    ///
    /// - Parameter progress: called with a short line at each stage.
    /// - Throws: ``BenchError`` when a tool is missing, a process does not come up in time, or the
    ///   players never played together.
    package func run(progress: @Sendable (String) -> Void = { _ in }) async throws -> Run {
        var tools: [String: String] = [:]
        for name in Self.requiredTools {
            guard let path = Self.findTool(name) else { throw BenchError.missingTool(name) }
            tools[name] = path
        }
        guard configuration.players.count >= 2 else { throw BenchError.scenarioFailed("needs at least two players") }
        guard configuration.duration >= 5 else { throw BenchError.scenarioFailed("duration must be at least 5 s") }

        let temporary = configuration.workDirectory == nil
        let work =
            configuration.workDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("coplay-syncplay-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let processes = ManagedProcesses()
        do {
            let result = try await run(tools: tools, work: work, processes: processes, progress: progress)
            await processes.terminateAll()
            if temporary { try? FileManager.default.removeItem(at: work) }
            return result
        } catch {
            await processes.terminateAll()
            logger.info("syncplay baseline failed; logs kept", metadata: ["directory": "\(work.path)"])
            if error is CancellationError { throw error }
            throw BenchError.scenarioFailed("\(error) (media and Syncplay logs kept in \(work.path))")
        }
    }

    private func run(
        tools: [String: String], work: URL, processes: ManagedProcesses, progress: @Sendable (String) -> Void
    ) async throws -> Run {
        let media: URL
        if let given = configuration.media {
            guard FileManager.default.isReadableFile(atPath: given) else {
                throw BenchError.scenarioFailed("media file \(given) does not exist or is not readable")
            }
            media = URL(fileURLWithPath: given)
        } else {
            media = work.appendingPathComponent("media.mp4")
            progress("making a \(Int(configuration.duration + 30)) s test clip with ffmpeg")
            try await CoplayScenarioRunner.makeMedia(at: media, seconds: Int((configuration.duration + 30).rounded(.up)))
        }

        let home = work.appendingPathComponent("home")
        let xdg = home.appendingPathComponent(".config")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        try Data(
            """
            [client_settings]
            sharedPlaylistEnabled = False
            unpauseAction = Always
            pauseOnLeave = False
            mediaSearchDirectories = ['\(media.deletingLastPathComponent().path)']

            [general]
            checkForUpdatesAutomatically = False

            """.utf8
        ).write(to: xdg.appendingPathComponent("syncplay.ini"))
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["XDG_CONFIG_HOME"] = xdg.path
        environment.removeValue(forKey: "DISPLAY")
        environment.removeValue(forKey: "WAYLAND_DISPLAY")

        let port = try await Self.freeTCPPort()
        progress("starting syncplay-server on 127.0.0.1:\(port)")
        try processes.start(
            tools["syncplay-server"]!, ["--port", "\(port)", "--disable-chat"], environment: environment,
            log: work.appendingPathComponent("server.log"))
        try await waitForTCP(port: port, processes: processes)

        var clientPort = port
        var proxy: ImpairmentProxy?
        if configuration.network.isImpaired {
            let impairment = ImpairmentProxy(
                configuration: .init(
                    targetPort: port, transports: .tcp, upstream: configuration.network.upstream,
                    downstream: configuration.network.downstream, seed: configuration.seed),
                logger: logger)
            clientPort = try await impairment.start()
            proxy = impairment
            progress("clients reach the server through the \(configuration.network.name) impairment proxy on port \(clientPort)")
        }
        do {
            let result = try await runClients(
                tools: tools, work: work, media: media, port: clientPort, environment: environment,
                processes: processes, progress: progress)
            try await proxy?.stop()
            return result
        } catch {
            try? await proxy?.stop()
            throw error
        }
    }

    private func runClients(
        tools: [String: String], work: URL, media: URL, port: Int, environment: [String: String],
        processes: ManagedProcesses, progress: @Sendable (String) -> Void
    ) async throws -> Run {

        var sockets: [String: String] = [:]
        for player in configuration.players {
            let socket = work.appendingPathComponent("\(player).sock").path
            sockets[player] = socket
            progress("starting syncplay client \(player) with mpv")
            try processes.start(
                tools["syncplay"]!,
                [
                    "--no-gui", "--no-store", "-a", "127.0.0.1:\(port)", "-n", player, "-r", "coplay-bench",
                    "--player-path", tools["mpv"]!, media.path, "--",
                    "--vo=null", "--ao=null", "--input-ipc-server=\(socket)", "--really-quiet",
                ], environment: environment, log: work.appendingPathComponent("client-\(player).log"))
        }
        // The samplers' own event loop, so their stamps do not wait behind the impairment proxy's.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var samplers: [MPVFrameSampler] = []
        do {
            for player in configuration.players {
                samplers.append(
                    try await startSampler(socket: sockets[player]!, player: player, group: group, processes: processes))
            }
            let run = try await measure(
                samplers: samplers, work: work, tools: tools, environment: environment, processes: processes, progress: progress)
            try? await group.shutdownGracefully()
            return run
        } catch {
            for sampler in samplers { await sampler.stop() }
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Runs the action script on the first client's mpv while every client's sampler records its frames;
    /// after each pause has settled (0.7 s), compares the mpvs' pictures.
    private func measure(
        samplers: [MPVFrameSampler], work: URL, tools: [String: String], environment: [String: String],
        processes: ManagedProcesses, progress: @Sendable (String) -> Void
    ) async throws -> Run {
        // Let Syncplay exchange its first states before the script starts.
        try await Task.sleep(for: .seconds(2))

        progress("running the action script for \(Int(configuration.duration)) s")
        let script = configuration.script ?? PlayerAction.defaultScript(duration: configuration.duration)
        let controller = samplers[0]
        let start = ContinuousClock.now
        var commands: [BenchEvent] = []
        var pauseChecks: [PauseFrameCheck] = []
        let shots = work.appendingPathComponent("screenshots")
        for (number, action) in script.enumerated() {
            try await Task.sleep(until: start + .seconds(action.at), clock: .continuous)
            let id = "c\(number + 1)"
            let arguments: [any Sendable]
            var target: Double?
            switch action.kind {
            case .play: arguments = ["set_property", "pause", false]
            case .pause: arguments = ["set_property", "pause", true]
            case .seek(let position):
                arguments = ["seek", position, "absolute"]
                target = position
            }
            let issued = RealtimeClock.now()
            try await controller.connection.run(arguments)
            commands.append(.command(action.name, target: target, id: id, realtime: issued, player: controller.player))
            if case .pause = action.kind {
                try await Task.sleep(until: start + .seconds(action.at + 0.7), clock: .continuous)
                try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
                pauseChecks.append(
                    await Self.comparePictures(
                        samplers, label: String(format: "%.1f pause", action.at), directory: shots))
            }
        }
        try await Task.sleep(until: start + .seconds(configuration.duration), clock: .continuous)
        var records: [MPVFrameSampler.Record] = []
        for sampler in samplers { records.append(await sampler.stop()) }
        for record in records {
            try? record.jsonLines().write(to: work.appendingPathComponent("\(record.player)-sampler.jsonl"))
        }
        let exited = processes.exited
        if !exited.isEmpty {
            throw BenchError.scenarioFailed("a Syncplay process exited during the run (pid \(exited[0].pid))")
        }
        guard let frameRate = records.compactMap(\.frameRate).first else {
            throw BenchError.scenarioFailed("mpv reported no frame rate for the media")
        }
        let syncplayVersion = try await Self.output(tools["syncplay"]!, ["--version"], environment: environment)
        let mpvVersion = try await Self.output(tools["mpv"]!, ["--version"], environment: environment)
        let streams = SampledPlayback().streams(records: records, commands: commands)
        return Run(
            streams: streams, samplerRecords: records, commands: commands, frameRate: frameRate, pauseChecks: pauseChecks,
            syncplayVersion: syncplayVersion.split(separator: "\n").first.map(String.init) ?? "",
            mpvVersion: mpvVersion.split(separator: "\n").first.map(String.init) ?? "")
    }

    /// Every sampler's mpv writes its picture into `directory`; the pictures are compared.
    static func comparePictures(_ samplers: [MPVFrameSampler], label: String, directory: URL) async -> PauseFrameCheck {
        var shots: [PauseFrameCheck.Shot] = []
        var failures: [String: String] = [:]
        for sampler in samplers {
            let file = directory.appendingPathComponent("\(label.replacingOccurrences(of: " ", with: "-"))-\(sampler.player).png")
            try? FileManager.default.removeItem(at: file)
            do {
                try await sampler.screenshot(to: file.path)
                let position = try? await sampler.connection.number("time-pos")
                let paused = try? await sampler.connection.get("pause").data.bool
                shots.append((sampler.player, file, position, paused))
            } catch {
                failures[sampler.player] = "\(error)"
            }
        }
        return PauseFrameCheck.compare(
            label: label, shots: shots, frameRate: samplers.compactMap(\.frameRate).first, failures: failures)
    }

    private func waitForTCP(port: Int, processes: ManagedProcesses) async throws {
        let deadline = ContinuousClock.now + .seconds(configuration.startupTimeout)
        while ContinuousClock.now < deadline {
            if !processes.exited.isEmpty { throw BenchError.scenarioFailed("syncplay-server exited at start") }
            if let channel = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: port).get()
            {
                try? await channel.close()
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw BenchError.timeout("syncplay-server to listen on port \(port)")
    }

    /// Connects a sampler to the client's mpv once it opened its socket, and waits until mpv has
    /// loaded the media (the sampler then knows its frame rate).
    private func startSampler(
        socket: String, player: String, group: any EventLoopGroup, processes: ManagedProcesses
    ) async throws -> MPVFrameSampler {
        let sampler = try await MPVFrameSampler.start(
            socket: socket, player: player, configuration: samplerConfiguration, group: group,
            timeout: configuration.startupTimeout, alive: { processes.exited.isEmpty })
        let deadline = ContinuousClock.now + .seconds(configuration.startupTimeout)
        while !sampler.isReady {
            guard processes.exited.isEmpty else {
                await sampler.stop()
                throw BenchError.scenarioFailed("a Syncplay process exited at start (see the client logs)")
            }
            guard ContinuousClock.now < deadline else {
                await sampler.stop()
                throw BenchError.timeout("mpv of \(player) to load the media")
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return sampler
    }

    /// A TCP port that was free a moment ago on 127.0.0.1.
    static func freeTCPPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    /// Runs a program briefly and returns its standard output.
    static func output(_ executable: String, _ arguments: [String], environment: [String: String]) async throws
        -> String
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = await Task.detached { pipe.fileHandleForReading.readDataToEndOfFile() }.value
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
