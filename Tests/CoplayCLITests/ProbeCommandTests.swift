import Foundation
import Testing

/// `coplay probe` and `coplay bench probe`, run as the real binary against `samples/` and `ffprobe`.
@Suite("coplay probe")
struct ProbeCommandTests {
    /// The samples directory, made by `scripts/make-samples.sh` if any file is missing (idempotent).
    static let samples: URL = {
        let dir = CoplayProcess.packageRoot.appendingPathComponent("samples")
        if !FileManager.default.fileExists(atPath: dir.appendingPathComponent("tone.wav").path)
            || !FileManager.default.fileExists(atPath: dir.appendingPathComponent("vfr.mkv").path)
        {
            let process = Process()
            process.executableURL = CoplayProcess.packageRoot.appendingPathComponent("scripts/make-samples.sh")
            process.standardInput = FileHandle.nullDevice
            try? process.run()
            process.waitUntilExit()
        }
        return dir
    }()

    static func sample(_ name: String) -> String { samples.appendingPathComponent(name).path }

    static func json(_ line: some StringProtocol) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    static func ffprobe(_ arguments: [String]) async throws -> [String: Any] {
        let result = try await CoplayProcess.run(
            ["-v", "error", "-of", "json"] + arguments,
            executable: URL(fileURLWithPath: "/usr/bin/ffprobe")
        )
        try #require(result.status == 0)
        return try json(result.stdout)
    }

    @Test("a table by default, one block per file in the order given")
    func table() async throws {
        let result = try await CoplayProcess.run(["probe", Self.sample("cfr-29.97.mov"), Self.sample("tone.flac")])
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        try #require(lines.count == 8, "\(result.stdout)")
        #expect(lines[0].hasPrefix("\(Self.sample("cfr-29.97.mov")): mov,mp4,m4a,3gp,3g2,mj2, 3.003000 s"))
        #expect(lines[1].contains("video") && lines[1].contains("h264") && lines[1].contains("320x240") && lines[1].contains("30000/1001 fps"))
        #expect(lines[2].contains("audio") && lines[2].contains("aac") && lines[2].contains("48000 Hz") && lines[2].hasSuffix("eng"))
        #expect(lines[3].hasPrefix("  fingerprint v2:"))
        #expect(lines[4].hasPrefix("  stream identity v3:"))  // video only: tone.flac has none
        #expect(lines[5].hasPrefix("\(Self.sample("tone.flac")): flac, 3.000000 s"))
    }

    @Test("--json follows ffprobe's names, types and values for the shared fields", arguments: ["cfr-50.ts", "cfr-29.97.mov", "tone.opus"])
    func jsonMatchesFFprobe(name: String) async throws {
        let file = Self.sample(name)
        let result = try await CoplayProcess.run(["probe", "--json", file])
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == 1, "one file: one JSON object")
        let mine = try Self.json(lines[0])
        let theirs = try await Self.ffprobe(["-show_format", "-show_streams", file])

        let myFormat = try #require(mine["format"] as? [String: Any])
        let theirFormat = try #require(theirs["format"] as? [String: Any])
        for key in ["filename", "format_name", "duration", "start_time", "size", "bit_rate"] {
            #expect(myFormat[key] as? String == theirFormat[key] as? String, "format.\(key)")
            #expect(theirFormat[key] is String)
        }
        #expect(myFormat["nb_streams"] as? Int == theirFormat["nb_streams"] as? Int)
        let fingerprint = try #require(mine["fingerprint"] as? String)
        #expect(fingerprint.hasPrefix("v2:"))
        #expect(((mine["stream_identity"] as? String)?.hasPrefix("v3:") ?? false) == (name != "tone.opus"))

