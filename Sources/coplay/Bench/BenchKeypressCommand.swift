import ArgumentParser
import BenchmarkSupport
import Foundation
import MPVControl
import SyncBench
import Synchronization

/// `coplay bench keypress`: how long a pause typed in one mpv takes to stop every mpv of the group,
/// and whether they all stop on the same frame.
struct BenchKeypressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keypress",
        abstract: "Measure keypress-to-all-stopped: a pause typed in one mpv stops every mpv player.",
        discussion: """
            Starts a relay, a headless host and N mpv players (each an mpv with --vo=null --ao=null driven by \
            `coplay join --mpv-socket`), all on loopback. Each round: the group plays for a while (`coplay \
            control play`), then the space key is sent to the first mpv through its IPC (`keypress space`, \
            the same path as a key typed in its window), and every mpv's `pause` and `time-pos` are polled \
            every millisecond until all are paused on the same frame; then each mpv's decoded picture \
            (`screenshot-to-file … video`) is compared byte for byte. Reports keypress-to-all-stopped \
            (p50/p95/max) and the share of pauses on which every player shows the identical picture.

            Example: coplay bench keypress --players 3 --rounds 20
            """
    )

    @Option(help: "mpv players (at least 2).")
    var players = 3

    @Option(help: "Pauses to measure.")
    var rounds = 20

    @Option(help: "Seconds of playing before each keypress.")
    var playSeconds = 1.5

    @Option(help: "A media file (default: a 60 s, 25 fps clip with audio made with ffmpeg).")
    var media: String?

    @Option(help: "Keep the work directory (logs, media) here.")
    var out: String?

    func validate() throws {
        guard players >= 2 else { throw ValidationError("--players must be at least 2") }
        guard (1...1000).contains(rounds) else { throw ValidationError("--rounds must be 1-1000") }
        guard playSeconds.isFinite, playSeconds >= 0.3, playSeconds <= 60 else { throw ValidationError("--play-seconds must be 0.3-60") }
    }

    func run() async throws {
        let mpv = try MPVProcess.findExecutable()
        let coplay = CommandLine.arguments[0].hasPrefix("/") ? CommandLine.arguments[0] : FileManager.default.currentDirectoryPath + "/" + CommandLine.arguments[0]
        let work = URL(fileURLWithPath: out ?? NSTemporaryDirectory() + "coplay-keypress-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let file: String
        if let media { file = media } else { file = try await Self.makeMedia(in: work) }
        var children: [ChildProcess] = []
        defer { for child in children { child.signal(SIGKILL) } }
        func log(_ name: String) -> URL { work.appendingPathComponent("\(name).log") }
        func progress(_ line: String) { Console.err.write("bench keypress: \(line)\n") }

        let port = Int.random(in: 30000..<60000)
        progress("relay on 127.0.0.1:\(port), \(players) mpv players, \(rounds) rounds; work directory \(work.path)")
        children.append(try ChildProcess(name: "relay", executable: coplay, arguments: ["serve", "--listen", "127.0.0.1:\(port)", "--memory-only"], log: log("relay")))
        try await Task.sleep(for: .milliseconds(500))
        let invite = Box()
        let host = try ChildProcess(
            name: "host", executable: coplay, arguments: ["host", file, "--relay", "127.0.0.1:\(port)", "--log-level", "warning"],
            log: log("host")
        ) { line in if line.hasPrefix("coplay://") { invite.set(line) } }
        children.append(host)
        guard let hostInvite = await invite.wait(seconds: 30) else { throw ValidationError("the host printed no invite: \(host.exitDescription)") }

        var connections: [MPVConnection] = []
        for number in 1...players {
            let socket = work.appendingPathComponent("mpv\(number).sock").path
            children.append(try ChildProcess(
                name: "mpv\(number)", executable: mpv,
                arguments: MPVProcess.baseArguments + MPVProcess.headlessArguments + ["--input-ipc-server=\(socket)"], log: log("mpv\(number)")))
            let connection = try await Self.connect(socket)
            connections.append(connection)
            children.append(try ChildProcess(
                name: "m\(number)", executable: coplay,
                arguments: ["join", hostInvite, file, "--mpv-socket", socket, "--name", "m\(number)", "--log-level", "warning"],
                log: log("m\(number)")))
        }
        // Every player has the file open and the group's state applied.
        for connection in connections {
            try await Self.poll(seconds: 60) { (try? await connection.get("path"))?.data.string != nil }
        }
        try await Task.sleep(for: .seconds(1))

        var latencies: [Double] = []
        var sameFrame = 0
        for round in 1...rounds {
            let play = try ChildProcess(name: "control", executable: coplay, arguments: ["control", hostInvite, "play"], log: nil)
            guard await play.wait(timeout: 30) == 0 else { throw ValidationError("coplay control play failed: \(play.exitDescription)") }
            try await Self.poll(seconds: 10) {
                for connection in connections where (try? await connection.get("pause"))?.data.bool != false { return false }
                return true
            }
            try await Task.sleep(for: .seconds(playSeconds))
            let reply = try await connections[0].command(["keypress", "space"])
            let pressed = reply.sent
            var stopped: Double?
            var frames: [Double?] = []
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                var paused = true
                frames = []
                var last = 0.0
                for connection in connections {
                    let pause = try await connection.get("pause")
                    let position = try await connection.get("time-pos")
                    paused = paused && pause.data.bool == true
                    frames.append(position.data.number)
                    last = max(last, position.received)
                }
                if paused && stopped == nil { stopped = last }
                // All paused, all on one frame, and that frame held: settled.
                if paused, let first = frames.first, first != nil, frames.allSatisfy({ $0 == first }) { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            guard let stopped else { throw ValidationError("round \(round): the players did not all stop within 10 s") }
            let latency = (stopped - pressed) * 1000
            latencies.append(latency)
            // The decoded pictures themselves, byte for byte (mpv's PNGs of one frame are identical), once
            // no mpv is still seeking: a snapping seek reports its target in time-pos before the frame is
            // decoded.
            try await Self.poll(seconds: 5) {
                for connection in connections where (try? await connection.get("seeking"))?.data.bool != false { return false }
                return true
            }
            try await Task.sleep(for: .milliseconds(100))
            var pictures: [Data] = []
            for (index, connection) in connections.enumerated() {
                let path = work.appendingPathComponent("round\(round)-m\(index + 1).png").path
                try await connection.run(["screenshot-to-file", path, "video"])
                pictures.append((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data())
            }
            let agreed = !pictures[0].isEmpty && pictures.allSatisfy { $0 == pictures[0] }
            if agreed { sameFrame += 1 }
            progress(String(format: "round %d: all stopped %.1f ms after the key; frames %@; pictures %@", round, latency,
                            frames.map { $0.map { String(format: "%.3f", $0) } ?? "-" }.joined(separator: " "),
                            agreed ? "identical" : "DIFFERENT"))
        }
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double { Statistics.percentileOfSorted(sorted, p) ?? .nan }
        print(String(
            format: "keypress-to-all-stopped over %d rounds, %d mpv players: p50 %.1f ms, p95 %.1f ms, max %.1f ms; identical pictures on %d of %d pauses",
            rounds, players, percentile(0.5), percentile(0.95), sorted.last ?? 0, sameFrame, rounds))
        for connection in connections { await connection.close() }
        if out == nil { try? FileManager.default.removeItem(at: work) }
    }

    static func makeMedia(in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("keypress-25.mp4").path
        let ffmpeg = try ChildProcess(
            name: "ffmpeg", executable: "/usr/bin/ffmpeg",
            arguments: [
                "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=60", "-f", "lavfi",
                "-i", "sine=frequency=440:sample_rate=48000:duration=60", "-c:v", "libx264", "-preset", "veryfast", "-g", "12",
                "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "-y", path,
            ], log: nil)
        guard await ffmpeg.wait(timeout: 120) == 0 else { throw ValidationError("ffmpeg could not make the clip: \(ffmpeg.exitDescription)") }
        return path
    }

    static func connect(_ socket: String) async throws -> MPVConnection {
        try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(20))
    }

    static func poll(seconds: Double, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while !(await condition()) {
            guard ContinuousClock.now < deadline else { throw ValidationError("timed out after \(seconds) s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A line some reader thread fills in once.
    final class Box: Sendable {
        private let value = Mutex<String?>(nil)
        func set(_ line: String) { value.withLock { if $0 == nil { $0 = line } } }
        func wait(seconds: Double) async -> String? {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if let line = value.withLock({ $0 }) { return line }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }
    }
}
