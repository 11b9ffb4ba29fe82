import Foundation
import Testing

/// `coplay control INVITE suspend SECONDS` end to end: a relay, a host and a joiner (both
/// printing frames) and the real binary suspending the group, judged from the players' JSON Lines.
@Suite("coplay control suspend over a real relay", .serialized)
struct SuspendControlCLITests {
    typealias Session = PlaybackSessionCLITests

    /// A relay, a host and a joiner, both players printing frame events, playing.
    struct Group {
        var children: [Session.Child] = []
        var invite = ""
        var players: [Session.Child] { Array(children.dropFirst()) }

        func stop() { for child in children.reversed() { child.stop() } }
    }

    static func startPlaying(media: String) async throws -> Group {
        var group = Group()
        group.invite = try await Session.startRelayAndHost(
            media: [media], hostArguments: ["--name", "host", "--frames"], children: &group.children).invite
        let joiner = try await Session.Child(["join", group.invite, media, "--name", "p1", "--frames"])
        group.children.append(joiner)
        let ready = await joiner.out.wait(for: .seconds(60)) { Session.lastStopped($0) != nil }
        #expect(ready, "the joiner never applied the session's state: \(joiner.err.snapshot.suffix(5))")
        let play = try await CoplayProcess.run(["control", group.invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        for player in group.players {
            #expect(await player.out.wait(for: .seconds(30)) { Session.frames($0).count >= 25 }, "a player does not play")
        }
        return group
    }

    /// Every player presents 10 frames scheduled after the suspension's end (within 30 s).
    static func expectResumed(_ group: Group, sourceLocation: SourceLocation = #_sourceLocation) async {
        for player in group.players {
            let resumed = await player.out.wait(for: .seconds(30)) { lines in
                guard let end = event(lines, "suspensionEnded")?["referenceTime"] as? Double else { return false }
                return Session.frames(lines).filter { $0.referenceTime >= end }.count >= 10
            }
            #expect(resumed, "a player did not resume: \(player.err.snapshot.suffix(5))", sourceLocation: sourceLocation)
        }
    }

    static func event(_ lines: [String], _ type: String) -> [String: Any]? {
        Session.events(lines).first { $0["type"] as? String == type }
    }

    /// What one player printed about the suspension, and its frames around it.
    struct Observed {
        var begin: Double
        var end: Double
        var stoppedIndex: Int
        var stoppedRealtime: Double
        var before: [Session.Frame]
        var after: [Session.Frame]
        var ended: [String: Any]
    }

    /// Reads a player's suspension events: began (by `control`, waiting), a `stopped` waiting line,
    /// ended; and its frames before and after.
    static func observe(_ lines: [String]) throws -> Observed {
        let began = try #require(event(lines, "suspensionBegan"), "no suspensionBegan")
        let ended = try #require(event(lines, "suspensionEnded"), "no suspensionEnded")
        #expect(began["originator"] as? String == "control")
        #expect(began["waits"] as? Bool == true)
        #expect(ended["originator"] as? String == "control")
        let stopped = try #require(
            Session.events(lines).first { $0["type"] as? String == "stopped" && $0["detail"] as? String == "waiting" },
            "no stopped line with detail waiting")
        let begin = try #require(began["referenceTime"] as? Double)
        let end = try #require(ended["referenceTime"] as? Double)
        let frames = Session.frames(lines)
        return Observed(
            begin: begin, end: end, stoppedIndex: try #require(stopped["index"] as? Int),
            stoppedRealtime: try #require(stopped["realtime"] as? Double),
            before: frames.filter { $0.referenceTime <= begin }, after: frames.filter { $0.referenceTime >= end }, ended: ended)
    }

    /// Checks that every player stopped at the suspension's begin, presented nothing while the group
    /// waited, and resumed at its end on the same frames as the others.
    static func checkGap(_ observed: [Observed], lines: [[String]]) {
        for (player, seen) in zip(observed, lines) {
            let frames = Session.frames(seen)
            // Nothing scheduled inside the wait, and nothing presented (CLOCK_REALTIME) between the
            // stop and the end (the end's reference instant mapped onto realtime via the stop, which
            // happens at the begin instant; 5 ms of allowance either side).
            #expect(!frames.contains { $0.referenceTime > player.begin && $0.referenceTime < player.end })
            let quietUntil = player.stoppedRealtime + (player.end - player.begin) - 0.005
            #expect(!frames.contains { $0.realtime > player.stoppedRealtime + 0.005 && $0.realtime < quietUntil },
                    "a frame was presented while the group waited")
            #expect(player.before.last?.index == player.stoppedIndex, "the frame on screen is not the last one presented")
            #expect(player.after.count >= 10, "only \(player.after.count) frames after the suspension")
        }
        // Everyone stopped on the same frame at the same instant and resumed with the same frames.
        #expect(Set(observed.map(\.begin)).count == 1)
        #expect(Set(observed.map(\.end)).count == 1)
        #expect(Set(observed.map(\.stoppedIndex)).count == 1)
        let firsts = observed.map { $0.after.first }
        #expect(Set(firsts.map { $0?.index }).count == 1, "resumed on different frames: \(firsts.map { $0?.index })")
        #expect(Set(firsts.map { $0?.referenceTime }).count == 1)
        if let first = firsts.first??.index, let stopped = observed.first?.stoppedIndex {
            #expect(first == stopped + 1 || first == stopped, "resumed at frame \(first) after stopping at \(stopped)")
        }
        var shared = Set(observed.first?.after.map(\.index) ?? [])
        for player in observed.dropFirst() { shared.formIntersection(player.after.map(\.index)) }
        #expect(shared.count >= 10, "the players share only \(shared.count) frames after the suspension")
    }

