import Foundation
import Testing

/// An installation's queue across restarts, as a supervisor would run it: `coplay host A B
/// --repeat all --invite-file FILE --resume` on a relay with a data directory. The relay is
/// SIGKILLed and restarted, then the host is SIGKILLed and started again with the same command:
/// it comes back to the same session, with the same queue and position, in step with the member
/// that stayed, and publishes nothing of its own.
@Suite("A queue across relay and host restarts", .serialized)
struct QueueResumeCLITests {
    typealias Session = PlaybackSessionCLITests
    typealias Child = PlaybackSessionCLITests.Child

    /// Frame events of `item` as (index, realtime), after `after`.
    static func frames(of item: String, in lines: [String], after: Double = 0) -> [Int: Double] {
        var frames: [Int: Double] = [:]
        for event in Session.events(lines) {
            guard event["type"] as? String == "frame", event["item"] as? String == item, let index = event["index"] as? Int,
                let realtime = event["realtime"] as? Double, realtime > after
            else { continue }
            frames[index] = realtime
        }
        return frames
    }

    /// The queue as `coplay queue --json` prints it: entry ids in play order, and the repeat mode.
    static func queue(_ invite: String) async throws -> (ids: [String], repeatMode: String?) {
        let listed = try await CoplayProcess.run(["queue", invite, "--json"], timeout: 60)
        try #require(listed.status == 0, "coplay queue failed: \(listed.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        let entries = try #require(object["entries"] as? [[String: Any]])
        return (entries.compactMap { $0["id"] as? String }, object["repeat"] as? String)
    }

    @Test("host --resume after a relay restart and a host crash: same session, queue and position; in step with the member that stayed",
          .timeLimit(.minutes(5)), arguments: ["everyone", "hosts"])
    func hostComesBack(control: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await QueueCLITests.makeClip("first-25.mp4", seconds: 4, fps: 25, in: directory)
        let second = try await QueueCLITests.makeClip("second-25.mp4", seconds: 30, fps: 25, in: directory)
        let inviteFile = directory.appendingPathComponent("show.txt").path
        let dataDir = directory.appendingPathComponent("relay-data").path

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let hostArguments = ["--repeat", "all", "--invite-file", inviteFile, "--resume", "--name", "host", "--frames", "--control", control]
        let started = try await Session.startRelayAndHost(
            media: [first, second], hostArguments: hostArguments, relayArguments: ["--data-dir", dataDir], children: &children)
        var relay = started.relay
        let (port, host, invite) = (started.port, started.host, started.invite)
        #expect(try InviteFileText.read(inviteFile) == invite, "the first start writes the invite to the file")
        // Where only hosts control, the member is a viewer (the host's invite is the controller's).
        var memberInvite = invite
        if control == "hosts" {
            let derived = try await CoplayProcess.run(["invite", invite, "--viewer"], timeout: 30)
            try #require(derived.status == 0, "invite --viewer failed: \(derived.stderr)")
            memberInvite = derived.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            // A host does not come back with a viewer invite.
            let viewerFile = directory.appendingPathComponent("viewer.txt").path
            try (memberInvite + "\n").write(toFile: viewerFile, atomically: true, encoding: .utf8)
            let refused = try await CoplayProcess.run(
                ["host", first, "--relay", "127.0.0.1:\(started.port)", "--invite-file", viewerFile, "--resume"], timeout: 60)
            #expect(refused.status != 0 && refused.stderr.contains("holds a viewer invite"), "host --resume with a viewer invite: \(refused.status) \(refused.stderr)")
        }
        let member = try await Child(["join", memberInvite, first, "--item", second, "--name", "ana", "--frames"])
        children.append(member)
        #expect(await member.out.wait(for: .seconds(60)) { Session.events($0).contains { $0["type"] as? String == "pause" } })
        let before = try await Self.queue(invite)
        #expect(before.ids.count == 2 && before.repeatMode == "all", "\(before)")

        // The long second entry plays.
        let jump = try await CoplayProcess.run(["control", invite, "jump", "2"], timeout: 60)
        #expect(jump.status == 0, "jump failed: \(jump.stderr)")
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "play failed: \(play.stderr)")
        let identities = Session.events(member.out.snapshot).compactMap { $0["type"] as? String == "itemChanged" ? $0["item"] as? String : nil }
        let secondItem = try #require(identities.last, "no itemChanged for the jump: \(member.out.snapshot.suffix(4))")
        #expect(await member.out.wait(for: .seconds(30)) { Self.frames(of: secondItem, in: $0).count >= 25 })

        // The relay dies and comes back on its data directory.
        relay.process.kill()
        await relay.process.wait()
        try await Task.sleep(for: .seconds(1))
        relay = try await Session.startRelay(["--data-dir", dataDir], port: port, children: &children).relay
        let afterRelay = Self.frames(of: secondItem, in: member.out.snapshot).count
        #expect(await member.out.wait(for: .seconds(30)) { Self.frames(of: secondItem, in: $0).count >= afterRelay + 25 })

