import ArgumentParser
import BenchmarkSupport
import Foundation
import GroupSessions
import Logging
import SessionRelay

/// `coplay bench journal`: upload and download throughput of one journal attachment over loopback.
struct BenchJournalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "journal",
        abstract: "Measure journal attachment upload and download throughput over loopback TCP.",
        discussion: """
            Starts a relay in this process on a free loopback port, joins two members, uploads one \
            attachment of --size-mb MiB from the first (sealed in 64 KiB chunks, 16 unacknowledged \
            at most) and loads it on the second (32 chunks requested ahead), then prints both rates. \
            With --data-dir the relay stores the chunks in files there; otherwise in memory.
            """
    )

    @Option(help: "Attachment size in MiB (1...100).")
    var sizeMb: Int = 100

    @Option(help: ArgumentHelp("Let the relay store the attachment under this directory.", valueName: "DIR"))
    var dataDir: String?

    func validate() throws {
        guard (1...100).contains(sizeMb) else { throw ValidationError("--size-mb must be in 1...100") }
    }

    func run() async throws {
        var logger = Logger(label: "coplay.bench.journal")
        logger.logLevel = .warning
        if let dataDir {
            try FileManager.default.createDirectory(
                atPath: dataDir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let result = try await JournalBenchmark.run(size: sizeMb << 20, dataDirectory: dataDir, logger: logger)
        let storage = dataDir == nil ? "memory" : "files in \(dataDir!)"
        print("coplay bench journal: \(sizeMb) MiB attachment, relay storage: \(storage)")
        print(String(format: "upload:   %.1f MiB/s (%.2f s)", result.uploadMegabytesPerSecond,
                     Double(result.size) / 1_048_576 / max(result.uploadMegabytesPerSecond, 1e-9)))
        print(String(format: "download: %.1f MiB/s (%.2f s)", result.downloadMegabytesPerSecond,
                     Double(result.size) / 1_048_576 / max(result.downloadMegabytesPerSecond, 1e-9)))
    }
}
