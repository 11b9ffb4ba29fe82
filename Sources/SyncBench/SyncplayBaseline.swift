import Foundation
import Logging
import NetworkEmulation
import NIOCore
import NIOPosix

/// Runs the Syncplay baseline for real: `syncplay-server` and two `syncplay --no-gui` clients, each
/// driving its own mpv (`--vo=null --ao=null`), all on loopback; an action script injected into the
/// first client's mpv; both mpv positions sampled over their JSON IPC.
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
///                                 configuration: .init(frameDuration: 0.04, method: "sampled"))
/// ```
public struct SyncplayBaseline: Sendable {
    /// What to run.
    public struct Configuration: Sendable {
        /// Seconds of action script and sampling.
        public var duration: Double
        /// Seconds between samples of each player.
        public var sampleInterval: Double
        /// The media's frame rate (the runner makes the media).
        public var frameRate: Double
        /// The players' names; the first one receives the actions.
        public var players: [String]
        /// Where to keep the media, sockets, configuration and logs; nil for a fresh temporary directory
        /// that is removed afterwards.
        public var workDirectory: URL?
        /// The longest wait for the processes to come up (seconds).
        public var startupTimeout: Double
        /// The network between the clients and the server: anything but `quiet` puts an
        /// ``ImpairmentProxy`` in front of syncplay-server (each client's TCP connection gets its own links).
        public var network: NetworkCondition
        /// The impairment proxy's random seed.
        public var seed: UInt64
        /// The action script run on the first client; nil for ``PlayerAction/defaultScript(duration:)``.
        public var script: [PlayerAction]?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - duration: seconds (default 30).
        ///   - sampleInterval: seconds (default 0.02).
        ///   - frameRate: frames per second (default 25).
        ///   - players: names (default `a`, `b`).
        ///   - workDirectory: nil for a temporary one.
        ///   - startupTimeout: seconds (default 30).
        ///   - network: the network condition (default quiet loopback).
        ///   - seed: the impairment proxy's seed.
        ///   - script: the action script; nil for the default one.
        public init(
            duration: Double = 30, sampleInterval: Double = 0.02, frameRate: Double = 25, players: [String] = ["a", "b"],
            workDirectory: URL? = nil, startupTimeout: Double = 30, network: NetworkCondition = .quiet, seed: UInt64 = 1,
            script: [PlayerAction]? = nil
        ) {
            self.script = script
            self.network = network
            self.seed = seed
            self.duration = duration
            self.sampleInterval = sampleInterval
            self.frameRate = frameRate
            self.players = players
            self.workDirectory = workDirectory
            self.startupTimeout = startupTimeout
        }
    }

    /// What a run produced.
    public struct Run: Sendable {
        /// The players' event streams (frames synthesized from samples, commands, effects).
        public var streams: [PlayerEventStream]
        /// The raw samples.
        public var samples: [PositionSample]
        /// The command events issued.
        public var commands: [BenchEvent]
        /// The largest IPC round trip seen (seconds): twice the worst sample attribution error.
        public var maxRoundTrip: Double
        /// Syncplay's version line.
        public var syncplayVersion: String
        /// mpv's version line.
        public var mpvVersion: String
    }

    /// The configuration.
    public let configuration: Configuration
    private let logger: Logger

