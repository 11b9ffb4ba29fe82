import GroupSessions
import Logging
import PlaybackCoordinator
import Testing
import TestSupport

/// ``GroupPlayback`` moving to a successor session (``PlaybackSuccession``, docs/protocol.md,
/// "Removing a member" / "Moving") over a real relay: the guard that keeps a gated playback from
/// moving to an ungated successor, and the `started` hook's error in a successor.
@Suite("GroupPlayback moving to a successor session")
struct PlaybackSuccessionTests {
    static let clip = MediaTimeline(identifier: "clip", duration: 30, frameRate: 25)

    /// A gate that lets everything through: enough to make a session "gated" (where only hosts
    /// control, GroupChat's `RoleGate` stands here).
    struct PassingGate: CoordinationGate {
        func outgoing(_ message: CoordinationMessage, from participant: ParticipantID) throws -> CoordinationMessage { message }
        func incoming(_ message: CoordinationMessage, from sender: ParticipantID) -> CoordinationMessage? { message }
    }

    /// What the `started` hook throws in the successor (the app's check failed there).
    struct NoEntryHere: Error, Equatable {}

    /// What became of a member told its session continues in a successor, once the old session ended.
    struct Outcome {
        /// How the run ended: `nil` while it still runs (it moved), else its result.
        var ended: Result<Void, any Error>?
        /// The successor session (the member joined it).
        var successor: GroupSession<TestActivity>
        /// Whether the member had left the successor when the outcome was taken, before the run is
        /// cancelled (a cancelled run leaves it too: looked at afterwards, a run that stayed raced
        /// with its own cancellation, and lost once under load).
        var leftSuccessor: Bool
        /// The sessions `moves` reported.
        var moves: Int
        /// How many coordinators `started` was called with.
        var started: Int
        var logs: [String]
    }

    /// A member alone in a session on a real relay, with a headless player and `gate`: it learns
    /// that the session continues in a successor (made on the same relay, joined, with
    /// `successorGate`), then its session ends. `hook` is its `started` hook (the count of
    /// coordinators it was called with so far, from 1).
    static func move(
        gate: (any CoordinationGate)?, successorGate: (any CoordinationGate)?,
        hook: @escaping @Sendable (Int) throws -> Void = { _ in }
    ) async throws -> Outcome {
        try await withLocalRelay { invite in
            let records = LockedBox<[String]>([])
            let logger = Logger(label: "test") { _ in CapturingLogHandler(records: records) }
            let session = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: logger)
                .activate(TestActivity(item: "clip"), invite: invite)
            try await session.join()
            let playback = try await GroupPlayback.prepare(session: session, timeServer: invite, gate: gate, logger: logger)
            let succession = PlaybackSuccession<TestActivity>()
            let moved = Collector(succession.moves)
            defer { moved.cancel() }
            let started = LockedBox(0)
            let run = Task {
                try await playback.run(
                    HeadlessPlayer(participant: "member", items: [clip], reference: playback.reference, logger: logger),
                    localItem: clip.identifier, name: "member", publishInitialState: true, succession: succession,
                    started: { _ in
                        let count = started.mutate { count -> Int in
                            count += 1
                            return count
                        }
                        try hook(count)
                    })
            }
            defer { run.cancel() }
            try #require(await eventually("the coordinator runs", timeout: .seconds(30)) { started.value == 1 })

            // The successor: another session on the same relay, joined before the old one ends.
            let successorInvite = Invite.generate(host: invite.host, port: invite.port)
            let successor = try await GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: successorInvite), logger: logger)
                .activate(TestActivity(item: "clip"), invite: successorInvite)
            succession.expect {
                guard (try? await successor.join()) != nil else { return nil }
                return .init(session: successor, gate: successorGate)
            }
            try session.end()

            // Either the run ends, or it moved (and then it runs on in the successor).
            let ended = LockedBox<Result<Void, any Error>?>(nil)
            let waiting = Task {
                let result: Result<Void, any Error>
                do { try await run.value; result = .success(()) } catch { result = .failure(error) }
                ended.mutate { $0 = result }
            }
            defer { waiting.cancel() }
            _ = await eventually("the run ends or moves", timeout: .seconds(30)) { ended.value != nil || !moved.values.isEmpty }
            // A moved run: give its successor's hook time to run (and to end the run if it throws).
            if !moved.values.isEmpty {
                _ = await eventually("the successor's hook ran", timeout: .seconds(30)) { started.value == 2 }
                _ = await poll(for: .seconds(5)) { ended.value != nil }
            }
            return Outcome(ended: ended.value, successor: successor, leftSuccessor: Self.left(successor), moves: moved.values.count, started: started.value, logs: records.value)
        }
    }

    /// Whether `condition` holds within `timeout` (polled every 10 ms; no issue when it does not).
    static func poll(for timeout: Duration, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    static func left<A>(_ session: GroupSession<A>) -> Bool {
        if case .invalidated(.left) = session.state { true } else { false }
    }

    @Test("a gated playback moves to a successor that has its own gate, and runs on there")
    func gatedMovesWithAGate() async throws {
        let outcome = try await Self.move(gate: PassingGate(), successorGate: PassingGate())
        #expect(outcome.moves == 1, "\(outcome.logs.suffix(5))")
        #expect(outcome.ended == nil, "the run ended: \(String(describing: outcome.ended))")
        #expect(outcome.started == 2, "started with the successor's coordinator too")
        #expect(!outcome.leftSuccessor, "the member left the successor")
    }

    @Test("a playback whose session had a gate refuses to move to a successor without one: it logs an error, leaves the successor and ends with the old session")
    func gatedRefusesAnUngatedSuccessor() async throws {
        let outcome = try await Self.move(gate: PassingGate(), successorGate: nil)
        #expect(outcome.moves == 0, "it moved to an ungated successor")
        let ended = try #require(outcome.ended, "the run goes on: \(outcome.logs.suffix(5))")
        #expect((try? ended.get()) != nil, "it ends as with the session, not with an error: \(ended)")
        #expect(outcome.started == 1, "started was called with a coordinator of the ungated successor")
        #expect(outcome.leftSuccessor, "it is still in the successor: \(outcome.successor.state)")
        #expect(outcome.logs.contains { $0.hasPrefix("error") && $0.contains("without a gate") }, "\(outcome.logs.suffix(8))")
        // Where everyone controls, no gate on either side: it moves.
        let ungated = try await Self.move(gate: nil, successorGate: nil)
        #expect(ungated.moves == 1 && ungated.ended == nil, "\(ungated.logs.suffix(5))")
    }

    @Test("what the started hook throws with a successor's coordinator ends the playback with that error, as at the first join")
    func startedHookErrorInTheSuccessorEndsThePlayback() async throws {
        let outcome = try await Self.move(gate: PassingGate(), successorGate: PassingGate()) { count in
            if count == 2 { throw NoEntryHere() }
        }
        #expect(outcome.moves == 1)
        let ended = try #require(outcome.ended, "the run goes on after its hook failed in the successor: \(outcome.logs.suffix(5))")
        #expect(throws: NoEntryHere.self) { try ended.get() }
        #expect(outcome.leftSuccessor, "it is still in the successor: \(outcome.successor.state)")
        #expect(outcome.logs.contains { $0.contains("started hook failed") }, "\(outcome.logs.suffix(8))")
    }
}
