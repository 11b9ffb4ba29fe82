import CLinuxEpoll
import Foundation
import Glibc
import GroupSessions
import NIOCore
import Synchronization

/// The receiving members of the relay benchmarks: plain non-blocking sockets read by a few threads
/// of their own, each waiting in `epoll`, decoding with ``FrameCodec`` and recording what arrives.
///
/// Why not NIO channels like the rest of coplay: these probes run on the same two cores as the
/// relay they measure, so every microsecond they spend per frame is a microsecond the relay does
/// not get, and shows up in its fan-out latency. Measured over 100 fan-outs to 999 probes (process
/// CPU time divided by frames received), a NIO channel per probe (allocator, pipeline, decoder
/// handler, a lock per frame) cost 8.6 us per frame, and these probes 5.7 us, most of it the
/// kernel's `read` and the ACK it sends. The relay sees the same TCP clients either way.
///
/// Each probe sends `hello` (asking for ``FrameFlags/presenceBatches``) and `join` when it opens,
/// then only reads. Stamped data frames (``RelayBenchmark/frame(from:sequence:stamp:size:)``) are
/// recorded as arrival minus stamp; a probe is *ready* once it has seen `sessionSize` members.
final class ProbeReceivers: Sendable {
    /// One probe connection; read and written only by the thread that owns it.
    private final class Probe: @unchecked Sendable {
        let descriptor: Int32
        var buffer = ByteBuffer()
        var known = Set<ParticipantID>()
        var ready = false
        var open = true

        init(descriptor: Int32) { self.descriptor = descriptor }
    }

    /// What one reading thread has recorded.
    private struct Tally: Sendable {
        var ready = 0
        var data = 0
        var latencies: [Double] = []
        /// Per stamp: the latest arrival minus stamp seen, in microseconds.
        var slowest: [UInt64: Double] = [:]
    }

    private let threads: [ReaderThread]

    /// Opens `count` probes into `invite`'s session at `host:port` (IPv4 or IPv6 literal or name),
    /// one after another, read by `threadCount` threads. Blocks while connecting.
    init(
        count: Int, host: String, port: Int, invite: Invite, sessionSize: Int, origin: ContinuousClock.Instant,
        threadCount: Int = 2
    ) throws {
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let token = SessionKeys(invite: invite).joinToken
        var opened: [[Probe]] = Array(repeating: [], count: max(1, threadCount))
        do {
            for index in 0..<count {
                let id = ParticipantID.random()
                var greeting = ByteBuffer()
                FrameCodec.encode(
                    Frame(type: .hello, flags: .presenceBatches, session: invite.session, sender: id,
                          payload: HelloPayload(token: token).encoded()), into: &greeting)
                FrameCodec.encode(Frame(type: .join, session: invite.session, sender: id), into: &greeting)
                let descriptor = try Self.connect(to: address, sending: greeting)
                opened[index % opened.count].append(Probe(descriptor: descriptor))
            }
        } catch {
            for probe in opened.joined() { Glibc.close(probe.descriptor) }
            throw error
        }
        var started: [ReaderThread] = []
        do {
            for probes in opened { started.append(try ReaderThread(probes: probes, sessionSize: sessionSize, origin: origin)) }
        } catch {
            for thread in started { thread.stop() }  // closes its probes
            for probe in opened.dropFirst(started.count).joined() { Glibc.close(probe.descriptor) }
            throw error
        }
        threads = started
    }

