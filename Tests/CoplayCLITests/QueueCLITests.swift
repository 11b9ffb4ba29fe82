import Foundation
import TestSupport
import Testing

/// The group's queue over a real relay, as people run it: `coplay host A B --repeat all` and
/// headless `coplay join` members; transitions at an entry's end and `coplay control next`,
/// judged from the members' JSON Lines frame events.
@Suite("A queue over a real relay", .serialized)
struct QueueCLITests {
    typealias Session = PlaybackSessionCLITests
    typealias Child = PlaybackSessionCLITests.Child

    /// A clip of `seconds` at `fps`.
    static func makeClip(_ name: String, seconds: Int, fps: Int, in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent(name).path
        let result = try await CoplayProcess.run(
            ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=\(fps)", "-t", "\(seconds)", "-c:v", "libx264",
             "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-y", path],
            executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
        try #require(result.status == 0, "ffmpeg failed: \(result.stderr)")
        return path
    }

    /// The realtime of each member's first frame of `item` after `after` (the frame index 0 of it).
    static func firstFrames(of item: String, in lines: [String], after: Double) -> [Double] {
        Session.events(lines).compactMap { event in
            guard event["type"] as? String == "frame", event["item"] as? String == item, event["index"] as? Int == 0,
                let realtime = event["realtime"] as? Double, realtime > after
            else { return nil }
            return realtime
        }
    }

    @Test("two entries, repeat all: every member moves on at the entry's end, first frames of the next entry together, and next moves everyone",
          .timeLimit(.minutes(5)))
    func transitions() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-queue-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await Self.makeClip("first-25.mp4", seconds: 4, fps: 25, in: directory)
        let second = try await Self.makeClip("second-30.mp4", seconds: 3, fps: 30, in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, relayPort) = try await Session.startRelay(children: &children)
        let host = try await Child(["host", first, second, "--repeat", "all", "--relay", "127.0.0.1:\(relayPort)", "--name", "host", "--frames"])
        children.append(host)
        #expect(await host.out.wait(for: .seconds(60)) { !$0.isEmpty })
        let invite = try #require(host.out.snapshot.first)
        var members = [host]
        for name in ["ana", "bo"] {
            let joiner = try await Child(["join", invite, first, "--item", second, "--name", name, "--frames"])
            children.append(joiner)
            members.append(joiner)
        }
        for member in members {
            #expect(await member.out.wait(for: .seconds(60)) { lines in
                Session.events(lines).contains { $0["type"] as? String == "pause" }
            }, "a member never applied the session's state: \(member.err.snapshot.suffix(5))")
        }
        // The queue as a person reads it.
        let listed = try await CoplayProcess.run(["queue", invite], timeout: 60)
        #expect(listed.status == 0, "coplay queue failed: \(listed.stderr)")
        #expect(listed.stdout.contains("first-25.mp4") && listed.stdout.contains("second-30.mp4"), "\(listed.stdout)")
        #expect(listed.stdout.contains("repeat all"), "\(listed.stdout) \(listed.stderr)")

        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "play failed: \(play.stderr)")
        // 4 s of the first entry, 3 s of the second, then the first again (repeat all).
        let identities = Session.events(host.out.snapshot).compactMap { $0["item"] as? String }
        try #require(!identities.isEmpty)
        for member in members {
            let wrapped = await member.out.wait(for: .seconds(40)) { lines in
                Session.events(lines).filter { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }.count >= 2
            }
            #expect(wrapped, "no two transitions: \(member.out.snapshot.suffix(4)) \(member.err.snapshot.suffix(4))")
        }
        let changes = Session.events(host.out.snapshot).filter { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }
        try #require(changes.count >= 2)
        let secondItem = try #require(changes[0]["item"] as? String)
        let firstItem = try #require(changes[1]["item"] as? String)
        #expect(secondItem != firstItem)
        // Every member showed the first frame of each new entry at the same moment.
        for item in [secondItem, firstItem] {
            let starts = members.compactMap { Self.firstFrames(of: item, in: $0.out.snapshot, after: 0).last }
            try #require(starts.count == members.count, "not every member showed \(item)'s first frame")
            let spread = (starts.max()! - starts.min()!) * 1000
            print("queue transition to \(item.prefix(12)): first frames within \(String(format: "%.3f", spread)) ms")
            #expect(spread < 20, "first frames \(spread) ms apart (half a frame is 16.7-20 ms)")
        }

        // next: everyone moves on together, wherever the group was.
        let next = try await CoplayProcess.run(["control", invite, "next"], timeout: 60)
        #expect(next.status == 0, "next failed: \(next.stderr) \(next.stdout)")
        for member in members {
            #expect(await member.out.wait(for: .seconds(20)) { lines in
                Session.events(lines).contains { $0["type"] as? String == "next" }
            }, "a member never saw next: \(member.out.snapshot.suffix(3))")
        }
        let refused = try await CoplayProcess.run(["control", invite, "jump", "9"], timeout: 60)
        #expect(refused.status != 0 && refused.stderr.contains("there is no entry 9"), "\(refused.stderr)")
    }
}