        let myStreams = try #require(mine["streams"] as? [[String: Any]])
        let theirStreams = try #require(theirs["streams"] as? [[String: Any]])
        try #require(myStreams.count == theirStreams.count)
        for (a, b) in zip(myStreams, theirStreams) {
            for key in ["codec_type", "codec_name", "time_base", "r_frame_rate", "avg_frame_rate", "nb_frames", "sample_rate", "start_time", "duration"] {
                #expect(a[key] as? String == b[key] as? String, "streams[].\(key)")
            }
            for key in ["index", "width", "height", "channels", "start_pts", "duration_ts"] {
                #expect(a[key] as? Int == b[key] as? Int, "streams[].\(key)")
            }
            #expect(a["frame_times"] == nil, "frame_times only with --frames")
        }
    }

    @Test("several files: one JSON object per line, in the order given")
    func jsonLines() async throws {
        let names = ["tone.wav", "cfr-25.mp4", "vfr.mkv", "tone.mp3"]
        let result = try await CoplayProcess.run(["probe", "--json"] + names.map(Self.sample))
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == names.count)
        for (line, name) in zip(lines, names) {
            let format = try #require(try Self.json(line)["format"] as? [String: Any])
            #expect(format["filename"] as? String == Self.sample(name))
        }
    }

    @Test("--frames adds nb_read_packets and frame_times equal to ffprobe's packet times", arguments: ["vfr.mp4", "edit-list.mp4", "cfr-50.ts"])
    func frames(name: String) async throws {
        let file = Self.sample(name)
        let result = try await CoplayProcess.run(["probe", "--json", "--frames", file])
        #expect(result.status == 0)
        let streams = try #require(try Self.json(result.stdout)["streams"] as? [[String: Any]])
        let packets = try #require(try await Self.ffprobe(["-show_entries", "packet=stream_index,pts_time,flags", file])["packets"] as? [[String: Any]])
        for stream in streams {
            let index = try #require(stream["index"] as? Int)
            let count = packets.filter { $0["stream_index"] as? Int == index }.count
            #expect(stream["nb_read_packets"] as? String == String(count))
            guard stream["codec_type"] as? String == "video" else {
                #expect(stream["frame_times"] == nil)
                continue
            }
            let times = try #require(stream["frame_times"] as? [Double])
            let expected = packets
                .filter { $0["stream_index"] as? Int == index && !(($0["flags"] as? String) ?? "").contains("D") }
                .compactMap { ($0["pts_time"] as? String).flatMap(Double.init) }
                .sorted()
            try #require(times.count == expected.count)
            // ffprobe prints pts_time with six decimals ("%f"): agreement within half a microsecond.
            for (a, b) in zip(times, expected) { #expect(abs(a - b) <= 0.0000005, "\(a) vs \(b)") }
        }
    }

    @Test("a bad file gets a clear error on stderr, the others are still printed, and the exit status is 1")
    func badFile() async throws {
        let missing = "/nonexistent/clip.mp4"
        let notMedia = CoplayProcess.packageRoot.appendingPathComponent("Package.swift").path
        let result = try await CoplayProcess.run(["probe", "--json", missing, Self.sample("cfr-24.mkv"), notMedia])
        #expect(result.status == 1)
        #expect(result.stderr.contains("coplay probe: No such file: \(missing)"))
        #expect(result.stderr.contains("coplay probe: Not a media file: \(notMedia)"))
        let lines = result.stdout.split(separator: "\n")
        try #require(lines.count == 1)
        #expect((try Self.json(lines[0])["format"] as? [String: Any])?["filename"] as? String == Self.sample("cfr-24.mkv"))
    }

    @Test("an unreadable file is reported as permission denied (run as an unprivileged user when root)")
    func permissionDenied() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-probe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.path)
        let file = dir.appendingPathComponent("locked.mp4")
        try Data(contentsOf: URL(fileURLWithPath: Self.sample("cfr-25.mp4"))).write(to: file)
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: file.path)

        let result: CoplayProcess.Result
        if geteuid() == 0 {
            // Root reads any file, so drop to `nobody` (util-linux setpriv) to meet a real EACCES.
            result = try await CoplayProcess.run(
                ["--reuid=65534", "--regid=65534", "--clear-groups", CoplayProcess.binary.path, "probe", file.path],
                executable: URL(fileURLWithPath: "/usr/bin/setpriv")
            )
        } else {
            result = try await CoplayProcess.run(["probe", file.path])
        }
        #expect(result.status == 1)
        #expect(result.stderr.contains("coplay probe: Permission denied: cannot read \(file.path)"), "\(result.stderr)")
    }

    @Test("no files is a usage error")
    func noFiles() async throws {
        let result = try await CoplayProcess.run(["probe"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("Give at least one media file to probe."))
    }

    @Test("bench probe reports files per second for MediaProbe and ffprobe")
    func bench() async throws {
        let result = try await CoplayProcess.run(
            ["bench", "probe", "--samples", Self.samples.path, "--rounds", "1", "--ffprobe-rounds", "1", "--json"],
            timeout: 300
        )
        #expect(result.status == 0, "\(result.stderr)")
        let figures = try Self.json(result.stdout)
        #expect(figures["files"] as? Double == 16)
        for key in ["mediaprobe_files_per_second", "mediaprobe_concurrent_files_per_second", "ffprobe_files_per_second", "ratio"] {
            let value = try #require(figures[key] as? Double, "\(key)")
            #expect(value > 0 && value.isFinite, "\(key)")
        }
    }
}
