import ClockSync
import CoreMetrics
import GroupSessions
import NIOSSL

/// How a ``RelayServer`` listens and what it allows.
///
/// ```swift
/// var configuration = RelayConfiguration(host: "127.0.0.1", port: 7000)
/// configuration.limits.ratePerSecond = 500
/// ```
public struct RelayConfiguration: Sendable {
    /// Address to bind (`127.0.0.1`, `0.0.0.0`, `::`).
    public var host: String
    /// TCP port; 0 picks a free one (read it back with ``RelayServer/localAddress()``).
    public var port: Int
    /// TLS for every connection, or `nil` for plain TCP.
    public var tls: NIOSSLContext?
    /// Routing limits (payload size, rate, connections, members, retained keys).
    public var limits: HubLimits
    /// Largest frame the decoder accepts; a larger announcement closes the connection.
    public var maximumFrameLength: Int
    /// Bytes queued for one recipient above which unreliable frames to it are dropped.
    public var outboxSoftLimit: Int
    /// Bytes queued for one recipient above which it is disconnected as a slow consumer.
    public var outboxHardLimit: Int
    /// A directory the relay keeps session state and journal attachments in, so they survive a
    /// restart; `nil` keeps everything in memory. Everything stored there is either sealed by the
    /// members (payloads, attachments) or opaque to the relay (hashes, sequence numbers).
    public var dataDirectory: String?
    /// A session store of the application's own (tests and benchmarks inject slow or failing
    /// ones; a database-backed one would go here); it takes precedence over ``dataDirectory`` for
    /// session state (journal attachments still follow ``dataDirectory``).
    public var store: (any SessionPersistence)?
    /// The browser client's files, served over HTTP on the relay's port; `nil` serves none (the
    /// WebSocket endpoint `/ws` is there either way).
    public var webClient: WebClientFiles?
    /// The NTP timescale in-band time requests are answered on; give the relay's UDP time server
    /// the same one, so both serve one clock.
    public var timescale = LocalTimescale(clock: ContinuousClock())
    /// Where the relay's metrics go (swift-metrics): `coplay serve --metrics` passes
    /// ``RelayPrometheus/factory``; the default is the process-wide `MetricsSystem.factory`.
    public var metricsFactory: any MetricsFactory = MetricsSystem.factory

    /// Creates a configuration with the protocol's default limits.
    public init(
        host: String = "127.0.0.1", port: Int = 7000, tls: NIOSSLContext? = nil, limits: HubLimits = HubLimits(),
        maximumFrameLength: Int = FrameCodec.defaultMaximumFrameLength,
        outboxSoftLimit: Int = 4 << 20, outboxHardLimit: Int = 64 << 20, dataDirectory: String? = nil
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.limits = limits
        self.maximumFrameLength = maximumFrameLength
        self.outboxSoftLimit = outboxSoftLimit
        self.outboxHardLimit = outboxHardLimit
        self.dataDirectory = dataDirectory
    }
}
