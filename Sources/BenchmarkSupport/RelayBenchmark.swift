import GroupSessions
import Logging
import NIOCore
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
        defer { probes.close() }
        let drain = Task { for try await _ in sender.connection.inbound {} }  // the sender's acks
        defer { drain.cancel() }
        let expected = receivers * messages
        let delivered = { probes.dataCount }
        // Wait for everyone to be joined before timing.
        let readyBy = clock.now + timeout
        while probes.readyCount < receivers && clock.now < readyBy { try await Task.sleep(for: .milliseconds(10)) }
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
        /// For each message in the order sent: when its last receiver got it (microseconds after
        /// it was sent), so one slow fan-out can be told from a slow steady state.
        public var completions: [Double]
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
        defer { probes.close() }
        let readyDeadline = clock.now + timeout
        while probes.readyCount < count - 1 && clock.now < readyDeadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let assembly = origin.duration(to: clock.now)
        let readyReceivers = probes.readyCount
        for index in 0..<messages {
            try sender.connection.send(
                Self.frame(from: sender, sequence: UInt64(index + 1), stamp: Self.nanos(since: origin, clock.now), size: 64))
            try await Task.sleep(for: interval)
        }
        let expected = (count - 1) * messages
        let deadline = clock.now + timeout
        while probes.latencyCount < expected && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let latencies = probes.latencies
        return FanOutResult(
            latencies: latencies.sorted(), completions: probes.completions, assembly: assembly, readyReceivers: readyReceivers)
    }

    /// Opens `count` receiving members (``ProbeReceivers``: plain sockets read by threads of their
    /// own, so the benchmark takes as little of the relay's cores as a receiver can), one at a time
    /// to an address resolved once.
    func openProbes(
        count: Int, invite: Invite, sessionSize: Int, origin: ContinuousClock.Instant
    ) async throws -> ProbeReceivers {
        try await ProbeReceivers.open(count: count, host: host, port: port, invite: invite, sessionSize: sessionSize, origin: origin)
    }

    static func nanos(since origin: ContinuousClock.Instant, _ instant: ContinuousClock.Instant) -> UInt64 {
        let d = origin.duration(to: instant)
        return UInt64(d.components.seconds) * 1_000_000_000 + UInt64(d.components.attoseconds / 1_000_000_000)
    }
}
