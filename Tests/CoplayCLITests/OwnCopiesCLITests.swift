import Foundation
import TestSupport
import Testing

/// Members with their own copies, as people get them: a remux of the host's mp4 into mkv found in a
/// nested folder (`--media-dir`, then from the fingerprint cache), another encode of the same
/// length (a near copy), a different file, and a host that accepts exact copies only. Judged from
/// the processes' output alone.
@Suite("own copies: remux, near copy, other media, --media-dir and its cache, --exact-copies", .serialized)
struct OwnCopiesCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    /// Runs ffmpeg.
    static func ffmpeg(_ arguments: [String]) async throws {
        let result = try await CoplayProcess.run(
            ["-nostdin", "-v", "error", "-y"] + arguments, executable: URL(fileURLWithPath: "/usr/bin/ffmpeg"), timeout: 300)
        try #require(result.status == 0, "ffmpeg \(arguments) failed: \(result.stderr)")
    }

    /// The copies: the host's 40 s mp4, its `-c copy` mkv remux two folders down, another encode of it
    /// (same frames' timestamps and duration, other bytes in every packet) and a different 10 s clip.
    struct Copies {
        var directory: URL
        var host: String
        var folder: String
        var remux: String
        var reencode: String
        var other: String
    }

    static func makeCopies() async throws -> Copies {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-copies-\(UUID().uuidString)")
        let nested = directory.appendingPathComponent("library/films/2026")
        try FileManager.default.createDirectory(at: nested, withIntermediateDirectories: true)
        let host = try await PlaybackSessionCLITests.makeMedia(in: directory)
        let remux = nested.appendingPathComponent("Remux.mkv").path
        try await ffmpeg(["-i", host, "-c", "copy", remux])
        let reencode = directory.appendingPathComponent("reencode.mp4").path
        try await ffmpeg(["-i", host, "-c:v", "libx264", "-preset", "ultrafast", "-crf", "40", reencode])
        let other = directory.appendingPathComponent("other.mp4").path
        try await ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25", "-t", "10", "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p", other,
        ])
        return Copies(
            directory: directory, host: host, folder: directory.appendingPathComponent("library").path, remux: remux,
            reencode: reencode, other: other)
    }

    static func stdout(_ child: Child) -> [[String: Any]] { PlaybackSessionCLITests.events(child.out.snapshot) }

    @Test("a remux in a nested --media-dir folder plays in step as the host's item, the second scan from the cache; a re-encode of the same length joins as a near copy and everyone is told; other media is refused", .timeLimit(.minutes(8)))
    func ownCopies() async throws {
        let copies = try await Self.makeCopies()
        defer { try? FileManager.default.removeItem(at: copies.directory) }
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }

        let probe = try await CoplayProcess.run(["probe", "--json", copies.host, copies.remux, copies.reencode])
        try #require(probe.status == 0, "\(probe.stderr)")
        let identities = probe.stdout.split(separator: "\n").map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["stream_identity"] as? String
        }
        try #require(identities.count == 3)
        let item = try #require(identities[0])
        #expect(item.hasPrefix("v3:"))
        #expect(identities[1] == item, "the remux has the host's video packets")
        #expect(identities[2] != item, "another encode has other packets")

        let (_, port, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [copies.host], hostArguments: ["--name", "host", "--events", "jsonl"], children: &children)

        // --media-dir: the remux is found two folders down and identified; the second start reads it from the cache.
        let first = try await Child(["join", invite, "--media-dir", copies.folder, "--name", "first-scan", "--events", "jsonl"])
        children.append(first)
        #expect(await first.err.wait(for: .seconds(60)) { $0.contains { $0.contains("--media-dir") } })
        #expect(first.err.snapshot.contains { $0.contains("1 video file (0 from the cache, 0 recognised after a move, 1 probed)") },
                "\(first.err.snapshot)")
        #expect(await first.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil },
                "the folder's remux did not join: \(first.err.snapshot.suffix(5))")
        first.stop()
        let cacheFile = URL(fileURLWithPath: try #require(CoplayProcess.environment["XDG_CACHE_HOME"]))
            .appendingPathComponent("coplay/fingerprints.json")
        let cached = try String(contentsOf: cacheFile, encoding: .utf8)
        #expect(cached.contains("Remux.mkv") && cached.contains(item), "the cache holds the remux and its identity")

        let remux = try await Child(["join", invite, "--media-dir", copies.folder, "--name", "remux", "--frames", "--events", "jsonl"])
        let same = try await Child(["join", invite, copies.host, "--name", "same", "--frames", "--events", "jsonl"])
        children += [remux, same]
        #expect(await remux.err.wait(for: .seconds(60)) { $0.contains { $0.contains("--media-dir") } })
        #expect(remux.err.snapshot.contains { $0.contains("1 video file (1 from the cache, 0 recognised after a move, 0 probed)") },
                "the second scan did not use the cache: \(remux.err.snapshot)")
        for joiner in [remux, same] {
            #expect(await joiner.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil },
                    "a joiner never applied the session's state: \(joiner.err.snapshot.suffix(5))")
        }

        // A re-encode of the same length: a near copy, which it and everyone else are told.
        let near = try await Child(["join", invite, copies.reencode, "--name", "near", "--events", "jsonl"])
        children.append(near)
        #expect(await near.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.events($0).contains { $0["type"] as? String == "nearCopy" } },
                "no nearCopy event: \(near.err.snapshot.suffix(5))")
        let own = try #require(Self.stdout(near).first { $0["type"] as? String == "nearCopy" })
        #expect(own["originator"] as? String == "near" && own["player"] as? String == "near", "the near copy is the member's own: \(own)")
        #expect(own["item"] as? String == item)
        #expect(await near.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil })
        #expect(await host.out.wait(for: .seconds(30)) { lines in
            PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "nearCopy" && $0["originator"] as? String == "near" }
        }, "the host was not told about the near copy")
        let people = try await CoplayProcess.run(["people", invite, "--json"], timeout: 60)
        #expect(people.status == 0, "\(people.stderr)")
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(people.stdout.utf8)) as? [String: Any])
        let members = try #require(listing["members"] as? [[String: Any]])
        #expect(members.first { $0["name"] as? String == "near" }?["nearCopy"] as? Bool == true, "\(people.stdout)")
        #expect(members.first { $0["name"] as? String == "remux" }?["nearCopy"] == nil, "\(people.stdout)")
        #expect(!Self.stdout(remux).contains { $0["type"] as? String == "nearCopy" && $0["originator"] as? String == "remux" })

        // The remux and the host's own file play in step: the same frames at the same instants.
        let control = { (command: [String]) async throws in
            let result = try await CoplayProcess.run(["control", invite] + command, timeout: 60)
            #expect(result.status == 0, "control \(command) failed: \(result.stderr)")
        }
        try await control(["play"])
        try await Task.sleep(for: .seconds(3))
        try await control(["pause"])
        for joiner in [remux, same] {
            #expect(await joiner.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.pausedAfterCommand($0, pauses: 2) })
        }
        try await Task.sleep(for: .milliseconds(500))
        let stops = [remux, same].map { PlaybackSessionCLITests.lastStopped($0.out.snapshot)?["index"] as? Int }
        #expect(stops[0] != nil && stops[0] == stops[1], "paused on different frames: \(stops)")
        let frames = [remux, same].map { PlaybackSessionCLITests.frames($0.out.snapshot) }
        struct Key: Hashable { var index: Int; var reference: Int64 }
        let keyed = frames.map { list in
            Dictionary(list.map { (Key(index: $0.index, reference: Int64(($0.referenceTime * 1e4).rounded())), $0.realtime) },
                       uniquingKeysWith: { first, _ in first })
        }
        let common = Set(keyed[0].keys).intersection(keyed[1].keys)
        let fewest = frames.map(\.count).min() ?? 0
        #expect(fewest >= 25, "too few frames presented: \(frames.map(\.count))")
        #expect(Double(common.count) >= 0.9 * Double(fewest), "the remux showed other frames: \(common.count) common of \(frames.map(\.count))")
        let skews = common.map { abs(keyed[0][$0]! - keyed[1][$0]!) * 1000 }.sorted()
        try #require(!skews.isEmpty)
        let p99 = skews[min(skews.count - 1, Int(Double(skews.count) * 0.99))]
        print(String(format: "coplay CLI test: %d frames common to the remux and the host's file: skew p50 %.3f ms, p99 %.3f ms",
                     skews.count, skews[skews.count / 2], p99))
        // The same frame at the same moment: within half a frame (20 ms at 25 fps); how much better is a benchmark's business.
        #expect(p99 < 20, "frame skew p99 \(p99) ms between the remux and the host's file")

        // A different file: refused, saying what the session plays and what this copy is.
        let refused = try await CoplayProcess.run(["join", invite, copies.other], timeout: 60)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("is not the session's media") && refused.stderr.contains("0:00:40")
                && refused.stderr.contains("0:00:10"), "\(refused.stderr)")

        // A host that accepts exact copies only: the near copy is refused, the remux is welcome.
        let exactHost = try await Child(["host", copies.host, "--relay", "127.0.0.1:\(port)", "--exact-copies", "--name", "strict"])
        children.append(exactHost)
        #expect(await exactHost.out.wait(for: .seconds(60)) { !$0.isEmpty })
        let exactInvite = try #require(exactHost.out.snapshot.first)
        let strict = try await CoplayProcess.run(["join", exactInvite, copies.reencode], timeout: 60)
        #expect(strict.status != 0)
        #expect(strict.stderr.contains("the host accepts exact copies only"), "\(strict.stderr)")
        let welcome = try await Child(["join", exactInvite, copies.remux, "--name", "exact-remux", "--events", "jsonl"])
        children.append(welcome)
        #expect(await welcome.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil },
                "the remux was not welcome at an --exact-copies host: \(welcome.err.snapshot.suffix(5))")
    }

    @Test("--media-dir's cache: a second scan reads nothing, a moved or touched file is recognised by its fingerprint, a new file is probed")
    func cache() async throws {
        let copies = try await Self.makeCopies()
        defer { try? FileManager.default.removeItem(at: copies.directory) }
        // The scan comes before the relay: an invite nobody answers is enough (the join then fails).
        let cacheHome = copies.directory.appendingPathComponent("cache")
        var environment = CoplayProcess.environment
        environment["XDG_CACHE_HOME"] = cacheHome.path
        func scan() async throws -> String {
            let result = try await CoplayProcess.run(
                ["join", Self.deadInvite, "--media-dir", copies.folder], timeout: 60, environment: environment)
            #expect(result.status != 0)
            return try #require(result.stderr.split(separator: "\n").first { $0.contains("--media-dir") }.map(String.init), "\(result.stderr)")
        }
        #expect(try await scan().hasSuffix("1 video file (0 from the cache, 0 recognised after a move, 1 probed)"))
        #expect(FileManager.default.fileExists(atPath: cacheHome.appendingPathComponent("coplay/fingerprints.json").path))
        #expect(try await scan().hasSuffix("1 video file (1 from the cache, 0 recognised after a move, 0 probed)"))
        // Moved to another folder of the library, and a copy with a new modification time.
        let moved = URL(fileURLWithPath: copies.folder).appendingPathComponent("moved.mkv").path
        try FileManager.default.moveItem(atPath: copies.remux, toPath: moved)
        #expect(try await scan().hasSuffix("1 video file (0 from the cache, 1 recognised after a move, 0 probed)"))
        let cached = try String(contentsOf: cacheHome.appendingPathComponent("coplay/fingerprints.json"), encoding: .utf8)
        #expect(cached.contains("moved.mkv") && !cached.contains("Remux.mkv"), "the moved file's old path is forgotten")
        try FileManager.default.copyItem(atPath: copies.reencode, toPath: URL(fileURLWithPath: copies.folder).appendingPathComponent("new.mp4").path)
        #expect(try await scan().hasSuffix("2 video files (1 from the cache, 0 recognised after a move, 1 probed)"))
    }

    static let deadInvite = "coplay://127.0.0.1:9/d9db6f55e488065d231726fabb7cf5ee?aead=aes-256-gcm#zN6YxxjfjSYQ17dNuAUdVaAAd8hFwLE2wFl0BmddmFg"

    @Test("--media-dir: a missing folder or a file is a usage error naming it")
    func badFolder() async throws {
        let invite = "coplay://127.0.0.1:9/d9db6f55e488065d231726fabb7cf5ee?aead=aes-256-gcm#zN6YxxjfjSYQ17dNuAUdVaAAd8hFwLE2wFl0BmddmFg"
        let missing = try await CoplayProcess.run(["join", invite, "--media-dir", "/nonexistent/coplay-films"], timeout: 60)
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("--media-dir /nonexistent/coplay-films: no such folder"), "\(missing.stderr)")
        let file = try await CoplayProcess.run(["join", invite, "--media-dir", "/etc/hostname"], timeout: 60)
        #expect(file.status == 64)
        #expect(file.stderr.contains("--media-dir /etc/hostname: not a folder"), "\(file.stderr)")
    }
}
