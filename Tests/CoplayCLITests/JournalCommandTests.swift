import Foundation
import Testing

@Suite("coplay bench journal and serve --journal-quota (real binary)", .timeLimit(.minutes(5)))
struct JournalCommandTests {
    @Test("bench journal moves an attachment through a relay and prints both rates; the data dir is left empty")
    func benchJournal() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let result = try await CoplayProcess.run(["bench", "journal", "--size-mb", "3", "--data-dir", directory], timeout: 240)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("3 MiB attachment, relay storage: files in \(directory)"))
        #expect(result.stdout.contains("upload:") && result.stdout.contains("download:"))
        #expect(result.stdout.contains("MiB/s"))
        let sessions = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/sessions")) ?? []
        #expect(sessions.isEmpty, "the journal is deleted with the session")
    }

    @Test("bad sizes and quotas are usage errors", arguments: [
        ["bench", "journal", "--size-mb", "0"],
        ["bench", "journal", "--size-mb", "101"],
        ["serve", "--journal-quota=-1"],
    ])
    func badInput(arguments: [String]) async throws {
        let result = try await CoplayProcess.run(arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains("--size-mb must be in 1...100") || result.stderr.contains("--journal-quota must be"))
    }
}
