import Foundation
import MPVControl
import TestSupport
import Testing

/// mpv members following the group's queue over a real relay: a headless host (`coplay host A B C
/// --repeat all --frames`, the reference: it presents each frame at its instant), two mpv with
/// coplay's options and one plain mpv as a person runs it, all attached with `--mpv-socket`.
/// Every mpv is sampled from outside through its IPC (`path` and `time-pos`, one request, CLOCK_REALTIME
/// stamps) as the benchmarks do: the first frames of each next entry, the gap from the last frame
/// of one entry to the first of the next, and how early or late they come against the host's.
@Suite("mpv members follow the group's queue", .serialized)
struct MPVQueueCLITests {
    typealias Child = PlaybackSessionCLITests.Child
    typealias Session = PlaybackSessionCLITests

    /// One sample of an mpv: when (request/reply midpoint, CLOCK_REALTIME), which file, which position.
    struct Sample: Sendable {
        var realtime: Double
        var path: String
        var position: Double?
    }

    /// Samples `path` and `time-pos` every ~0.5 ms until cancelled.
    static func sample(_ mpv: MPVConnection, into box: LockedBox<[Sample]>) async {
        while !Task.isCancelled {
            guard let reply = try? await mpv.command(["expand-text", "${path}|${=time-pos}"]), let text = reply.data.string else {
                try? await Task.sleep(for: .milliseconds(5))
                continue
            }
            let parts = text.split(separator: "|", omittingEmptySubsequences: false)
            let sample = Sample(realtime: reply.midpoint, path: String(parts.first ?? ""), position: parts.count > 1 ? Double(parts[1]) : nil)
            box.mutate { $0.append(sample) }
            try? await Task.sleep(for: .microseconds(500))
        }
    }

    /// One change of entry seen in an mpv's samples.
    struct Change {
        var to: String
        /// The last sample of the old file at its last frame, and the first of the new file at 0.
        var lastOld: Sample
        var firstNew: Sample
        /// When the old file's last frame appeared (midpoint of its bracket).
        var lastFrameAppeared: Double
        /// The first sample showing the new file's second frame, and the sample before it.
        var secondBefore: Sample?
        var second: Sample?

        /// When the new file's first frame appeared (midpoint of its bracket).
        var firstFrame: Double { (lastOld.realtime + firstNew.realtime) / 2 }
        /// When its second frame appeared.
        var secondFrame: Double? { second.flatMap { s in secondBefore.map { (s.realtime + $0.realtime) / 2 } } }
    }

    /// The changes of file in `samples` (a file's position read as a number, then another file's).
    static func changes(_ samples: [Sample]) -> [Change] {
        var result: [Change] = []
        var lastOld: Sample?
        var appeared = 0.0
        var pending: Change?
        for sample in samples {
            if var change = pending, sample.path == change.to, change.second == nil {
                if let position = sample.position, position > 1e-6 {
                    change.second = sample
                    pending = nil
                    result[result.count - 1] = change
                } else {
                    change.secondBefore = sample
                    pending = change
                    result[result.count - 1] = change
                }
            }
            guard let position = sample.position, !sample.path.isEmpty else { continue }
            if let old = lastOld, old.path != sample.path, position < 1e-6 {
                let change = Change(to: sample.path, lastOld: old, firstNew: sample, lastFrameAppeared: appeared, secondBefore: sample)
                result.append(change)
                pending = change
            }
            if let old = lastOld, old.path != sample.path || old.position != position { appeared = (old.realtime + sample.realtime) / 2 }
            lastOld = sample
        }
        return result
    }

