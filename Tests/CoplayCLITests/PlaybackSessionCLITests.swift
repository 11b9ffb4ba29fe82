import Foundation
import TestSupport
import Testing

/// The playback stack end to end over real loopback: `coplay serve`, `coplay host`, three
/// `coplay join` processes (each in its own time namespace when `unshare --time` works) and
/// `coplay control`, judged from the joiners' JSON Lines alone.
@Suite("coplay host/join/control over a real relay", .serialized)
struct PlaybackSessionCLITests {
    /// A 40 s, 25 fps H.264 file made with the real ffmpeg (the shared samples are 2-5 s). Long enough
    /// that no test's script reaches its end, where the group stops by itself, on a loaded machine.
    static func makeMedia(in directory: URL) async throws -> String {
        let path = directory.appendingPathComponent("long-25.mp4").path
        let result = try await CoplayProcess.run(
            ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-t", "40", "-c:v", "libx264",
             "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-y", path],
            executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
        try #require(result.status == 0, "ffmpeg failed: \(result.stderr)")
        return path
    }

    /// Whether this machine lets us give a child its own CLOCK_MONOTONIC (root + time namespaces).
    static func canUnshareTime() async -> Bool {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let result = try? await CoplayProcess.run(
            ["--fork", "--kill-child", "--time", "--monotonic", "1000", "true"],
            executable: URL(fileURLWithPath: "/usr/bin/unshare"), timeout: 10)
        return result?.status == 0
    }

    /// A running child with captured stdout and stderr (a ``ChildProcess``: swift-subprocess).
    final class Child: Sendable {
        let process: ChildProcess
        var out: CapturedLines { CapturedLines(process: process, stderr: false) }
        var err: CapturedLines { CapturedLines(process: process, stderr: true) }

        init(_ arguments: [String], executable: URL = CoplayProcess.binary) async throws {
            process = try await CoplayProcess.start(arguments, executable: executable)
        }

        /// Stops the child and, for `unshare --fork`, its forked child too (unshare ignores SIGTERM
        /// while it waits, so the signal goes to both); SIGKILL after 10 s. Returns at once: the
        /// escalation runs in a task, and swift-subprocess reaps the child.
        func stop() {
            guard let pid = process.processIdentifier else { return }
            let children = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
            for child in children { kill(child, SIGTERM) }
            process.terminate()
            let process = process
            Task {
                if await process.wait(timeout: .seconds(10)) == nil {
                    for child in children { kill(child, SIGKILL) }
                    process.kill()
                }
            }
        }
    }

    /// A child's standard output or error, line by line, as it comes.
    struct CapturedLines: Sendable {
        let process: ChildProcess
        let stderr: Bool

        /// The complete lines so far.
        var snapshot: [String] { stderr ? process.stderrLines : process.stdoutLines }

        /// Waits (polling) until `condition` holds for the lines so far; false after `timeout`.
        func wait(for timeout: Duration, _ condition: ([String]) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if condition(snapshot) { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return condition(snapshot)
        }
    }

    struct Frame {
        var index: Int
        var referenceTime: Double
        var realtime: Double
    }

    static func events(_ lines: [String]) -> [[String: Any]] {
        lines.compactMap { line in
            guard line.hasPrefix("{"), let data = line.data(using: .utf8) else { return nil }
            return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        }
    }

    static func frames(_ lines: [String]) -> [Frame] {
        events(lines).compactMap { event in
            guard event["type"] as? String == "frame", let index = event["index"] as? Int,
                  let reference = event["referenceTime"] as? Double, let realtime = event["realtime"] as? Double
            else { return nil }
            return Frame(index: index, referenceTime: reference, realtime: realtime)
        }
    }

