import Foundation
import MediaProbe
import TestSupport
import Testing

/// Thousands of mutated and truncated samples through the full probe (with packet scan): every one
/// ends in a `MediaInfo` or a `MediaProbeError`, never a crash, a hang or another error type, and
/// no file descriptors or memory pile up.
@Suite("MediaProbe on mutated input")
struct MutatedInputTests {
    static let seed: UInt64 = 0xC0FFEE
    static let cases = 4000
    static let workers = 4

    static func mutate(_ input: Data, with other: Data, rng: inout SplitMix64) -> (Data, String) {
        var bytes = [UInt8](input)
        let kind = Int.random(in: 0..<100, using: &rng)
        switch kind {
        case 0..<30:
            let length = Int.random(in: 0..<bytes.count, using: &rng)
            return (Data(bytes.prefix(length)), "truncate to \(length)")
        case 30..<60:
            let flips = Int.random(in: 1...32, using: &rng)
            for _ in 0..<flips { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng) }
            // Favour the header, where parsers branch most.
            for _ in 0..<flips { bytes[Int.random(in: 0..<min(bytes.count, 4096), using: &rng)] ^= UInt8.random(in: 1...255, using: &rng) }
            return (Data(bytes), "flip \(2 * flips) bytes")
        case 60..<75:
            let start = Int.random(in: 0..<bytes.count, using: &rng)
            let end = min(bytes.count, start + Int.random(in: 1...4096, using: &rng))
            for i in start..<end { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
            return (Data(bytes), "randomise \(start)..<\(end)")
        case 75..<85:
            let start = Int.random(in: 0..<bytes.count, using: &rng)
            let end = min(bytes.count, start + Int.random(in: 1...65536, using: &rng))
            for i in start..<end { bytes[i] = (kind & 1) == 0 ? 0 : 0xFF }
            return (Data(bytes), "fill \(start)..<\(end)")
        case 85..<95:
            let at = Int.random(in: 0..<bytes.count, using: &rng)
            let from = Int.random(in: 0..<other.count, using: &rng)
            let chunk = other[other.startIndex + from..<other.startIndex + min(other.count, from + Int.random(in: 1...8192, using: &rng))]
            bytes.insert(contentsOf: chunk, at: at)
            return (Data(bytes), "splice \(chunk.count) foreign bytes at \(at)")
        default:
            let start = Int.random(in: 0..<bytes.count, using: &rng)
            let end = min(bytes.count, start + Int.random(in: 1...16384, using: &rng))
            bytes.insert(contentsOf: bytes[start..<end], at: Int.random(in: 0...bytes.count, using: &rng))
            return (Data(bytes), "duplicate \(start)..<\(end)")
        }
    }

    static func openFileDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test("mutated and truncated samples never crash the probe, leak descriptors or pile up memory")
    func mutatedSamples() async throws {
        let sources = try Samples.names.map { try Data(contentsOf: Samples.url($0)) }
        let dir = try Samples.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let options = MediaProbe.Options(scanPackets: true, timeout: .seconds(30))

        struct Outcome: Sendable {
            var probed = 0, rejected = 0
            var byCode: [String: Int] = [:]
            var unexpected: [String] = []
        }

        func runBatch(_ range: Range<Int>) async -> Outcome {
            await withTaskGroup(of: Outcome.self) { group in
                for worker in 0..<Self.workers {
                    group.addTask {
                        var outcome = Outcome()
                        let file = dir.appendingPathComponent("mutant-\(worker)")
                        for index in range where index % Self.workers == worker {
                            var rng = SplitMix64(seed: Self.seed &+ UInt64(index))
                            let source = Int.random(in: 0..<sources.count, using: &rng)
                            let other = sources[Int.random(in: 0..<sources.count, using: &rng)]
                            let (bytes, what) = Self.mutate(sources[source], with: other, rng: &rng)
                            let label = "case \(index) (seed \(Self.seed)+\(index)): \(Samples.names[source]) \(what)"
                            do {
                                try bytes.write(to: file)
                                let info = try await MediaProbe.shared.probe(file, options: options)
                                outcome.probed += 1
                                if info.streams.isEmpty { outcome.unexpected.append("\(label): succeeded with no streams") }
                            } catch let error as MediaProbeError {
                                outcome.rejected += 1
                                outcome.byCode[error.code.description, default: 0] += 1
                                if error.code == .timedOut || error.description.isEmpty { outcome.unexpected.append("\(label): \(error)") }
                            } catch {
                                outcome.unexpected.append("\(label): unexpected \(type(of: error)): \(error)")
                            }
                        }
                        return outcome
                    }
                }
                var total = Outcome()
                for await part in group {
                    total.probed += part.probed
                    total.rejected += part.rejected
                    total.byCode.merge(part.byCode, uniquingKeysWith: +)
                    total.unexpected += part.unexpected
                }
                return total
            }
        }

        let warmUp = Self.cases / 8
        let first = await runBatch(0..<warmUp)
        let descriptorsBefore = Self.openFileDescriptors()
        let memoryBefore = Self.residentBytes()
        let rest = await runBatch(warmUp..<Self.cases)
        let descriptorsAfter = Self.openFileDescriptors()
        let memoryAfter = Self.residentBytes()

        let probed = first.probed + rest.probed
        let rejected = first.rejected + rest.rejected
        let byCode = first.byCode.merging(rest.byCode, uniquingKeysWith: +)
        print("MutatedInputTests: \(Self.cases) mutants: \(probed) probed, \(rejected) rejected \(byCode.sorted { $0.key < $1.key }); descriptors \(descriptorsBefore) -> \(descriptorsAfter); resident \(memoryBefore >> 20) -> \(memoryAfter >> 20) MiB")
        #expect(probed + rejected == Self.cases)
        #expect(first.unexpected + rest.unexpected == [])
        // The run exercised both paths: many mutants still parse, many are rejected.
        #expect(probed > Self.cases / 10, "probed \(probed), rejected \(rejected): \(byCode)")
        #expect(rejected > Self.cases / 20, "probed \(probed), rejected \(rejected): \(byCode)")
        // No descriptor leaks (other suites run in parallel and may hold a few for a moment).
        #expect(descriptorsAfter <= descriptorsBefore + 8, "descriptors \(descriptorsBefore) -> \(descriptorsAfter)")
        // A leaked format context costs hundreds of kilobytes; 2000 of them would show far above this bound.
        #expect(memoryAfter - memoryBefore < 96 << 20, "resident memory \(memoryBefore >> 20) MiB -> \(memoryAfter >> 20) MiB")
    }
}
