import GroupSessions
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Load generators that measure a running relay from the outside, over real connections
/// (`coplay bench relay` drives them against a `coplay serve` child process).
///
/// Every loop is bounded in count and time. Frames are sent raw (no end-to-end crypto on the
/// clients), so the figures are the relay's: routing, stamping, fan-out and socket I/O.
///
/// ```swift
/// let bench = RelayBenchmark(host: "127.0.0.1", port: 7000, logger: logger)
/// let rate = try await bench.throughput(receivers: 10, messages: 20_000)
/// ```
public struct RelayBenchmark: Sendable {
    /// The relay's host.
    public var host: String
    /// The relay's port.
    public var port: Int
    private let logger: Logger

    /// Creates a load generator for the relay at `host:port`.
    public init(host: String, port: Int, logger: Logger) {
        self.host = host
        self.port = port
        self.logger = logger
    }

    /// One member connection made of raw frames.
    public struct Member: Sendable {
        /// The connection.
        public let connection: any TransportConnection
        /// Its participant id.
        public let id: ParticipantID
        /// Its session.
        public let session: SessionID
    }

    /// Opens `count` connections, each admitted and joined, `concurrency` at a time: all into
    /// `invite`'s session, or each into a session of its own when `separateSessions` is set
    /// (idle connections without presence traffic).
    ///
    /// - Returns: The members that were opened.
    public func openMembers(
        count: Int, invite: Invite, concurrency: Int = 50, separateSessions: Bool = false
    ) async throws -> [Member] {
        let transport = RelayTransport(host: host, port: port)
        let (host, port) = (self.host, self.port)
        var members: [Member] = []
        members.reserveCapacity(count)
        var next = 0
        while next < count {
            let batch = min(concurrency, count - next)
            let opened = try await withThrowingTaskGroup(of: Member.self) { group in
                for _ in 0..<batch {
                    group.addTask { [logger] in
                        let memberInvite = separateSessions ? Invite.generate(host: host, port: port) : invite
                        let token = SessionKeys(invite: memberInvite).joinToken
                        let connection = try await transport.connect(logger: logger)
                        let id = ParticipantID.random()
                        try connection.send(
                            Frame(type: .hello, flags: .presenceBatches, session: memberInvite.session, sender: id,
                                  payload: HelloPayload(token: token).encoded()))
                        try connection.send(Frame(type: .join, session: memberInvite.session, sender: id))
                        return Member(connection: connection, id: id, session: memberInvite.session)
                    }
                }
                var result: [Member] = []
                for try await member in group { result.append(member) }
                return result
            }
            members += opened
            next += batch
        }
        return members
    }

    /// A raw data frame from `member` to its whole session, whose payload's first eight bytes
    /// carry `stamp` (nanoseconds on the caller's timescale), padded with zeros to `size` bytes.
    ///
    /// The `Benchmarks/` package drives its own loops with it; read the stamp back with
    /// ``stamp(of:)``.
    ///
    /// ```swift
    /// try sender.connection.send(RelayBenchmark.frame(from: sender, sequence: 1, stamp: 42, size: 64))
    /// ```
    ///
    /// - Parameters:
    ///   - member: The sending member.
    ///   - sequence: The sender's sequence number for the data route (start at 1, increase by one).
    ///   - stamp: The value carried in the first eight payload bytes.
    ///   - size: The payload size after the route (at least 8).
    public static func frame(from member: Member, sequence: UInt64, stamp: UInt64, size: Int) -> Frame {
        var payload = ByteBuffer()
        DataRoute(senderSequence: sequence).encode(into: &payload)
        payload.writeInteger(stamp)
        payload.writeRepeatingByte(0, count: max(0, size - 8))
        return Frame(type: .data, session: member.session, sender: member.id, payload: payload)
    }

    /// The stamp a frame made by ``frame(from:sequence:stamp:size:)`` carries, or `nil` if its
    /// payload is not one.
    public static func stamp(of frame: Frame) -> UInt64? {
        var payload = frame.payload
        guard (try? DataRoute.decode(from: &payload)) != nil else { return nil }
        return payload.readInteger(as: UInt64.self)
    }

