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

    /// Each time a member entered `item` after `after`: the index of the first frame it showed and
    /// the instant that frame puts the item's start at (its realtime less its pts, at rate 1). A
    /// member that wakes late under load skips frames the next one already supersedes, so its first
    /// frame of an entry need not be index 0; the start it implies is what members must agree on.
    static func entries(into item: String, in lines: [String], after: Double) -> [(index: Int, start: Double)] {
        var found: [(index: Int, start: Double)] = []
        var previous: (item: String, index: Int)?
        for event in Session.events(lines) where event["type"] as? String == "frame" {
            guard let shown = event["item"] as? String, let index = event["index"] as? Int else { continue }
            defer { previous = (shown, index) }
            guard shown == item, previous.map({ $0.item != item || $0.index > index }) ?? true,
                let pts = event["pts"] as? Double, let realtime = event["realtime"] as? Double, realtime > after
            else { continue }
            found.append((index, realtime - pts))
        }
        return found
    }

    /// The instant each entry into `item` after `after` put the item's start at (see `entries`).
    static func firstFrames(of item: String, in lines: [String], after: Double) -> [Double] {
        entries(into: item, in: lines, after: after).map(\.start)
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
        let (_, _, host, invite) = try await Session.startRelayAndHost(
            media: [first, second], hostArguments: ["--repeat", "all", "--name", "host", "--frames"], children: &children)
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
        // Every member started each new entry at the same moment. A member's frame line can come a
        // little after its `itemChanged` line: each is waited for, from a second before the host's
        // transition (entries are 3-4 s long, so no earlier start of that entry is in the window).
        for (change, item) in [(changes[0], secondItem), (changes[1], firstItem)] {
            let after = (change["realtime"] as? Double ?? 0) - 1
            var firsts: [(index: Int, start: Double)] = []
            for member in members {
                _ = await member.out.wait(for: .seconds(10)) { lines in !Self.entries(into: item, in: lines, after: after).isEmpty }
                if let first = Self.entries(into: item, in: member.out.snapshot, after: after).first { firsts.append(first) }
            }
            try #require(firsts.count == members.count, "not every member showed \(item)")
            let starts = firsts.map(\.start)
            let spread = (starts.max()! - starts.min()!) * 1000
            let indices = firsts.map(\.index)
            print("queue transition to \(item.prefix(12)): starts within \(String(format: "%.3f", spread)) ms, first frames shown \(indices)")
            #expect(spread < 20, "the new entry started \(spread) ms apart (half a frame is 16.7-20 ms)")
            // At the boundary, not a later pass through the entry: a late wake skips a few frames at most.
            #expect(indices.allSatisfy { $0 < 10 }, "first frames shown \(indices): a member did not move on at the boundary")
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

    /// `coplay queue INVITE --json`, parsed.
    static func listed(_ invite: String) async throws -> [String: Any] {
        let listed = try await CoplayProcess.run(["queue", invite, "--json"], timeout: 60)
        try #require(listed.status == 0, "coplay queue failed: \(listed.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any], "\(listed.stdout)")
    }

    static func titles(_ listing: [String: Any]) -> [String] {
        (listing["entries"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
    }

    @Test("control queue add (at the end, --next), remove, move and clear, by position as coplay queue prints it; bad input fails clearly",
          .timeLimit(.minutes(6)))
    func edits() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-queue-edits-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Different lengths or rates: clips of one length and rate would be the same video, the same item.
        let a = try await Self.makeClip("a.mp4", seconds: 2, fps: 25, in: directory)
        let b = try await Self.makeClip("b.mp4", seconds: 3, fps: 25, in: directory)
        let c = try await Self.makeClip("c.mp4", seconds: 2, fps: 30, in: directory)
        let d = try await Self.makeClip("d.mp4", seconds: 3, fps: 30, in: directory)
        let notMedia = directory.appendingPathComponent("notes.mp4").path
        try Data("not a video".utf8).write(to: URL(fileURLWithPath: notMedia))
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await Session.startRelayAndHost(media: [a, b], hostArguments: ["--name", "Hana"], children: &children)
        #expect(await host.out.wait(for: .seconds(60)) { Session.events($0).contains { $0["type"] as? String == "pause" } })

        func control(_ words: [String]) async throws -> CoplayProcess.Result {
            try await CoplayProcess.run(["control", invite, "queue"] + words, timeout: 90)
        }
        // At the end, then right after the playing entry (the first: the session starts paused on it).
        let added = try await control(["add", c])
        #expect(added.status == 0 && added.stdout.contains("queue add accepted: added 1 (\u{201C}c.mp4\u{201D}) at position 3"), "\(added.stdout) \(added.stderr)")
        // Nobody here has c.mp4 (the host holds a and b): the command says so.
        #expect(added.stdout.contains("note: no member has a copy of \u{201C}c.mp4\u{201D}"), "\(added.stdout)")
        let next = try await control(["add", d, "--next"])
        #expect(next.status == 0, "\(next.stderr)")
        var listing = try await Self.listed(invite)
        #expect(Self.titles(listing) == ["a.mp4", "d.mp4", "b.mp4", "c.mp4"])
        let entries = listing["entries"] as? [[String: Any]] ?? []
        // Who added each entry: the host's name, and `control` for the command's.
        #expect(entries.map { $0["addedByName"] as? String } == ["Hana", "control", "Hana", "control"], "\(entries)")
        let table = try await CoplayProcess.run(["queue", invite], timeout: 60)
        #expect(table.stdout.contains("a.mp4  0:00:02  added by Hana"), "\(table.stdout)")

        let moved = try await control(["move", "4", "1"])
        #expect(moved.status == 0 && moved.stdout.contains("\u{201C}c.mp4\u{201D} is now entry 1"), "\(moved.stdout) \(moved.stderr)")
        let removed = try await control(["remove", "3"])
        #expect(removed.status == 0 && removed.stdout.contains("removed \u{201C}d.mp4\u{201D}"), "\(removed.stdout) \(removed.stderr)")
        listing = try await Self.listed(invite)
        #expect(Self.titles(listing) == ["c.mp4", "a.mp4", "b.mp4"])
        // The host's terminal (JSON Lines here) saw each edit, by whom.
        let edits = Session.events(host.out.snapshot).filter { $0["type"] as? String == "queueChanged" && $0["originator"] as? String == "control" }
        #expect(edits.count == 4, "\(edits)")

        // Bad input: a position the queue does not have, a missing file, a file that is not video.
        let badPosition = try await control(["remove", "9"])
        #expect(badPosition.status != 0 && badPosition.stderr.contains("there is no entry 9: the queue has 3"), "\(badPosition.stderr)")
        let badMove = try await control(["move", "1", "7"])
        #expect(badMove.status != 0 && badMove.stderr.contains("there is no entry 7"), "\(badMove.stderr)")
        let missing = try await control(["add", directory.appendingPathComponent("nowhere.mp4").path])
        #expect(missing.status != 0 && missing.stderr.contains("no file at"), "\(missing.stderr)")
        let unplayable = try await control(["add", notMedia])
        #expect(unplayable.status != 0 && unplayable.stderr.contains("cannot queue \(notMedia)"), "\(unplayable.stderr)")
        let noVerb = try await control([])
        #expect(noVerb.status != 0 && noVerb.stderr.contains("queue needs what to do"), "\(noVerb.stderr)")
        let nextElsewhere = try await CoplayProcess.run(["control", invite, "queue", "remove", "1", "--next"], timeout: 60)
        #expect(nextElsewhere.status != 0 && nextElsewhere.stderr.contains("--next applies to queue add only"), "\(nextElsewhere.stderr)")
        #expect(Self.titles(try await Self.listed(invite)) == ["c.mp4", "a.mp4", "b.mp4"], "a refused edit changed the queue")

        let cleared = try await control(["clear"])
        #expect(cleared.status == 0 && cleared.stdout.contains("the queue is empty"), "\(cleared.stdout) \(cleared.stderr)")
        #expect(Self.titles(try await Self.listed(invite)).isEmpty)
    }

    @Test("a member missing entry 2 of 3: the others play through it without waiting; it sits it out and comes back in step on entry 3",
          .timeLimit(.minutes(6)))
    func missingEntry() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-queue-missing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Different lengths: clips of one length and rate would be the same video, the same item.
        let one = try await Self.makeClip("one.mp4", seconds: 3, fps: 25, in: directory)
        let two = try await Self.makeClip("two.mp4", seconds: 6, fps: 25, in: directory)
        let three = try await Self.makeClip("three.mp4", seconds: 4, fps: 25, in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await Session.startRelayAndHost(
            media: [one, two, three], hostArguments: ["--name", "host", "--frames"], children: &children)
        // ana has every entry; bo has the first and the third (two files on its command line).
        let ana = try await Child(["join", invite, one, two, three, "--name", "ana", "--frames"])
        let bo = try await Child(["join", invite, one, three, "--name", "bo", "--frames"])
        children += [ana, bo]
        let members = [host, ana, bo]
        for member in members {
            #expect(await member.out.wait(for: .seconds(60)) { lines in
                Session.events(lines).contains { $0["type"] as? String == "pause" }
            }, "a member never applied the session's state: \(member.err.snapshot.suffix(5))")
        }
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "play failed: \(play.stderr)")

        // Entry 2: bo says it has no copy, and `coplay people` shows it sitting the entry out.
        #expect(await bo.out.wait(for: .seconds(30)) { Session.events($0).contains { $0["type"] as? String == "missingEntry" } },
                "bo never said it misses entry 2: \(bo.out.snapshot.suffix(5))")
        let missing = try #require(Session.events(bo.out.snapshot).first { $0["type"] as? String == "missingEntry" })
        #expect(missing["detail"] as? String == "two.mp4" && missing["entry"] != nil, "\(missing)")
        let people = try await CoplayProcess.run(["people", invite], timeout: 60)
        #expect(people.stdout.contains("no copy of \u{201C}two.mp4\u{201D}"), "\(people.stdout) \(people.stderr)")

        // Entry 3 reached: bo's suspension ended, every member showed its first frame.
        let changes = { (lines: [String]) in
            Session.events(lines).filter { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }
        }
        for member in members {
            #expect(await member.out.wait(for: .seconds(30)) { changes($0).count >= 2 }, "\(member.out.snapshot.suffix(3))")
        }
        let entries = changes(host.out.snapshot)
        let twoItem = try #require(entries[0]["item"] as? String)
        let threeItem = try #require(entries[1]["item"] as? String)
        for member in members {
            #expect(await member.out.wait(for: .seconds(15)) { !Self.firstFrames(of: threeItem, in: $0, after: 0).isEmpty },
                    "a member never showed entry 3: \(member.out.snapshot.suffix(3))")
        }
        // The others did not wait: entry 2 played its 6 s, from the group's end of entry 1 to its own end.
        let twoStart = try #require(entries[0]["referenceTime"] as? Double)
        let threeStart = try #require(entries[1]["referenceTime"] as? Double)
        #expect(abs(threeStart - twoStart - 6) < 0.05, "entry 2 took \(threeStart - twoStart) s on the group's clock")
        for member in [host, ana] {
            let events = Session.events(member.out.snapshot)
            #expect(!events.contains { $0["type"] as? String == "stopped" && $0["detail"] as? String == "waiting" }, "a member waited")
            #expect(!events.contains { $0["type"] as? String == "suspensionBegan" && $0["waits"] as? Bool == true })
            #expect(!Self.firstFrames(of: twoItem, in: member.out.snapshot, after: 0).isEmpty, "a member did not play entry 2")
        }
        let boEvents = Session.events(bo.out.snapshot)
        #expect(!boEvents.contains { $0["type"] as? String == "frame" && $0["item"] as? String == twoItem }, "bo showed frames of an entry it has no copy of")
        #expect(boEvents.contains { $0["type"] as? String == "suspensionEnded" && $0["reason"] as? String == "coordinatedPlaybackNotPossible" })
        // bo back in step: its first frame of entry 3 with the others'.
        let starts = members.compactMap { Self.firstFrames(of: threeItem, in: $0.out.snapshot, after: 0).last }
        try #require(starts.count == members.count)
        let spread = (starts.max()! - starts.min()!) * 1000
        print("member missing entry 2 back on entry 3: first frames within \(String(format: "%.3f", spread)) ms (host, ana, bo)")
        #expect(spread < 20, "first frames of entry 3 \(spread) ms apart (half a frame at 25 fps is 20 ms)")
    }
}

