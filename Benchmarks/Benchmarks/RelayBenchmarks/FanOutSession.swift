import BenchmarkSupport
import GroupSessions
import SessionRelay
import Synchronization

/// A session of `members` members on a relay, assembled once (every member has seen every other
/// join, so the quadratic presence traffic of a mass join is over) and kept open across
/// benchmark iterations; ``fanOut(timeout:)`` sends one stamped frame and returns every
/// receiver's latency.
///
/// A latency is the receiver's arrival time minus the sender's send time, both read from one
/// `ContinuousClock` in this process: the relay's forwarding plus this process's reading of
/// `members - 1` sockets on a shared machine, exactly what `coplay bench relay` reports.
final class FanOutSession: Sendable {
    /// Latencies in microseconds, appended by the readers.
    private final class Samples: Sendable {
        let values = Mutex<[Int]>([])
    }

    let sender: RelayBenchmark.Member
    let receivers: [RelayBenchmark.Member]
    /// How long assembly took, from the first connection until every member was ready.
    let assembly: Duration
    private let origin: ContinuousClock.Instant
    private let samples: Samples
    private let sequence = Atomic<UInt64>(0)
    private let assemblyReported = Atomic<Bool>(false)
    private let readers: [Task<Void, Never>]

    private init(
        members: [RelayBenchmark.Member], origin: ContinuousClock.Instant, assembly: Duration,
        samples: Samples, readers: [Task<Void, Never>]
    ) {
        sender = members[0]
        receivers = Array(members.dropFirst())
        self.origin = origin
        self.assembly = assembly
        self.samples = samples
        self.readers = readers
    }

    /// Opens the members and waits (up to `timeout`) until every one has seen every other join.
    static func open(port: Int, members count: Int, timeout: Duration = .seconds(180)) async throws -> FanOutSession {
        let bench = RelayBenchmark(host: "127.0.0.1", port: port, logger: .benchmarks)
        let invite = Invite.generate(host: "127.0.0.1", port: port)
        let clock = ContinuousClock()
        let origin = clock.now
        let members = try await bench.openMembers(count: count, invite: invite)
        let ready = SharedCounter()
        let samples = Samples()
        var readers = [Task<Void, Never>]()
        let senderID = members[0].id
        for member in members {
            let isSender = member.id == senderID
            readers.append(Task {
                var known: Set<ParticipantID> = [member.id]
                var isReady = false
                do {
                    for try await frame in member.connection.inbound {
                        switch frame.type {
                        case .welcome:
                            if let welcome = try? WelcomePayload(decoding: frame.payload) { known.formUnion(welcome.members) }
                        case .joined:
                            known.insert(frame.sender)
                        case .data where !isSender:
                            let now = nanoseconds(since: origin, clock.now)
                            if let sent = RelayBenchmark.stamp(of: frame) {
                                samples.values.withLock { $0.append(Int(truncatingIfNeeded: (now &- sent) / 1_000)) }
                            }
                        default:
                            break
                        }
                        if !isReady && known.count >= count {
                            isReady = true
                            ready.increment()
                        }
                    }
                } catch {}
            })
        }
        let deadline = clock.now + timeout
        while ready.value < count {
            guard clock.now < deadline else {
                for task in readers { task.cancel() }
                for member in members { member.connection.close() }
                throw RelayBenchmarkError("only \(ready.value) of \(count) members saw everyone join in time")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return FanOutSession(
            members: members, origin: origin, assembly: origin.duration(to: clock.now), samples: samples, readers: readers)
    }

    /// Sends one stamped frame and waits until every receiver has it (or `timeout` passes).
    ///
    /// - Returns: The latencies of this frame in microseconds, one per receiver that got it in time.
    func fanOut(timeout: Duration = .seconds(30)) async throws -> [Int] {
        samples.values.withLock { $0.removeAll(keepingCapacity: true) }
        let clock = ContinuousClock()
        let next = sequence.add(1, ordering: .relaxed).newValue
        try sender.connection.send(
            RelayBenchmark.frame(from: sender, sequence: next, stamp: nanoseconds(since: origin, clock.now), size: 64))
        let deadline = clock.now + timeout
        while samples.values.withLock({ $0.count }) < receivers.count && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        return samples.values.withLock { $0 }
    }

    /// `true` the first time only: the assembly time is one figure per session, not per frame.
    func takeAssemblyReport() -> Bool {
        !assemblyReported.exchange(true, ordering: .relaxed)
    }

    /// Closes every connection and stops the readers.
    func close() {
        for task in readers { task.cancel() }
        sender.connection.close()
        for receiver in receivers { receiver.connection.close() }
    }
}

/// Nanoseconds from `origin` to `instant` (never negative).
func nanoseconds(since origin: ContinuousClock.Instant, _ instant: ContinuousClock.Instant) -> UInt64 {
    let elapsed = origin.duration(to: instant)
    return UInt64(max(0, elapsed.components.seconds)) * 1_000_000_000
        + UInt64(max(0, elapsed.components.attoseconds) / 1_000_000_000)
}