    /// Forwarding throughput: one sender, `receivers` members, `messages` frames.
    ///
    /// - Returns: Data frames delivered per second (all receivers together) and the count delivered.
    public func throughput(
        receivers: Int, messages: Int, payloadSize: Int = 64, timeout: Duration = .seconds(120)
    ) async throws -> (framesPerSecond: Double, delivered: Int) {
        let invite = Invite.generate(host: host, port: port)
        let clock = ContinuousClock()
        let sender = try await openMembers(count: 1, invite: invite)[0]
        defer { sender.connection.close() }
        let probes = try await openProbes(count: receivers, invite: invite, sessionSize: receivers + 1, origin: clock.now)
        defer { for probe in probes { probe.close() } }
        let drain = Task { for try await _ in sender.connection.inbound {} }  // the sender's acks
        defer { drain.cancel() }
        let expected = receivers * messages
        let delivered = { probes.reduce(0) { $0 + $1.state.withLock { $0.data } } }
        // Wait for everyone to be joined before timing.
        let readyBy = clock.now + timeout
        while probes.contains(where: { !$0.isReady }) && clock.now < readyBy { try await Task.sleep(for: .milliseconds(10)) }
        let start = clock.now
        for index in 0..<messages {
            try sender.connection.send(Self.frame(from: sender, sequence: UInt64(index + 1), stamp: 0, size: payloadSize))
            if index % 256 == 0 { await Task.yield() }
        }
        let deadline = start + timeout
        while delivered() < expected && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        let elapsed = start.duration(to: clock.now)
        let count = delivered()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        return (Double(count) / seconds, count)
    }

    /// The outcome of ``fanOutLatency(members:messages:interval:timeout:)``.
    public struct FanOutResult: Sendable {
        /// Latencies in microseconds, one per message and receiver, sorted.
        public var latencies: [Double]
        /// Time from the first connection until every member knew every other one joined
        /// (the presence fan-out of a mass join is quadratic in the session size).
        public var assembly: Duration
        /// Receivers that were ready when the stamped messages started.
        public var readyReceivers: Int
    }

    /// Fan-out latency in a session of `members` members: once every member has seen everyone
    /// join, one sender stamps `messages` frames `interval` apart and every other member
    /// records arrival minus send time.
    public func fanOutLatency(
        members count: Int, messages: Int, interval: Duration = .milliseconds(20), timeout: Duration = .seconds(120)
    ) async throws -> FanOutResult {
        let invite = Invite.generate(host: host, port: port)
        let clock = ContinuousClock()
        let origin = clock.now
        let sender = try await openMembers(count: 1, invite: invite)[0]
        defer { sender.connection.close() }
        let drain = Task { for try await _ in sender.connection.inbound {} }  // keep the sender's queue drained
        defer { drain.cancel() }
        let probes = try await openProbes(count: count - 1, invite: invite, sessionSize: count, origin: origin)
        defer { for probe in probes { probe.close() } }
        let readyDeadline = clock.now + timeout
        while probes.contains(where: { !$0.isReady }) && clock.now < readyDeadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let assembly = origin.duration(to: clock.now)
        let readyReceivers = probes.filter(\.isReady).count
        for index in 0..<messages {
            try sender.connection.send(
                Self.frame(from: sender, sequence: UInt64(index + 1), stamp: Self.nanos(since: origin, clock.now), size: 64))
            try await Task.sleep(for: interval)
        }
        let expected = probes.count * messages
        let deadline = clock.now + timeout
        while probes.reduce(0, { $0 + $1.state.withLock { $0.latencies.count } }) < expected && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let latencies = probes.flatMap { $0.state.withLock { $0.latencies } }
        return FanOutResult(latencies: latencies.sorted(), assembly: assembly, readyReceivers: readyReceivers)
    }

