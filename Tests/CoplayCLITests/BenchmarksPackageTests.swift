import Foundation
import Testing

/// The `Benchmarks/` package (ordo-one/benchmark) is not built by CI (`scripts/bench.sh` does that);
/// these checks load its manifest with the real `swift` toolchain, so a broken manifest or a
/// benchmark target without its directory fails here, cheaply (no resolution, no build).
@Suite("Benchmarks/ package")
struct BenchmarksPackageTests {
    static let benchmarkTargets = ["RelayBenchmarks", "ClockSyncBenchmarks", "MediaProbeBenchmarks", "CoordinatorBenchmarks"]

    /// `swift package dump-package` for the package at `path`, with a scratch directory of its own so
    /// it never waits for the lock of a build running in the same package (this test run's, say).
    static func dumpPackage(_ path: URL) async throws -> [String: Any] {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-dump-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let result = try await CoplayProcess.run(
            ["swift", "package", "--package-path", path.path, "--scratch-path", scratch.path, "dump-package"],
            executable: URL(fileURLWithPath: "/usr/bin/env"), timeout: 300)
        #expect(result.status == 0, "dump-package failed: \(result.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(json as? [String: Any])
    }

    static func targets(_ manifest: [String: Any]) -> [[String: Any]] {
        manifest["targets"] as? [[String: Any]] ?? []
    }

    @Test("the manifest loads and declares every benchmark target with the BenchmarkPlugin and its sources")
    func benchmarkTargetsAreDeclared() async throws {
        let root = CoplayProcess.packageRoot.appendingPathComponent("Benchmarks")
        let manifest = try await Self.dumpPackage(root)
        let targets = Self.targets(manifest)
        #expect(Set(targets.compactMap { $0["name"] as? String }) == Set(Self.benchmarkTargets))
        for target in targets {
            let name = try #require(target["name"] as? String)
            #expect(target["type"] as? String == "executable", "\(name) is not an executable target")
            let plugins = String(describing: target["pluginUsages"] ?? "")
            #expect(plugins.contains("BenchmarkPlugin"), "\(name) does not use the BenchmarkPlugin")
            let source = root.appendingPathComponent("Benchmarks/\(name)/\(name).swift")
            #expect(FileManager.default.fileExists(atPath: source.path), "missing \(source.path)")
        }
        // The root package by path, and ordo-one/benchmark pinned with the MallocInterposer trait only.
        let dependencies = String(describing: manifest["dependencies"] ?? "")
        #expect(dependencies.contains("benchmark"))
        #expect(dependencies.contains("1.38.1"))
        #expect(dependencies.contains("MallocInterposer"))
        #expect(!dependencies.contains("RuntimeInterposer"))
    }

    @Test("the root package has no target in Benchmarks/")
    func rootPackageDoesNotSeeBenchmarks() async throws {
        let manifest = try await Self.dumpPackage(CoplayProcess.packageRoot)
        let targets = Self.targets(manifest)
        #expect(!targets.isEmpty)
        for target in targets {
            let name = target["name"] as? String ?? "?"
            let path = target["path"] as? String ?? ""
            #expect(!path.hasPrefix("Benchmarks"), "\(name) lives in Benchmarks/")
            #expect(!Self.benchmarkTargets.contains(name))
        }
    }
}