        // The host crashes and its supervisor starts the same command again.
        host.process.kill()
        await host.process.wait()
        let pausesBefore = Session.events(member.out.snapshot).filter { $0["type"] as? String == "pause" }.count
        let restartedAt = Date().timeIntervalSince1970
        let again = try await Child(["host", first, second, "--relay", "127.0.0.1:\(port)"] + hostArguments)
        children.append(again)
        #expect(await again.out.wait(for: .seconds(60)) { $0.first == invite }, "the restarted host is not in the same session: \(again.out.snapshot.prefix(2))")
        #expect(await again.out.wait(for: .seconds(60)) { Self.frames(of: secondItem, in: $0, after: restartedAt).count >= 50 },
                "the restarted host does not play the group's entry: \(again.out.snapshot.suffix(4)) \(again.err.snapshot.suffix(4))")
        try await Task.sleep(for: .seconds(1))

        // Same queue, same position, in step with the member that stayed, and nothing published.
        let after = try await Self.queue(invite)
        #expect(after.ids == before.ids && after.repeatMode == "all", "before \(before), after \(after)")
        let pausesAfter = Session.events(member.out.snapshot).filter { $0["type"] as? String == "pause" }.count
        #expect(pausesAfter == pausesBefore, "the restarted host published a state: the member paused")
        let hostFrames = Self.frames(of: secondItem, in: again.out.snapshot, after: restartedAt)
        let memberFrames = Self.frames(of: secondItem, in: member.out.snapshot, after: restartedAt)
        let skews = hostFrames.compactMap { index, realtime in memberFrames[index].map { abs($0 - realtime) * 1_000 } }.sorted()
        try #require(skews.count >= 25, "\(skews.count) frames shown by both after the host came back")
        let p50 = skews[skews.count / 2]
        let p99 = skews[min(skews.count - 1, Int(Double(skews.count) * 0.99))]
        print("host --resume: \(skews.count) shared frames after the restart, skew p50 \(p50) ms, p99 \(p99) ms")
        // Every frame at the same moment on both: under half a frame interval (20 ms at 25 fps); the benchmarks measure how close.
        #expect(p99 < 20, "skew p99 \(p99) ms")

        if control == "hosts" {
            // The roles came through both restarts: the viewer still cannot control, the controller
            // invite (the one the host came back with) still does.
            let viewerPause = try await CoplayProcess.run(["control", memberInvite, "--name", "ana2", "pause"], timeout: 60)
            #expect(viewerPause.status != 0 && viewerPause.stderr.contains("only hosts control this session"), "\(viewerPause.status) \(viewerPause.stderr)")
            let pause = try await CoplayProcess.run(["control", invite, "pause"], timeout: 60)
            #expect(pause.status == 0, "the controller's pause failed: \(pause.stderr)")
            for child in [member, again] {
                #expect(await child.out.wait(for: .seconds(20)) { lines in
                    Session.events(lines).filter { $0["type"] as? String == "pause" }.count > (child === member ? pausesAfter : 0)
                }, "the controller's pause did not reach a member after the restarts")
            }
        }
    }
}

extension QueueResumeCLITests {
    @Test("host --shuffle: the queue plays in a shuffled order, and a host that comes back does not shuffle it again",
          .timeLimit(.minutes(3)))
    func hostShuffles() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-shuffle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var files: [String] = []
        for index in 0..<4 { files.append(try await QueueCLITests.makeClip("c\(index).mp4", seconds: 2, fps: 25, in: directory)) }
        let inviteFile = directory.appendingPathComponent("show.txt").path
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let hostArguments = ["--shuffle", "--invite-file", inviteFile, "--resume", "--name", "host", "--events", "jsonl"]
        let (_, port, host, invite) = try await Session.startRelayAndHost(media: files, hostArguments: hostArguments, children: &children)
        #expect(await host.out.wait(for: .seconds(60)) { lines in
            Session.events(lines).contains { $0["type"] as? String == "queueChanged" && $0["detail"] as? String == "shuffle on" }
        }, "no shuffle: \(host.out.snapshot.suffix(4)) \(host.err.snapshot.suffix(4))")
        let listed = try await CoplayProcess.run(["queue", invite, "--json"], timeout: 60)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any])
        #expect(object["shuffle"] as? Bool == true, "\(listed.stdout)")
        let order = (object["entries"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        #expect(Set(order) == Set(files.map { URL(fileURLWithPath: $0).lastPathComponent }), "\(order)")

        // The host comes back: the same order, no second shuffle. (Alone, it starts from the
        // relay's retained copy of the queue, which a member publishes at most once a second after
        // its edits: a host killed within that second would come back to the copy before them.)
        try await Task.sleep(for: .seconds(2))
        host.process.kill()
        await host.process.wait()
        let again = try await Child(["host"] + files + ["--relay", "127.0.0.1:\(port)"] + hostArguments)
        children.append(again)
        #expect(await again.out.wait(for: .seconds(60)) { $0.first == invite })
        try await Task.sleep(for: .seconds(3))
        #expect(!Session.events(again.out.snapshot).contains { $0["type"] as? String == "queueChanged" && $0["detail"] as? String == "shuffle on" },
                "the host that came back shuffled again")
        let relisted = try await CoplayProcess.run(["queue", invite, "--json"], timeout: 60)
        let reobject = try #require(try JSONSerialization.jsonObject(with: Data(relisted.stdout.utf8)) as? [String: Any])
        #expect((reobject["entries"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String } == order)
    }
}

/// The invite a file holds (its first non-empty line).
private enum InviteFileText {
    static func read(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
    }
}