    /// Opens `count` receiving members whose frames are read on their connections' event loops by
    /// a ``ProbeReceiver`` (no task, no stream per frame): the benchmark process then costs the
    /// relay's 2 cores as little as a receiver can, so the figures are the relay's.
    ///
    /// At most `concurrency` connections are being opened at a time (a sliding window: the next
    /// starts as soon as one is open), to an address resolved once.
    func openProbes(
        count: Int, invite: Invite, sessionSize: Int, origin: ContinuousClock.Instant, concurrency: Int = 50
    ) async throws -> [ProbeReceiver] {
        let token = SessionKeys(invite: invite).joinToken
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let open: @Sendable () async throws -> ProbeReceiver = {
            let probe = ProbeReceiver(sessionSize: sessionSize, origin: origin)
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(FrameDecoder()))
                        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(FrameEncoder()))
                        try channel.pipeline.syncOperations.addHandler(ProbeHandler(probe: probe))
                    }
                }
                .connect(to: address).get()
            probe.channel.withLock { $0 = channel }
            let id = ParticipantID.random()
            channel.write(
                Frame(type: .hello, flags: .presenceBatches, session: invite.session, sender: id, payload: HelloPayload(token: token).encoded()),
                promise: nil)
            try await channel.writeAndFlush(Frame(type: .join, session: invite.session, sender: id)).get()
            return probe
        }
        return try await withThrowingTaskGroup(of: ProbeReceiver.self) { group in
            var probes: [ProbeReceiver] = []
            probes.reserveCapacity(count)
            for index in 0..<count {
                if index >= concurrency, let probe = try await group.next() { probes.append(probe) }
                group.addTask(operation: open)
            }
            for try await probe in group { probes.append(probe) }
            return probes
        }
    }

    static func nanos(since origin: ContinuousClock.Instant, _ instant: ContinuousClock.Instant) -> UInt64 {
        let d = origin.duration(to: instant)
        return UInt64(d.components.seconds) * 1_000_000_000 + UInt64(d.components.attoseconds / 1_000_000_000)
    }
}

/// A receiving member of the benchmarks: what it has seen, filled in on its event loop.
final class ProbeReceiver: Sendable {
    struct State: Sendable {
        var known = Set<ParticipantID>()
        var ready = false
        /// Data frames received.
        var data = 0
        /// Arrival minus send stamp of each stamped data frame, in microseconds.
        var latencies: [Double] = []
    }

    let state = Mutex(State())
    let channel = Mutex<(any Channel)?>(nil)
    let sessionSize: Int
    let origin: ContinuousClock.Instant

    init(sessionSize: Int, origin: ContinuousClock.Instant) {
        self.sessionSize = sessionSize
        self.origin = origin
    }

    /// Whether it has seen every member of its session join.
    var isReady: Bool { state.withLock { $0.ready } }

    func close() {
        channel.withLock { $0 }?.close(promise: nil)
    }
}

/// Records a ``ProbeReceiver``'s frames as they come off the decoder.
final class ProbeHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    let probe: ProbeReceiver

    init(probe: ProbeReceiver) { self.probe = probe }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let arrival = ContinuousClock.now
        probe.state.withLock { state in
            switch frame.type {
            case .welcome:
                if let welcome = try? WelcomePayload(decoding: frame.payload) { state.known.formUnion(welcome.members) }
            case .joined:
                state.known.insert(frame.sender)
            case .presence:
                for entry in (try? PresencePayload(decoding: frame.payload).entries) ?? [] where entry.type == .joined {
                    state.known.insert(entry.participant)
                }
            case .data:
                state.data += 1
                if let sent = RelayBenchmark.stamp(of: frame), sent > 0 {
                    let now = RelayBenchmark.nanos(since: probe.origin, arrival)
                    state.latencies.append(Double(now &- sent) / 1_000)
                }
            default:
                break
            }
            if !state.ready && state.known.count >= probe.sessionSize { state.ready = true }
        }
    }
}
