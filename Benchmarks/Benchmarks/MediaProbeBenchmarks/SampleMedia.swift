import Foundation

/// The repository's `samples/` directory, filled by `scripts/make-samples.sh` when a sample is missing.
struct SampleMedia: Sendable {
    /// The coplay repository root (this file is `Benchmarks/Benchmarks/MediaProbeBenchmarks/SampleMedia.swift`).
    let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The sample named `name`.
    func url(_ name: String) -> URL {
        root.appendingPathComponent("samples").appendingPathComponent(name)
    }

    /// Runs `scripts/make-samples.sh` (idempotent) unless every sample the benchmarks use exists.
    func ensure() throws {
        let needed = ["cfr-25.mp4", "cfr-59.94.ts", "vfr.mkv"]
        guard needed.contains(where: { !FileManager.default.fileExists(atPath: url($0).path) }) else { return }
        let script = Process()
        script.executableURL = root.appendingPathComponent("scripts/make-samples.sh")
        script.standardOutput = FileHandle.standardError
        try script.run()
        script.waitUntilExit()
        guard script.terminationStatus == 0 else {
            throw SampleMediaError("scripts/make-samples.sh exited with status \(script.terminationStatus)")
        }
    }
}
