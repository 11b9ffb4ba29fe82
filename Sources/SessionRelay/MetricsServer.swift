import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// A minimal HTTP/1.1 endpoint serving a ``RelayServer``'s ``RelayMetrics`` as Prometheus text
/// on `GET /metrics` (any other path: 404). One request per connection.
///
/// ```swift
/// let metrics = MetricsServer(host: "127.0.0.1", port: 9100, relay: relay, logger: logger)
/// // add both to a ServiceGroup
/// ```
public final class MetricsServer: Service, Sendable {
    private let host: String
    private let port: Int
    private let relay: RelayServer
    private let logger: Logger
    private let bound = Mutex<(port: Int?, waiters: [CheckedContinuation<Int, any Error>])>((nil, []))

    /// Creates a metrics endpoint for `relay` at `host:port` (0 picks a free port).
    public init(host: String, port: Int, relay: RelayServer, logger: Logger) {
        self.host = host
        self.port = port
        self.relay = relay
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
        let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            let waiters = bound.withLock { state in
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(throwing: error) }
            throw error
        }
        let port = server.channel.localAddress?.port ?? self.port
        let waiters = bound.withLock { state in
            state.port = port
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port) }
        logger.info("metrics listening", metadata: ["address": "\(host):\(port)"])
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            server.channel.close(promise: nil)
        }
    }

    private func serve(_ channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        try? await channel.executeThenClose { inbound, outbound in
            var request = ByteBuffer()
            for try await chunk in inbound {
                var chunk = chunk
                request.writeBuffer(&chunk)
                if request.readableBytesView.firstRange(of: Array("\r\n\r\n".utf8)) != nil || request.readableBytes > 8192 {
                    break
                }
            }
            let line = String(decoding: request.readableBytesView.prefix { $0 != 0x0D }, as: UTF8.self)
            let parts = line.split(separator: " ")
            let ok = parts.count >= 2 && parts[0] == "GET" && (parts[1] == "/metrics" || parts[1] == "/")
            let body = ok ? relay.metrics.prometheusText : "not found\n"
            let head =
                "HTTP/1.1 \(ok ? "200 OK" : "404 Not Found")\r\n"
                + "Content-Type: \(ok ? "text/plain; version=0.0.4" : "text/plain")\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
            try await outbound.write(ByteBuffer(string: head + body))
            outbound.finish()
        }
    }
}
