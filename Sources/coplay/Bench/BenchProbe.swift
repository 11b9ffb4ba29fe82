import ArgumentParser
import Foundation
import MediaProbe

/// `coplay bench probe`: in-process MediaProbe throughput versus one `ffprobe` process per file.
struct BenchProbe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Files per second: MediaProbe in process versus running ffprobe once per file.",
        discussion: """
            Probes every media file in the samples directory (scripts/make-samples.sh makes them). MediaProbe runs one
            file at a time (sequential, the like-for-like figure) and all files of a round at once (concurrent);
            ffprobe runs as `ffprobe -v error -show_format -show_streams -of json FILE`, one process per file, one
            at a time. Each phase stops after --rounds rounds or --max-seconds, whichever comes first. Build with
            -c release for meaningful figures.
            """
    )

    @Option(help: "Directory of sample media.")
    var samples = "samples"

    @Option(help: "Rounds over all files for MediaProbe.")
    var rounds = 50

    @Option(help: "Rounds over all files for ffprobe.")
    var ffprobeRounds = 3

    @Option(help: "Upper bound on each phase's wall time, in seconds.")
    var maxSeconds: Double = 30

    @Option(help: "The ffprobe executable.")
    var ffprobe = "/usr/bin/ffprobe"

    @Flag(help: "Print the figures as one JSON object.")
    var json = false

    func validate() throws {
        guard rounds > 0, ffprobeRounds > 0 else { throw ValidationError("--rounds and --ffprobe-rounds must be positive.") }
        guard maxSeconds > 0, maxSeconds <= 86_400 else { throw ValidationError("--max-seconds must be between 0 and 86400.") }
        guard FileManager.default.isExecutableFile(atPath: ffprobe) else {
            throw ValidationError("ffprobe not found at \(ffprobe) (scripts/install-deps.sh installs it; or pass --ffprobe).")
        }
    }

    func run() async throws {
        let files = try Self.mediaFiles(in: samples)
        guard !files.isEmpty else {
            throw ValidationError("No media files in \(samples); run scripts/make-samples.sh first.")
        }
        let probe = MediaProbe.shared
        let clock = ContinuousClock()
        let budget = Duration.milliseconds(Int64(maxSeconds * 1000))

        // Warm-up (and a check that every sample probes).
        for file in files { _ = try await probe.probe(file) }

        var sequentialCount = 0
        let sequentialStart = clock.now
        for _ in 0..<rounds where clock.now - sequentialStart < budget {
            for file in files { _ = try await probe.probe(file) }
            sequentialCount += files.count
        }
        let sequential = Double(sequentialCount) / (clock.now - sequentialStart).seconds

        var concurrentCount = 0
        let concurrentStart = clock.now
        for _ in 0..<rounds where clock.now - concurrentStart < budget {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for file in files { group.addTask { _ = try await probe.probe(file) } }
                try await group.waitForAll()
            }
            concurrentCount += files.count
        }
        let concurrent = Double(concurrentCount) / (clock.now - concurrentStart).seconds

        var ffprobeCount = 0
        let ffprobeStart = clock.now
        for _ in 0..<ffprobeRounds where clock.now - ffprobeStart < budget {
            for file in files { try runFFprobe(file) }
            ffprobeCount += files.count
        }
        let external = Double(ffprobeCount) / (clock.now - ffprobeStart).seconds

        let ratio = sequential / external
        if json {
            let figures: [String: Double] = [
                "files": Double(files.count),
                "mediaprobe_files_per_second": sequential,
                "mediaprobe_concurrent_files_per_second": concurrent,
                "ffprobe_files_per_second": external,
                "ratio": ratio,
            ]
            let data = try JSONSerialization.data(withJSONObject: figures, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
        } else {
            print("coplay bench probe: \(files.count) files in \(samples)")
            print("  MediaProbe, one at a time   \(Self.format(sequential)) files/s  (\(sequentialCount) probes)")
            print("  MediaProbe, concurrent      \(Self.format(concurrent)) files/s  (\(concurrentCount) probes)")
            print("  ffprobe, one process each   \(Self.format(external)) files/s  (\(ffprobeCount) runs)")
            print("  ratio (one at a time)       \(Self.format(ratio))x  (goal: >= 20x)")
        }
    }

    private func runFFprobe(_ file: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffprobe)
        process.arguments = ["-v", "error", "-show_format", "-show_streams", "-of", "json", file.path]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        _ = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ValidationError("ffprobe failed on \(file.path) (status \(process.terminationStatus))")
        }
    }

    static func mediaFiles(in directory: String) throws -> [URL] {
        let extensions: Set = ["mp4", "mov", "mkv", "webm", "ts", "mp3", "flac", "wav", "opus", "m4a", "ogg"]
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        return names.sorted()
            .filter { !$0.hasPrefix(".") && extensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .map { URL(fileURLWithPath: directory).appendingPathComponent($0) }
    }

    private static func format(_ value: Double) -> String { String(format: "%8.1f", value) }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
