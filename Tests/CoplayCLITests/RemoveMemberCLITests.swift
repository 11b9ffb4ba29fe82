import Foundation
import GroupChat
import GroupSessions
import Logging
import NIOCore
import PlaybackCoordinator
import TestSupport
import Testing

/// `coplay control CONTROLLER_INVITE remove NAME` end to end (docs/protocol.md, "Removing a member"):
/// a real relay keeping its frames on disk, `coplay host --control hosts` and three headless
/// `coplay join` members with the viewer invite: one granted control, one plain viewer, one granted
/// and then removed. Judged from the members' JSON Lines, from `coplay control` and `people` run
/// against the successor, and from the relay's own record of the successor session's frames.
@Suite("coplay control remove over a real relay", .serialized)
struct RemoveMemberCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    /// The data frames of a session as the relay wrote them (`DIR/sessions/ID/frames`: records
    /// `length u32 | kind u8 | frame as on the wire`).
    static func capturedFrames(_ path: String) throws -> [Frame] {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var frames: [Frame] = []
        var offset = 0
        while offset + 5 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 4 + length <= bytes.count, length >= 1 else { break }  // a torn last record
            var buffer = ByteBuffer(bytes: bytes[(offset + 5)..<(offset + 4 + length)])
            if let frame = try FrameCodec.decode(from: &buffer), frame.type == .data { frames.append(frame) }
            offset += 4 + length
        }
        return frames
    }

    /// Whether `frame` opens with `keys` (a fresh cipher per frame: no replay state in the way).
    static func opens(_ frame: Frame, with keys: SessionKeys) -> Bool {
        var cipher = PayloadCipher(keys: keys)
        return (try? cipher.open(frame)) != nil
    }

    @Test(
        "remove: the others move to a successor on the same timeline (frames in step across the switch), the removed member stops with its message, its keys open no frame of the successor; there the viewer still cannot control, the granted member still can, the removed one's grant is gone",
        .timeLimit(.minutes(8)))
    func removeOneOfFour() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-remove-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await PlaybackSessionCLITests.makeMedia(in: directory)
        let dataDirectory = directory.appendingPathComponent("relay").path
        let inviteFile = directory.appendingPathComponent("invite.txt").path

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, port) = try await PlaybackSessionCLITests.startRelay(["--data-dir", dataDirectory], children: &children)
        let host = try await Child([
            "host", media, "--relay", "127.0.0.1:\(port)", "--name", "host", "--control", "hosts", "--frames",
            "--invite-file", inviteFile,
        ])
        children.append(host)
        #expect(await host.out.wait(for: .seconds(60)) { !$0.isEmpty })
        let controllerText = try #require(host.out.snapshot.first)
        let controller = try Invite(parsing: controllerText)
        #expect(controller.onlyHostsControl && controller.controls, "host --control hosts prints the controller invite")
        let viewer = controller.viewer.description

        // Names of their own per run: a viewer's key lives in the state directory by name (join
        // and control --name share it), and grants are by key.
        let tag = String(UUID().uuidString.prefix(4)).lowercased()
        let (alice, carol, bob) = ("alice\(tag)", "carol\(tag)", "bob\(tag)")
        var members: [String: Child] = ["host": host]
        for name in [alice, carol, bob] {
            let member = try await Child(["join", viewer, media, "--name", name, "--frames"])
            children.append(member)
            members[name] = member
        }
        for (name, member) in members {
            let ready = await member.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil }
            #expect(ready, "\(name) never applied the session's state: \(member.err.snapshot.suffix(5))")
        }

        // In a session where everyone controls, or with the viewer invite, remove is refused.
        let refusedViewer = try await CoplayProcess.run(["control", viewer, "remove", bob], timeout: 60)
        #expect(refusedViewer.status != 0)
        #expect(refusedViewer.stderr.contains("controller invite"), "\(refusedViewer.stderr)")
        let everyone = Invite.generate(host: "127.0.0.1", port: port).description
        let refusedEveryone = try await CoplayProcess.run(["control", everyone, "remove", bob], timeout: 60)
        #expect(refusedEveryone.status != 0)
        #expect(refusedEveryone.stderr.contains("everyone controls"), "\(refusedEveryone.stderr)")

        // alice and bob are granted control; carol stays a viewer.
        for name in [alice, bob] {
            let grant = try await CoplayProcess.run(["control", controllerText, "grant", name], timeout: 60)
            #expect(grant.status == 0 && grant.stdout.contains("grant accepted"), "grant \(name): \(grant.stdout) \(grant.stderr)")
        }
        let play = try await CoplayProcess.run(["control", viewer, "--name", alice, "play"], timeout: 60)
        #expect(play.status == 0, "the granted viewer's play: \(play.stderr)")
        try await Task.sleep(for: .seconds(2))

        let removedAt = Date().timeIntervalSince1970
        let remove = try await CoplayProcess.run(["control", controllerText, "remove", bob, "--name", "ana"], timeout: 90)
        #expect(remove.status == 0, "remove: \(remove.stdout) \(remove.stderr)")
        print("coplay remove test: control printed: \(remove.stdout.split(separator: "\n").prefix(2).joined(separator: " / "))")
        let lines = remove.stdout.split(separator: "\n")
        let successorLine = try #require(lines.first { $0.hasPrefix("controller invite: ") })
        let successor = try Invite(parsing: String(successorLine.dropFirst("controller invite: ".count)))
        let successorViewerLine = try #require(lines.first { $0.hasPrefix("viewer invite: ") })
        let successorViewer = String(successorViewerLine.dropFirst("viewer invite: ".count))
        #expect(successor.session != controller.session && successor.secret != controller.secret)
        #expect(successor.hostKey != controller.hostKey, "a fresh host key")
        #expect(successorViewer == successor.viewer.description)
        #expect(remove.stdout.contains("3 member(s) moved"), "\(remove.stdout)")
        // The grants in force carry over, but the removed member's.
        #expect(remove.stdout.contains("control granted in the new session too: \(alice)\n"), "\(remove.stdout)")

        // The removed member: its player stops, it says who removed it, exit status 3.
        let bobMember = try #require(members[bob])
        let ended = await bobMember.process.wait(timeout: .seconds(30))
        #expect(ended?.status == 3, "bob ended with \(ended?.description ?? "nothing"): \(bobMember.err.snapshot.suffix(5))")
        #expect(bobMember.err.snapshot.contains("coplay: you were removed from this session by ana"), "\(bobMember.err.snapshot.suffix(5))")
        #expect(PlaybackSessionCLITests.events(bobMember.out.snapshot).contains { $0["type"] as? String == "removed" && $0["originator"] as? String == "ana" })

        // Everyone else moved and plays on.
        let remaining = ["host", alice, carol]
        for name in remaining {
            let member = try #require(members[name])
            let moved = await member.out.wait(for: .seconds(30)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "moved" && $0["originator"] as? String == bob }
            }
            #expect(moved, "\(name) did not move: \(member.err.snapshot.suffix(5))")
            #expect(member.process.isRunning, "\(name) stopped: \(member.err.snapshot.suffix(5))")
        }
        // The host got the controller invite (the host key attested its member key) and rewrote its file.
        #expect(await host.err.wait(for: .seconds(10)) { $0.contains { $0.contains("the session moved") && $0.contains(successor.description) } })
        #expect(try String(contentsOfFile: inviteFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines) == successor.description)

        // The relay's record of the successor: every data frame opens with the successor's secret,
        // none with the secret the removed member held (nor the old session's keys), and its join
        // token is not the old one's.
        try await Task.sleep(for: .seconds(3))
        let sessionDirectory = "\(dataDirectory)/sessions/\(successor.session)"
        let captured = try Self.capturedFrames("\(sessionDirectory)/frames")
        let successorKeys = SessionKeys(invite: successor)
        let removedKeys = [
            SessionKeys(invite: controller),
            SessionKeys(secret: controller.secret, session: successor.session, suite: controller.suite),
            SessionKeys(secret: controller.secret, session: successor.session, suite: controller.suite == .aes256GCM ? .chaCha20Poly1305 : .aes256GCM),
        ]
        let openedBySuccessor = captured.filter { Self.opens($0, with: successorKeys) }.count
        let openedByRemoved = captured.filter { frame in removedKeys.contains { Self.opens(frame, with: $0) } }.count
        print("coplay remove test: \(captured.count) data frames captured in the successor; \(openedBySuccessor) open with its secret, \(openedByRemoved) with the removed member's")
        #expect(captured.count >= 10, "too few frames captured: \(captured.count)")
        #expect(openedBySuccessor == captured.count)
        #expect(openedByRemoved == 0)
        let state = try String(contentsOfFile: "\(sessionDirectory)/state", encoding: .utf8)
        let oldTokenHash = SessionKeys.joinTokenHash(SessionKeys(secret: controller.secret, session: successor.session).joinToken)
        #expect(!state.contains(oldTokenHash.map { String(format: "%02x", $0) }.joined()))
        // And the removed member's invite, pointed at the successor, is refused by the relay.
        let bobsGuess = Invite(host: "127.0.0.1", port: port, session: successor.session, secret: controller.secret, suite: successor.suite)
        let refused = try await CoplayProcess.run(["control", bobsGuess.description, "pause"], timeout: 60)
        #expect(refused.status != 0, "the old secret opened the successor: \(refused.stdout)")

        // A member that moved says its new invite (a viewer's: the successor's viewer invite).
        let aliceMember = try #require(members[alice])
        #expect(await aliceMember.err.wait(for: .seconds(10)) { $0.contains { $0.contains("new invite: \(successorViewer)") } }, "\(aliceMember.err.snapshot.suffix(5))")

        // The successor's roles: alice's grant (re-issued by the successor's host key) counts
        // there, bob's does not, carol is a viewer.
        let people = try await CoplayProcess.run(["people", successorViewer], timeout: 60)
        #expect(people.status == 0 && people.stdout.contains("(and \(alice), granted control)"), "people in the successor: \(people.stdout) \(people.stderr)")
        #expect(!people.stdout.contains(bob), "the removed member is listed in the successor: \(people.stdout)")
        // The viewer cannot control there (refused before anything is sent), nor reach the old session.
        func pauses(_ name: String) throws -> Int {
            PlaybackSessionCLITests.events(try #require(members[name]).out.snapshot).filter { $0["type"] as? String == "pause" }.count
        }
        let pausesBefore = try remaining.map(pauses)
        let carolPauses = try await CoplayProcess.run(["control", successorViewer, "--name", carol, "pause"], timeout: 60)
        #expect(carolPauses.status != 0 && carolPauses.stderr.contains("only hosts control this session"), "the viewer's pause in the successor: \(carolPauses.status) \(carolPauses.stderr)")
        let carolOld = try await CoplayProcess.run(["control", viewer, "--name", carol, "pause"], timeout: 60)
        #expect(carolOld.status != 0, "the viewer's pause with the old invite: \(carolOld.stdout)")
        print("coplay remove test: the viewer's pause in the successor: \(carolPauses.stderr.split(separator: "\n").last ?? ""); with the old invite: \(carolOld.stderr.split(separator: "\n").last ?? "")")
        try await Task.sleep(for: .seconds(1))
        for name in remaining {
            #expect(RolesCLITests.count("pause", by: carol, in: try #require(members[name])) == 0, "\(name) took the viewer's pause")
        }
        #expect(try remaining.map(pauses) == pausesBefore, "a member paused on the viewer's command")

        // Still in step, and the granted member still controls: alice's pause (signed with her
        // key, granted in the successor) stops all three on one frame.
        let pause = try await CoplayProcess.run(["control", successorViewer, "--name", alice, "pause"], timeout: 60)
        #expect(pause.status == 0, "the granted member's pause in the successor: \(pause.stderr)")
        for name in remaining {
            let member = try #require(members[name])
            let paused = await member.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.pausedAfterCommand($0, pauses: 2) && RolesCLITests.count("pause", by: alice, in: member) == 1 }
            #expect(paused, "\(name) did not pause: \(member.err.snapshot.suffix(5))")
        }
        try await Task.sleep(for: .milliseconds(500))
        let stops = try remaining.map { PlaybackSessionCLITests.lastStopped(try #require(members[$0]).out.snapshot)?["index"] as? Int }
        #expect(Set(stops).count == 1, "paused on different frames: \(stops)")

        // Frames across the switch: from 1.5 s before the removal to 3 s after it.
        let frames = try remaining.map { PlaybackSessionCLITests.frames(try #require(members[$0]).out.snapshot) }
        let window = (removedAt - 1.5)...(removedAt + 3)
        struct Key: Hashable { var index: Int; var reference: Int64 }
        let keyed = frames.map { list in
            Dictionary(
                list.filter { window.contains($0.realtime) }.map { (Key(index: $0.index, reference: Int64(($0.referenceTime * 1e4).rounded())), $0.realtime) },
                uniquingKeysWith: { first, _ in first })
        }
        let common = keyed.dropFirst().reduce(Set(keyed[0].keys)) { $0.intersection($1.keys) }
        let skews = common.map { key in
            let times = keyed.map { $0[key]! }
            return (times.max()! - times.min()!) * 1000
        }.sorted()
        // Each member's frames went on one after the other through the switch (no seek, no gap).
        let gaps = frames.map { list in
            let indices = list.filter { window.contains($0.realtime) }.map(\.index)
            return zip(indices, indices.dropFirst()).map { $1 - $0 }.max() ?? 0
        }
        try #require(!skews.isEmpty)
        let p50 = skews[skews.count / 2]
        let p99 = skews[min(skews.count - 1, Int(Double(skews.count) * 0.99))]
        print(String(
            format: "coplay remove test: %d frames common to host, alice and carol across the switch: skew p50 %.3f ms, p99 %.3f ms, max %.3f ms; largest index step per member %@",
            skews.count, p50, p99, skews.last!, "\(gaps)"))
        #expect(skews.count >= 60, "too few common frames across the switch: \(skews.count) (\(keyed.map(\.count)))")
        #expect(gaps.allSatisfy { $0 >= 1 && $0 <= 3 }, "a member jumped at the switch: index steps \(gaps)")
        // The behaviour: the same frame at the same moment (within half a frame, 20 ms at 25 fps);
        // how far below depends on the machine's load (the figure is printed above).
        #expect(p99 < 20, "frame skew p99 \(p99) ms across the switch")
    }

    /// Whether `condition` holds within `timeout` (polled every 20 ms).
    static func poll(for timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }

    /// A member that says it is one-shot, as `coplay control` does, run here so that it stays in the
    /// session through the whole removal: a coordinator without a player whose presence reports say
    /// `oneShot`, behind the session's role gate, and a chat listener that announces nothing (no
    /// identity, no sealing key) and records the removal's outcome for it.
    final class OneShot: Sendable {
        struct NoPlayer: PlaybackControlDelegate {
            func handle(_ command: PlaybackCommand) async {}
        }

        let session: GroupSession<WatchTogetherActivity>
        let outcomes = LockedBox<[RemovalOutcome]>([])
        private let chat: ChatChannel<WatchTogetherActivity>
        private let running: Task<Void, Never>

        init(invite: Invite, name: String) async throws {
            let logger = Logger(label: "test.one-shot")
            session = try await GroupActivityCenter<WatchTogetherActivity>(transport: RelayTransport(invite: invite), logger: logger).accept(invite)
            let gate = RoleGate(session: session, invite: invite, memberKey: MemberKey(), logger: logger)
            let outcomes = outcomes
            chat = try ChatChannel(session: session, key: MemberKey(), name: name, logger: logger) { outcome in
                outcomes.mutate { $0.append(outcome) }
            }
            try await session.join()
            var options = GroupPlayback<WatchTogetherActivity, ContinuousClock>.Options()
            options.converge = false
            let playback = try await GroupPlayback.prepare(session: session, timeServer: invite, options: options, gate: gate, logger: logger)
            let coordinator = playback.makeCoordinator(delegate: NoPlayer(), name: name, oneShot: true)
            running = Task { await coordinator.run() }
            try await coordinator.announce()
        }

        deinit { running.cancel() }

        var ended: Bool {
            if case .invalidated(.ended) = session.state { true } else { false }
        }
    }

    @Test(
        "the members that do not move: a one-shot member present throughout is not waited for and gets no invite, a member that left before finds nothing with its old invite, a stopped one is left behind and stops with the old session; a member's --invite-file follows the move, so the same file reaches the successor",
        .timeLimit(.minutes(8)))
    func membersThatDoNotMove() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-remove-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await PlaybackSessionCLITests.makeMedia(in: directory)
        let dataDirectory = directory.appendingPathComponent("relay").path

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, port) = try await PlaybackSessionCLITests.startRelay(["--data-dir", dataDirectory], children: &children)
        let host = try await Child(["host", media, "--relay", "127.0.0.1:\(port)", "--name", "host", "--control", "hosts", "--frames"])
        children.append(host)
        #expect(await host.out.wait(for: .seconds(60)) { !$0.isEmpty })
        let controllerText = try #require(host.out.snapshot.first)
        let controller = try Invite(parsing: controllerText)
        let viewer = controller.viewer.description
        // bob and dave keep the viewer invite in a file, as people are told to.
        let (bobFile, daveFile) = (directory.appendingPathComponent("bob.txt").path, directory.appendingPathComponent("dave.txt").path)
        for file in [bobFile, daveFile] { try "\(viewer)\n".write(toFile: file, atomically: true, encoding: .utf8) }

        let tag = String(UUID().uuidString.prefix(4)).lowercased()
        let (bob, carol, dave, erin) = ("bob\(tag)", "carol\(tag)", "dave\(tag)", "erin\(tag)")
        var members: [String: Child] = ["host": host]
        for (name, invite) in [(bob, ["--invite-file", bobFile]), (carol, [viewer]), (dave, ["--invite-file", daveFile]), (erin, [viewer])] {
            // erin logs at info: why its connection ended, if it does, is in its stderr.
            let logLevel = name == erin ? ["--log-level", "info"] : []
            let member = try await Child(["join"] + invite + [media, "--name", name, "--frames"] + logLevel)
            children.append(member)
            members[name] = member
        }
        for (name, member) in members {
            let ready = await member.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil }
            #expect(ready, "\(name) never applied the session's state: \(member.err.snapshot.suffix(5))")
        }
        let play = try await CoplayProcess.run(["control", controllerText, "play"], timeout: 60)
        #expect(play.status == 0, "play: \(play.stderr)")

        // dave leaves before the removal (offline: its process ended).
        let daveMember = try #require(members[dave])
        daveMember.stop()
        #expect(await daveMember.process.wait(timeout: .seconds(30)) != nil, "dave did not stop")
        // A one-shot member, present from before the removal to the old session's end.
        let oneShot = try await OneShot(invite: controller.viewer, name: "shot\(tag)")
        try await Task.sleep(for: .seconds(2))  // its presence reports (one a second) are out

        // erin's process is stopped from before the remover joins until the remover made the
        // successor (its session directory appears at the relay): erin says nothing to the remover.
        let erinMember = try #require(members[erin])
        erinMember.process.send(SIGSTOP)
        let stoppedAt = ContinuousClock.now
        let sessions = "\(dataDirectory)/sessions"
        let removing = Task { try await CoplayProcess.run(["control", controllerText, "remove", carol, "--name", "ana"], timeout: 120) }
        let successorMade = await host.out.wait(for: .seconds(90)) { _ in
            ((try? FileManager.default.contentsOfDirectory(atPath: sessions)) ?? []).contains {
                $0 != "\(controller.session)" && SessionID(hex: $0) != nil
            }
        }
        erinMember.process.send(SIGCONT)
        print("coplay remove test: erin was stopped for \(ContinuousClock.now - stoppedAt) (its liveness timeout is 15 s)")
        #expect(successorMade, "the remover made no successor")
        let remove = try await removing.value
        #expect(remove.status == 0, "remove: \(remove.stdout) \(remove.stderr)")
        print("coplay remove test: control printed: \(remove.stdout.split(separator: "\n").prefix(3).joined(separator: " / "))")
        let lines = remove.stdout.split(separator: "\n")
        let successor = try Invite(parsing: String(try #require(lines.first { $0.hasPrefix("controller invite: ") }).dropFirst("controller invite: ".count)))
        let successorViewer = successor.viewer.description
        // Sealed to the host and bob only: not to the one-shot member, dave (gone) or erin (silent).
        #expect(remove.stdout.contains("2 member(s) moved to a new session (host, \(bob))") || remove.stdout.contains("2 member(s) moved to a new session (\(bob), host)"), "\(remove.stdout)")
        // The remover waited for erin (present, silent) and not for the one-shot member.
        #expect(remove.stdout.contains("note: 1 member(s) present said nothing within 4 s"), "\(remove.stdout)")

        // The one-shot member: no invite for it (the removal left it behind), and its session ended.
        #expect(await Self.poll(for: .seconds(30)) { oneShot.ended }, "the one-shot's session: \(oneShot.session.state)")
        #expect(oneShot.outcomes.value.count == 1)
        if case .leftBehind? = oneShot.outcomes.value.first {} else { Issue.record("the one-shot member's outcome: \(oneShot.outcomes.value)") }

        // erin, stopped through the removal: left behind, it stops with the old session (status 0).
        // Or, when its connection did not outlive the stop (one full run in three: erin read neither
        // the removal nor the end, and found the session gone when it resumed), it stops as an offline
        // member does (docs/protocol.md, "Removing a member"): status 1, saying the session is gone.
        let erinEnded = await erinMember.process.wait(timeout: .seconds(60))
        let erinMoved = PlaybackSessionCLITests.events(erinMember.out.snapshot).filter { $0["type"] as? String == "moved" }
        let erinError = erinMember.err.snapshot.joined(separator: "\n")
        if erinEnded == .exited(1), erinMoved.isEmpty, erinError.contains("no longer has it") {
            // Its whole stderr, for whoever finds out why the connection did not outlive the stop (a
            // relay reset with erin's bytes unread was suspected and not reproduced: a member sending
            // a burst, or a ping a millisecond, as the session ended read the `end` 10 of 10 times).
            print("coplay remove test: erin's connection did not outlive its stop; it found the old session gone: \(erinError)")
        } else {
            #expect(erinEnded?.status == 0, "erin ended with \(erinEnded?.description ?? "nothing"): \(erinMember.err.snapshot.suffix(5))")
            #expect(erinMoved.count == 1 && erinMoved.first?["detail"] as? String == "left behind" && erinMoved.first?["originator"] as? String == carol, "erin: \(erinMoved)")
        }
        #expect(!erinMember.err.snapshot.contains { $0.contains("new invite") })

        // bob moved, and its invite file now holds the successor's viewer invite (what it received).
        let bobMember = try #require(members[bob])
        let bobMoved = await bobMember.out.wait(for: .seconds(30)) { lines in
            PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "moved" && $0["detail"] as? String == "moved" }
        }
        #expect(bobMoved, "bob did not move: \(bobMember.err.snapshot.suffix(5))")
        #expect(await bobMember.err.wait(for: .seconds(30)) { $0.contains { $0.contains("new invite (also in \(bobFile)): \(successorViewer)") } }, "\(bobMember.err.snapshot.suffix(5))")
        #expect(try String(contentsOfFile: bobFile, encoding: .utf8) == "\(successorViewer)\n")
        let mode = try FileManager.default.attributesOfItem(atPath: bobFile)[.posixPermissions] as? Int
        #expect(mode == 0o600, "bob's invite file mode \(String(mode ?? 0, radix: 8))")
        // The same file reaches the successor's members: the host and bob, not carol.
        let people = try await CoplayProcess.run(["people", "--invite-file", bobFile], timeout: 60)
        print("coplay remove test: people with bob's file: \(people.stdout.split(separator: "\n").joined(separator: " / "))")
        #expect(people.status == 0 && people.stdout.contains(bob) && people.stdout.contains("host"), "\(people.stdout) \(people.stderr)")
        #expect(!people.stdout.contains(carol) && !people.stdout.contains(erin), "\(people.stdout)")
        // dave's file was left as it was: its old invite reaches nothing any more.
        #expect(try String(contentsOfFile: daveFile, encoding: .utf8) == "\(viewer)\n")
        let daveAgain = try await CoplayProcess.run(["join", "--invite-file", daveFile, media, "--name", dave], timeout: 60)
        print("coplay remove test: dave again with its old invite: \(daveAgain.status) \(daveAgain.stderr.split(separator: "\n").last ?? "")")
        #expect(daveAgain.status != 0 && daveAgain.stderr.contains("has no session with this invite's id"), "\(daveAgain.stderr)")

        // The remaining members play on together: a pause with the successor's controller invite
        // stops both on one frame.
        let pause = try await CoplayProcess.run(["control", successor.description, "pause"], timeout: 60)
        #expect(pause.status == 0, "pause in the successor: \(pause.stderr)")
        for name in ["host", bob] {
            let member = try #require(members[name])
            #expect(member.process.isRunning, "\(name) stopped: \(member.err.snapshot.suffix(5))")
            let paused = await member.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.pausedAfterCommand($0, pauses: 2) }
            #expect(paused, "\(name) did not pause: \(member.err.snapshot.suffix(5))")
        }
        try await Task.sleep(for: .milliseconds(500))
        let stops = try ["host", bob].map { PlaybackSessionCLITests.lastStopped(try #require(members[$0]).out.snapshot)?["index"] as? Int }
        #expect(Set(stops).count == 1, "paused on different frames: \(stops)")
    }

    @Test(
        "a member whose copies match no entry of the successor's queue ends once it moved, with the error it would get joining there, and a non-zero exit; the others play on",
        .timeLimit(.minutes(6)))
    func noEntryInTheSuccessorEndsTheMember() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-remove-queue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await QueueCLITests.makeClip("first-25.mp4", seconds: 30, fps: 25, in: directory)
        let second = try await QueueCLITests.makeClip("second-30.mp4", seconds: 4, fps: 30, in: directory)

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, port) = try await PlaybackSessionCLITests.startRelay(children: &children)
        let host = try await Child(["host", first, second, "--relay", "127.0.0.1:\(port)", "--name", "host", "--control", "hosts"])
        children.append(host)
        #expect(await host.out.wait(for: .seconds(60)) { !$0.isEmpty })
        let controllerText = try #require(host.out.snapshot.first)
        let viewer = try Invite(parsing: controllerText).viewer.description
        let tag = String(UUID().uuidString.prefix(4)).lowercased()
        let (carol, gus) = ("carol\(tag)", "gus\(tag)")
        let carolMember = try await Child(["join", viewer, first, "--name", carol])
        children.append(carolMember)
        // gus has a copy of the second entry only: it joins and sits out the first.
        let gusMember = try await Child(["join", viewer, second, "--name", gus])
        children.append(gusMember)
        #expect(await gusMember.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.events($0).contains { $0["type"] as? String == "missingEntry" } },
                "gus did not sit out the first entry: \(gusMember.err.snapshot.suffix(4))")
        #expect(await carolMember.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil })
        // The second entry leaves the queue: gus, already in, sits on (the check is made on joining).
        let edit = try await CoplayProcess.run(["control", controllerText, "queue", "remove", "2"], timeout: 60)
        #expect(edit.status == 0, "queue remove: \(edit.stdout) \(edit.stderr)")
        #expect(await gusMember.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.events($0).contains { $0["type"] as? String == "queueChanged" && ($0["detail"] as? String ?? "").hasPrefix("removed") } })
        try await Task.sleep(for: .seconds(1))
        #expect(gusMember.process.isRunning, "gus stopped on the edit: \(gusMember.err.snapshot.suffix(4))")

        let remove = try await CoplayProcess.run(["control", controllerText, "remove", carol], timeout: 120)
        #expect(remove.status == 0 && remove.stdout.contains("2 member(s) moved"), "remove: \(remove.stdout) \(remove.stderr)")
        // gus moves, then finds no entry of its own in the successor's queue: it ends as it would joining there.
        let gusEnded = await gusMember.process.wait(timeout: .seconds(60))
        print("coplay remove test: gus in the successor: \(gusEnded?.description ?? "still running"): \(gusMember.err.snapshot.last ?? "")")
        #expect(PlaybackSessionCLITests.events(gusMember.out.snapshot).contains { $0["type"] as? String == "moved" && $0["detail"] as? String == "moved" })
        #expect(gusEnded != nil && gusEnded?.status != 0, "gus: \(gusEnded?.description ?? "still running")")
        #expect(gusMember.err.snapshot.contains { $0.contains("none of your copies is an entry of the session's queue") }, "\(gusMember.err.snapshot.suffix(5))")
        // The host plays on in the successor.
        try await Task.sleep(for: .seconds(1))
        #expect(host.process.isRunning, "the host stopped: \(host.err.snapshot.suffix(5))")
        #expect(PlaybackSessionCLITests.events(host.out.snapshot).contains { $0["type"] as? String == "moved" })
    }
}