    /// True once the player has stopped after the last pause command it received.
    static func pausedAfterCommand(_ lines: [String], pauses: Int) -> Bool {
        let all = events(lines)
        guard let lastPause = all.lastIndex(where: { $0["type"] as? String == "pause" }),
              all.filter({ $0["type"] as? String == "pause" }).count >= pauses
        else { return false }
        return all[lastPause...].contains { $0["type"] as? String == "stopped" }
    }

    static func lastStopped(_ lines: [String]) -> [String: Any]? {
        events(lines).last { $0["type"] as? String == "stopped" }
    }

    @Test("three joiners present every frame together (p99 within half a frame) and pause on the same frame", .timeLimit(.minutes(6)))
    func threeJoinersInStep() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory)
        let unshare = await Self.canUnshareTime()
        if !unshare {
            print("coplay CLI test: unshare --time is not available here (needs root and time namespaces); joiners share the host's monotonic clock")
        }

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }

        let (_, _, _, invite) = try await Self.startRelayAndHost(media: [media], children: &children)

        var joiners: [Child] = []
        for number in 1...3 {
            let arguments = ["join", invite, media, "--name", "p\(number)", "--frames"]
            let joiner: Child
            if unshare {
                // A different CLOCK_MONOTONIC (and CLOCK_BOOTTIME) per joiner: hours apart.
                let offset = "\(number * 3600)"
                joiner = try await Child(
                    ["--fork", "--kill-child=SIGTERM", "--time", "--monotonic", offset, "--boottime", offset,
                     CoplayProcess.binary.path] + arguments,
                    executable: URL(fileURLWithPath: "/usr/bin/unshare"))
            } else {
                joiner = try await Child(arguments)
            }
            children.append(joiner)
            joiners.append(joiner)
        }
        for joiner in joiners {
            let ready = await joiner.out.wait(for: .seconds(60)) { Self.lastStopped($0) != nil }
            #expect(ready, "a joiner never applied the session's state: \(joiner.err.snapshot.suffix(5))")
        }

        let control = { (command: [String]) async throws in
            let result = try await CoplayProcess.run(["control", invite] + command, timeout: 60)
            #expect(result.status == 0, "control \(command) failed: \(result.stderr)")
        }
        try await control(["play"])
        try await Task.sleep(for: .seconds(1.5))
        try await control(["seek", "1.0"])
        try await Task.sleep(for: .seconds(1.5))
        try await control(["pause"])

        for joiner in joiners {
            let paused = await joiner.out.wait(for: .seconds(30)) { Self.pausedAfterCommand($0, pauses: 2) }
            #expect(paused, "a joiner did not pause: \(joiner.err.snapshot.suffix(5))")
        }
        try await Task.sleep(for: .milliseconds(500))

        // All three paused on the same frame, which is past the seek target (1.0 s = frame 25).
        let stops = joiners.map { Self.lastStopped($0.out.snapshot) }
        let indices = stops.map { $0?["index"] as? Int }
        #expect(Set(indices).count == 1, "paused on different frames: \(indices)")
        #expect((indices.first ?? nil).map { $0 > 25 } == true, "paused at \(indices)")
        #expect(stops.allSatisfy { $0?["detail"] as? String == "paused" })

        // Every frame presented by all three at the same moment, by CLOCK_REALTIME.
        let frames = joiners.map { Self.frames($0.out.snapshot) }
        struct Key: Hashable { var index: Int; var reference: Int64 }
        let keyed = frames.map { list in
            Dictionary(list.map { (Key(index: $0.index, reference: Int64(($0.referenceTime * 1e4).rounded())), $0.realtime) },
                       uniquingKeysWith: { first, _ in first })
        }
        let common = keyed.dropFirst().reduce(Set(keyed[0].keys)) { $0.intersection($1.keys) }
        let fewest = frames.map(\.count).min() ?? 0
        #expect(fewest >= 50, "too few frames presented: \(frames.map(\.count))")
        #expect(Double(common.count) >= 0.9 * Double(fewest), "frames differ between players: \(common.count) common of \(frames.map(\.count))")
        let skews = common.map { key in
            let times = keyed.map { $0[key]! }
            return (times.max()! - times.min()!) * 1000
        }.sorted()
        try #require(!skews.isEmpty)
        let p50 = skews[skews.count / 2]
        let p99 = skews[min(skews.count - 1, Int(Double(skews.count) * 0.99))]
        print(String(format: "coplay CLI test: %d frames common to 3 joiners (unshare: %@): skew p50 %.3f ms, p99 %.3f ms, max %.3f ms",
                     skews.count, unshare ? "yes" : "no", p50, p99, skews.last!))
        // The behaviour: every player shows the same frame at the same moment, that is within half a
        // frame interval (20 ms at 25 fps) of the others. How close below that (about 0.1 ms on an idle
        // machine) depends on the machine's load, so it is measured by `coplay bench`, not asserted here.
        #expect(p99 < 20, "frame skew p99 \(p99) ms: the players did not show the same frames together")
    }

    @Test("wrong secret, other media and a relay that is down: clear errors, non-zero exit", .timeLimit(.minutes(3)))
    func setupErrors() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Self.makeMedia(in: directory)
        // Other media: another clip, 10 s instead of 40 (the same packets with other bytes around them
        // would be the same stream, and a re-encode of the same length a near copy: both join).
        let other = directory.appendingPathComponent("other.mp4").path
        let made = try await CoplayProcess.run(
            ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-t", "10", "-c:v", "libx264",
             "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-y", other],
            executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"))
        try #require(made.status == 0, "ffmpeg failed: \(made.stderr)")

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, port, _, invite) = try await Self.startRelayAndHost(media: [media], hostArguments: [], children: &children)

        // A wrong secret: flip one character of the secret.
        let hash = try #require(invite.firstIndex(of: "#"))
        let first = invite.index(after: hash)
        let wrong = invite.replacingCharacters(in: first...first, with: invite[first] == "A" ? "B" : "A")
        let refused = try await CoplayProcess.run(["join", wrong, media], timeout: 60)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("the invite's secret does not match it"), "\(refused.stderr)")
        let refusedControl = try await CoplayProcess.run(["control", wrong, "play"], timeout: 60)
        #expect(refusedControl.status != 0)

        // Other media: neither its stream identity nor its duration is the session's.
        let mismatch = try await CoplayProcess.run(["join", invite, other], timeout: 60)
        #expect(mismatch.status != 0)
        #expect(mismatch.stderr.contains("is not the session's media"), "\(mismatch.stderr)")

        // A relay that is down: a port nobody listens on.
        let downPort = freePort()
        let down = invite.replacingOccurrences(of: "127.0.0.1:\(port)/", with: "127.0.0.1:\(downPort)/")
        let unreachable = try await CoplayProcess.run(["join", down, media], timeout: 60)
        #expect(unreachable.status != 0)
        #expect(unreachable.stderr.contains("nothing listens at 127.0.0.1:\(downPort) — is `coplay serve` running there"), "\(unreachable.stderr)")
        let hostDown = try await CoplayProcess.run(["host", media, "--relay", "127.0.0.1:\(downPort)"], timeout: 60)
        #expect(hostDown.status != 0)
        #expect(hostDown.stdout.isEmpty)
        #expect(hostDown.stderr.contains("nothing listens at 127.0.0.1:\(downPort)"), "\(hostDown.stderr)")

        // Bad input is a usage error.
        let usage = try await CoplayProcess.run(["control", invite, "seek"], timeout: 60)
        #expect(usage.status == 64)
        for bad in [["--clock-drift-ppm", "nan"], ["--start-latency", "-5"], ["--decoder-drift-ppm", "20000"]] {
            let result = try await CoplayProcess.run(["join", invite, media] + bad, timeout: 60)
            #expect(result.status == 64, "\(bad): \(result.stderr)")
        }
    }
}
