import BenchmarkSupport
import GroupSessions
import SessionRelay

/// `count` connections to a relay, each admitted and joined to a session of its own and then
/// left idle, with the relay child's resident memory before and after.
struct IdleConnections: Sendable {
    /// The members opened.
    let members: [RelayBenchmark.Member]
    /// How many got their welcome (the relay holds them as joined members).
    let welcomed: Int
    /// The relay's resident bytes before the first connection.
    let residentBefore: Int
    /// The relay's resident bytes with every connection open and settled.
    let residentAfter: Int
    /// The relay's live heap before the first connection.
    let heapBefore: RelayProcess.Heap
    /// The relay's live heap with every connection open and settled.
    let heapAfter: RelayProcess.Heap

    /// Opens the connections, waits (up to `timeout`) for every welcome, lets the relay settle
    /// for `settle`, and reads its memory.
    static func open(
        relay: RelayProcess, count: Int, timeout: Duration = .seconds(60),
        settle: Duration = .seconds(2)
    ) async throws -> IdleConnections {
        try await Task.sleep(for: .seconds(1))
        let port = relay.port
        let before = relay.residentBytes
        let heapBefore = try relay.heap()
        let bench = RelayBenchmark(host: "127.0.0.1", port: port, logger: .benchmarks)
        let invite = Invite.generate(host: "127.0.0.1", port: port)
        let members = try await bench.openMembers(count: count, invite: invite, concurrency: 50, separateSessions: true)
        let welcomed = SharedCounter()
        // One reader per member counts its welcome and keeps reading (nothing more arrives on an
        // idle session) until close() ends the stream: dropping the iterator could end the stream.
        for member in members {
            Task {
                do {
                    for try await frame in member.connection.inbound where frame.type == .welcome {
                        welcomed.increment()
                    }
                } catch {}
            }
        }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while welcomed.value < members.count && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: settle)
        return IdleConnections(
            members: members, welcomed: welcomed.value, residentBefore: before,
            residentAfter: relay.residentBytes, heapBefore: heapBefore, heapAfter: try relay.heap())
    }

    /// Closes every connection.
    func close() {
        for member in members { member.connection.close() }
    }
}
