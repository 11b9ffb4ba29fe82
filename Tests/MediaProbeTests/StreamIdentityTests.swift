import Foundation
import MediaProbe
import TestSupport
import Testing

@Suite("StreamIdentity: the video packets, not the container's bytes")
struct StreamIdentityTests {
    @Test("v3 text form round-trips; v2 and malformed text are not stream identities")
    func textForm() throws {
        let identity = StreamIdentity(codec: "h264", length: 12, head: [[1, 2, 3]], tail: [[4]])
        #expect(identity.description == "v3:\(identity.digest)")
        #expect(StreamIdentity(identity.description) == identity)
        let json = try JSONEncoder().encode(identity)
        #expect(try JSONDecoder().decode(StreamIdentity.self, from: json) == identity)
        for bad in ["", "v3:", "v2:3:\(identity.digest)", "v3:\(identity.digest.uppercased())", "v3:\(identity.digest)0", "V3:\(identity.digest)"] {
            #expect(StreamIdentity(bad) == nil, "\(bad)")
        }
        // Every hashed input counts: the codec, the ten-second length bucket, the bytes, where a packet ends.
        #expect(StreamIdentity(codec: "hevc", length: 12, head: [[1, 2, 3]], tail: [[4]]) != identity)
        #expect(StreamIdentity(codec: "h264", length: 19.9, head: [[1, 2, 3]], tail: [[4]]) == identity)
        #expect(StreamIdentity(codec: "h264", length: 20, head: [[1, 2, 3]], tail: [[4]]) != identity)
        #expect(StreamIdentity(codec: "h264", length: 12, head: [[1, 2], [3]], tail: [[4]]) != identity)
        #expect(StreamIdentity(codec: "h264", length: 12, head: [[1, 2, 3]], tail: [[5]]) != identity)
    }

    /// Runs ffmpeg with `arguments`.
    static func ffmpeg(_ arguments: [String]) async throws {
        let result = await ChildProcess.run(
            "/usr/bin/ffmpeg", ["-nostdin", "-v", "error", "-y"] + arguments, timeout: .seconds(300))
        try #require(result.status == 0, "ffmpeg \(arguments) failed: \(result.stderr)")
    }

    static func identity(_ url: URL, scan: Bool) async throws -> StreamIdentity {
        let info = try await MediaProbe.shared.probe(url, options: .init(scanPackets: scan, streamIdentity: true))
        return try #require(info.streamIdentity)
    }

    @Test("an mkv remux (-c copy) of an mp4 has its identity; another encode and other media do not",
          arguments: ["cfr-23.976.mp4", "cfr-25.mp4", "vfr.mp4", "edit-list.mp4"])
    func remuxAndReencode(sample: String) async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let original = Samples.url(sample)
        let remux = dir.appendingPathComponent("remux.mkv")
        let reencode = dir.appendingPathComponent("reencode.mp4")
        try await Self.ffmpeg(["-i", original.path, "-map", "0:v", "-c", "copy", remux.path])
        try await Self.ffmpeg(["-i", original.path, "-map", "0:v", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "35", reencode.path])

        let mine = try await Self.identity(original, scan: false)
        #expect(try await Self.identity(remux, scan: false) == mine)
        #expect(try await Self.identity(remux, scan: true) == mine)
        #expect(try await Self.identity(reencode, scan: false) != mine)
        let other = sample == "cfr-25.mp4" ? "cfr-60.mp4" : "cfr-25.mp4"
        #expect(try await Self.identity(Samples.url(other), scan: false) != mine)
        // The file's bytes differ, so its fingerprint does.
        let probed = try await MediaProbe.shared.probe(remux)
        #expect(try await MediaProbe.shared.probe(original).fingerprint != probed.fingerprint)
    }

    @Test("a long file: the sampled identity (a seek near the end) equals the one read in a packet scan; audio-only has none")
    func seekMatchesScan() async throws {
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        // 70 s: longer than the 30 s tail window, so the sampled path seeks.
        let long = dir.appendingPathComponent("long.mp4")
        try await Self.ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-t", "70", "-c:v", "libx264", "-preset", "ultrafast",
            "-g", "25", "-pix_fmt", "yuv420p", long.path,
        ])
        let sampled = try await Self.identity(long, scan: false)
        #expect(try await Self.identity(long, scan: true) == sampled)
        let remux = dir.appendingPathComponent("long.mkv")
        try await Self.ffmpeg(["-i", long.path, "-c", "copy", remux.path])
        #expect(try await Self.identity(remux, scan: false) == sampled)
        // The same stream cut 20 s shorter (a different length, the same opening): another identity.
        let cut = dir.appendingPathComponent("cut.mp4")
        try await Self.ffmpeg(["-i", long.path, "-t", "50", "-c", "copy", cut.path])
        #expect(try await Self.identity(cut, scan: false) != sampled)

        let tone = try await MediaProbe.shared.probe(Samples.url("tone.flac"), options: .init(streamIdentity: true))
        #expect(tone.streamIdentity == nil)
        // Not asked for: not computed.
        #expect(try await MediaProbe.shared.probe(long).streamIdentity == nil)
    }
}
