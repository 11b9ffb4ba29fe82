import Foundation
import TestSupport

/// The sample media made by `scripts/make-samples.sh`, and `ffprobe` run as a process for reference.
enum Samples {
    /// The package root (the folder holding `Package.swift`).
    static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// Every sample the script makes; `SampleCoverageTests` checks this list against the directory.
    static let names = [
        "cfr-23.976.mp4", "cfr-24.mkv", "cfr-25.mp4", "cfr-29.97.mov", "cfr-30.webm", "cfr-50.ts",
        "cfr-59.94.ts", "cfr-60.mp4", "vfr.mkv", "vfr.mp4", "start-10s.mkv", "edit-list.mp4",
        "tone.mp3", "tone.flac", "tone.wav", "tone.opus",
    ]

    /// The samples directory, generated on first use (the script is idempotent and quick).
    static let directory: URL = {
        let dir = packageRoot.appendingPathComponent("samples")
        let missing = names.contains { !FileManager.default.fileExists(atPath: dir.appendingPathComponent($0).path) }
        if missing {
            let process = Process()
            process.executableURL = packageRoot.appendingPathComponent("scripts/make-samples.sh")
            process.standardInput = FileHandle.nullDevice
            try? process.run()
            process.waitUntilExit()
        }
        return dir
    }()

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// Runs `ffprobe` with `arguments` and the file, returning its parsed JSON output (through
    /// swift-subprocess: no thread waits for it).
    static func ffprobe(_ arguments: [String], file: URL) async throws -> [String: Any] {
        let output = await ChildProcess.run(
            "/usr/bin/ffprobe", ["-v", "error", "-of", "json"] + arguments + [file.path], timeout: .seconds(120))
        guard output.status == 0,
              let object = try JSONSerialization.jsonObject(with: Data(output.stdout.utf8)) as? [String: Any]
        else { throw FFprobeFailed(file: file.path, status: output.status) }
        return object
    }

    struct FFprobeFailed: Error, CustomStringConvertible {
        var file: String
        var status: Int32
        var description: String { "ffprobe failed on \(file) with status \(status)" }
    }

    /// A fresh temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-mediaprobe-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}
