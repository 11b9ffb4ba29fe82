import Foundation
import GroupSessions
import Logging
import SessionRelay

/// Measures journal transfers end to end: an in-process `RelayServer` on a loopback port, one
/// member uploading an attachment over TCP and another downloading it (`coplay bench journal`).
///
/// The figures include everything a real member pays: sealing and opening every chunk
/// (ChaCha20-Poly1305), SHA-256 of the whole attachment, framing, the relay's storage (memory,
/// or files under a data directory) and the flow-control windows.
///
/// ```swift
/// let result = try await JournalBenchmark.run(size: 100 << 20, dataDirectory: nil, logger: logger)
/// print(result.uploadMegabytesPerSecond, result.downloadMegabytesPerSecond)
/// ```
package enum JournalBenchmark {
    /// What one run measured.
    package struct Result: Sendable {
        /// Attachment size in bytes.
        package var size: Int
        /// From `add` called to `add` returned (the relay stored every chunk and announced it).
        package var upload: Duration
        /// From the first chunk requested to the last one opened and the digest checked.
        package var download: Duration

        /// Upload throughput in MiB/s.
        package var uploadMegabytesPerSecond: Double { Self.rate(size, upload) }
        /// Download throughput in MiB/s.
        package var downloadMegabytesPerSecond: Double { Self.rate(size, download) }

        static func rate(_ bytes: Int, _ duration: Duration) -> Double {
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
            return seconds > 0 ? Double(bytes) / 1_048_576 / seconds : 0
        }
    }

    private struct Bench: GroupActivity {
        static let activityIdentifier = "org.coplay.bench.journal"
        var metadata: GroupActivityMetadata { GroupActivityMetadata(title: "journal bench") }
    }

    /// Runs one upload and one download of `size` pseudo-random bytes.
    ///
    /// - Parameters:
    ///   - size: Attachment size in bytes (at most `GroupSessionJournal.maximumAttachmentSize`).
    ///   - dataDirectory: Where the relay stores the attachment, or `nil` for memory.
    ///   - logger: Where the relay and the members log.
    /// - Throws: If the relay cannot start or a transfer fails; a transfer that does not return
    ///   the uploaded bytes throws too.
    package static func run(size: Int, dataDirectory: String?, logger: Logger) async throws -> Result {
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = dataDirectory
        configuration.limits.journal.quota = max(configuration.limits.journal.quota, size * 2)
        let relay = RelayServer(configuration: configuration, logger: logger)
        let server = Task { try await relay.run() }
        defer { server.cancel() }
        let port = try await relay.boundPort()
        let center = GroupActivityCenter<Bench>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: logger)
        let invite = Invite.generate(host: "127.0.0.1", port: port)
        let uploader = try await center.activate(Bench(), invite: invite)
        try await uploader.join()
        let downloader = try await center.accept(invite)
        try await downloader.join()
        let content = pseudoRandomBytes(size)
        let clock = ContinuousClock()
        let start = clock.now
        let attachment = try await GroupSessionJournal(session: uploader).add(content, label: "bench")
        let upload = start.duration(to: clock.now)
        let loadStart = clock.now
        let loaded = try await GroupSessionJournal(session: downloader).load(attachment)
        let download = loadStart.duration(to: clock.now)
        uploader.leave()
        downloader.leave()
        // Let the relay see both leave, so it deletes the session's journal (files included).
        let deadline = clock.now + .seconds(10)
        // The count drops when the hub forgets the session; its files go just after (a loaded machine
        // showed the directory still there), so with a data directory wait for that too.
        let sessions = dataDirectory.map { $0 + "/sessions" }
        func filesRemain() -> Bool {
            guard let sessions else { return false }
            return !((try? FileManager.default.contentsOfDirectory(atPath: sessions)) ?? []).isEmpty
        }
        while (relay.metrics.sessions > 0 || filesRemain()) && clock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        guard loaded == content else { throw GroupSessionError.protocolViolation("the downloaded attachment differs") }
        return Result(size: size, upload: upload, download: download)
    }

    static func pseudoRandomBytes(_ count: Int) -> Data {
        var data = Data(count: (count + 7) / 8 * 8)
        data.withUnsafeMutableBytes { raw in
            var state: UInt64 = 0x9E37_79B9_7F4A_7C15
            for i in raw.bindMemory(to: UInt64.self).indices {
                state ^= state >> 12
                state ^= state << 25
                state ^= state >> 27
                raw.storeBytes(of: state &* 2_685_821_657_736_338_717, toByteOffset: i * 8, as: UInt64.self)
            }
        }
        return data.prefix(count)
    }
}
