import Foundation
import MPVControl
import PlaybackCoordinator
import TestSupport
import Testing

/// A real mpv started through ``MPVProcess``: what a member checks before it joins.
@Suite("MPVProcess and preload with a real mpv")
struct MPVProcessTests {
    @Test("a file mpv cannot open is a clear error before joining")
    func unplayableFile() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv"), "mpv is missing: scripts/install-deps.sh installs it")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-garbage-\(UUID().uuidString.prefix(8)).mp4").path
        // Noise from a fixed seed: fresh random bytes can, now and then, look like a
        // container to a demuxer's probe, and then the test would fail for no fault of the code.
        var rng = SplitMix64(seed: 0x5EED)
        let bytes = (0..<25_000).flatMap { _ in withUnsafeBytes(of: rng.next()) { Array($0) } }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let item = MPVPlayer.Item(timeline: MediaTimeline(identifier: "garbage", duration: 1, frameRate: 25), path: path)
        let error = await #expect(throws: MPVError.self) {
            try await MPVProcess.run(arguments: MPVProcess.headlessArguments) { mpv in
                try await MPVPlayer.preload(item, on: mpv)
            }
        }
        #expect(error?.description.contains("mpv cannot play \(path)") == true, "\(String(describing: error))")
        #expect(error?.isQuit == false)
    }
}
