import Foundation
import GroupSessions
import Logging
import NIOCore
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Relay nodes as one service on a real PostgreSQL 15 (Debian's binaries, a private cluster per
/// test): `coplay serve --store` processes, members on the GroupSessions library with a fleet
/// invite. Skipped, with a message, where PostgreSQL is not installed.
@Suite("Relay fleet on PostgreSQL", .serialized)
struct FleetTests {
    /// Members that notice a silent relay within 2 s (the default is 15 s).
    static var policy: ReconnectPolicy {
        var policy = ReconnectPolicy()
        policy.pingInterval = .milliseconds(500)
        policy.livenessTimeout = .seconds(2)
        policy.maximumDelay = .milliseconds(500)
        return policy
    }

    /// Each member sends `count` numbered reliable messages.
    static func send(_ senders: [GroupSession<WatchMovie>], count: Int, pause: Duration = .milliseconds(5)) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (number, session) in senders.enumerated() {
                group.addTask {
                    let messenger = GroupSessionMessenger(session: session)
                    for index in 0..<count {
                        try messenger.send(Chat(sender: number, index: index))
                        if index % 10 == 9 { try await Task.sleep(for: pause) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Every member got every other sender's messages exactly once, in order.
    static func expectExactlyOnce(
        _ collectors: [Collector<(Chat, MessageContext)>], count: Int, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (member, collector) in collectors.enumerated() {
            for sender in collectors.indices where sender != member {
                let indices = collector.values.filter { $0.0.sender == sender && $0.0.index >= 0 }.map(\.0.index)
                #expect(indices == Array(0..<count), "member \(member) from sender \(sender): \(indices.count) messages",
                        sourceLocation: sourceLocation)
            }
        }
    }

    /// A host and `players` members of a session created on the fleet's first node.
    static func session(
        invite: Invite, players: Int
    ) async throws -> (sessions: [GroupSession<WatchMovie>], collectors: [Collector<(Chat, MessageContext)>]) {
        var sessions: [GroupSession<WatchMovie>] = []
        for number in 0...players {
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"), reconnectPolicy: policy)
            if number == 0 {
                sessions.append(try await center.activate(WatchMovie(movie: "fleet"), invite: invite))
                try await sessions[0].join()
            } else {
                sessions.append(try await center.accept(invite))
            }
        }
        let collectors = sessions.map { Collector(GroupSessionMessenger(session: $0).messages(of: Chat.self)) }
        for session in sessions { try await session.join() }
        let expected = sessions.count
        await eventually("all joined") { sessions.allSatisfy { $0.activeParticipants.count == expected } }
        return (sessions, collectors)
    }

    static func fleetInvite(_ ports: [Int]) -> Invite {
        var invite = Invite.generate(host: "127.0.0.1", port: ports[0])
        invite.otherRelays = ports.dropFirst().map { RelayAddress(host: "127.0.0.1", port: $0) }
        return invite
    }

    @Test("3 nodes on one PostgreSQL: the owning node SIGKILLed, every member resumes on another within 3 s, nothing acknowledged lost or repeated, a journal attachment loads byte-equal", .timeLimit(.minutes(5)))
    func ownerKilled() async throws {
        guard let postgres = try await TemporaryPostgres.startIfAvailable() else { return }
        defer { postgres.stop() }
        let nodes = try await FleetNode.startFleet(3, store: postgres.url)
        defer { for node in nodes { node.kill(SIGKILL) } }
        let invite = Self.fleetInvite(nodes.map(\.port))
        let (sessions, collectors) = try await Self.session(invite: invite, players: 3)
        try GroupSessionMessenger(session: sessions[1]).send(Chat(sender: 1, index: -1, text: "state"), retainedAs: "state")
        let blob = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        let attachment = try await GroupSessionJournal(session: sessions[0]).add(blob, label: "survives the owner")
        // The session was created on the first node: it owns the lease.
        #expect(try await postgres.psql("SELECT address FROM coplay_leases").trimmingCharacters(in: .whitespacesAndNewlines)
                == "127.0.0.1:\(nodes[0].port)")

        let count = 600
        let sending = Task { try await Self.send(sessions, count: count) }
        try await Task.sleep(for: .milliseconds(300))
        // Each member's connection states, subscribed before the kill (a subscription starts with
        // the current state): one that lost its connection and got it back has resumed. Polling all
        // of them for "disconnected at once" missed it under load, when one had resumed before
        // another noticed.
        let resumed = LockedBox(Set<Int>())
        let watchers = sessions.map(\.connectionStates).enumerated().map { index, states in
            Task {
                var lost = false
                for await state in states {
                    if state != .connected {
                        lost = true
                    } else if lost {
                        resumed.mutate { _ = $0.insert(index) }
                        return
                    }
                }
            }
        }
        defer { for watcher in watchers { watcher.cancel() } }
        await nodes[0].killAndWait()
        let killed = ContinuousClock.now
        await eventually("every member lost its connection and resumed", timeout: .seconds(30)) {
            resumed.value.count == sessions.count
        }
        let resumedAfter = killed.duration(to: .now)
        print("fleet failover: every member resumed \(resumedAfter) after the owning node was SIGKILLed")
        // Behaviour, not speed: the resume must not wait for the 30 s give-up (the 3 s figure of the
        // issue is measured, on a quiet machine, by scripts/fleet-failover.py; 1.5-3.1 s here under load).
        #expect(resumedAfter <= .seconds(15), "members resumed \(resumedAfter) after the kill")
        let owner = try await postgres.psql("SELECT address FROM coplay_leases").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(owner != "127.0.0.1:\(nodes[0].port)" && !owner.isEmpty, "lease now at \(owner)")

        try await sending.value
        await eventually("everyone got everything") {
            collectors.allSatisfy { $0.values.filter { $0.0.index >= 0 }.count == (sessions.count - 1) * count }
        }
        try await Task.sleep(for: .milliseconds(300))
        Self.expectExactlyOnce(collectors, count: count)
        for session in sessions {
            #expect(session.state == .joined)
            #expect(session.activeParticipants.count == sessions.count)
        }
        // A member joining afterwards (through any node) gets the retained message and the attachment.
        let late = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"), reconnectPolicy: Self.policy)
            .accept(invite)
        let retained = Collector(GroupSessionMessenger(session: late).messages(of: Chat.self))
        await eventually("retained state") { retained.values.contains { $0.0.text == "state" && $0.1.isRetained } }
        let journal = GroupSessionJournal(session: late)
        await eventually("attachment listed") { journal.currentAttachments.contains { $0.id == attachment.id } }
        #expect(try await journal.load(attachment) == blob)
        late.leave()
        for session in sessions { session.leave() }
    }

    @Test("a node frozen with SIGSTOP past its lease, then resumed, never orders the session again: it redirects to the new owner",
          .timeLimit(.minutes(5)))
    func frozenNodeIsFenced() async throws {
        guard let postgres = try await TemporaryPostgres.startIfAvailable() else { return }
        defer { postgres.stop() }
        let nodes = try await FleetNode.startFleet(2, store: postgres.url)
        defer { for node in nodes { node.kill(SIGCONT); node.kill(SIGKILL) } }
        let invite = Self.fleetInvite(nodes.map(\.port))
        let (sessions, collectors) = try await Self.session(invite: invite, players: 2)
        let count = 400
        let sending = Task { try await Self.send(sessions, count: count, pause: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(300))
        nodes[0].kill(SIGSTOP)
        // The members notice the silence, move to the other node, which takes over once the lease expired.
        await eventually("members moved", timeout: .seconds(30)) {
            (try? await postgres.psql("SELECT address FROM coplay_leases"))?.contains("127.0.0.1:\(nodes[1].port)") == true
                && sessions.allSatisfy { $0.connectionState == .connected }
        }
        let epochAfterTakeover = try await postgres.psql("SELECT epoch FROM coplay_leases").trimmingCharacters(in: .whitespacesAndNewlines)
        let logBefore = try await postgres.psql("SELECT count(*), max(sequence) FROM coplay_log")
        nodes[0].kill(SIGCONT)
        // The frozen node wakes with frames in its sockets: it must not stamp them. A member that
        // asks it for the session now is redirected to the owner.
        let probe = try await RelayTransport(host: "127.0.0.1", port: nodes[0].port).connect(logger: Logger(label: "probe"))
        let keys = SessionKeys(invite: invite)
        try probe.send(Frame(type: .hello, session: invite.session, sender: ParticipantID(rawValue: 77),
                             payload: HelloPayload(token: keys.joinToken).encoded()))
        // Its first error frame; the probe is closed after 30 s without one (the loop then ends).
        let answering = Task { () throws -> ErrorPayload? in
            for try await frame in probe.inbound where frame.type == .error { return try ErrorPayload(decoding: frame.payload) }
            return nil
        }
        let deadline = Task {
            try await Task.sleep(for: .seconds(30))
            probe.close()
        }
        let answer = try await answering.value
        deadline.cancel()
        probe.close()
        #expect(answer?.code == .redirect, "answer: \(String(describing: answer))")
        #expect(answer?.detail == "127.0.0.1:\(nodes[1].port)")

        try await sending.value
        await eventually("everyone got everything") {
            collectors.allSatisfy { $0.values.filter { $0.0.index >= 0 }.count == (sessions.count - 1) * count }
        }
        try await Task.sleep(for: .milliseconds(300))
        Self.expectExactlyOnce(collectors, count: count)
        // One order: the stored log's stamps are contiguous, and the epoch did not move back.
        let parts = try await postgres.psql("SELECT count(*), min(sequence), max(sequence) FROM coplay_log")
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").compactMap { Int($0) }
        try #require(parts.count == 3, "coplay_log summary: \(parts)")
        let (rows, lowest, highest) = (parts[0], parts[1], parts[2])
        #expect(rows == highest - lowest + 1, "log rows \(rows) for stamps \(lowest)...\(highest); before the resume: \(logBefore)")
        let epochNow = try await postgres.psql("SELECT epoch FROM coplay_leases").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(epochNow == epochAfterTakeover)
        for session in sessions { session.leave() }
    }

    @Test("PostgreSQL restarted under load: members pause, then continue; nothing acknowledged is lost or repeated",
          .timeLimit(.minutes(5)))
    func databaseRestart() async throws {
        guard let postgres = try await TemporaryPostgres.startIfAvailable() else { return }
        defer { postgres.stop() }
        let nodes = try await FleetNode.startFleet(2, store: postgres.url)
        defer { for node in nodes { node.kill(SIGKILL) } }
        let invite = Self.fleetInvite(nodes.map(\.port))
        let (sessions, collectors) = try await Self.session(invite: invite, players: 2)
        let count = 600
        let sending = Task { try await Self.send(sessions, count: count, pause: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(400))
        await postgres.stopServer()
        let received = collectors.map { $0.count }
        try await Task.sleep(for: .seconds(1))
        try await postgres.start()
        try await sending.value
        await eventually("everyone got everything", timeout: .seconds(60)) {
            collectors.allSatisfy { $0.values.filter { $0.0.index >= 0 }.count == (sessions.count - 1) * count }
        }
        try await Task.sleep(for: .milliseconds(300))
        print("database restart: messages received when it stopped \(received), at the end \(collectors.map(\.count))")
        Self.expectExactlyOnce(collectors, count: count)
        for session in sessions { #expect(session.state == .joined) }
        for session in sessions { session.leave() }
    }
}

/// A `coplay serve --store` child process, owned by swift-subprocess (``ChildProcess``): signalled
/// and awaited without blocking a thread of the cooperative pool. (It was Foundation's `Process`,
/// whose `waitUntilExit()` parks a pool thread; with two of them on a 2-core machine, a parallel run
/// can stall whole.)
struct FleetNode {
    let child: ChildProcess
    let port: Int

    static let binary: String = {
        if let env = ProcessInfo.processInfo.environment["COPLAY_BIN"] { return env }
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { break }
        }
        var bundleDir = Bundle.main.bundleURL
        if bundleDir.pathExtension == "xctest" { bundleDir.deleteLastPathComponent() }
        let besideBundle = bundleDir.appendingPathComponent("coplay")
        if FileManager.default.isExecutableFile(atPath: besideBundle.path) { return besideBundle.path }
        return url.appendingPathComponent(".build/debug/coplay").path
    }()

    static func startFleet(_ count: Int, store: String) async throws -> [FleetNode] {
        var nodes: [FleetNode] = []
        for _ in 0..<count { nodes.append(try await start(store: store)) }
        return nodes
    }

    static func start(store: String) async throws -> FleetNode {
        let port = freePort()
        let child = await ChildProcess.start(binary, [
            "serve", "--listen", "127.0.0.1:\(port)", "--store", store, "--lease-seconds", "2", "--log-level", "notice",
        ])
        let node = FleetNode(child: child, port: port)
        await eventually("relay up", timeout: .seconds(60)) { canConnect(port: port) || !child.isRunning }
        try #require(child.isRunning, "coplay serve on port \(port) ended: \(String(describing: child.termination)); \(child.stderr)")
        return node
    }

    /// Sends `signal` if the node still runs (returns at once).
    func kill(_ signal: Int32) { child.send(signal) }

    /// SIGKILLs the node and waits until it is gone.
    func killAndWait() async {
        child.kill()
        await child.wait()
    }
}
