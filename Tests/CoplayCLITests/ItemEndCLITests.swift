import Foundation
import MPVControl
import TestSupport
import Testing

/// The end of a file and the commands the group refuses, over a real relay: a headless host, a
/// headless joiner and a person's own mpv attached with `--mpv-socket` (as README says), judged
/// from the members' JSON Lines and from mpv's IPC.
@Suite("The end of an item and refused commands over a real relay", .serialized)
struct ItemEndCLITests {
    typealias Session = PlaybackSessionCLITests
    typealias Child = PlaybackSessionCLITests.Child

    /// A 6 s, 25 fps clip (150 frames; the last one shown from 5.96 s).
    static func makeMedia(in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("six-25.mp4").path
        let result = try await CoplayProcess.run(
            ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-t", "6", "-c:v", "libx264",
             "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-y", path],
            executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
        try #require(result.status == 0, "ffmpeg failed: \(result.stderr)")
        return path
    }

    /// A relay, a host and a joiner (`joinArguments` after the name) on the 6 s clip in a fresh
    /// directory; `body` gets the directory, the clip, the host, the joiner, the invite and the
    /// children list (stopped after it, with the directory removed).
    static func withSession(
        _ label: String, joinArguments: [String] = [],
        _ body: (_ directory: URL, _ media: String, _ host: Child, _ joiner: Child, _ invite: String, _ children: inout [Child]) async throws -> Void
    ) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await Session.startRelayAndHost(media: [media], children: &children)
        let joiner = try await Child(["join", invite, media, "--name", "bob"] + joinArguments)
        children.append(joiner)
        try await body(directory, media, host, joiner, invite, &children)
    }

    @Test("at the end of a file every member stops on its last frame at its end, attributed to nobody; mpv's own pause there is not a command",
          .timeLimit(.minutes(4)))
    func endOfFile() async throws {
        try await Self.withSession("end", joinArguments: ["--frames"]) { directory, media, host, joiner, invite, children in
            let socket = directory.appendingPathComponent("mpv.sock").path
            // Started paused (a 6 s file would be over before the member attaches), otherwise plain.
            let mpv = try await MPVPlainCLITests.startPlainMPV(socket: socket, options: ["--pause"], files: [media])
            children.append(mpv)
            let connection = try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))
            defer { Task { await connection.close() } }
            let person = try await Child(["join", invite, media, "--mpv-socket", socket, "--name", "carol"])
            children.append(person)
            for member in [joiner, person] {
                #expect(await member.out.wait(for: .seconds(60)) { lines in
                    Session.events(lines).contains { ["pause", "play", "seek", "rate", "item"].contains($0["type"] as? String ?? "") }
                }, "a member never applied the session's state: \(member.err.snapshot.suffix(5))")
            }

            let seek = try await CoplayProcess.run(["control", invite, "seek", "4"], timeout: 60)
            #expect(seek.status == 0, "seek 4 failed: \(seek.stderr)")
            let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
            #expect(play.status == 0, "play failed: \(play.stderr)")

            let members = [host, joiner, person]
            for member in members {
                let ended = await member.out.wait(for: .seconds(30)) { lines in
                    Session.events(lines).contains { $0["type"] as? String == "itemEnded" }
                }
                #expect(ended, "no itemEnded: \(member.out.snapshot.suffix(4)) \(member.err.snapshot.suffix(4))")
            }
            try await Task.sleep(for: .seconds(1.5))

            // The same end everywhere: item time 6 s, the same reference instant, and nobody named.
            let ends = members.compactMap { member in Session.events(member.out.snapshot).first { $0["type"] as? String == "itemEnded" } }
            try #require(ends.count == members.count)
            #expect(ends.allSatisfy { $0["originator"] == nil && $0["originatorId"] == nil }, "\(ends)")
            #expect(ends.allSatisfy { abs(($0["itemTime"] as? Double ?? 0) - 6) < 0.05 }, "\(ends.map { $0["itemTime"] ?? "?" })")
            #expect(Set(ends.compactMap { $0["referenceTime"] as? Double }).count == 1, "different end instants: \(ends.map { $0["referenceTime"] ?? "?" })")

            // Nobody paused: after the play, no member reports a pause, a rate change, or mpv's own pause as a command.
            for member in members {
                let all = Session.events(member.out.snapshot)
                let afterPlay = all.lastIndex { $0["type"] as? String == "play" }.map { all[($0 + 1)...] } ?? []
                let commands = afterPlay.filter { ["pause", "rate", "seek", "play", "item"].contains($0["type"] as? String ?? "") }
                #expect(commands.isEmpty, "commands after the play: \(commands)")
                #expect(!all.contains { ($0["detail"] as? String)?.hasPrefix("user") == true }, "a player's own change taken for a person's")
            }

            // The headless joiner shows the last frame (index 149) and stops there.
            let stopped = Session.lastStopped(joiner.out.snapshot)
            #expect(stopped?["index"] as? Int == 149, "stopped at \(stopped ?? [:])")
            // The person's mpv, asked from outside: paused on its last frame.
            let position = try await connection.number("time-pos")
            let paused = try await connection.get("pause").data.bool
            #expect(paused == true)
            #expect(position.map { $0 >= 5.9 && $0 <= 6.01 } == true, "mpv at \(position ?? .nan)")
        }
    }

    @Test("a seek past the end, an item nobody has and a rate out of range are refused with the reason; the group carries on",
          .timeLimit(.minutes(3)))
    func refusals() async throws {
        try await Self.withSession("refuse") { _, _, host, joiner, invite, _ in
            #expect(await joiner.out.wait(for: .seconds(60)) { Session.events($0).contains { $0["type"] as? String == "pause" } })

            let past = try await CoplayProcess.run(["control", invite, "seek", "500"], timeout: 60)
            #expect(past.status != 0)
            #expect(past.stderr.contains("cannot seek to 500.0 s: the item is 6.0 s long"), "\(past.stderr)")
            let clock = try await CoplayProcess.run(["control", invite, "seek", "1:30"], timeout: 60)
            #expect(clock.status != 0 && clock.stderr.contains("the item is 6.0 s long"), "\(clock.stderr)")

            let nobody = "v2:1234:" + String(repeating: "ab", count: 32)
            let item = try await CoplayProcess.run(["control", invite, "item", nobody], timeout: 60)
            #expect(item.status != 0)
            #expect(item.stderr.contains("nobody could follow a change to item \(nobody): no member has it"), "\(item.stderr)")

            let rate = try await CoplayProcess.run(["control", invite, "rate", "32"], timeout: 60)
            #expect(rate.status != 0 && rate.stderr.contains("between 0.0625 and 16"), "\(rate.stderr)")

            // Nothing reached the group, and it still takes a valid command.
            let seek = try await CoplayProcess.run(["control", invite, "seek", "5.5"], timeout: 60)
            #expect(seek.status == 0, "\(seek.stderr)")
            for member in [host, joiner] {
                #expect(await member.out.wait(for: .seconds(20)) { Session.events($0).contains { $0["type"] as? String == "seek" } })
                let seeks = Session.events(member.out.snapshot).filter { $0["type"] as? String == "seek" }
                #expect(seeks.count == 1 && seeks.first?["itemTime"] as? Double == 5.5, "\(seeks)")
            }
        }
    }
}
