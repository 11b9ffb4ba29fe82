import BenchmarkSupport
import Foundation
import Testing

@testable import SyncBench

/// Whether mpv and ffmpeg are on PATH.
private let mpvAndFFmpeg: Bool = ["mpv", "ffmpeg"].allSatisfy { SyncplayBaseline.findTool($0) != nil }

@Suite("MPVFrameSampler against a real mpv", .serialized)
struct MPVFrameSamplerTests {
    @Test(
        "an mpv playing a 25 fps clip: one presentation per frame, in order, 40 ms apart; a pause and a seek are not frames",
        .enabled(if: mpvAndFFmpeg, "needs mpv and ffmpeg on PATH (scripts/install-deps.sh): not run"),
        .timeLimit(.minutes(1)))
    func realMPV() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-sampler-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = directory.appendingPathComponent("clip.mp4")
        try await CoplayScenarioRunner.makeMedia(at: media, seconds: 10)
        let socket = directory.appendingPathComponent("mpv.sock").path
        let mpv = try ChildProcess(
            name: "mpv", executable: SyncplayBaseline.findTool("mpv")!,
            arguments: MPVFrameSampler.mpvArguments(socket: socket), log: nil)
        // Stopped before the test returns (a `defer { Task { … } }` could run after the process
        // exited, leaving an mpv behind after every test run).
        do { try await Self.exercise(mpv: mpv, socket: socket, media: media) } catch {
            await mpv.stop()
            throw error
        }
        await mpv.stop()
    }

    private static func exercise(mpv: ChildProcess, socket: String, media: URL) async throws {
        let sampler = try await MPVFrameSampler.start(socket: socket, player: "m", alive: { mpv.isRunning })
        let control = sampler.connection
        try await control.run(["loadfile", media.path, "replace"])
        while !sampler.isReady { try await Task.sleep(for: .milliseconds(20)) }
        try await Task.sleep(for: .milliseconds(200))
        try await control.set("pause", false)
        try await Task.sleep(for: .seconds(2))
        try await control.set("pause", true)
        try await Task.sleep(for: .milliseconds(300))
        try await control.run(["seek", 5.0, "absolute+exact"])
        try await Task.sleep(for: .milliseconds(300))
        try await control.set("pause", false)
        try await Task.sleep(for: .seconds(1))
        let record = await sampler.stop()

        #expect(record.frameRate == 25)
        let frames = record.transitions
        // About 2 s + 1 s of playback at 25 fps.
        #expect(frames.count >= 60 && frames.count <= 80, "\(frames.count) frames")
        let indices = frames.map(\.index)
        #expect(frames.allSatisfy { abs(Double($0.index) / 25 - $0.pts) < 1e-6 })
        // In order, frame after frame, except across the seek to 5 s (frame 125). On a loaded machine mpv
        // itself may skip frames (once seen: 10 -> 17 while the previous test's processes were exiting), so
        // the count of single steps is bounded below rather than exact.
        let steps = zip(indices, indices.dropFirst()).map { $1 - $0 }
        #expect(steps.allSatisfy { $0 > 0 }, "out of order: \(indices)")
        #expect(steps.contains { $0 >= 75 }, "no jump across the seek: \(indices)")
        #expect(Double(steps.filter { $0 == 1 }.count) >= 0.8 * Double(steps.count), "too few single steps: \(indices)")
        #expect(indices.contains(126) && !indices.contains(125))
        #expect(record.jumps.contains { abs($0.to - 5) < 1e-6 })
        #expect(record.pauses.map(\.paused) == [true, false, true, false])
        // 40 ms apart while playing (the scheduler may delay a sample; the median is what mpv does).
        let intervals = zip(frames, frames.dropFirst()).filter { $1.index == $0.index + 1 }.map { ($1.realtime - $0.realtime) * 1000 }
        let median = Statistics.median(intervals) ?? 0
        #expect(abs(median - 40) < 1, "median interval \(median) ms")
        let brackets = record.brackets.map { $0 * 1000 }.sorted()
        print(
            "sampler on a real mpv: \(frames.count) frames, bracket p50 \(Statistics.percentileOfSorted(brackets, 0.5) ?? .nan) ms,"
                + " p99 \(Statistics.percentileOfSorted(brackets, 0.99) ?? .nan) ms, \(record.samples) samples,"
                + " lateness p99 \((Statistics.percentile(record.lateness, 0.99) ?? .nan) * 1000) ms")
    }
}
