import NIOCore
import NIOPosix
import Synchronization

/// A TCP proxy on loopback in front of a relay whose current connections a test can freeze:
/// a frozen connection forwards nothing in either direction (bytes are read and discarded) and
/// keeps both sockets open, even when one end closes. That is a path that silently stopped
/// delivering (a sleeping NAT, a cable pulled upstream): TCP on either side sees nothing wrong.
/// Connections made after a freeze are forwarded normally.
final class FreezableProxy: Sendable {
    /// One proxied connection's switch.
    final class Path: Sendable {
        private let frozen = Atomic(false)
        var isFrozen: Bool { frozen.load(ordering: .relaxed) }
        func freeze() { frozen.store(true, ordering: .relaxed) }
    }

    let port: Int
    private let paths = Mutex<[Path]>([])
    private let task: Mutex<Task<Void, Never>?> = Mutex(nil)

    private init(port: Int) { self.port = port }

    /// Connections accepted so far.
    var connectionCount: Int { paths.withLock { $0.count } }

    /// Freezes every connection open now; returns how many.
    @discardableResult
    func freezeAll() -> Int {
        paths.withLock { paths in
            for path in paths { path.freeze() }
            return paths.count
        }
    }

    /// Starts a proxy to `127.0.0.1:targetPort` on a free port.
    static func start(targetPort: Int) async throws -> FreezableProxy {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .bind(host: "127.0.0.1", port: 0) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        let proxy = FreezableProxy(port: server.channel.localAddress!.port!)
        proxy.task.withLock {
            $0 = Task {
                try? await withThrowingDiscardingTaskGroup { group in
                    try await server.executeThenClose { inbound in
                        for try await client in inbound {
                            let path = Path()
                            proxy.paths.withLock { $0.append(path) }
                            group.addTask { await Self.forward(client, to: targetPort, path: path) }
                        }
                    }
                }
            }
        }
        return proxy
    }

    private static func forward(_ client: NIOAsyncChannel<ByteBuffer, ByteBuffer>, to port: Int, path: Path) async {
        do {
            let upstream = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: "127.0.0.1", port: port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                    }
                }
            try await client.executeThenClose { clientIn, clientOut in
                try await upstream.executeThenClose { upstreamIn, upstreamOut in
                    await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for try await bytes in clientIn where !path.isFrozen { try await upstreamOut.write(bytes) }
                        }
                        group.addTask {
                            for try await bytes in upstreamIn where !path.isFrozen { try await clientOut.write(bytes) }
                        }
                        _ = try? await group.next()
                        // A frozen path does not pass a close on either: hold the other end
                        // open until the proxy stops.
                        while path.isFrozen && !Task.isCancelled {
                            try? await Task.sleep(for: .milliseconds(100))
                        }
                        group.cancelAll()
                    }
                }
            }
        } catch {}
    }

    /// Stops accepting and closes every connection.
    func stop() {
        task.withLock { $0?.cancel() }
    }
}
