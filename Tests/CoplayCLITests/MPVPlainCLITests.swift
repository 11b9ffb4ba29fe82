import Foundation
import MPVControl
import TestSupport
import Testing

/// `coplay join --mpv-socket` attached to an mpv started the way README tells a person to
/// (`mpv --input-ipc-server=SOCK FILE`, here with `--vo=null --ao=null`), none of coplay's own options:
/// what the member sets on attach, that it then plays without re-anchoring again and again, what the
/// person gets back when it leaves, the frame-step key, a person's odd options, a refusal, and sound
/// through a real audio server.
@Suite("coplay with mpv as people run it (--mpv-socket, no coplay options)", .serialized)
struct MPVPlainCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    static let mpv = "/usr/bin/mpv"

    /// A `seconds` long clip at `fps`, with a 440 Hz AAC track when `audio`, a keyframe every
    /// `keyframeInterval` frames.
    static func makeMedia(
        in directory: URL, fps: Int, seconds: Int = 30, audio: Bool, name: String? = nil, size: String = "160x90", keyframeInterval: Int = 12
    ) async throws -> String {
        let path = directory.appendingPathComponent(name ?? "\(audio ? "av" : "v")-\(fps).mp4").path
        var arguments = ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(fps):duration=\(seconds)"]
        if audio { arguments += ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=\(seconds)"] }
        arguments += ["-c:v", "libx264", "-preset", "ultrafast", "-g", "\(keyframeInterval)", "-pix_fmt", "yuv420p"]
        if audio { arguments += ["-c:a", "aac", "-shortest"] }
        let result = try await CoplayProcess.run(arguments + ["-y", path], executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
        try #require(result.status == 0, "ffmpeg failed: \(result.stderr)")
        return path
    }

    /// A person's mpv: only the IPC socket, no window or sound device unless `options` say otherwise,
    /// then `files` (playing at once, as `mpv FILE` does). `environment` goes through `env`.
    static func startPlainMPV(socket: String, options: [String] = [], files: [String], environment: [String] = []) async throws -> Child {
        let arguments = ["--input-ipc-server=\(socket)", "--vo=null"] + (options.contains { $0.hasPrefix("--ao=") } ? [] : ["--ao=null"])
            + options + files
        return try await Child(environment + [mpv] + arguments, executable: URL(fileURLWithPath: "/usr/bin/env"))
    }

    static func events(_ child: Child) -> [[String: Any]] { PlaybackSessionCLITests.events(child.out.snapshot) }

    /// A plain mpv per name playing `media` (with that person's `options`, if any), each attached by
    /// its own `coplay join --mpv-socket` member; expects every member to join. The connections are
    /// the person's view of each mpv.
    static func attachPlainMembers(
        _ names: [String], media: String, invite: String, in directory: URL, options: [String: [String]] = [:], children: inout [Child]
    ) async throws -> (people: [MPVConnection], members: [Child]) {
        var people: [MPVConnection] = []
        var members: [Child] = []
        for name in names {
            let socket = directory.appendingPathComponent("\(name).sock").path
            children.append(try await startPlainMPV(socket: socket, options: options[name] ?? [], files: [media]))
            people.append(try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30)))
            let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", name])
            children.append(member)
            members.append(member)
        }
        for member in members {
            #expect(await joined(member), "a member did not join: \(member.err.snapshot.suffix(5))")
        }
        return (people, members)
    }

    /// The member's re-anchoring seeks (`correction` with `detail: "seek"`).
    static func correctionSeeks(_ child: Child) -> Int {
        events(child).filter { $0["type"] as? String == "correction" && $0["detail"] as? String == "seek" }.count
    }

    static func joined(_ child: Child) async -> Bool {
        await child.out.wait(for: .seconds(90)) { lines in
            PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "joined" }
        }
    }

    static func temporaryDirectory(_ prefix: String) throws -> URL {
        // Short: a Unix socket path has at most 107 bytes.
        let directory = URL(fileURLWithPath: "/tmp/\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// The values of the properties coplay changes, as mpv reports them, plus the filter chain.
    static func settings(_ mpv: MPVConnection) async throws -> [String: MPVValue] {
        var values: [String: MPVValue] = [:]
        for property in MPVAttachment.observedProperties + ["video-sync"] {
            let reply = try await mpv.get(property)
            if reply.succeeded { values[property] = reply.data }
        }
        return values
    }

    /// Waits until `condition` holds for a value mpv reports, polling; the last value.
    static func poll(_ mpv: MPVConnection, _ property: String, for timeout: Duration = .seconds(30), until condition: (MPVValue) -> Bool) async throws -> MPVValue {
        let deadline = ContinuousClock.now + timeout
        var value = MPVValue.none
        while ContinuousClock.now < deadline {
            value = try await mpv.get(property).data
            if condition(value) { return value }
            try await Task.sleep(for: .milliseconds(50))
        }
        return value
    }

    /// `time-pos` read twice `seconds` apart (by the host's clock): item seconds per second.
    static func advanceRate(_ mpv: MPVConnection, over seconds: Double) async throws -> Double? {
        let first = try await mpv.get("time-pos")
        try await Task.sleep(for: .seconds(seconds))
        let second = try await mpv.get("time-pos")
        guard let a = first.data.number, let b = second.data.number else { return nil }
        return (b - a) / (second.midpoint - first.midpoint)
    }

    @Test(
        "a plain mpv (30 fps, audio track) attached as README says: set up on attach, in step after at most a few seeks, the person's values back after SIGINT",
        .timeLimit(.minutes(5)))
    func plainMPVSettlesAndIsRestored() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-plain")
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory, fps: 30, audio: true)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }

        let socket = directory.appendingPathComponent("p.sock").path
        let personMPV = try await Self.startPlainMPV(socket: socket, files: [media])
        children.append(personMPV)
        let person = try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))
        defer { Task { await person.close() } }
        _ = try await Self.poll(person, "path") { $0.string != nil }
        let before = try await Self.settings(person)
        // What a plain mpv 0.35 has: none of what the adapter leans on.
        #expect(before["video-timing-offset"]?.number == 0.05, "\(before)")
        #expect(before["keep-open"] == .bool(false) && before["idle"] == .bool(false), "\(before)")
        #expect(!MPVAttachment.hasTempoFilter(before["af"]), "\(before)")

        let (_, _, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [media], hostArguments: ["--name", "host"], children: &children)
        let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "ma"])
        children.append(member)
        #expect(await Self.joined(member), "the member did not join: \(member.err.snapshot.suffix(5))")

        // Attached: what the adapter needs is in force, and the person's file was kept (not reloaded).
        let during = try await Self.settings(person)
        #expect(during["video-timing-offset"]?.number == 0, "\(during)")
        #expect(during["hr-seek"] == .bool(true) && during["keep-open"] == .string("always") && during["idle"] == .bool(true), "\(during)")
        #expect(MPVAttachment.hasTempoFilter(during["af"]), "\(during)")
        #expect(MPVOpen.entries(try await person.get("playlist").data).count == 1)

        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        _ = try await Self.poll(person, "pause") { $0 == .bool(false) }
        // 12 s of playback. Before attach set these options, this member re-anchored about four times
        // a second (a one-frame error every time); now the first start may take one or two.
        try await Task.sleep(for: .seconds(12))
        let seeks = Self.correctionSeeks(member)
        #expect(seeks <= 4, "\(seeks) re-anchoring seeks in 12 s: \(Self.events(member).filter { $0["type"] as? String == "correction" }.suffix(6))")
        print("plain mpv, 30 fps with audio: \(seeks) re-anchoring seeks in 12 s of playback; member's events: \(Dictionary(grouping: Self.events(member).compactMap { $0["type"] as? String }, by: { $0 }).mapValues(\.count))")
        let rate = try await Self.advanceRate(person, over: 2)
        #expect(rate.map { abs($0 - 1) < 0.05 } == true, "mpv advanced at \(rate ?? .nan) item s per s")
        #expect(host.process.isRunning)

        // The member leaves on SIGINT: every value the person had is back, their mpv keeps running.
        member.process.interrupt()
        let ended = await member.process.wait(timeout: .seconds(60))
        #expect(ended == .exited(0), "\(String(describing: ended)): \(member.err.snapshot.suffix(4))")
        let after = try await Self.settings(person)
        for property in MPVAttachment.observedProperties {
            #expect(after[property] == before[property], "\(property): \(before[property].map { "\($0)" } ?? "nil") before, \(after[property].map { "\($0)" } ?? "nil") after")
        }
        #expect(try await person.number("speed") == 1)
        #expect(personMPV.process.isRunning, "the person's mpv quit when the member left")
        // mpv's own frame step is back: paused, `.` shows the next frame and pauses again.
        try await person.set("pause", true)
        let restarts = person.events()
        try await person.run(["seek", 2, "absolute+exact"])
        for await event in restarts where event.name == "playback-restart" { break }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await person.number("time-pos") == 2)
        try await person.run(["keypress", "."])
        let stepped = try await Self.poll(person, "time-pos") { ($0.number ?? 0) > 2.02 }
        // With mpv's default video-timing-offset back, time-pos names the frame queued, one ahead of the
        // one shown: one frame step reads as one or two frames.
        #expect((2.02...(2 + 2.5 / 30)).contains(stepped.number ?? 0), "after the member left, . moved to \(stepped)")
        #expect(try await person.get("pause").data == .bool(true))
    }

    @Test(
        "a person's odd options (no exact seeks, display-resample, speed 1.5, another filter, keep-open=no, a playlist): the member plays and puts them back on SIGTERM",
        .timeLimit(.minutes(5)))
    func oddOptions() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-odd")
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory, fps: 25, audio: true)
        let other = try await Self.makeMedia(in: directory, fps: 25, seconds: 5, audio: false, name: "first.mp4")
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }

        let socket = directory.appendingPathComponent("o.sock").path
        let options = [
            "--hr-seek=no", "--video-sync=display-resample", "--speed=1.5", "--af=lavfi=[volume=0.5]", "--keep-open=no", "--pause=no",
            "--loop-file=inf",
        ]
        // A playlist of two: the session's file is the second entry, the first plays now.
        let personMPV = try await Self.startPlainMPV(socket: socket, options: options, files: [other, media])
        children.append(personMPV)
        let person = try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))
        defer { Task { await person.close() } }
        _ = try await Self.poll(person, "path") { $0.string != nil }
        let before = try await Self.settings(person)
        #expect(before["video-sync"] == .string("display-resample") && before["hr-seek"] == .bool(false), "\(before)")

        let (_, _, _, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)
        let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "mo"])
        children.append(member)
        #expect(await Self.joined(member), "the member did not join: \(member.err.snapshot.suffix(5))")
        // The session's file is open, from the person's playlist, which is kept.
        let playlist = MPVOpen.entries(try await person.get("playlist").data)
        #expect(playlist.count == 2 && playlist.last?.current == true, "\(playlist)")
        let during = try await Self.settings(person)
        #expect(during["video-sync"] == .string("audio") && during["loop-file"] == .bool(false), "\(during)")

        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        _ = try await Self.poll(person, "pause") { $0 == .bool(false) }
        try await Task.sleep(for: .seconds(10))
        // The group's rate (1), not the person's 1.5 (within the adapter's trims, at most 5 %).
        let rate = try await Self.advanceRate(person, over: 2)
        #expect(rate.map { abs($0 - 1) < 0.06 } == true, "mpv advanced at \(rate ?? .nan) item s per s")
        let seeks = Self.correctionSeeks(member)
        #expect(seeks <= 4, "\(seeks) re-anchoring seeks in 12 s")
        print("plain mpv with odd options: \(seeks) re-anchoring seeks in 12 s of playback")

        member.process.terminate()
        let ended = await member.process.wait(timeout: .seconds(60))
        #expect(ended == .exited(0), "\(String(describing: ended)): \(member.err.snapshot.suffix(4))")
        let after = try await Self.settings(person)
        for property in MPVAttachment.observedProperties + ["video-sync"] {
            #expect(after[property] == before[property], "\(property): \(before[property].map { "\($0)" } ?? "nil") before, \(after[property].map { "\($0)" } ?? "nil") after")
        }
        // The speed is the group's rate the person watched at, without the adapter's trim.
        #expect(try await person.number("speed") == 1)
        #expect(MPVOpen.entries(try await person.get("playlist").data).count == 2)
        #expect(personMPV.process.isRunning)
    }

    /// The `seek` commands printed by `child` that `originator` proposed.
    @Test(
        "a group pause snaps each playing mpv with an exact seek, even onto the frame it shows, so that the next play starts on time",
        .timeLimit(.minutes(4)))
    func pauseSnapsWithASeek() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-snap")
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory, fps: 25, audio: false)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let socket = directory.appendingPathComponent("p.sock").path
        children.append(try await Self.startPlainMPV(socket: socket, files: [media]))
        let person = try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))
        defer { Task { await person.close() } }
        _ = try await Self.poll(person, "path") { $0.string != nil }
        let (_, _, _, invite) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [media], hostArguments: ["--name", "host"], children: &children)
        let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "ma"])
        children.append(member)
        #expect(await Self.joined(member), "the member did not join: \(member.err.snapshot.suffix(5))")
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        _ = try await Self.poll(person, "pause") { $0 == .bool(false) }
        try await Task.sleep(for: .seconds(3))

        // Paused at the group's instant, mpv shows the group's frame but is part-way through it; only
        // an exact seek starts its clock afresh (without one, the next play began 13-20 ms early at
        // 25 fps). mpv announces every seek with `seek` and ends it with `playback-restart`.
        let events = person.events()
        let pause = try await CoplayProcess.run(["control", invite, "pause"], timeout: 60)
        #expect(pause.status == 0, "control pause failed: \(pause.stderr)")
        let watch = Task {
            var seen: [String] = []
            for await event in events where ["seek", "playback-restart", "pause"].contains(event.name) {
                seen.append(event.name)
                if event.name == "playback-restart", seen.contains("seek") { break }
            }
            return seen
        }
        let deadline = Task { try await Task.sleep(for: .seconds(20)); watch.cancel() }
        let names = await watch.value
        deadline.cancel()
        #expect(names.contains("seek") && names.last == "playback-restart", "mpv's events after the group's pause: \(names)")
        #expect(Self.correctionSeeks(member) <= 2, "\(Self.correctionSeeks(member)) re-anchoring seeks")

        // The next play starts on the group's timeline: the member's first measured error after it.
        try await Task.sleep(for: .seconds(1))
        let resume = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(resume.status == 0, "control play failed: \(resume.stderr)")
        try await Task.sleep(for: .seconds(3))
        let plays = Self.events(member).filter { ["play", "correction"].contains($0["type"] as? String) }
        let afterSecondPlay = plays.drop { $0["type"] as? String != "play" }.dropFirst().drop { $0["type"] as? String != "play" }
        let firstError = afterSecondPlay.first { $0["type"] as? String == "correction" }?["errorMs"] as? Double
        print("plain mpv, 25 fps: after a pause, mpv's events \(names); the first error measured after the next play \(firstError.map { String(format: "%.2f ms", $0) } ?? "none (inside the deadband)")")
    }

    static func seeks(by originator: String, in child: Child) -> [Double] {
        events(child).filter { $0["type"] as? String == "seek" && $0["originator"] as? String == originator }
            .compactMap { $0["itemTime"] as? Double }
    }

    @Test("the frame-step key (.) in a paused attached mpv steps the whole group one frame and keeps it paused, (,) steps it back; while playing . pauses the group", .timeLimit(.minutes(5)))
    func frameStepStepsTheGroup() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-step")
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory, fps: 25, audio: false)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [media], hostArguments: ["--name", "host", "--frames"], children: &children)
        let socket = directory.appendingPathComponent("s.sock").path
        children.append(try await Self.startPlainMPV(socket: socket, files: [media]))
        let person = try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))
        defer { Task { await person.close() } }
        let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "ms"])
        children.append(member)
        #expect(await Self.joined(member), "the member did not join: \(member.err.snapshot.suffix(5))")

        // The group is paused at 0 (the host's initial state); the person steps twice.
        _ = try await Self.poll(person, "time-pos") { $0.number == 0 }
        for step in 1...2 {
            try await person.run(["keypress", "."])
            let target = Double(step) / 25
            #expect(await host.out.wait(for: .seconds(30)) { _ in
                Self.seeks(by: "ms", in: host).contains { abs($0 - target) < 1e-6 }
            }, "the host saw no group seek to \(target): \(Self.seeks(by: "ms", in: host))")
            let shown = try await Self.poll(person, "time-pos") { abs(($0.number ?? -1) - target) < 1e-6 }
            #expect(abs((shown.number ?? -1) - target) < 1e-6, "mpv shows \(shown) after step \(step)")
        }
        // Nobody started playing: no play command, the host printed no frame after its stop, mpv is paused.
        try await Task.sleep(for: .seconds(1))
        #expect(!Self.events(host).contains { $0["type"] as? String == "play" }, "a frame step started the group")
        #expect(try await person.get("pause").data == .bool(true))
        #expect(PlaybackSessionCLITests.lastStopped(host.out.snapshot)?["index"] as? Int == 2, "\(String(describing: PlaybackSessionCLITests.lastStopped(host.out.snapshot)))")
        // The back-step key (,) keeps mpv's binding, an exact seek one frame back, which the group follows.
        try await person.run(["keypress", ","])
        #expect(await host.out.wait(for: .seconds(30)) { _ in
            Self.seeks(by: "ms", in: host).filter { abs($0 - 1.0 / 25) < 1e-3 }.count >= 2
        }, "the host saw no group seek back to frame 1: \(Self.seeks(by: "ms", in: host))")
        let back = try await Self.poll(person, "time-pos") { abs(($0.number ?? -1) - 1.0 / 25) < 1e-6 }
        #expect(abs((back.number ?? -1) - 1.0 / 25) < 1e-6, "mpv shows \(back) after the back step")
        #expect(try await person.get("pause").data == .bool(true))

        // While the group plays, the key pauses it.
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        #expect(await host.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count > 20 })
        try await person.run(["keypress", "."])
        #expect(await host.out.wait(for: .seconds(30)) { _ in
            Self.events(host).contains { $0["type"] as? String == "pause" && $0["originator"] as? String == "ms" }
        }, "the frame-step key did not pause the playing group")
    }

    /// A stand-in for mpv's IPC (Python) that answers like a plain mpv 0.35 but refuses to set
    /// `video-timing-offset`, logging every command it receives to `log`.
    static let fakeMPV = #"""
        import json, os, socketserver, sys
        path, log = sys.argv[1], sys.argv[2]
        values = {"video-timing-offset": 0.05, "hr-seek": "default", "keep-open": False, "video-sync": "audio",
                  "loop-file": False, "untimed": False, "idle": False, "prefetch-playlist": False, "af": [], "speed": 1.0}
        class Handler(socketserver.StreamRequestHandler):
            def handle(self):
                for line in self.rfile:
                    message = json.loads(line)
                    command = message.get("command", [])
                    with open(log, "a") as f: f.write(json.dumps(command) + "\n")
                    reply = {"request_id": message.get("request_id"), "error": "success", "data": None}
                    if command[0] == "get_property":
                        if command[1] in values: reply["data"] = values[command[1]]
                        else: reply["error"] = "property unavailable"
                    elif command[0] == "set_property":
                        if command[1] == "video-timing-offset": reply["error"] = "property unavailable"
                        else: values[command[1]] = command[2]
                    self.wfile.write((json.dumps(reply) + "\n").encode()); self.wfile.flush()
        if os.path.exists(path): os.unlink(path)
        socketserver.ThreadingUnixStreamServer(path, Handler).serve_forever()
        """#

    @Test("an mpv that does not take a setting at runtime: the member refuses before joining, naming it and the option, and undoes what it set")
    func refusal() async throws {
        let python = try #require(["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }, "python3 is missing")
        let directory = try Self.temporaryDirectory("coplay-refuse")
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("fake-mpv.py")
        try Self.fakeMPV.write(to: script, atomically: true, encoding: .utf8)
        let socket = directory.appendingPathComponent("f.sock").path
        let log = directory.appendingPathComponent("commands.log").path
        let fake = try await Child([script.path, socket, log], executable: URL(fileURLWithPath: python))
        defer { fake.stop() }
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: socket), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        // No relay at all: the refusal must come before any connection to one.
        let invite = "coplay://127.0.0.1:9/00000000000000000000000000000000#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        let media = try await Self.makeMedia(in: directory, fps: 25, seconds: 2, audio: false)
        let result = try await CoplayProcess.run(["join", invite, media, "--mpv-socket", socket], timeout: 60)
        #expect(result.status != 0)
        #expect(result.stderr.contains("coplay cannot drive this mpv"), "stderr: \(result.stderr)")
        #expect(result.stderr.contains("video-timing-offset is 0.05 (mpv answered 'property unavailable'): start mpv with --video-timing-offset=0"), "stderr: \(result.stderr)")
        #expect(!result.stderr.contains("relay"), "it tried the relay first: \(result.stderr)")
        // What it did set, it set back.
        let commands = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(commands.contains(#"["set_property", "keep-open", "always"]"#), "\(commands)")
        #expect(commands.contains(#"["set_property", "keep-open", false]"#), "\(commands)")
        #expect(commands.contains(#"["af", "remove", "@coplay-tempo"]"#), "\(commands)")
        #expect(commands.contains(#"["disable-section", "coplay-keys"]"#), "\(commands)")
        #expect(!commands.contains { $0.contains("loadfile") }, "\(commands)")
    }

    @Test("SIGINT while the member is still joining (a relay that never answers): it stops, and the person's values are back")
    func interruptedWhileJoining() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let python = try #require(["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }, "python3 is missing")
        let directory = try Self.temporaryDirectory("coplay-int")
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory, fps: 25, seconds: 10, audio: false)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        // A "relay" that accepts connections and never says a word.
        let silent = try await Child(
            ["-c", "import socket\ns = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\nprint(s.getsockname()[1], flush=True)\nkept = [s.accept() for _ in range(100)]"],
            executable: URL(fileURLWithPath: python))
        children.append(silent)
        #expect(await silent.out.wait(for: .seconds(30)) { !$0.isEmpty })
        let port = try #require(silent.out.snapshot.first.flatMap { Int($0) })
        let socket = directory.appendingPathComponent("i.sock").path
        children.append(try await Self.startPlainMPV(socket: socket, files: [media]))
        let person = try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))
        defer { Task { await person.close() } }
        _ = try await Self.poll(person, "path") { $0.string != nil }
        let before = try await Self.settings(person)

        let invite = "coplay://127.0.0.1:\(port)/00000000000000000000000000000000#AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "mi"])
        children.append(member)
        // Attached (the filter is in), then stuck joining.
        let attached = try await Self.poll(person, "af") { MPVAttachment.hasTempoFilter($0) }
        #expect(MPVAttachment.hasTempoFilter(attached), "the member never attached: \(member.err.snapshot.suffix(4))")
        try await Task.sleep(for: .seconds(1))
        #expect(member.process.isRunning, "the member did not wait for the relay: \(member.err.snapshot.suffix(4))")
        member.process.interrupt()
        let ended = await member.process.wait(timeout: .seconds(60))
        #expect(ended != nil, "the member did not stop on SIGINT")
        let after = try await Self.settings(person)
        for property in MPVAttachment.observedProperties {
            #expect(after[property] == before[property], "\(property): \(before[property].map { "\($0)" } ?? "nil") before, \(after[property].map { "\($0)" } ?? "nil") after")
        }
    }

    @Test(
        "plain mpv, a clip with an audio track and x264's default 10 s keyframe interval: play, pause, play, rate 0.5, 1.25, 1 make no suspension the script did not ask for",
        .timeLimit(.minutes(5)))
    func slowSeeksMakeNoSuspensions() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-gop")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Exact seeks decode from the keyframe before their target: with a keyframe every 10 s and a
        // 640x360 picture they take tens to hundreds of ms (more at speeds other than 1, where the
        // audio goes through the tempo filter), beyond the coordinator's 100 ms readiness grace.
        let media = try await Self.makeMedia(in: directory, fps: 25, audio: true, size: "640x360", keyframeInterval: 250)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)
        let (people, members) = try await Self.attachPlainMembers(["k1", "k2"], media: media, invite: invite, in: directory, children: &children)
        defer { for person in people { Task { await person.close() } } }

        // The bench script's order: a play, a pause mid-frame, a play from there, rate changes.
        for (command, wait) in [(["play"], 4.0), (["pause"], 1.5), (["play"], 2.0), (["rate", "0.5"], 2.5), (["rate", "1.25"], 2.5), (["rate", "1"], 1.0)] {
            let result = try await CoplayProcess.run(["control", invite] + command, timeout: 60)
            #expect(result.status == 0, "control \(command) failed: \(result.stderr)")
            try await Task.sleep(for: .seconds(wait))
        }
        // Nothing in the script suspends the group. Before, every play from a mid-frame pause was
        // followed by a second pause, exact seek and restart, and the seeks of a rate change or a
        // restart made the player report itself not ready: past the grace each was a buffering
        // suspension, whose snap seeks began the next (79-200 of them in a 60 s bench run).
        for member in members + [host] {
            let suspensions = Self.events(member).filter { $0["type"] as? String == "suspensionBegan" }
            #expect(suspensions.isEmpty, "\(suspensions.count) suspension(s): \(suspensions.prefix(3))")
        }
        for (person, member) in zip(people, members) {
            // Playing at the group's rate (within the adapter's trims, at most 5 %) once the last
            // restart, placed after the seeks' cost, has started.
            #expect(try await Self.poll(person, "pause", for: .seconds(15)) { $0 == .bool(false) } == .bool(false), "mpv is not playing at the end")
            let speed = try await person.number("speed")
            #expect(speed.map { abs($0 - 1) <= 0.05 + 1e-6 } == true, "mpv's speed is \(speed ?? .nan) at rate 1")
            // A late restart at a new speed may be re-anchored once; not again and again.
            let seeks = Self.correctionSeeks(member)
            #expect(seeks <= 6, "\(seeks) re-anchoring seeks: \(Self.events(member).filter { $0["type"] as? String == "correction" && $0["detail"] as? String == "seek" })")
            print("plain mpv, 10 s keyframe interval with audio: \(seeks) re-anchoring seeks, speed \(speed ?? .nan) at the end")
        }
    }

    @Test(
        "plain mpv, a clip with an audio track: a rate change's restart at a speed not sought at before starts on time (its seek's cost learnt per speed, a seek that outlasts the hold planned again at once), so the controller does not re-anchor it",
        .timeLimit(.minutes(5)))
    func rateChangesWithAudioStartOnTime() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-rate")
        defer { try? FileManager.default.removeItem(at: directory) }
        // On a file with audio a rate change is a restart: a hold (150 ms, or more when seeks cost more),
        // then a start at the new speed after an exact seek. An exact seek decodes from the keyframe
        // before its target, and at a low speed its audio costs more: on this 160x90 clip with AAC and
        // one keyframe (30 s), 10 s in, a seek takes 300-350 ms at 0.25x and 80-115 ms at 1x (28 Nov
        // 2026). Before, such a restart started 150-200 ms late and the controller re-anchored it half
        // a second later: a second hold.
        let media = try await Self.makeMedia(in: directory, fps: 25, audio: true, keyframeInterval: 750)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, _, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)
        let (people, members) = try await Self.attachPlainMembers(["r1", "r2"], media: media, invite: invite, in: directory, children: &children)
        defer { for person in people { Task { await person.close() } } }
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        try await Task.sleep(for: .seconds(10))

        var marks: [(rate: String, from: Double)] = []
        for rate in ["0.25", "1", "0.5", "1"] {
            marks.append((rate, Date().timeIntervalSince1970))
            let result = try await CoplayProcess.run(["control", invite, "rate", rate], timeout: 60)
            #expect(result.status == 0, "control rate \(rate) failed: \(result.stderr)")
            try await Task.sleep(for: .seconds(3))
        }
        for (person, member) in zip(people, members) {
            let events = Self.events(member)
            var report: [String] = []
            var reanchorsAtQuarter = 0
            for (index, mark) in marks.enumerated() {
                let until = index + 1 < marks.count ? marks[index + 1].from : .infinity
                let window = events.filter { ($0["realtime"] as? Double).map { $0 >= mark.from && $0 < until } ?? false }
                let seeks = window.filter { $0["type"] as? String == "correction" && $0["detail"] as? String == "seek" }
                let first = window.first { $0["type"] as? String == "correction" }?["errorMs"] as? Double
                report.append("\(mark.rate)x: \(seeks.count) re-anchoring, first error \(first.map { String(format: "%.1f ms", $0) } ?? "inside the deadband")")
                if mark.rate == "0.25" { reanchorsAtQuarter = seeks.count }
            }
            print("plain mpv with audio, rate changes: \(report.joined(separator: "; "))")
            #expect(reanchorsAtQuarter == 0, "the restart at 0.25x was re-anchored: \(report)")
            #expect(try await Self.poll(person, "pause", for: .seconds(15)) { $0 == .bool(false) } == .bool(false), "mpv is not playing at the end")
        }
    }

    @Test(
        "plain mpv, a clip with an audio track: the first play from 0, whose sound mpv starts 30-45 ms late, is taken off audio-delay ahead, or put right while playing (no re-anchoring); the pictures in step with the host by their frame changes; the next start from 0 in step from its first frames; a person's own audio-delay kept and given back",
        .timeLimit(.minutes(5)))
    func lateSoundAtTheStartMovesThePicture() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-late")
        defer { try? FileManager.default.removeItem(at: directory) }
        // mpv 0.35 begins the sound 31-45 ms late after a start in the first 0.05 s of a file with AAC
        // (docs/mpv.md); the picture follows the sound. Before, every member re-anchored the first
        // play of every file: a hold of at least 150 ms.
        let media = try await Self.makeMedia(in: directory, fps: 25, audio: true)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [media], hostArguments: ["--frames"], children: &children)
        let ownDelays = [0.0, 0.05]  // the second person keeps their sound 50 ms behind the picture
        let (people, members) = try await Self.attachPlainMembers(
            ["l1", "l2"], media: media, invite: invite, in: directory, options: ["l2": ["--audio-delay=0.05"]], children: &children)
        defer { for person in people { Task { await person.close() } } }
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        try await Task.sleep(for: .seconds(4))

        // Each picture against the host's frames: mpv's frame changes, seen from outside through its
        // IPC (`time-pos` polled; replies are stamped with the realtime clock, as the host's `frame`
        // events are).
        var changes: [[(position: Double, seen: Double)]] = []
        for person in people {
            var seen: [(position: Double, seen: Double)] = []
            var last = try await person.get("time-pos").data.number
            let end = ContinuousClock.now + .seconds(1.5)
            while ContinuousClock.now < end {
                let reply = try await person.get("time-pos")
                if let position = reply.data.number, position != last {
                    last = position
                    if reply.received - reply.sent < 0.002 { seen.append((position, reply.midpoint)) }
                }
                try await Task.sleep(for: .milliseconds(1))
            }
            changes.append(seen)
        }
        _ = await host.out.wait(for: .seconds(5)) { lines in
            PlaybackSessionCLITests.events(lines).contains { ($0["pts"] as? Double ?? 0) > (changes.last?.last?.position ?? 0) }
        }
        let hostFrames = Self.frameTimes(host)
        var shifts = 0
        for (index, member) in members.enumerated() {
            let name = ["l1", "l2"][index]
            let offsets = changes[index].compactMap { change in hostFrames[Int((change.position * 1000).rounded())].map { (change.seen - $0) * 1000 } }
            try #require(offsets.count >= 10, "too few of \(name)'s \(changes[index].count) frame changes matched the host's \(hostFrames.count) frames: \(offsets.count)")
            let median = offsets.sorted()[offsets.count / 2]
            let events = Self.events(member).filter { $0["type"] as? String == "correction" }
            let shift = events.filter { $0["detail"] as? String == "audio-delay" }
            shifts += shift.count
            print("late sound at the start, \(name): picture \(String(format: "%.2f", median)) ms from the host's frames (\(offsets.count) changes); shifts \(shift.compactMap { $0["errorMs"] as? Double }), re-anchoring seeks \(Self.correctionSeeks(member))")
            #expect(abs(median) < 8, "the picture is \(median) ms off the host's (a frame is 40 ms)")
            #expect(Self.correctionSeeks(member) == 0, "re-anchored: \(events)")
            // The person's own delay in force (plus what compensates a speed trim in progress, if any:
            // MPVPlayer.Configuration.audioBuffer): a shift made while playing is off again once the
            // sound caught up; one taken off ahead of the start (the lag expected at a file's
            // beginning, about 30 ms) stays until the next seek or load.
            let delay = try await people[index].number("audio-delay") ?? .nan
            let speed = try await people[index].number("speed") ?? .nan
            let trimPart = MPVPlayer.Configuration().audioBuffer * (speed - 1)
            let residual = delay - ownDelays[index] - trimPart
            #expect(abs(residual) < 0.001 || (residual > -0.05 && residual < -0.01),
                    "audio-delay \(delay) at speed \(speed) 4 s after the start (the person's: \(ownDelays[index]))")
        }
        // The first play from 0 is shifted ahead by the lag expected there (30 ms) or, where that
        // did not fit (the person's own delay changes how mpv begins the sound), put right while playing.
        print("late sound at the start: \(shifts) shift(s) while playing")

        // The next start from the beginning opens with the lag taken off `audio-delay` ahead
        // (MPVPlayer.Configuration.fileStartWindow): its pictures on time from the first frames, where
        // the first start's were 30 ms late until the shift a third of a second later.
        // One start can stall on a busy machine (the sound clock starting late once: seen in one full
        // run, the first frame 51 ms late, then 20 ms until the shift at the first look); a start from 0
        // is then made again, and judged. Two late in a row is a failure.
        for attempt in 1...2 {
            let offsets = try await Self.startFromZero(invite: invite, host: host, people: people, members: members)
            var onTime = true
            for (index, name) in ["l1", "l2"].enumerated() {
                print("the second start from 0 (attempt \(attempt)), \(name): pictures \(offsets[index].pictures.map { String(format: "%.1f", $0) }) ms from the host's frames; audio-delay corrections since: \(offsets[index].corrections)")
                // l2's own `audio-delay` of 0.05 makes mpv begin a start from 0 its own way (two frames on
                // time, then 81 ms late, easing off over seconds: `scripts/mpv-file-start-lag.py`,
                // docs/mpv.md), which no lag taken off ahead fits; its member shifts while playing instead.
                guard ownDelays[index] == 0 else { continue }
                try #require(offsets[index].pictures.count >= 3, "too few of \(name)'s frame changes after the restart matched the host's")
                let median = offsets[index].pictures.sorted()[offsets[index].pictures.count / 2]
                if abs(median) >= 8 {
                    onTime = false
                    if attempt == 2 { Issue.record("\(name)'s pictures in the first 0.3 s after a start from 0 are \(median) ms off the host's, twice") }
                }
            }
            if onTime { break }
        }
        // A member that leaves while a shift is in force gives the person's value back.
        let again = try await CoplayProcess.run(["control", invite, "seek", "0"], timeout: 60)
        #expect(again.status == 0, "control seek failed: \(again.stderr)")
        try await Task.sleep(for: .milliseconds(300))
        members[1].process.interrupt()
        #expect(await members[1].process.wait(timeout: .seconds(60)) == .exited(0))
        let given = try await people[1].number("audio-delay") ?? .nan
        #expect(abs(given - 0.05) < 1e-6, "audio-delay \(given) after the member left (the person's: 0.05)")
    }

    /// When `child` presented each frame (its `frame` events, after `after` if given): realtime seconds
    /// by presentation time in whole milliseconds, the first presentation of each.
    static func frameTimes(_ child: Child, after: Double = -.infinity) -> [Int: Double] {
        Dictionary(
            PlaybackSessionCLITests.events(child.out.snapshot).compactMap { event -> (Int, Double)? in
                guard event["type"] as? String == "frame", let pts = event["pts"] as? Double, let realtime = event["realtime"] as? Double,
                    realtime > after else { return nil }
                return (Int((pts * 1000).rounded()), realtime)
            }, uniquingKeysWith: { first, _ in first })
    }

    /// A `coplay control seek 0` in a playing group, watched through each person's mpv IPC for 1.2 s:
    /// per member, its frame changes of the first 0.3 s against the host's frames of the same
    /// positions (ms, positive: later than the host) and the `audio-delay` corrections (shifts while
    /// playing, their errors in ms) its member made since the seek.
    static func startFromZero(
        invite: String, host: Child, people: [MPVConnection], members: [Child]
    ) async throws -> [(pictures: [Double], corrections: [Double])] {
        func shifts(_ member: Child) -> [Double] {
            events(member).filter { $0["type"] as? String == "correction" && $0["detail"] as? String == "audio-delay" }
                .compactMap { $0["errorMs"] as? Double }
        }
        let shiftsBefore = members.map { shifts($0).count }
        let seekSent = Date().timeIntervalSince1970
        let seek = try await CoplayProcess.run(["control", invite, "seek", "0"], timeout: 60)
        #expect(seek.status == 0, "control seek failed: \(seek.stderr)")
        var early: [[(position: Double, seen: Double)]] = people.map { _ in [] }
        let watchEnd = ContinuousClock.now + .seconds(1.2)
        var lastPositions: [Double?] = people.map { _ in nil }
        while ContinuousClock.now < watchEnd {
            for (index, person) in people.enumerated() {
                let reply = try await person.get("time-pos")
                if let position = reply.data.number, position != lastPositions[index] {
                    lastPositions[index] = position
                    if reply.received - reply.sent < 0.002, reply.midpoint > seekSent, position < 0.4 { early[index].append((position, reply.midpoint)) }
                }
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        _ = await host.out.wait(for: .seconds(5)) { lines in
            PlaybackSessionCLITests.events(lines).contains { ($0["realtime"] as? Double ?? 0) > seekSent && ($0["pts"] as? Double ?? 0) > 0.4 }
        }
        let restartFrames = Self.frameTimes(host, after: seekSent)
        return members.indices.map { index in
            // Frame changes up to 0.3 s after the start: before the lag was taken off ahead, 26-31 ms late.
            let pictures = early[index].filter { $0.position > 0 && $0.position <= 0.3 }
                .compactMap { change in restartFrames[Int((change.position * 1000).rounded())].map { (change.seen - $0) * 1000 } }
            return (pictures, Array(shifts(members[index]).dropFirst(shiftsBefore[index])))
        }
    }

    /// How far apart two mpvs play, from `audio-pts` (the audio clock both sound and video follow,
    /// smooth where `time-pos` moves a frame at a time) read one after the other, each read dated by
    /// the midpoint of its request and reply: the median over `reads` pairs whose round trips were
    /// short, in item seconds at `rate`.
    static func audioGap(_ a: MPVConnection, _ b: MPVConnection, rate: Double, reads: Int = 15) async throws -> Double? {
        var gaps: [Double] = []
        for _ in 0..<reads {
            let x = try await a.get("audio-pts")
            let y = try await b.get("audio-pts")
            if let px = x.data.number, let py = y.data.number, x.received - x.sent < 0.002, y.received - y.sent < 0.002 {
                gaps.append(abs((px - py) - (x.midpoint - y.midpoint) * rate))
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return gaps.isEmpty ? nil : gaps.sorted()[gaps.count / 2]
    }

    @Test(
        "sound through a real audio server (PulseAudio null sink): two plain mpv with --ao=pulse start together and stay within half a frame, at 1x and after a change to 1.25x, with a handful of re-anchoring seeks at most",
        .timeLimit(.minutes(5)))
    func audioServerRateChange() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let pulseaudio = try #require(
            ["/usr/bin/pulseaudio"].first { FileManager.default.isExecutableFile(atPath: $0) }, "pulseaudio is missing: scripts/install-deps.sh installs it")
        let directory = try Self.temporaryDirectory("coplay-pa")
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory, fps: 30, audio: true)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        // The audio server, as scripts/audio-server.sh runs it.
        let runtime = directory.appendingPathComponent("pulse")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let native = runtime.appendingPathComponent("native").path
        let server = try await Child(
            ["PULSE_RUNTIME_PATH=\(runtime.path)", pulseaudio] + Self.audioServerArguments(socket: native),
            executable: URL(fileURLWithPath: "/usr/bin/env"))
        children.append(server)
        let deadline = ContinuousClock.now + .seconds(30)
        while !FileManager.default.fileExists(atPath: native), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        try #require(FileManager.default.fileExists(atPath: native), "pulseaudio did not start: \(server.err.snapshot.suffix(5))")

        let (_, _, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)
        var people: [MPVConnection] = []
        var members: [Child] = []
        for name in ["a1", "a2"] {
            let socket = directory.appendingPathComponent("\(name).sock").path
            children.append(try await Self.startPlainMPV(
                socket: socket, options: ["--ao=pulse"], files: [media], environment: ["PULSE_SERVER=unix:\(native)"]))
            let person = try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))
            people.append(person)
            let member = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", name])
            children.append(member)
            members.append(member)
        }
        defer { for person in people { Task { await person.close() } } }
        for member in members {
            #expect(await Self.joined(member), "a member did not join: \(member.err.snapshot.suffix(5))")
        }
        for person in people {
            // Sound goes to the server, not to a null output.
            #expect(try await person.get("current-ao").data == .string("pulse"))
        }
        let halfFrame = 0.5 / 30

        // The first start of each mpv's sound. A start through the audio server can stall after the
        // output's first 100 ms (docs/mpv.md, "Sound"); the members see it on the audio clock and
        // re-anchor. Within a few seconds the two play within half a frame, and stay there.
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        try await Self.expectInStep(people, rate: 1, within: halfFrame, "at 1x after the first start")

        let rate = try await CoplayProcess.run(["control", invite, "rate", "1.25"], timeout: 60)
        #expect(rate.status == 0, "control rate failed: \(rate.stderr)")
        #expect(await host.out.wait(for: .seconds(30)) { lines in
            PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "rate" && ($0["rate"] as? Double) == 1.25 }
        })
        try await Task.sleep(for: .seconds(1))
        try await Self.expectInStep(people, rate: 1.25, within: halfFrame, "at 1.25x")
        for (person, member) in zip(people, members) {
            let advance = try await Self.advanceRate(person, over: 2)
            #expect(advance.map { abs($0 - 1.25) < 0.07 } == true, "mpv advanced at \(advance ?? .nan) item s per s at rate 1.25")
            // Re-anchoring seeks are capped (MPVPlayer.Configuration.maximumReanchors in 20 s): a
            // start that stalls again is never a loop.
            let seeks = Self.correctionSeeks(member)
            #expect(seeks <= 2 * MPVPlayer.Configuration().maximumReanchors, "\(seeks) re-anchoring seeks")
            print("plain mpv through PulseAudio: \(seeks) re-anchoring seeks, advancing at \(advance ?? .nan) at 1.25x")
        }
    }

    /// The audio server's arguments (after `pulseaudio`), as scripts/audio-server.sh gives them.
    static func audioServerArguments(socket: String) -> [String] {
        [
            "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
            "-L", "module-native-protocol-unix socket=\(socket) auth-anonymous=1", "-L", "module-null-sink sink_name=room",
        ]
    }

    /// Expects the two mpvs to come within `tolerance` of each other (``audioGap(_:_:rate:reads:)``)
    /// within 15 s, and then to stay there over three more looks a second apart.
    static func expectInStep(_ people: [MPVConnection], rate: Double, within tolerance: Double, _ what: String) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        var gap = try await audioGap(people[0], people[1], rate: rate)
        while (gap ?? .infinity) > tolerance, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            gap = try await audioGap(people[0], people[1], rate: rate)
        }
        #expect((gap ?? .infinity) <= tolerance, "\(what): the two mpvs were \((gap ?? .nan) * 1000) ms apart after 15 s")
        var later: [Double] = []
        for _ in 0..<3 {
            try await Task.sleep(for: .seconds(1))
            later.append(try await audioGap(people[0], people[1], rate: rate) ?? .infinity)
        }
        #expect(later.allSatisfy { $0 <= tolerance }, "\(what): the two mpvs drifted apart: \(later.map { $0 * 1000 }) ms")
        print("plain mpv through PulseAudio \(what): \(later.map { String(format: "%.2f", $0 * 1000) }) ms apart")
    }
}
