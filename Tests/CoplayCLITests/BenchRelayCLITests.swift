import Foundation
import Testing

/// `coplay bench relay` end to end, small: the figures are printed, and `--serve-arg` reaches the
/// relay child (here a `--data-dir`, which the relay then fills).
@Suite("coplay bench relay")
struct BenchRelayCLITests {
    @Test("a small run prints every figure; --serve-arg passes options to the relay (a data directory it writes)", .timeLimit(.minutes(3)))
    func smallRunWithStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-bench-relay-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try await CoplayProcess.run(
            [
                "bench", "relay", "--connections", "20", "--members", "4", "--latency-messages", "3", "--latency-interval-ms", "20",
                "--receivers", "2", "--messages", "200", "--serve-arg", "--data-dir", "--serve-arg", directory.path,
            ], timeout: 120)
        #expect(result.status == 0, "\(result.stderr)")
        for figure in ["forwarding:", "session assembly:", "fan-out latency", "fan-out completion", "connections held:", "relay memory:"] {
            #expect(result.stdout.contains(figure), "no \(figure) in \(result.stdout)")
        }
        // Every one of the 3 stamped messages reached every receiver and has its completion time.
        let completion = result.stdout.split(separator: "\n").first { $0.hasPrefix("fan-out completion") }
        #expect(completion?.hasSuffix(" of 3)") == true, "\(completion ?? "none")")
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!stored.isEmpty, "the relay child wrote nothing to its --data-dir")
    }

    @Test("--serve-arg values the relay refuses make the run fail with the relay's message")
    func badServeArgument() async throws {
        let result = try await CoplayProcess.run(["bench", "relay", "--serve-arg", "--store", "--serve-arg", "mysql://nope"], timeout: 60)
        #expect(result.status != 0)
    }
}
