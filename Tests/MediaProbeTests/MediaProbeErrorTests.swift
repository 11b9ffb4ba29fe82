import Foundation
import MediaProbe
import Testing
import TestSupport

@Suite("MediaProbe errors")
struct MediaProbeErrorTests {
    private func probeError(_ url: URL, options: MediaProbe.Options = .init()) async -> MediaProbeError? {
        do {
            _ = try await MediaProbe.shared.probe(url, options: options)
            return nil
        } catch {
            return error as? MediaProbeError
        }
    }

    @Test("a missing file")
    func missing() async throws {
        let url = URL(fileURLWithPath: "/nonexistent-dir/missing.mp4")
        let error = try #require(await probeError(url))
        #expect(error.code == .fileNotFound)
        #expect(error.description == "No such file: /nonexistent-dir/missing.mp4")
    }

    @Test("an unreadable file", .enabled(if: geteuid() != 0, "root reads any file; CoplayCLITests' ProbeCommandTests.permissionDenied runs coplay as nobody instead"))
    func permissionDenied() async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("locked.mp4")
        try Data(contentsOf: Samples.url("cfr-25.mp4")).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: url.path)
        let error = try #require(await probeError(url))
        #expect(error.code == .permissionDenied)
        #expect(error.description == "Permission denied: cannot read \(url.path)")
    }

    static let noiseSeeds: [UInt64] = [1, 2, 3, 5, 8, 13, 21, 34]

    @Test("not media: text, random bytes, an empty file, a directory")
    func notMedia() async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = dir.appendingPathComponent("notes.mp4")
        try Data("These are not the frames you are looking for.\n".utf8).write(to: text)
        // Noise from fixed seeds: fresh random bytes are, now and then, a plausible container to
        // libavformat's probes (a run once found an mkv with a subtitle stream in them), so the
        // input must be the same on every run. Several seeds keep it "noise", not one lucky file.
        var noises: [URL] = []
        for seed in Self.noiseSeeds {
            var generator = SplitMix64(seed: seed)
            let noise = dir.appendingPathComponent("noise-\(seed).mkv")
            try Data((0..<50_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: noise)
            noises.append(noise)
        }
        let empty = dir.appendingPathComponent("empty.mov")
        try Data().write(to: empty)

        for url in [text] + noises {
            let error = try #require(await probeError(url))
            #expect(error.code == .notMedia, "\(url.lastPathComponent)")
            #expect(error.description.hasPrefix("Not a media file: \(url.path)"))
        }
        let emptyError = try #require(await probeError(empty))
        #expect(emptyError.code == .notMedia)
        #expect(emptyError.description == "Not a media file: \(empty.path) (no audio/video container format recognised): the file is empty")
        let dirError = try #require(await probeError(dir))
        #expect(dirError.code == .notMedia)
        #expect(dirError.description.hasSuffix("it is a directory"))
    }

    @Test("truncated media is reported as truncated or corrupt, naming the format", arguments: [
        ("cfr-25.mp4", 0.5, "mov,mp4,m4a,3gp,3g2,mj2"),  // the index (moov) is at the end: cut off
        ("cfr-29.97.mov", 0.8, "mov,mp4,m4a,3gp,3g2,mj2"),
    ])
    func truncated(name: String, fraction: Double, format: String) async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = try Data(contentsOf: Samples.url(name))
        let url = dir.appendingPathComponent("cut-\(name)")
        try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: url)
        let error = try #require(await probeError(url))
        #expect(error.code == .corrupt)
        #expect(error.description.hasPrefix("Truncated or corrupt media file: \(url.path): \(format) (libavformat: "))
    }

    @Test("a subtitle-only file has no usable streams")
    func noUsableStreams() async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("captions.srt")
        try Data("1\n00:00:00,000 --> 00:00:01,000\nHello\n\n2\n00:00:01,000 --> 00:00:02,000\nWorld\n".utf8).write(to: url)
        let error = try #require(await probeError(url))
        #expect(error.code == .noUsableStreams)
        #expect(error.description == "No usable streams in \(url.path): no audio or video stream with a known codec: it has: subtitle subrip")
    }

    @Test("a probe past its deadline times out")
    func timeout() async throws {
        let error = try #require(await probeError(Samples.url("cfr-25.mp4"), options: .init(timeout: .zero)))
        #expect(error.code == .timedOut)
        #expect(error.description.hasPrefix("Timed out probing "))
    }

    @Test("a FIFO is refused at once instead of blocking the open")
    func fifo() async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("pipe.mp4")
        try #require(mkfifo(url.path, 0o644) == 0)
        let error = try #require(await probeError(url))
        #expect(error.code == .notMedia)
        #expect(error.description.hasSuffix("it is not a regular file"))
    }

    @Test("a cancelled task gets CancellationError")
    func cancelled() async throws {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }  // cancelled before the probe is called: no race
            return try await MediaProbe.shared.probe(Samples.url("cfr-25.mp4"), options: .init(scanPackets: true))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test("only file URLs are probed")
    func remoteURL() async throws {
        let url = try #require(URL(string: "https://example.com/clip.mp4"))
        let error = try #require(await probeError(url))
        #expect(error.code == .readFailed)
        #expect(error.description == "Could not read https://example.com/clip.mp4: only local files (file: URLs) can be probed")
    }

    @Test("relative paths are reported as given")
    func relativePath() async throws {
        let error = try #require(await probeError(URL(fileURLWithPath: "no/such/file.mkv", relativeTo: nil)))
        #expect(error.path == "no/such/file.mkv")
    }
}