    /// Creates a runner.
    public init(configuration: Configuration = Configuration(), logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The programs the baseline needs, by name.
    public static let requiredTools = ["syncplay", "syncplay-server", "mpv", "ffmpeg"]

    /// The path of `name` on `PATH`, or nil.
    public static func findTool(_ name: String) -> String? {
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
    public func run(progress: @Sendable (String) -> Void = { _ in }) async throws -> Run {
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
        let media = work.appendingPathComponent("media.mp4")
        progress("making a \(Int(configuration.duration + 30)) s test clip with ffmpeg")
        try await makeMedia(ffmpeg: tools["ffmpeg"]!, at: media, seconds: configuration.duration + 30)

        let home = work.appendingPathComponent("home")
        let xdg = home.appendingPathComponent(".config")
        try FileManager.default.createDirectory(at: xdg, withIntermediateDirectories: true)
        try Data(
            """
            [client_settings]
            sharedPlaylistEnabled = False
            unpauseAction = Always
            pauseOnLeave = False
            mediaSearchDirectories = ['\(work.path)']

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
        var clients: [MPVIPCClient] = []
        do {
            for player in configuration.players {
                clients.append(try await connectWhenLoaded(socket: sockets[player]!, player: player, processes: processes))
            }
            let run = try await measure(clients: clients, tools: tools, environment: environment, processes: processes, progress: progress)
            for client in clients { await client.close() }
            return run
        } catch {
            for client in clients { await client.close() }
            throw error
        }
    }

    /// Runs the action script on the first client while sampling every client.
    private func measure(
        clients: [MPVIPCClient], tools: [String: String], environment: [String: String], processes: ManagedProcesses,
        progress: @Sendable (String) -> Void
    ) async throws -> Run {
        // Let Syncplay exchange its first states before the script starts.
        try await Task.sleep(for: .seconds(2))
        for client in clients {
            guard try await client.number("duration") != nil else {
                throw BenchError.scenarioFailed("mpv of \(client.player) has no media loaded")
            }
        }

        progress("running the action script for \(Int(configuration.duration)) s")
        let script = configuration.script ?? PlayerAction.defaultScript(duration: configuration.duration)
        let controller = clients[0]
        let interval = configuration.sampleInterval
        let duration = configuration.duration
        let start = ContinuousClock.now
        let (samples, commands) = try await withThrowingTaskGroup(
            of: ([PositionSample], [BenchEvent]).self
        ) { group in
            for client in clients {
                group.addTask {
                    var samples: [PositionSample] = []
                    var next = start
                    while next < start + .seconds(duration) {
                        samples.append(try await client.sample())
                        next += .seconds(interval)
                        try await Task.sleep(until: next, clock: .continuous)
                    }
                    return (samples, [])
                }
            }
            group.addTask {
                var commands: [BenchEvent] = []
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
                    try await controller.run(arguments)
                    commands.append(
                        .command(action.name, target: target, id: id, realtime: issued, player: controller.player))
                }
                try await Task.sleep(until: start + .seconds(duration), clock: .continuous)
                return ([], commands)
            }
            var samples: [PositionSample] = []
            var commands: [BenchEvent] = []
            for try await (s, c) in group {
                samples += s
                commands += c
            }
            return (samples, commands)
        }
        let exited = processes.exited
        if !exited.isEmpty {
            throw BenchError.scenarioFailed("a Syncplay process exited during the run (pid \(exited[0].pid))")
        }
        let syncplayVersion = try await Self.output(tools["syncplay"]!, ["--version"], environment: environment)
        let mpvVersion = try await Self.output(tools["mpv"]!, ["--version"], environment: environment)
        let streams = SampledPlayback(frameRate: configuration.frameRate)
            .streams(samples: samples, commands: commands, players: configuration.players)
        return Run(
            streams: streams, samples: samples, commands: commands,
            maxRoundTrip: samples.map { $0.received - $0.sent }.max() ?? 0,
            syncplayVersion: syncplayVersion.split(separator: "\n").first.map(String.init) ?? "",
            mpvVersion: mpvVersion.split(separator: "\n").first.map(String.init) ?? "")
    }

    private func makeMedia(ffmpeg: String, at url: URL, seconds: Double) async throws {
        let rate = Int(configuration.frameRate)
        let arguments = [
            "-nostdin", "-v", "error", "-y",
            "-f", "lavfi", "-i", "testsrc2=rate=\(rate):size=320x240",
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
            "-t", String(format: "%.0f", seconds.rounded(.up)),
            "-c:v", "mpeg4", "-q:v", "5", "-g", "\(rate)", "-c:a", "aac", url.path,
        ]
        let status = try await Self.wait(for: ffmpeg, arguments, timeout: 120)
        guard status == 0, FileManager.default.fileExists(atPath: url.path) else {
            throw BenchError.scenarioFailed("ffmpeg could not make the test clip (exit \(status))")
        }
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

    private func connectWhenLoaded(socket: String, player: String, processes: ManagedProcesses) async throws
        -> MPVIPCClient
    {
        let deadline = ContinuousClock.now + .seconds(configuration.startupTimeout)
        while ContinuousClock.now < deadline {
            if !processes.exited.isEmpty {
                throw BenchError.scenarioFailed("a Syncplay process exited at start (see the client logs)")
            }
            if FileManager.default.fileExists(atPath: socket),
                let client = try? await MPVIPCClient.connect(path: socket, player: player)
            {
                if (try? await client.number("duration")) != nil { return client }
                await client.close()
            }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw BenchError.timeout("mpv of \(player) to load the media")
    }

    /// A TCP port that was free a moment ago on 127.0.0.1.
    static func freeTCPPort() async throws -> Int {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let port = channel.localAddress?.port ?? 0
        try await channel.close()
        return port
    }

    /// Runs a program to completion (killed after `timeout` seconds) and returns its exit status.
    static func wait(for executable: String, _ arguments: [String], timeout: Double) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(timeout)
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill(-process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                throw BenchError.timeout("\(executable) to finish")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
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
