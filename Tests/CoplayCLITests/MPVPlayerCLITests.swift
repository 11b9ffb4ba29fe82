import Foundation
import MPVControl
import Testing

/// `coplay join --player mpv` and `--mpv-socket` end to end: a real relay, a headless host, real mpv
/// processes (no window: `--vo=null --ao=null`), the person's key presses sent through mpv's IPC.
@Suite("coplay with real mpv players", .serialized)
struct MPVPlayerCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    static let mpv = "/usr/bin/mpv"

    /// A 30 s, 25 fps clip with an AAC audio track (no test's script reaches its end on a loaded machine).
    static func makeMedia(in directory: URL, audio: Bool = true) async throws -> String {
        try await MPVPlainCLITests.makeMedia(in: directory, fps: 25, seconds: 30, audio: audio)
    }

    /// An mpv the test runs itself, as a person would, with its IPC socket.
    static func startMPV(socket: String) async throws -> Child {
        try await Child(
            MPVProcess.baseArguments + MPVProcess.headlessArguments + ["--input-ipc-server=\(socket)"],
            executable: URL(fileURLWithPath: mpv))
    }

    static func connect(_ socket: String) async throws -> MPVConnection {
        try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(20))
    }

    static func events(_ child: Child) -> [[String: Any]] { PlaybackSessionCLITests.events(child.out.snapshot) }

    /// The `stopped` events printed after the last `pause` line that `originator` caused.
    static func stoppedAfterPause(by originator: String, in child: Child) -> [String: Any]? {
        let all = events(child)
        guard let pause = all.lastIndex(where: { $0["type"] as? String == "pause" && $0["originator"] as? String == originator })
        else { return nil }
        return all[pause...].last { $0["type"] as? String == "stopped" }
    }

    @Test("a pause, a seek and a speed key typed in one mpv move every player, mpv and headless; the pause lands on one frame", .timeLimit(.minutes(4)))
    func keypressPausesEveryone() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-mpv-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }

        let (_, _, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [media], hostArguments: ["--name", "host", "--frames"], children: &children)

        // One mpv the person runs (attached with --mpv-socket), one that coplay starts itself.
        let socket = directory.appendingPathComponent("person.sock").path
        let personMPV = try await Self.startMPV(socket: socket)
        children.append(personMPV)
        _ = try await Self.connect(socket)
        let attached = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "ma"])
        children.append(attached)
        let launched = try await Child(["join", invite, media, "--player", "mpv", "--mpv-arg=--ao=null", "--name", "mb"])
        children.append(launched)
        for member in [attached, launched] {
            #expect(await member.out.wait(for: .seconds(60)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "joined" }
            }, "a member did not join: \(member.err.snapshot.suffix(5))")
        }

        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        let person = try await Self.connect(socket)
        defer { Task { await person.close() } }
        #expect(await host.out.wait(for: .seconds(30)) { lines in
            PlaybackSessionCLITests.frames(lines).count > 40
        }, "the group never played")

        // The person presses the pause key in their mpv.
        try await person.run(["keypress", "space"])
        var stops: [[String: Any]] = []
        for (name, child) in [("host", host), ("ma", attached), ("mb", launched)] {
            let stopped = await child.out.wait(for: .seconds(30)) { _ in Self.stoppedAfterPause(by: "ma", in: child) != nil }
            #expect(stopped, "\(name) did not stop after the keypress: \(child.out.snapshot.suffix(4)) \(child.err.snapshot.suffix(4))")
            if let stop = Self.stoppedAfterPause(by: "ma", in: child) { stops.append(stop) }
        }
        try #require(stops.count == 3)
        let itemTimes = stops.compactMap { $0["itemTime"] as? Double }
        #expect(itemTimes.count == 3 && Set(itemTimes.map { ($0 * 1e6).rounded() }).count == 1, "stopped at different times: \(itemTimes)")
        // The person's mpv shows the group's frame: the frame on screen at that item time.
        let pauseTime = try #require(itemTimes.first)
        var shown: Double?
        let settled = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < settled {
            shown = try await person.number("time-pos")
            if let shown, Int((shown * 25 + 1e-3).rounded(.down)) == Int((pauseTime * 25 + 1e-6).rounded(.down)) { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(shown.map { Int(($0 * 25 + 1e-3).rounded(.down)) } == Int((pauseTime * 25 + 1e-6).rounded(.down)), "mpv shows \(shown ?? -1), the group paused at \(pauseTime)")
        #expect(stops[0]["index"] as? Int == Int((pauseTime * 25 + 1e-6).rounded(.down)), "the headless host stopped on another frame: \(stops[0])")
        // The adapter's own pause did not echo back as a second command.
        let pauses = Self.events(attached).filter { $0["type"] as? String == "pause" && $0["originator"] as? String == "ma" }
        #expect(pauses.count == 1, "the keypress became \(pauses.count) pause commands")

        // The person's seek key (RIGHT: 5 s ahead) and speed key (]: x1.1) in mpv move the whole group too.
        let resume = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(resume.status == 0, "control play failed: \(resume.stderr)")
        #expect(await launched.out.wait(for: .seconds(30)) { lines in
            PlaybackSessionCLITests.events(lines).filter { $0["type"] as? String == "play" }.count >= 2
        })
        // The person's mpv playing again first: a key pressed while the adapter is still starting the
        // group's motion (its own seek to the start frame) can be taken for the adapter's own and lost
        // (seen once in a fresh-clone CI run; a known limit of the echo rule, issue 22's notes).
        let playing = ContinuousClock.now + .seconds(10)
        let before = try await person.number("time-pos") ?? 0
        while ContinuousClock.now < playing {
            if let now = try await person.number("time-pos"), now > before + 0.5 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try await person.run(["keypress", "RIGHT"])
        for (name, child) in [("host", host), ("mb", launched)] {
            #expect(await child.out.wait(for: .seconds(30)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "seek" && $0["originator"] as? String == "ma" }
            }, "\(name) did not follow the person's seek key")
        }
        try await person.run(["keypress", "]"])
        for (name, child) in [("host", host), ("mb", launched)] {
            #expect(await child.out.wait(for: .seconds(30)) { lines in
                PlaybackSessionCLITests.events(lines).contains {
                    $0["type"] as? String == "rate" && $0["originator"] as? String == "ma"
                        && abs((($0["rate"] as? Double) ?? 0) - 1.1) < 0.001
                }
            }, "\(name) did not follow the person's speed key")
        }
        // None of the adapter's own seeks and trims came back as the person's commands.
        let proposed = Self.events(attached).filter { ["seek", "rate"].contains($0["type"] as? String) && $0["originator"] as? String == "ma" }
        #expect(proposed.count == 2, "the person's two keys became \(proposed.count) commands")

        // The person quits their mpv: that member leaves cleanly, the others carry on.
        try? await person.run(["quit"])
        #expect(await attached.out.wait(for: .seconds(30)) { _ in !attached.process.isRunning }, "the member did not end when its mpv quit")
        #expect(attached.process.termination == .exited(0), "\(String(describing: attached.process.termination)): \(attached.err.snapshot.suffix(4))")
        #expect(await host.out.wait(for: .seconds(30)) { lines in
            PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "left" && $0["originator"] as? String == "ma" }
        })
        #expect(launched.process.isRunning, "the other mpv member stopped too")
    }

    /// A private X server (Xvfb) on a free display number, for as long as the child runs.
    static func startXvfb() async throws -> (Child, String) {
        let number = (90..<140).first { !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\($0)") } ?? 139
        let xvfb = try await Child([":\(number)", "-screen", "0", "800x300x24", "-nolisten", "tcp"], executable: URL(fileURLWithPath: "/usr/bin/Xvfb"))
        return (xvfb, ":\(number)")
    }

    @Test("mpv members with real windows under Xvfb: window screenshots at a pause show the same frame", .timeLimit(.minutes(4)))
    func windowsShowTheSameFrame() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), "Xvfb is missing: scripts/install-deps.sh installs it (Debian xvfb)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-mpvx-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (xvfb, display) = try await Self.startXvfb()
        children.append(xvfb)
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(display.dropFirst())"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }

        let (_, _, _, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)

        // Two windowed mpvs side by side on the virtual screen, each driven by its own member.
        var connections: [MPVConnection] = []
        var members: [Child] = []
        for (number, x) in [0, 400].enumerated() {
            let socket = directory.appendingPathComponent("w\(number).sock").path
            let window = try await Child(
                ["DISPLAY=\(display)", Self.mpv] + MPVProcess.baseArguments + [
                    "--ao=null", "--osd-level=0", "--geometry=320x180+\(x)+0", "--no-border", "--input-ipc-server=\(socket)",
                ], executable: URL(fileURLWithPath: "/usr/bin/env"))
            children.append(window)
            connections.append(try await Self.connect(socket))
            let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "w\(number)"])
            children.append(member)
            members.append(member)
        }
        defer { for connection in connections { Task { await connection.close() } } }
        for member in members {
            #expect(await member.out.wait(for: .seconds(60)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "joined" }
            }, "a member did not join: \(member.err.snapshot.suffix(5))")
        }
        for (index, connection) in connections.enumerated() {
            let vo = try await connection.get("current-vo")
            #expect(vo.data.string != nil && vo.data.string != "null", "mpv \(index) has no window (vo \(vo.data))")
        }

        for command in [["play"], ["pause"]] {
            try await Task.sleep(for: .milliseconds(1500))
            let result = try await CoplayProcess.run(["control", invite] + command, timeout: 60)
            #expect(result.status == 0, "control \(command) failed: \(result.stderr)")
        }
        for member in members {
            #expect(await member.out.wait(for: .seconds(30)) { lines in PlaybackSessionCLITests.pausedAfterCommand(lines, pauses: 2) })
        }
        try await Task.sleep(for: .milliseconds(500))
        var shots: [Data] = []
        for (index, connection) in connections.enumerated() {
            let path = directory.appendingPathComponent("window-\(index).png").path
            try await connection.run(["screenshot-to-file", path, "window"])
            shots.append(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        #expect(shots[0].count > 1000, "the screenshot is empty")
        #expect(shots[0] == shots[1], "the two windows show different pictures at the pause (screenshots in \(directory.path))")
        let positions = try await connections.asyncMap { try await $0.number("time-pos") }
        #expect(positions[0] != nil && positions[0] == positions[1], "windows at \(positions)")
    }

    @Test("mpv missing: a clear error naming the Debian package, before joining")
    func missingMPV() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-mpv-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory, audio: false)
        // No relay at all: the error must come before any connection.
        let invite = "coplay://127.0.0.1:9/00000000000000000000000000000000#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = directory.path
        let result = try await CoplayProcess.run(["join", invite, media, "--player", "mpv"], timeout: 60, environment: environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains("apt-get install mpv"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("relay"), "it tried the relay first: \(result.stderr)")
    }

    @Test("--mpv-arg without --player mpv, and the headless decoder's simulation with mpv, are refused")
    func mpvArgNeedsMPV() async throws {
        let result = try await CoplayProcess.run(["join", "coplay://127.0.0.1:9/00#AA", "x.mp4", "--mpv-arg=--fs"], timeout: 30)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--mpv-arg needs --player mpv"), "stderr: \(result.stderr)")
        let simulated = try await CoplayProcess.run(
            [
                "join", "coplay://127.0.0.1:9/00000000000000000000000000000000#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                "x.mp4", "--player", "mpv", "--start-latency", "5",
            ], timeout: 30)
        #expect(simulated.status != 0)
        #expect(simulated.stderr.contains("do not apply to mpv"), "stderr: \(simulated.stderr)")
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
