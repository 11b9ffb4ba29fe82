import Foundation
import MPVControl
import PlaybackCoordinator
import Testing

/// A real mpv started through ``MPVProcess``: what a member checks before it joins.
@Suite("MPVProcess and preload with a real mpv")
struct MPVProcessTests {
    @Test("a file mpv cannot open is a clear error before joining")
    func unplayableFile() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv"), "mpv is missing: scripts/install-deps.sh installs it")
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-garbage-\(UUID().uuidString.prefix(8)).mp4").path
        // Noise from a fixed seed (SplitMix64): fresh random bytes can, now and then, look like a
        // container to a demuxer's probe, and then the test would fail for no fault of the code.
        var state: UInt64 = 0x5EED
        let bytes = (0..<25_000).flatMap { _ -> [UInt8] in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return withUnsafeBytes(of: z ^ (z >> 31)) { Array($0) }
        }
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