    /// ``init(count:host:port:invite:sessionSize:origin:threadCount:)`` on a thread of its own: its
    /// connects block, which Swift's cooperative pool (two threads here) must not.
    static func open(
        count: Int, host: String, port: Int, invite: Invite, sessionSize: Int, origin: ContinuousClock.Instant
    ) async throws -> ProbeReceivers {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result {
                    try ProbeReceivers(
                        count: count, host: host, port: port, invite: invite, sessionSize: sessionSize, origin: origin)
                })
            }.start()
        }
    }

    /// Probes that have seen every member of their session join.
    var readyCount: Int { threads.reduce(0) { $0 + $1.tally.withLock { $0.ready } } }
    /// Stamped or unstamped data frames received, over all probes.
    var dataCount: Int { threads.reduce(0) { $0 + $1.tally.withLock { $0.data } } }
    /// Stamped data frames recorded, over all probes.
    var latencyCount: Int { threads.reduce(0) { $0 + $1.tally.withLock { $0.latencies.count } } }
    /// Arrival minus stamp of every stamped data frame, in microseconds (unsorted).
    var latencies: [Double] { threads.flatMap { $0.tally.withLock { $0.latencies } } }
    /// For each stamped message, in the order sent: the latency of the last probe to get it, in
    /// microseconds (when the fan-out of that message was complete).
    var completions: [Double] {
        var slowest: [UInt64: Double] = [:]
        for thread in threads { slowest.merge(thread.tally.withLock { $0.slowest }, uniquingKeysWith: max) }
        return slowest.sorted { $0.key < $1.key }.map(\.value)
    }

    /// Stops the reading threads and closes every probe.
    func close() {
        for thread in threads { thread.stop() }
    }

    /// A blocking connect and greeting, then the socket is made non-blocking for the reader.
    private static func connect(to address: SocketAddress, sending greeting: ByteBuffer) throws -> Int32 {
        let family = address.protocol == .inet6 ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ProbeError.system("socket", errno) }
        var one: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let connected = address.withSockAddr { pointer, length in Glibc.connect(descriptor, pointer, socklen_t(length)) }
        guard connected == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw ProbeError.system("connect", code)
        }
        var remaining = greeting
        while remaining.readableBytes > 0 {
            let written = remaining.withUnsafeReadableBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else {
                let code = errno
                Glibc.close(descriptor)
                throw ProbeError.system("write", code)
            }
            remaining.moveReaderIndex(forwardBy: written)
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        return descriptor
    }

    enum ProbeError: Error, CustomStringConvertible {
        case system(String, Int32)
        var description: String {
            switch self {
            case .system(let call, let code): "probe \(call) failed: \(String(cString: strerror(code)))"
            }
        }
    }

    /// One thread, one `epoll` instance, its share of the probes.
    private final class ReaderThread: @unchecked Sendable {
        let tally = Mutex(Tally())
        private let probes: [Probe]
        private let poll: Int32
        private let stopping = Atomic<Bool>(false)
        private let stopped = DispatchSemaphore(value: 0)
        private let sessionSize: Int
        private let origin: ContinuousClock.Instant

        init(probes: [Probe], sessionSize: Int, origin: ContinuousClock.Instant) throws {
            self.probes = probes
            self.sessionSize = sessionSize
            self.origin = origin
            poll = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard poll >= 0 else { throw ProbeError.system("epoll_create1", errno) }
            for (index, probe) in probes.enumerated() {
                var event = epoll_event()
                event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
                event.data.u64 = UInt64(index)
                guard epoll_ctl(poll, EPOLL_CTL_ADD, probe.descriptor, &event) == 0 else {
                    let code = errno
                    Glibc.close(poll)
                    throw ProbeError.system("epoll_ctl", code)
                }
            }
            let thread = Thread { [self] in run() }
            thread.name = "coplay-bench-probes"
            thread.start()
        }

        func stop() {
            guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
            stopped.wait()
        }

        private func run() {
            var events = [epoll_event](repeating: epoll_event(), count: 256)
            while !stopping.load(ordering: .acquiring) {
                let count = events.withUnsafeMutableBufferPointer { epoll_wait(poll, $0.baseAddress, Int32($0.count), 20) }
                guard count > 0 else { continue }
                let arrival = ContinuousClock.now
                var tally = Tally()
                for event in events[0..<Int(count)] { read(probes[Int(event.data.u64)], arrival: arrival, into: &tally) }
                self.tally.withLock { total in
                    total.ready += tally.ready
                    total.data += tally.data
                    total.latencies += tally.latencies
                    total.slowest.merge(tally.slowest, uniquingKeysWith: max)
                }
            }
            for probe in probes { Glibc.close(probe.descriptor) }
            Glibc.close(poll)
            stopped.signal()
        }

        /// One `read` of `probe` (level-triggered: more waiting comes with the next wait), then
        /// every whole frame it completed.
        private func read(_ probe: Probe, arrival: ContinuousClock.Instant, into tally: inout Tally) {
            guard probe.open else { return }
            var result = 0
            var code: Int32 = 0
            probe.buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 4096) { bytes in
                result = Glibc.read(probe.descriptor, bytes.baseAddress, bytes.count)
                code = errno
                return max(0, result)
            }
            if result <= 0 {
                if result < 0 && (code == EAGAIN || code == EINTR) { return }
                probe.open = false
                _ = epoll_ctl(poll, EPOLL_CTL_DEL, probe.descriptor, nil)
                return
            }
            while let frame = try? FrameCodec.decode(from: &probe.buffer) {
                record(frame, of: probe, arrival: arrival, into: &tally)
            }
            if probe.buffer.readableBytes == 0 { probe.buffer.clear() } else { probe.buffer.discardReadBytes() }
        }

        private func record(_ frame: Frame, of probe: Probe, arrival: ContinuousClock.Instant, into tally: inout Tally) {
            switch frame.type {
            case .data:
                tally.data += 1
                if let sent = RelayBenchmark.stamp(of: frame), sent > 0 {
                    let now = RelayBenchmark.nanos(since: origin, arrival)
                    let latency = Double(now &- sent) / 1_000
                    tally.latencies.append(latency)
                    tally.slowest[sent] = max(tally.slowest[sent] ?? 0, latency)
                }
                return
            case .welcome:
                if let welcome = try? WelcomePayload(decoding: frame.payload) { probe.known.formUnion(welcome.members) }
            case .joined:
                probe.known.insert(frame.sender)
            case .presence:
                for entry in (try? PresencePayload(decoding: frame.payload).entries) ?? [] where entry.type == .joined {
                    probe.known.insert(entry.participant)
                }
            default:
                return
            }
            if !probe.ready && probe.known.count >= sessionSize {
                probe.ready = true
                tally.ready += 1
            }
        }
    }
}