extension QueueCLITests {
    @Test("a member with a copy of the second entry only joins, sits out the first and plays the second in step; one with none of the queue's entries is refused, saying so",
          .timeLimit(.minutes(4)))
    func joinsWithoutTheFirstItem() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-queue-later-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await Self.makeClip("first-25.mp4", seconds: 5, fps: 25, in: directory)
        let second = try await Self.makeClip("second-30.mp4", seconds: 4, fps: 30, in: directory)
        let other = try await Self.makeClip("other-24.mp4", seconds: 3, fps: 24, in: directory)
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await Session.startRelayAndHost(
            media: [first, second], hostArguments: ["--repeat", "all", "--name", "host", "--frames"], children: &children)
        #expect(await host.out.wait(for: .seconds(60)) { Session.events($0).contains { $0["type"] as? String == "pause" } })

        // Only the second entry: it joins (saying so) and sits out the first.
        let later = try await Child(["join", invite, second, "--name", "later", "--frames"])
        children.append(later)
        #expect(await later.out.wait(for: .seconds(60)) { Session.events($0).contains { $0["type"] as? String == "missingEntry" } },
                "the member with the second entry only did not sit out the first: \(later.out.snapshot.suffix(4)) \(later.err.snapshot.suffix(4))")
        #expect(later.err.snapshot.joined().contains("the session's first item") || later.out.snapshot.joined().contains("the session's first item"),
                "no word that it has no copy of the first item: \(later.err.snapshot.suffix(4))")
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "play failed: \(play.stderr)")
        let changed = await host.out.wait(for: .seconds(30)) { lines in
            Session.events(lines).contains { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }
        }
        try #require(changed, "the group did not move on: \(host.out.snapshot.suffix(4))")
        let secondItem = try #require(Session.events(host.out.snapshot).first { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }?["item"] as? String)
        for member in [host, later] {
            #expect(await member.out.wait(for: .seconds(15)) { !Self.firstFrames(of: secondItem, in: $0, after: 0).isEmpty },
                    "a member did not show the second entry's first frame: \(member.out.snapshot.suffix(3))")
        }
        #expect(!Session.events(later.out.snapshot).contains { $0["type"] as? String == "frame" && $0["item"] as? String != secondItem },
                "the member showed frames of an entry it has no copy of")
        let starts = [host, later].compactMap { Self.firstFrames(of: secondItem, in: $0.out.snapshot, after: 0).first }
        try #require(starts.count == 2)
        let spread = abs(starts[0] - starts[1]) * 1000
        print("joined without the first item: the second entry's first frame \(String(format: "%.3f", spread)) ms from the host's")
        #expect(spread < 20, "first frames \(spread) ms apart (half a frame is 16.7 ms)")

        // None of the queue's entries: refused once the queue is in, naming what the session plays.
        let refused = try await CoplayProcess.run(["join", invite, other, "--name", "stranger"], timeout: 90)
        #expect(refused.status != 0, "a member with none of the entries was not refused: \(refused.stdout.suffix(300))")
        #expect(refused.stderr.contains("none of your copies is an entry of the session's queue (2 entries)")
                && refused.stderr.contains("first-25.mp4"), "\(refused.stderr)")
    }
}
