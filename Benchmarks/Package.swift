// swift-tools-version: 6.2
import PackageDescription

/// coplay's benchmarks (ordo-one/benchmark), a package of their own so the root package's
/// `swift build` and `swift test` never build them. Run with `swift package benchmark`.
///
/// The `MallocInterposer` trait alone: the default `RuntimeInterposer` trait needs a package
/// that is not part of coplay's dependency set, and jemalloc is not installed.
let benchmarkTarget: (String, [Target.Dependency]) -> Target = { name, dependencies in
    .executableTarget(
        name: name,
        dependencies: [.product(name: "Benchmark", package: "benchmark")] + dependencies,
        path: "Benchmarks/\(name)",
        swiftSettings: [.treatAllWarnings(as: .error)],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "coplay-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "coplay", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        benchmarkTarget("RelayBenchmarks", [
            .product(name: "SessionRelay", package: "coplay"),
            .product(name: "GroupSessions", package: "coplay"),
            .product(name: "BenchmarkSupport", package: "coplay"),
            .product(name: "Logging", package: "swift-log"),
            // The relay child reports its live heap from the interposer's counters.
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
        ]),
        benchmarkTarget("ClockSyncBenchmarks", [
            .product(name: "ClockSync", package: "coplay"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        benchmarkTarget("MediaProbeBenchmarks", [
            .product(name: "MediaProbe", package: "coplay"),
        ]),
        benchmarkTarget("CoordinatorBenchmarks", [
            .product(name: "PlaybackCoordinator", package: "coplay"),
        ]),
    ]
)
