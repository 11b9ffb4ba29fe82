import BenchmarkSupport
import GroupSessions
import SessionRelay
import Synchronization

/// One sender and `receivers` members joined to one session on a relay, kept open across
/// benchmark iterations; ``forward(batch:payloadSize:timeout:)`` measures one batch.
///
/// Frames are raw (no end-to-end crypto on the clients), as in ``RelayBenchmark``, so the
/// figures are the relay's routing, stamping, fan-out and socket I/O plus this process's reads.
final class ForwardingSession: Sendable {
    let sender: RelayBenchmark.Member
    let receivers: [RelayBenchmark.Member]
    /// Data frames delivered to all receivers together so far.
    private let delivered = SharedCounter()
    /// The sender's last data-route sequence number.
    private let sequence = Atomic<UInt64>(0)
    private let readers: Mutex<[Task<Void, Never>]> = Mutex([])

    private init(sender: RelayBenchmark.Member, receivers: [RelayBenchmark.Member]) {
        self.sender = sender
        self.receivers = receivers
    }

    /// Opens the members and waits (up to `timeout`) until the sender has seen every receiver join.
    static func open(port: Int, receivers count: Int, timeout: Duration = .seconds(60)) async throws -> ForwardingSession {
        let bench = RelayBenchmark(host: "127.0.0.1", port: port, logger: .benchmarks)
        let invite = Invite.generate(host: "127.0.0.1", port: port)
        let members = try await bench.openMembers(count: count + 1, invite: invite)
        let session = ForwardingSession(sender: members[0], receivers: Array(members.dropFirst()))
        let joined = SharedCounter()
        let sender = session.sender
        var readers = [Task<Void, Never>]()
        readers.append(Task {
            var known = Set<ParticipantID>()
            do {
                for try await frame in sender.connection.inbound {
                    switch frame.type {
                    case .welcome:
                        if let welcome = try? WelcomePayload(decoding: frame.payload) { known.formUnion(welcome.members) }
                    case .joined:
                        known.insert(frame.sender)
                    default:
                        break
                    }
                    known.remove(sender.id)
                    joined.store(known.count)
                }
            } catch {}
        })
        for receiver in session.receivers {
            readers.append(Task { [delivered = session.delivered] in
                do {
                    for try await frame in receiver.connection.inbound where frame.type == .data {
                        delivered.increment()
                    }
                } catch {}
            })
        }
        session.readers.withLock { $0 = readers }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while joined.value < count {
            guard clock.now < deadline else {
                session.close()
                throw RelayBenchmarkError("only \(joined.value) of \(count) receivers joined in time")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return session
    }

    /// Sends `batch` frames of `payloadSize` bytes and waits until every receiver has them.
    ///
    /// - Returns: The frames delivered for this batch (all receivers together); fewer than
    ///   `batch * receivers.count` only if `timeout` passed.
    func forward(batch: Int, payloadSize: Int = 64, timeout: Duration = .seconds(60)) async throws -> Int {
        let start = delivered.value
        let target = start + batch * receivers.count
        for index in 0..<batch {
            let next = sequence.add(1, ordering: .relaxed).newValue
            try sender.connection.send(RelayBenchmark.frame(from: sender, sequence: next, stamp: 0, size: payloadSize))
            if index % 256 == 255 { await Task.yield() }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while delivered.value < target && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        return delivered.value - start
    }

    /// Closes every connection and stops the readers.
    func close() {
        for task in readers.withLock({ $0 }) { task.cancel() }
        sender.connection.close()
        for receiver in receivers { receiver.connection.close() }
    }
}
