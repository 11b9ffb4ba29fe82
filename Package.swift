// swift-tools-version: 6.2
import PackageDescription

/// Settings shared by every coplay target: Swift 6 language mode, warnings are errors.
let strict: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "coplay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "coplay", targets: ["coplay"]),
        .library(name: "ClockSync", targets: ["ClockSync"]),
        .library(name: "MediaProbe", targets: ["MediaProbe"]),
        .library(name: "GroupSessions", targets: ["GroupSessions"]),
        .library(name: "SessionRelay", targets: ["SessionRelay"]),
        .library(name: "SessionRelayPostgres", targets: ["SessionRelayPostgres"]),
        .library(name: "PlaybackCoordinator", targets: ["PlaybackCoordinator"]),
        .library(name: "MPVControl", targets: ["MPVControl"]),
        .library(name: "GroupChat", targets: ["GroupChat"]),
        // Not an API: load generators and simulations for coplay's own `Benchmarks/` package and
        // `coplay bench` (a product only because `Benchmarks/` is a separate package; only what it uses,
        // `RelayBenchmark`, is public, the rest `package`). No stability promise.
        .library(name: "BenchmarkSupport", targets: ["BenchmarkSupport"]),
        // NetworkEmulation and SyncBench are parts of `coplay bench`, not products (`package` access).
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // `swift package generate-documentation` (DocC catalogs in Sources/<Module>/<Module>.docc); a plugin only.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // MARK: Libraries
        // The one token bucket (`package` access), under ClockSync's and GroupSessions' rate limits; not a product.
        .target(
            name: "RateLimiting",
            swiftSettings: strict
        ),
        .target(
            name: "ClockSync",
            dependencies: [
                "RateLimiting",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]
        ),
        .systemLibrary(name: "CLinuxEpoll"),
        .target(
            name: "MediaProbe",
            dependencies: [
                "CFFmpeg",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "GroupSessions",
            dependencies: [
                "RateLimiting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The browser client (HTML, CSS, JavaScript modules) as resources the relay serves.
        .target(
            name: "WebClient",
            path: "Web",
            exclude: ["README.md"],
            sources: ["WebClient.swift"],
            resources: [.copy("static")],
            swiftSettings: strict
        ),
        .target(
            name: "SessionRelay",
            dependencies: [
                "GroupSessions",
                "ClockSync",
                "WebClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        // The relay's PostgreSQL session store (a fleet of relay nodes as one service); a separate
        // target so that SessionRelay's users do not pull in postgres-nio.
        .target(
            name: "SessionRelayPostgres",
            dependencies: [
                "SessionRelay",
                "GroupSessions",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "PlaybackCoordinator",
            dependencies: [
                "GroupSessions",
                "ClockSync",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Members' signing keys (names bound to keys) and the end-to-end encrypted, signed chat.
        .target(
            name: "GroupChat",
            dependencies: [
                "GroupSessions",
                // Roles: the signed coordination messages and the channel's gate (the coordinator
                // itself knows nothing of keys; PlaybackCoordinator does not depend on GroupChat).
                "PlaybackCoordinator",
                "RateLimiting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // mpv as a coordinated player: its JSON IPC, the process, the adapter.
        .target(
            name: "MPVControl",
            dependencies: [
                "PlaybackCoordinator",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            swiftSettings: strict
        ),
        // MARK: Benchmarks and simulations (not a public API)
        // Load generators, simulated groups, order statistics: used by `coplay bench`, `Benchmarks/`
        // and the tests, never by the libraries above nor by a member's path in `coplay` (host, join,
        // control, chat, serve); the drifting clock of `--clock-drift-ppm` is ClockSync's.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "CLinuxEpoll",
                "GroupSessions",
                "SessionRelay",
                "PlaybackCoordinator",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "NetworkEmulation",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .target(
            name: "SyncBench",
            dependencies: [
                "BenchmarkSupport",
                "NetworkEmulation",
                "MPVControl",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "coplay",
            dependencies: [
                "ClockSync",
                "MediaProbe",
                "GroupSessions",
                "SessionRelay",
                "SessionRelayPostgres",
                "PlaybackCoordinator",
                "MPVControl",
                "GroupChat",
                "NetworkEmulation",
                "SyncBench",
                "BenchmarkSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),

        // MARK: Tests
        // Helpers shared by the test targets (a lock box, a stream collector, `eventually`, `freePort()`,
        // the seeded generator `SplitMix64`, vector files, child processes, test activities).
        .target(
            name: "TestSupport",
            dependencies: [
                "GroupSessions", .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "ClockSyncTests",
            dependencies: ["ClockSync", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MediaProbeTests",
            dependencies: ["MediaProbe", "TestSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroupSessionsTests",
            dependencies: [
                "GroupSessions", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SessionRelayTests",
            dependencies: [
                "SessionRelay",
                "GroupSessions",
                "ClockSync",
                "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SessionRelayPostgresTests",
            dependencies: [
                "SessionRelayPostgres", "SessionRelay", "GroupSessions", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PlaybackCoordinatorTests",
            dependencies: [
                "PlaybackCoordinator", "ClockSync", "GroupSessions", "TestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "PlaybackIntegrationTests",
            dependencies: [
                "PlaybackCoordinator", "ClockSync", "GroupSessions", "SessionRelay", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MPVControlTests",
            dependencies: ["MPVControl", "PlaybackCoordinator", "TestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "NetworkEmulationTests",
            dependencies: [
                "NetworkEmulation", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SyncBenchTests",
            dependencies: ["SyncBench", "BenchmarkSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RateLimitingTests",
            dependencies: ["RateLimiting", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "BenchmarkSupportTests",
            dependencies: ["BenchmarkSupport", .product(name: "PropertyBased", package: "swift-property-based")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GroupChatTests",
            dependencies: [
                "GroupChat", "GroupSessions", "PlaybackCoordinator", "SessionRelay", "TestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "CoplayCLITests",
            dependencies: ["MPVControl", "TestSupport", "GroupChat", "GroupSessions", "PlaybackCoordinator"],
            swiftSettings: strict
        ),
    ]
)
