import Logging
import NIOCore
import NIOPosix
import Synchronization

/// The real ``NTPTransport``: a UDP socket (SwiftNIO) talking to one NTP server.
///
/// T1 is stamped on the channel's event loop just before the datagram is written, and T4 is the first
/// thing done when the response is read, refined on Linux by the kernel's arrival time of the datagram
/// (`SIOCGSTAMPNS`), both on the ``LocalTimescale`` given at creation. Responses
/// from other addresses or for unknown requests are ignored.
///
/// ```swift
/// let timescale = LocalTimescale(clock: ContinuousClock())
/// let transport = try await UDPTimeTransport.connect(host: "127.0.0.1", port: 12123, timescale: timescale)
/// defer { Task { await transport.close() } }
/// let exchange = try await transport.exchange(request, timeout: .seconds(1))
/// ```
public final class UDPTimeTransport<C: Clock>: NTPTransport, Sendable where C.Duration == Duration {
    private let channel: any Channel
    private let server: SocketAddress
    private let timescale: LocalTimescale<C>
    private let pending: PendingExchanges
    private let socket: NIOBSDSocket.Handle

    private init(
        channel: any Channel, server: SocketAddress, timescale: LocalTimescale<C>,
        pending: PendingExchanges, socket: NIOBSDSocket.Handle
    ) {
        self.socket = socket
        self.channel = channel
        self.server = server
        self.timescale = timescale
        self.pending = pending
    }

    /// Opens a UDP socket for talking to `host:port`.
    ///
    /// - Parameters:
    ///   - host: The server's address (numeric or a resolvable name).
    ///   - port: The server's UDP port.
    ///   - timescale: The local timescale T1 and T4 are taken on.
    ///   - localHost: The local address to bind; `0.0.0.0` (or `::` for IPv6 servers) by default.
    ///   - eventLoopGroup: The event loops to use.
    /// - Throws: When the address cannot be resolved or the socket cannot be bound.
    public static func connect(
        host: String,
        port: Int,
        timescale: LocalTimescale<C>,
        localHost: String? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> UDPTimeTransport {
        let server = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let pending = PendingExchanges()
        let bindHost: String
        if let localHost {
            bindHost = localHost
        } else if case .v6 = server {
            bindHost = "::"
        } else {
            bindHost = "0.0.0.0"
        }
        let fd = try KernelTimestamps.makeBoundSocket(SocketAddress.makeAddressResolvingHost(bindHost, port: 0))
        let channel = try await DatagramBootstrap(group: eventLoopGroup)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        TimeClientHandler(server: server, timescale: timescale, pending: pending, socket: fd)
                    )
                }
            }
            .withBoundSocket(fd)
            .get()
        return UDPTimeTransport(channel: channel, server: server, timescale: timescale, pending: pending, socket: fd)
    }

    public func exchange(_ request: NTPPacket, timeout: Duration) async throws -> NTPExchange? {
        let key = request.transmitTimestamp
        let bytes = request.encoded()
        let channel = self.channel
        let server = self.server
        let timescale = self.timescale
        let pending = self.pending
        let fd = self.socket
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<NTPExchange?, any Error>) in
                pending.register(key, continuation)
                channel.eventLoop.execute {
                    // After close() NIO has closed the descriptor: never write to it directly.
                    guard channel.isActive else {
                        pending.resolve(key, with: .failure(ChannelError.ioOnClosedChannel))
                        return
                    }
                    // T1 as late as possible: stamped right before a direct sendto on the event loop
                    // (falling back to a NIO write if the kernel does not take the datagram at once).
                    var payload = bytes
                    let direct = KernelTimestamps.send(fd, to: server, bytes: &payload) { _ in
                        pending.setSent(key, timescale.now())
                    }
                    if !direct {
                        var buffer = channel.allocator.buffer(capacity: bytes.count)
                        buffer.writeBytes(bytes)
                        pending.setSent(key, timescale.now())
                        channel.writeAndFlush(AddressedEnvelope(remoteAddress: server, data: buffer)).whenFailure { error in
                            pending.resolve(key, with: .failure(error))
                        }
                    }
                    let nanoseconds = Int64(timeout.components.seconds) * 1_000_000_000
                        + timeout.components.attoseconds / 1_000_000_000
                    channel.eventLoop.scheduleTask(in: .nanoseconds(max(0, nanoseconds))) {
                        pending.resolve(key, with: .success(nil))
                    }
                }
            }
        } onCancel: {
            pending.resolve(key, with: .failure(CancellationError()))
        }
    }

    /// Closes the socket; pending exchanges fail.
    public func close() async {
        try? await channel.close()
        pending.failAll()
    }
}

/// Requests in flight, keyed by their transmit timestamp.
final class PendingExchanges: Sendable {
    private struct Entry {
        var continuation: CheckedContinuation<NTPExchange?, any Error>
        var sent: NTPTimestamp?
    }

    private let entries = Mutex<[NTPTimestamp: Entry]>([:])

    func register(_ key: NTPTimestamp, _ continuation: CheckedContinuation<NTPExchange?, any Error>) {
        let previous = entries.withLock { entries in
            let previous = entries[key]
            entries[key] = Entry(continuation: continuation, sent: nil)
            return previous
        }
        previous?.continuation.resume(returning: nil)
    }

    func setSent(_ key: NTPTimestamp, _ time: NTPTimestamp) {
        entries.withLock { $0[key]?.sent = time }
    }

    /// Completes the exchange for a response, if it is one we wait for (and has been sent).
    func deliver(_ response: NTPPacket, received: NTPTimestamp) {
        let key = response.originTimestamp
        let entry: Entry? = entries.withLock { entries in
            guard let entry = entries[key], entry.sent != nil else { return nil }
            entries[key] = nil
            return entry
        }
        guard let entry, let sent = entry.sent else { return }
        entry.continuation.resume(returning: NTPExchange(response: response, sent: sent, received: received))
    }

    func resolve(_ key: NTPTimestamp, with result: Result<NTPExchange?, any Error>) {
        let entry = entries.withLock { $0.removeValue(forKey: key) }
        entry?.continuation.resume(with: result)
    }

    func failAll() {
        let all = entries.withLock { entries in
            defer { entries.removeAll() }
            return Array(entries.values)
        }
        for entry in all { entry.continuation.resume(throwing: CancellationError()) }
    }
}

/// Stamps T4 as soon as a datagram is read and hands matching responses to ``PendingExchanges``.
final class TimeClientHandler<C: Clock>: ChannelInboundHandler where C.Duration == Duration {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let server: SocketAddress
    private let timescale: LocalTimescale<C>
    private let pending: PendingExchanges
    private let socket: NIOBSDSocket.Handle

    init(server: SocketAddress, timescale: LocalTimescale<C>, pending: PendingExchanges, socket: NIOBSDSocket.Handle) {
        self.server = server
        self.timescale = timescale
        self.pending = pending
        self.socket = socket
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var received = timescale.now()
        if let latency = KernelTimestamps.receiveLatency(socket) {
            received = received.advanced(bySeconds: -latency)
        }
        let envelope = unwrapInboundIn(data)
        guard envelope.remoteAddress == server,
              let response = try? NTPPacket(bytes: envelope.data.readableBytesView) else { return }
        pending.deliver(response, received: received)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // ICMP errors (e.g. "connection refused") surface as timeouts; keep the channel open.
    }
}