    @Test(
        "three mpv members (two with coplay's options, one plain) and a headless host play a queue of 3 clips at 25, 30 and 24 fps: entries change on the shared clock, mpv's playlist shows the queue titled, > in one mpv moves the group",
        .timeLimit(.minutes(6)))
    func queueTransitions() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: MPVPlayerCLITests.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        let directory = try MPVPlainCLITests.temporaryDirectory("coplay-mq")
        defer { try? FileManager.default.removeItem(at: directory) }
        var clips: [String] = []
        for (name, fps) in [("alpha", 25), ("bravo", 30), ("charlie", 24)] {
            clips.append(try await MPVPlainCLITests.makeMedia(in: directory, fps: fps, seconds: 3, audio: false, name: "\(name)-\(fps).mp4"))
        }
        let rates = [25.0, 30.0, 24.0]
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, _, host, invite) = try await Session.startRelayAndHost(
            media: clips, hostArguments: ["--repeat", "all", "--name", "host", "--frames"], children: &children)

        // Two mpv with coplay's options (as coplay starts them), one plain mpv playing the first clip.
        var sockets: [String] = []
        for (index, plain) in [false, false, true].enumerated() {
            let socket = directory.appendingPathComponent("m\(index).sock").path
            let mpv = plain
                ? try await MPVPlainCLITests.startPlainMPV(socket: socket, files: [clips[0]])
                : try await MPVPlayerCLITests.startMPV(socket: socket)
            children.append(mpv)
            sockets.append(socket)
        }
        var connections: [MPVConnection] = []
        for socket in sockets { connections.append(try await MPVConnection.connect(path: socket, waitingUpTo: .seconds(30))) }
        defer { for connection in connections { Task { await connection.close() } } }
        var members: [Child] = []
        for (index, socket) in sockets.enumerated() {
            let member = try await Child(["join", invite, clips[0], "--item", clips[1], "--item", clips[2], "--mpv-socket", socket, "--name", "m\(index)"])
            children.append(member)
            members.append(member)
        }
        for member in members {
            #expect(await MPVPlainCLITests.joined(member), "a member did not join: \(member.err.snapshot.suffix(5))")
        }

        // mpv's own playlist shows the group's queue, in order, titled (the playing entry of the plain
        // mpv is the person's own, untitled).
        for (index, connection) in connections.enumerated() {
            let shown = try await MPVPlainCLITests.poll(connection, "playlist", for: .seconds(20)) { value in
                MPVOpen.entries(value).count == 3 && MPVOpen.entries(value).filter { !$0.current }.allSatisfy { $0.title != nil }
            }
            let entries = MPVOpen.entries(shown)
            #expect(entries.map { URL(fileURLWithPath: $0.filename).lastPathComponent } == clips.map { URL(fileURLWithPath: $0).lastPathComponent },
                    "mpv \(index)'s playlist: \(entries)")
            #expect(entries.filter { !$0.current }.allSatisfy { $0.title == URL(fileURLWithPath: $0.filename).lastPathComponent }, "\(entries)")
        }

        let samples = (0..<connections.count).map { _ in LockedBox<[Sample]>([]) }
        let samplers = connections.enumerated().map { index, connection in
            Task { await Self.sample(connection, into: samples[index]) }
        }
        defer { for sampler in samplers { sampler.cancel() } }
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "play failed: \(play.stderr)")
        // alpha (3 s) -> bravo (3 s) -> charlie: two changes at entry ends.
        #expect(await host.out.wait(for: .seconds(60)) { lines in
            Session.events(lines).filter { $0["type"] as? String == "itemChanged" && $0["reason"] as? String == "end" }.count >= 2
        }, "the host saw no two transitions: \(host.err.snapshot.suffix(4))")
        try await Task.sleep(for: .seconds(1))
        // The person presses > in the plain mpv: the group's next (charlie -> alpha, repeat all).
        try await connections[2].run(["keypress", ">"])
        #expect(await host.out.wait(for: .seconds(30)) { lines in
            Session.events(lines).contains { $0["type"] as? String == "next" && $0["originator"] as? String == "m2" }
        }, "> in mpv did not move the group: \(members[2].out.snapshot.suffix(4)) \(members[2].err.snapshot.suffix(4))")
        try await Task.sleep(for: .seconds(1.5))
        for sampler in samplers { sampler.cancel() }
        for sampler in samplers { await sampler.value }

        // Nothing the adapters did to mpv's playlist came back as a command: one next, no jump.
        let commands = Session.events(host.out.snapshot).filter { ["next", "previous", "jump"].contains($0["type"] as? String) }
        #expect(commands.count == 1, "queue commands: \(commands)")

        // The host's first frames of each new entry (index 0 and 1), in order after the start.
        let hostFrames = Session.events(host.out.snapshot).filter { $0["type"] as? String == "frame" }
        var hostStarts: [(first: Double, second: Double)] = []
        for (k, frame) in hostFrames.enumerated() where frame["index"] as? Int == 0 && k + 1 < hostFrames.count {
            if let first = frame["realtime"] as? Double, let second = hostFrames[k + 1]["realtime"] as? Double { hostStarts.append((first, second)) }
        }
        // The start itself, then bravo, charlie, alpha again.
        try #require(hostStarts.count >= 4, "the host showed \(hostStarts.count) first frames")
        let expected = [1, 2, 0]
        let perMember = samples.map { Self.changes($0.value) }
        for (index, changes) in perMember.enumerated() {
            #expect(changes.map { URL(fileURLWithPath: $0.to).lastPathComponent } == expected.map { URL(fileURLWithPath: clips[$0]).lastPathComponent },
                    "mpv \(index) changed files: \(changes.map(\.to))")
        }
        for (k, clip) in expected.enumerated() {
            let interval = 1 / rates[clip]
            let reference = hostStarts[k + 1]
            let seen = perMember.compactMap { $0.indices.contains(k) ? $0[k] : nil }
            try #require(seen.count == perMember.count, "not every mpv changed to \(clip)")
            // Each mpv's frames of the new entry against the host's timeline (its first frame's instant).
            let late = seen.enumerated().compactMap { index, change in
                Self.lateness(samples[index].value, path: change.to, instant: reference.first)
            }
            try #require(late.count == seen.count, "not every mpv showed frames of \(clip)")
            let offsets = late.map { $0.offset * 1000 }
            let spread = offsets.max()! - offsets.min()!
            let firstLate = seen.map { ($0.firstFrame - reference.first) * 1000 }
            let gaps = seen.map { ($0.firstFrame - $0.lastFrameAppeared) * 1000 }
            let brackets = seen.map { ($0.firstNew.realtime - $0.lastOld.realtime) * 1000 }
            let why = k < 2 ? "end" : "next (>)"
            print(String(
                format: "mpv queue change %d (%@, to %.0f fps): frames of the new entry vs the host's timeline %@ ms (bounds %@ ms wide), spread %.2f ms; first frame shown vs its instant %@ ms; last frame of the old entry to the first of the new %@ ms (sampling brackets %@ ms)",
                k + 1, why, rates[clip], Self.list(offsets), Self.list(late.map { $0.width * 1000 }), spread, Self.list(firstLate),
                Self.list(gaps), Self.list(brackets)))
            #expect(spread < interval / 2 * 1000, "mpv members played \(clip) \(spread) ms apart (half a frame: \(interval / 2 * 1000) ms)")
            #expect(offsets.allSatisfy { abs($0) < interval / 2 * 1000 }, "mpv frames against the host's: \(offsets) ms")
        }
    }

    /// How late (seconds, negative: early) an mpv showed the frames of `path` against a timeline whose
    /// frame at pts p is due at `instant` + p, over the frame changes in the first `window` seconds:
    /// each change lies between two samples, and the intersection of those brackets (each widened by
    /// 0.3 ms) bounds the offset; when they do not intersect (a trim moved it), the median of midpoints.
    static func lateness(_ samples: [Sample], path: String, instant: Double, window: Double = 0.6) -> (offset: Double, width: Double)? {
        var low = -Double.infinity
        var high = Double.infinity
        var midpoints: [Double] = []
        var previous: Sample?
        for sample in samples where sample.realtime > instant - 0.2 && sample.realtime < instant + window {
            defer { previous = sample }
            guard sample.path == path, let position = sample.position, position > 1e-6, let before = previous, before.path == path,
                let old = before.position, position > old + 1e-6
            else { continue }
            low = max(low, before.realtime - (instant + position) - 0.0003)
            high = min(high, sample.realtime - (instant + position) + 0.0003)
            midpoints.append((before.realtime + sample.realtime) / 2 - (instant + position))
        }
        guard !midpoints.isEmpty else { return nil }
        if low <= high { return ((low + high) / 2, high - low) }
        return (midpoints.sorted()[midpoints.count / 2], .nan)
    }

    static func list(_ values: [Double]) -> String {
        "[" + values.map { String(format: "%+.1f", $0) }.joined(separator: ", ") + "]"
    }
}
