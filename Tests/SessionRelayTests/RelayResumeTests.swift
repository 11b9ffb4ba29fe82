import Foundation
import GroupSessions
import Logging
import SessionRelay
import Testing

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

@Suite("Reconnect and resume (TCP on loopback)", .serialized, .timeLimit(.minutes(10)))
struct RelayResumeTests {
    /// Sends `count` reliable messages from each sender, a few at a time.
    static func send(_ senders: [GroupSession<WatchMovie>], count: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (number, session) in senders.enumerated() {
                group.addTask {
                    let messenger = GroupSessionMessenger(session: session)
                    for index in 0..<count {
                        try messenger.send(Chat(sender: number, index: index))
                        if index % 20 == 19 { try await Task.sleep(for: .milliseconds(2)) }
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Every member got every other sender's messages exactly once, in order.
    static func expectExactlyOnce(
        _ collectors: [Collector<(Chat, MessageContext)>], senders: Int, count: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (member, collector) in collectors.enumerated() {
            for sender in 0..<senders where sender != member {
                let indices = collector.values.filter { $0.0.sender == sender && $0.0.index >= 0 }.map(\.0.index)
                #expect(indices == Array(0..<count), "member \(member) from sender \(sender): \(indices.count) messages",
                        sourceLocation: sourceLocation)
            }
        }
    }

    @Test("connections cut mid-stream while 3 senders send thousands of reliable messages: exactly once, in order, no presence flapping")
    func cutMidStream() async throws {
        let count = 3_000
        try await withRelay { relay, port in
            let transports = (0..<4).map { _ in CuttableTransport(port: port) }
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            var sessions: [GroupSession<WatchMovie>] = []
            for (number, transport) in transports.enumerated() {
                let center = GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test"))
                if number == 0 {
                    sessions.append(try await center.activate(WatchMovie(movie: "m"), invite: invite))
                    try await sessions[0].join()
                } else {
                    sessions.append(try await center.accept(invite))
                }
            }
            let collectors = sessions.map { Collector(GroupSessionMessenger(session: $0).messages(of: Chat.self)) }
            for session in sessions { try await session.join() }
            await eventually("all joined") { sessions.allSatisfy { $0.activeParticipants.count == 4 } }
            let presence = Collector(sessions[0].activeParticipantsUpdates)
            let states = Collector(sessions[3].connectionStates)

            let senders = Array(sessions.prefix(3))
            let sending = Task { try await Self.send(senders, count: count) }
            // Cut the receiver three times and one sender twice while the messages flow.
            for round in 0..<3 {
                try await Task.sleep(for: .milliseconds(150))
                let (receiver, sender) = (transports[3].connectionCount, transports[1].connectionCount)
                transports[3].cut()
                if round < 2 { transports[1].cut() }
                await eventually("cut members resumed") {
                    transports[3].connectionCount > receiver && sessions[3].connectionState == .connected
                        && (round == 2 || (transports[1].connectionCount > sender && sessions[1].connectionState == .connected))
                }
            }
            try await sending.value
            await eventually("everyone got everything") {
                collectors.enumerated().allSatisfy { member, collector in
                    collector.count == (member < 3 ? 2 * count : 3 * count)
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            Self.expectExactlyOnce(collectors, senders: 3, count: count)
            for session in sessions {
                #expect(session.state == .joined)
                #expect(session.rejectedFrameCount == 0)
            }
            #expect(transports[3].connectionCount == 4)
            #expect(relay.metrics.counters.resumes >= 5)
            #expect(presence.values.allSatisfy { $0.count == 4 }, "no left/joined flapping")
            #expect(states.values.contains(.reconnecting(attempt: 0)))
            #expect(states.values.last == .connected)
        }
    }

    @Test("the relay gone longer than the give-up time: the session invalidates with a clear reason")
    func giveUp() async throws {
        let relay = try await RelayProcess.start(dataDirectory: nil)
        let port = relay.port
        defer { relay.kill(SIGKILL) }
        var policy = ReconnectPolicy()
        policy.giveUpAfter = .seconds(2)
        let center = GroupActivityCenter<WatchMovie>(
            transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"), reconnectPolicy: policy)
        let session = try await center.activate(WatchMovie(movie: "m"), invite: Invite.generate(host: "127.0.0.1", port: port))
        try await session.join()
        let states = Collector(session.states)
        await relay.stop(SIGKILL)
        await eventually("invalidated", timeout: .seconds(60)) {
            if case .invalidated = session.state { true } else { false }
        }
        guard case .invalidated(.connectionLost(let reason)) = session.state else {
            Issue.record("unexpected state \(session.state)")
            return
        }
        #expect(reason.contains("could not resume the session within 2"))
        #expect(states.values.first == .joined)
    }

    @Test("the relay process is SIGKILLed and restarted on its data directory: members resume, nothing lost or repeated, retained state and attachments intact")
    func relayRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-resume-\(UInt64.random(in: 0...UInt64.max))")
        defer { try? FileManager.default.removeItem(at: directory) }
        var relay = try await RelayProcess.start(dataDirectory: directory.path)
        let port = relay.port
        defer { relay.kill(SIGKILL) }

        let count = 2_000
        let invite = Invite.generate(host: "127.0.0.1", port: port)
        var sessions: [GroupSession<WatchMovie>] = []
        for number in 0..<3 {
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            if number == 0 {
                sessions.append(try await center.activate(WatchMovie(movie: "before"), invite: invite))
                try await sessions[0].join()
            } else {
                sessions.append(try await center.accept(invite))
            }
        }
        let collectors = sessions.map { Collector(GroupSessionMessenger(session: $0).messages(of: Chat.self)) }
        for session in sessions { try await session.join() }
        await eventually("all joined") { sessions.allSatisfy { $0.activeParticipants.count == 3 } }
        try GroupSessionMessenger(session: sessions[1]).send(Chat(sender: 1, index: -1, text: "state"), retainedAs: "state")

        // A journal attachment stored before the kill must survive it.
        let blob = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })
        let attachment = try await GroupSessionJournal(session: sessions[0]).add(blob, label: "survives the restart")

        let senders = sessions
        let sending = Task { try await Self.send(senders, count: count) }
        try await Task.sleep(for: .milliseconds(400))
        await relay.stop(SIGKILL)
        await eventually("members notice") { sessions.allSatisfy { $0.connectionState != .connected } }
        relay = try await RelayProcess.start(port: port, dataDirectory: directory.path)
        try await sending.value
        await eventually("everyone got everything") {
            collectors.allSatisfy { $0.values.filter { $0.0.index >= 0 }.count == 2 * count }
        }
        try await Task.sleep(for: .milliseconds(300))
        Self.expectExactlyOnce(
            collectors.map { collector in collector }, senders: 3, count: count)
        for (number, collector) in collectors.enumerated() {
            let indices = collector.values.filter { $0.0.index >= 0 }
            #expect(indices.count == 2 * count, "member \(number)")
        }
        for session in sessions {
            #expect(session.state == .joined)
            #expect(session.rejectedFrameCount == 0)
            #expect(session.activeParticipants.count == 3)
        }

        // A late joiner after the restart gets the activity and the retained message at once.
        try sessions[0].setActivity(WatchMovie(movie: "after"))
        await eventually("activity converged") { sessions.allSatisfy { $0.activity.movie == "after" } }
        let late = try await GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            .accept(invite)
        #expect(late.activity.movie == "after")
        let retained = Collector(GroupSessionMessenger(session: late).messages(of: Chat.self))
        await eventually("retained state") { retained.values.contains { $0.0.text == "state" && $0.1.isRetained } }
        // ... and the attachment, from the relay's files, without anyone re-sending it.
        let lateJournal = GroupSessionJournal(session: late)
        await eventually("attachment listed") { lateJournal.currentAttachments.contains { $0.id == attachment.id } }
        #expect(try await lateJournal.load(attachment) == blob)
        late.leave()
        for session in sessions { session.leave() }
        // The last member out deletes the session directory.
        let sessionDirectory = directory.appendingPathComponent("sessions/\(invite.session)")
        await eventually("session directory deleted") { !FileManager.default.fileExists(atPath: sessionDirectory.path) }
    }
}

/// A `coplay serve` child process (a ``ChildProcess``: swift-subprocess, nothing blocks the pool).
struct RelayProcess {
    let child: ChildProcess
    /// The port it listens on (TCP, and UDP for time).
    let port: Int

    static let binary: URL = {
        if let env = ProcessInfo.processInfo.environment["COPLAY_BIN"] { return URL(fileURLWithPath: env) }
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { break }
        }
        var bundleDir = Bundle.main.bundleURL
        if bundleDir.pathExtension == "xctest" { bundleDir.deleteLastPathComponent() }
        let besideBundle = bundleDir.appendingPathComponent("coplay")
        if FileManager.default.isExecutableFile(atPath: besideBundle.path) { return besideBundle }
        return url.appendingPathComponent(".build/debug/coplay")
    }()

    struct DidNotStart: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts `coplay serve` on `port` (0: the kernel picks a free one) and returns once it printed
    /// "coplay relay listening on HOST:PORT", which it does after both its TCP and UDP sockets are
    /// bound. It tries again, a few times, when it exits first: with port 0 the UDP port of the same
    /// number may be taken, and a fixed port (a restart) may still be held for a moment.
    static func start(port: Int = 0, dataDirectory: String?) async throws -> RelayProcess {
        var failures: [String] = []
        for attempt in 1...5 {
            let child = await ChildProcess.start(
                binary.path,
                ["serve", "--listen", "127.0.0.1:\(port)", "--log-level", "notice"]
                    + (dataDirectory.map { ["--data-dir", $0] } ?? []))
            let line = await child.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("coplay relay listening on") }
            if let line, let bound = line.split(separator: ":").last.flatMap({ Int($0) }) {
                return RelayProcess(child: child, port: bound)
            }
            child.kill()
            let ended = await child.wait()
            failures.append("attempt \(attempt): \(ended): \(child.stderr.suffix(500))")
            try await Task.sleep(for: .milliseconds(200))
        }
        throw DidNotStart(description: "coplay serve on port \(port) did not start: \(failures.joined(separator: "; "))")
    }

    /// Sends `signal` (returns at once; see ``stop(_:)``).
    func kill(_ signal: Int32) {
        child.send(signal)
    }

    /// Sends `signal` and waits until the relay has exited.
    func stop(_ signal: Int32) async {
        child.send(signal)
        await child.wait()
    }
}
