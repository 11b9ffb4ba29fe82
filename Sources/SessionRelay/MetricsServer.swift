import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The relay's Prometheus endpoint: `GET /metrics` (or `/`) answers the text exposition of a
/// ``RelayPrometheus`` registry, brought up to date with ``RelayServer/updateMetrics()`` first.
///
/// HTTP/1.1 through swift-nio's codec (keep-alive, pipelining, 400 for malformed requests); a
/// connection that sends nothing for ``readTimeout`` is closed, so idle or stalled scrapers cannot
/// pile up. Other paths get 404, other methods 405.
///
/// ```swift
/// let prometheus = RelayPrometheus()
/// configuration.metricsFactory = prometheus.factory
/// let relay = RelayServer(configuration: configuration, logger: logger)
/// let metrics = MetricsServer(host: "127.0.0.1", port: 9100, relay: relay, prometheus: prometheus, logger: logger)
/// // run both in a ServiceGroup
/// ```
public final class MetricsServer: Service, Sendable {
    /// How long a connection may stay silent.
    public static let readTimeout = TimeAmount.seconds(10)

    private let host: String
    private let port: Int
    private let relay: RelayServer
    private let prometheus: RelayPrometheus
    private let logger: Logger
    private let bound = Mutex<(port: Int?, waiters: [CheckedContinuation<Int, any Error>])>((nil, []))

    /// Creates a metrics endpoint for `relay` at `host:port` (0 picks a free port).
    ///
    /// - Parameters:
    ///   - host: the address to listen on.
    ///   - port: the TCP port (0 picks a free one; ``boundPort()`` tells which).
    ///   - relay: the relay whose counters are served.
    ///   - prometheus: the registry `relay`'s ``RelayConfiguration/metricsFactory`` writes to.
    ///   - logger: where the endpoint logs.
    public init(host: String, port: Int, relay: RelayServer, prometheus: RelayPrometheus, logger: Logger) {
        self.host = host
        self.port = port
        self.relay = relay
        self.prometheus = prometheus
        self.logger = logger
    }

    /// The bound port, once listening.
    public func boundPort() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let port = bound.withLock { state -> Int? in
                if let port = state.port { return port }
                state.waiters.append(continuation)
                return nil
            }
            if let port { continuation.resume(returning: port) }
        }
    }

    /// Serves until cancelled or gracefully shut down.
    public func run() async throws {
        let scrape: @Sendable () -> [UInt8] = { [relay, prometheus] in
            relay.updateMetrics()
            return prometheus.exposition()
        }
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let sync = channel.pipeline.syncOperations
                        try sync.addHandler(IdleStateHandler(readTimeout: Self.readTimeout))
                        try sync.configureHTTPServerPipeline(withErrorHandling: true)
                        try sync.addHandler(MetricsHandler(scrape: scrape))
                    }
                }
                .bind(host: host, port: port)
                .get()
        } catch {
            settle(.failure(error))
            throw error
        }
        let port = channel.localAddress?.port ?? self.port
        settle(.success(port))
        logger.info("metrics listening", metadata: ["address": "\(host):\(port)"])
        try await withGracefulShutdownHandler {
            try await withTaskCancellationHandler {
                try await channel.closeFuture.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } onGracefulShutdown: {
            channel.close(promise: nil)
        }
    }

    private func settle(_ result: Result<Int, any Error>) {
        let waiters = bound.withLock { state in
            if case .success(let port) = result { state.port = port }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}

/// Answers one request at a time (the pipelining handler in front serialises them).
private final class MetricsHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let scrape: @Sendable () -> [UInt8]
    private var head: HTTPRequestHead?

    init(scrape: @escaping @Sendable () -> [UInt8]) {
        self.scrape = scrape
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
        case .body:
            break
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = request.uri.prefix { $0 != "?" }
        let status: HTTPResponseStatus
        let body: ByteBuffer
        var headers = HTTPHeaders()
        if request.method != .GET && request.method != .HEAD {
            status = .methodNotAllowed
            headers.add(name: "Allow", value: "GET, HEAD")
            body = ByteBuffer(string: "method not allowed\n")
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        } else if path == "/metrics" || path == "/" {
            status = .ok
            body = ByteBuffer(bytes: scrape())
            headers.add(name: "Content-Type", value: "text/plain; version=0.0.4; charset=utf-8")
        } else {
            status = .notFound
            body = ByteBuffer(string: "not found: the metrics are at /metrics\n")
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        headers.add(name: "Content-Length", value: "\(body.readableBytes)")
        let keepAlive = request.isKeepAlive
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if request.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