    @Test("suspend 1: both players stop at one instant, present nothing for 1 s, then resume on the same frames",
          .timeLimit(.minutes(4)))
    func suspendOneSecond() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Session.makeMedia(in: directory)
        let group = try await Self.startPlaying(media: media)
        defer { group.stop() }

        let result = try await CoplayProcess.run(["control", group.invite, "suspend", "1"], timeout: 60)
        #expect(result.status == 0, "control suspend failed: \(result.stderr)")
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("suspend accepted: buffering, the group waited from reference "), "\(line)")
        #expect(line.contains("ended after 1."), "\(line)")
        #expect(result.stdout.split(separator: "\n").count == 1)
        await Self.expectResumed(group)
        let lines = group.players.map(\.out.snapshot)
        let observed = try lines.map(Self.observe)
        for player in observed {
            #expect(player.ended["timedOut"] as? Bool == false)
            #expect(player.ended["detail"] == nil, "the suspension was not ended by its member")
            // The group waited the asked second (never less; a late wake-up may add a little).
            #expect(player.end - player.begin >= 0.999 && player.end - player.begin < 4, "waited \(player.end - player.begin) s")
        }
        Self.checkGap(observed, lines: lines)
    }

    @Test("SIGTERM or SIGINT during suspend ends the suspension at once (not by the leave, not by the timeout) and exits non-zero",
          .timeLimit(.minutes(4)), arguments: [SIGTERM, SIGINT])
    func interruptedSuspend(signal: Int32) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Session.makeMedia(in: directory)
        let group = try await Self.startPlaying(media: media)
        defer { group.stop() }

        let control = try await Session.Child(["control", group.invite, "suspend", "8", "--reason", "stallRecovery"])
        for player in group.players {
            #expect(await player.out.wait(for: .seconds(60)) { $0.contains { $0.contains(#""detail":"waiting""#) } },
                    "a player never stopped for the suspension")
        }
        control.process.send(signal)
        let ended = await control.process.wait(timeout: .seconds(30))
        #expect(ended != nil)
        #expect(ended?.exitCode.map { $0 != 0 } == true, "killed by the signal instead of handling it: \(String(describing: ended))")
        let stderr = control.err.snapshot.joined(separator: "\n")
        #expect(stderr.contains("interrupted: the suspension (stallRecovery) was ended early"), "\(stderr)")

        await Self.expectResumed(group)
        let lines = group.players.map(\.out.snapshot)
        let observed = try lines.map(Self.observe)
        for player in observed {
            // Ended by the control member itself (a leave would say "member left"), well before 8 s
            // and the 10 s timeout.
            #expect(player.ended["detail"] == nil, "ended by \(player.ended["detail"] ?? "?")")
            #expect(player.ended["timedOut"] as? Bool == false)
            #expect(player.ended["reason"] as? String == "stallRecovery")
            #expect(player.end - player.begin < 7.5, "waited \(player.end - player.begin) s")
        }
        Self.checkGap(observed, lines: lines)
    }

    @Test("bad suspension lengths are usage errors with a clear message", arguments: [
        (["suspend"], "suspend needs a time in seconds above 0"),
        (["suspend", "-1"], "suspend needs a time in seconds above 0"),
        (["suspend", "abc"], "suspend needs a time in seconds above 0, e.g. 'suspend 2' (got 'abc')"),
        (["suspend", "0"], "(got '0')"),
        (["suspend", "nan"], "(got 'nan')"),
        (["suspend", "11"], "at most 10.0 s, the group's suspension timeout"),
        (["suspend", "2", "--reason", "interruption"], "'interruption' is invalid for '--reason <reason>'"),
        (["play", "--reason", "buffering"], "--reason applies to suspend only"),
    ])
    func badValues(arguments: [String], message: String) async throws {
        // A well-formed invite (nothing listens there: validation comes first).
        let invite = "coplay://127.0.0.1:9/0123456789abcdef0123456789abcdef#eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHg"
        let result = try await CoplayProcess.run(["control", invite] + arguments, timeout: 30)
        #expect(result.status == 64, "\(arguments): status \(result.status)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }
}
