import Foundation
import MPVControl
import Testing

/// A session where only hosts control (`coplay host --control hosts`), end to end: a real relay, the
/// host (controller invite), a person's mpv attached with `--mpv-socket` and a headless member, both
/// joined with the viewer invite (`coplay invite --viewer`). A viewer's pause, from `coplay control`
/// and from mpv's own key (IPC `keypress`), changes nothing for anyone (mpv goes back and says
/// why); the controller's pause stops everyone on one frame; `grant` and `revoke` move control from
/// the next command on.
@Suite("Roles: only hosts control", .serialized)
struct RolesCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    static func events(_ child: Child) -> [[String: Any]] { PlaybackSessionCLITests.events(child.out.snapshot) }

    static func count(_ type: String, by originator: String, in child: Child) -> Int {
        events(child).filter { $0["type"] as? String == type && $0["originator"] as? String == originator }.count
    }

    /// The item time every member stopped at after `originator`'s latest pause.
    static func stops(after originator: String, in members: [(String, Child)]) async -> [String: Double] {
        var times: [String: Double] = [:]
        for (name, child) in members {
            _ = await child.out.wait(for: .seconds(30)) { _ in MPVPlayerCLITests.stoppedAfterPause(by: originator, in: child) != nil }
            if let time = MPVPlayerCLITests.stoppedAfterPause(by: originator, in: child)?["itemTime"] as? Double { times[name] = time }
        }
        return times
    }

    /// Whether `child` presents frames again (more than `than` frame events).
    static func playing(_ child: Child, beyond than: Int) async -> Bool {
        await child.out.wait(for: .seconds(20)) { PlaybackSessionCLITests.frames($0).count > than + 25 }
    }

    @Test(
        "hosts session: viewers' pauses (control, mpv key) change no player; the controller's pause stops all on one frame; grant and revoke take effect on the next command",
        .timeLimit(.minutes(6)))
    func viewersCannotControlUntilGranted() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: MPVPlayerCLITests.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-roles-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await MPVPlainCLITests.makeMedia(in: directory, fps: 25, seconds: 300, audio: false)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        // A name of its own per run: the members' keys live in the state directory by name.
        let tag = String(UUID().uuidString.prefix(4)).lowercased()
        let (bob, carol) = ("bob\(tag)", "carol\(tag)")

        let (_, _, host, controller) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [media], hostArguments: ["--name", "host", "--frames", "--control", "hosts"], children: &children)
        #expect(controller.contains("host="), "the controller invite names no host key: \(controller)")
        let derived = try await CoplayProcess.run(["invite", controller, "--viewer"], timeout: 30)
        #expect(derived.status == 0, "invite --viewer failed: \(derived.stderr)")
        let viewer = derived.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(viewer.hasPrefix("coplay://") && viewer != controller && controller.hasPrefix(viewer + "."), "viewer invite \(viewer) of \(controller)")
        let link = try await CoplayProcess.run(["invite", controller, "--viewer", "--link"], timeout: 30)
        #expect(link.status == 0 && link.stdout.contains("/#invite=") && !link.stdout.contains("."+"\(controller.split(separator: ".").last ?? "")"), "link: \(link.stdout) \(link.stderr)")

        // The viewers: a person's mpv attached with --mpv-socket, and a headless member.
        let socket = directory.appendingPathComponent("bob.sock").path
        let bobMPV = try await MPVPlayerCLITests.startMPV(socket: socket)
        children.append(bobMPV)
        _ = try await MPVPlayerCLITests.connect(socket)
        let bobMember = try await Child(["join", viewer, media, "--mpv-socket", socket, "--name", bob])
        children.append(bobMember)
        let carolMember = try await Child(["join", viewer, media, "--name", carol, "--frames"])
        children.append(carolMember)
        for member in [bobMember, carolMember] {
            #expect(await member.out.wait(for: .seconds(60)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "joined" }
            }, "a member did not join: \(member.err.snapshot.suffix(5))")
        }
        let members = [("host", host), (bob, bobMember), (carol, carolMember)]

        // A viewer's command from the command line: refused before it is sent, non-zero exit.
        let refused = try await CoplayProcess.run(["control", viewer, "--name", carol, "play"], timeout: 60)
        #expect(refused.status != 0 && refused.stderr.contains("only hosts control this session"), "viewer's control play: \(refused.status) \(refused.stderr)")
        let play = try await CoplayProcess.run(["control", controller, "play"], timeout: 60)
        #expect(play.status == 0, "controller's play failed: \(play.stderr)")
        #expect(await host.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count > 40 }, "the group never played")
        let viewerPause = try await CoplayProcess.run(["control", viewer, "--name", carol, "pause"], timeout: 60)
        #expect(viewerPause.status != 0 && viewerPause.stderr.contains("only hosts control this session"), "viewer's control pause: \(viewerPause.stderr)")

        // A viewer's pause and seek keys in mpv: mpv goes back to the group's and says why.
        let person = try await MPVPlayerCLITests.connect(socket)
        defer { Task { await person.close() } }
        let framesBefore = PlaybackSessionCLITests.frames(host.out.snapshot).count
        try await person.run(["keypress", "space"])
        var putBack = false
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let paused = try await person.get("pause").data.bool
            let notices = try await NoticesCLITests.notices(person) ?? ""
            if paused == false, notices.contains("only hosts control this session") {
                putBack = true
                break
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let shownNotices = try await NoticesCLITests.notices(person) ?? "none"
        #expect(putBack, "mpv did not go back to playing with the notice: \(shownNotices)")
        try await person.run(["keypress", "RIGHT"])
        try await Task.sleep(for: .seconds(2))
        #expect(await Self.playing(host, beyond: framesBefore), "the host stopped presenting frames after a viewer's keys")
        #expect(await Self.playing(carolMember, beyond: PlaybackSessionCLITests.frames(carolMember.out.snapshot).count - 30), "carol stopped")
        for (name, child) in members {
            for type in ["pause", "seek", "play", "rate"] {
                #expect(Self.count(type, by: bob, in: child) == 0, "\(name) took a \(type) of the viewer \(bob)")
                #expect(Self.count(type, by: carol, in: child) == 0, "\(name) took a \(type) of the viewer \(carol)")
            }
        }
        // mpv plays where the group plays (the seek key was put back): within a second of the host.
        let hostTime = PlaybackSessionCLITests.frames(host.out.snapshot).last.map { Double($0.index) / 25 } ?? -1
        let mpvTime = try await person.number("time-pos") ?? -100
        print("roles test: after the viewer's seek key, mpv at \(mpvTime) s, host's last frame at \(hostTime) s")
        #expect(abs(mpvTime - hostTime) < 1.5, "mpv at \(mpvTime) s, the group at \(hostTime) s")

        // The controller's pause: every member stops on one frame.
        let pause = try await CoplayProcess.run(["control", controller, "--name", "ctl", "pause"], timeout: 60)
        #expect(pause.status == 0, "controller's pause failed: \(pause.stderr)")
        let stops = await Self.stops(after: "ctl", in: members)
        print("roles test: the controller's pause stopped the members at \(stops)")
        #expect(stops.count == 3 && Set(stops.values.map { ($0 * 1e6).rounded() }).count == 1, "stopped at different times: \(stops)")

        // grant: bob's pause key and carol's command line count from their next command.
        let grantBob = try await CoplayProcess.run(["control", controller, "grant", bob], timeout: 60)
        #expect(grantBob.status == 0 && grantBob.stdout.contains("grant accepted"), "grant \(bob): \(grantBob.stdout) \(grantBob.stderr)")
        let grantCarol = try await CoplayProcess.run(["control", controller, "grant", carol], timeout: 60)
        #expect(grantCarol.status == 0, "grant \(carol): \(grantCarol.stderr)")
        for child in [host, carolMember] {
            #expect(await child.out.wait(for: .seconds(20)) { lines in
                PlaybackSessionCLITests.events(lines).filter { $0["type"] as? String == "roleChanged" && $0["detail"] as? String == "grant" }.count >= 2
            }, "no roleChanged events")
        }
        let people = try await CoplayProcess.run(["people", viewer], timeout: 60)
        #expect(people.status == 0 && people.stdout.contains("only hosts control") && people.stdout.contains(bob) && people.stdout.contains(carol),
            "people: \(people.stdout) \(people.stderr)")
        let carolPlays = try await CoplayProcess.run(["control", viewer, "--name", carol, "play"], timeout: 60)
        #expect(carolPlays.status == 0, "granted viewer's play: \(carolPlays.stderr)")
        #expect(await host.out.wait(for: .seconds(20)) { _ in Self.count("play", by: carol, in: host) >= 1 }, "the host did not take carol's play")
        try await Task.sleep(for: .seconds(1))
        try await person.run(["keypress", "space"])
        let bobStops = await Self.stops(after: bob, in: members)
        print("roles test: granted \(bob)'s pause key stopped the members at \(bobStops)")
        #expect(bobStops.count == 3 && Set(bobStops.values.map { ($0 * 1e6).rounded() }).count == 1, "granted pause: \(bobStops)")

        // revoke: bob's next pause counts nowhere again.
        let revoke = try await CoplayProcess.run(["control", controller, "revoke", bob], timeout: 60)
        #expect(revoke.status == 0 && revoke.stdout.contains("revoke accepted"), "revoke: \(revoke.stdout) \(revoke.stderr)")
        #expect(await bobMember.out.wait(for: .seconds(20)) { lines in
            PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "roleChanged" && $0["detail"] as? String == "revoke" }
        })
        let resume = try await CoplayProcess.run(["control", controller, "play"], timeout: 60)
        #expect(resume.status == 0)
        let framesAfterRevoke = PlaybackSessionCLITests.frames(host.out.snapshot).count
        try await Task.sleep(for: .seconds(1))
        try await person.run(["keypress", "space"])
        try await Task.sleep(for: .seconds(2))
        #expect(await Self.playing(host, beyond: framesAfterRevoke), "the host stopped after the revoked viewer's key")
        for (name, child) in members {
            #expect(Self.count("pause", by: bob, in: child) == 1, "\(name): \(bob)'s pause after the revocation counted")
        }

        // Unknown and ambiguous names are clear errors.
        let unknown = try await CoplayProcess.run(["control", controller, "grant", "nobody"], timeout: 60)
        #expect(unknown.status != 0 && unknown.stderr.contains("no member named 'nobody'") && unknown.stderr.contains(bob), "unknown name: \(unknown.stderr)")
        let notController = try await CoplayProcess.run(["control", viewer, "grant", bob], timeout: 60)
        #expect(notController.status != 0 && notController.stderr.contains("controller invite"), "grant with a viewer invite: \(notController.stderr)")
    }

    /// For each of `joiner`'s frames after `after` (realtime), how far (ms) from `other`'s nearest
    /// showing of the same item and index (a looping queue shows each frame once per round).
    static func offsets(of joiner: Child, against other: Child, after: Double) -> [Double] {
        var shown: [String: [Double]] = [:]
        for event in events(other) where event["type"] as? String == "frame" {
            if let item = event["item"] as? String, let index = event["index"] as? Int, let realtime = event["realtime"] as? Double {
                shown["\(item) \(index)", default: []].append(realtime)
            }
        }
        // Up to a moment before `other`'s last frame read (its next lines may not be read yet).
        let until = (shown.values.compactMap { $0.max() }.max() ?? 0) - 0.2
        return events(joiner).compactMap { event in
            guard event["type"] as? String == "frame", let item = event["item"] as? String, let index = event["index"] as? Int,
                let realtime = event["realtime"] as? Double, realtime > after, realtime < until,
                let theirs = shown["\(item) \(index)"]?.min(by: { abs($0 - realtime) < abs($1 - realtime) })
            else { return nil }
            return (realtime - theirs) * 1000
        }
    }

    @Test(
        "hosts session whose host left: the viewers still move on at each entry's end, in step, and a viewer joining then plays in step",
        .timeLimit(.minutes(5)))
    func viewersMoveOnWithoutHost() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-roles-end-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await QueueCLITests.makeClip("first-25.mp4", seconds: 6, fps: 25, in: directory)
        let second = try await QueueCLITests.makeClip("second-30.mp4", seconds: 4, fps: 30, in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let tag = String(UUID().uuidString.prefix(4)).lowercased()
        let (_, _, host, controller) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [first, second], hostArguments: ["--name", "host", "--control", "hosts", "--repeat", "all"], children: &children)
        let derived = try await CoplayProcess.run(["invite", controller, "--viewer"], timeout: 30)
        try #require(derived.status == 0, "invite --viewer failed: \(derived.stderr)")
        let viewer = derived.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var viewers: [Child] = []
        for name in ["ana\(tag)", "bo\(tag)"] {
            let member = try await Child(["join", viewer, first, "--item", second, "--name", name, "--frames"])
            children.append(member)
            viewers.append(member)
        }
        for member in viewers {
            #expect(await member.out.wait(for: .seconds(60)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "pause" }
            }, "a viewer never applied the session's state: \(member.err.snapshot.suffix(5))")
        }
        let play = try await CoplayProcess.run(["control", controller, "play"], timeout: 60)
        try #require(play.status == 0, "play failed: \(play.stderr)")
        for member in viewers {
            #expect(await member.out.wait(for: .seconds(20)) { PlaybackSessionCLITests.frames($0).count > 10 }, "a viewer does not play")
        }
        // The host (the only controller) leaves while the first entry plays.
        host.stop()
        let left = Date().timeIntervalSince1970

        // Both viewers move on to the second entry at the first's end, then back to the first (repeat all).
        for member in viewers {
            let moved = await member.out.wait(for: .seconds(40)) { lines in
                PlaybackSessionCLITests.events(lines).filter { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }.count >= 2
            }
            #expect(moved, "a viewer did not move on without the host: \(member.out.snapshot.suffix(4)) \(member.err.snapshot.suffix(4))")
        }
        let changes = Self.events(viewers[0]).filter { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }
        try #require(changes.count >= 2)
        for item in changes.prefix(2).compactMap({ $0["item"] as? String }) {
            // The change is ordered a moment before the entry's end: wait for its first frame.
            for member in viewers {
                _ = await member.out.wait(for: .seconds(10)) { !QueueCLITests.firstFrames(of: item, in: $0, after: left).isEmpty }
            }
            let starts = viewers.compactMap { QueueCLITests.firstFrames(of: item, in: $0.out.snapshot, after: left).first }
            try #require(starts.count == viewers.count, "not every viewer showed \(item)'s first frame after the host left")
            let spread = (starts.max()! - starts.min()!) * 1000
            print("without the host, transition to \(item.prefix(12)): first frames within \(String(format: "%.3f", spread)) ms")
            #expect(spread < 20, "first frames \(spread) ms apart (half a frame is 16.7-20 ms)")
        }

        // A viewer joining now reads the last signed state (the first entry, long over) and the
        // retained queue, and walks on by its own transitions to where the group is.
        let joinedAt = Date().timeIntervalSince1970
        let late = try await Child(["join", viewer, first, "--item", second, "--name", "cy\(tag)", "--frames"])
        children.append(late)
        #expect(await late.out.wait(for: .seconds(60)) { lines in
            PlaybackSessionCLITests.frames(lines).filter { $0.realtime > joinedAt }.count > 60
        }, "the late viewer does not play: \(late.out.snapshot.suffix(4)) \(late.err.snapshot.suffix(6))")
        // Its frames from a second after its first one, against ana's same frames.
        let firstShown = PlaybackSessionCLITests.frames(late.out.snapshot).map(\.realtime).first { $0 > joinedAt } ?? joinedAt
        let offsets = Self.offsets(of: late, against: viewers[0], after: firstShown + 1).map(abs).sorted()
        try #require(offsets.count > 20, "the late viewer showed few of ana's frames: \(offsets.count)")
        let p99 = offsets[min(offsets.count - 1, Int(Double(offsets.count) * 0.99))]
        print("late viewer without the host: \(offsets.count) frames, |offset| median \(String(format: "%.3f", offsets[offsets.count / 2])) ms, p99 \(String(format: "%.3f", p99)) ms")
        #expect(p99 < 20, "the late viewer's frames are \(p99) ms off ana's (p99)")
    }
}
