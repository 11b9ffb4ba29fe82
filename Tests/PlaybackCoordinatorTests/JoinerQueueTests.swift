import Testing

@testable import PlaybackCoordinator

/// A joiner and the queue: what it does before the group's queue (and the group's state at its
/// request) arrives, and a transition at the queue's end. Each is a defect the group model found
/// (`GroupModelTests.queueRegressions`), here on its own.
@Suite("A joiner and the queue")
struct JoinerQueueTests {
    static let entries = [("e1", "i1"), ("e2", "i2"), ("e3", "i3")].map { id, item in
        QueueEntry(id: id, item: item, title: "Episode \(id.dropFirst())", duration: 3, frameRate: 25, addedBy: "host", addedByName: "host")
    }

    static func state(
        entry: String, command: CommandLabel, at seconds: Double, itemTime: Double = 0, rate: Double = 1, follows: String? = nil
    ) -> StateProposal {
        let item = entries.first { $0.id == entry }!.item
        return StateProposal(
            state: PlaybackState(
                item: item, rate: rate, anchorItemTime: itemTime, anchorReferenceTime: ReferenceTime(seconds: seconds), originator: "host",
                intendedRate: 1, duration: 3, entry: entry),
            command: command, sentAt: ReferenceTime(seconds: seconds - 0.6), follows: follows)
    }

    /// A joiner (holding commands until its own `joined`, as `GroupPlayback` does) that has every item.
    static func joiner() -> CoordinatorCore {
        var configuration = CoordinatorConfiguration()
        configuration.holdsCommandsUntilJoined = true
        return CoordinatorCore(participant: "j", configuration: configuration, localItem: "i1", canPresent: { _ in true })
    }

    static func at(_ seconds: Double) -> ReferenceTime { ReferenceTime(seconds: seconds) }

    @Test("a joiner whose retained state is a transition tells its player nothing until the answer, then plays the group's state")
    func retainedTransitionWaitsForTheAnswer() throws {
        var core = Self.joiner()
        _ = core.receive(.joined("host"), now: Self.at(5))
        // The relay's retained state: a transition into e2 at 4 s, which the group did not take
        // (it had paused e1 at 2 s before that end; the transition came last, so it is retained).
        _ = core.receive(.message(.state(Self.state(entry: "e2", command: .advance, at: 4, follows: "e1")), sender: "host", sequence: 5), now: Self.at(5))
        let joined = core.receive(.joined("j"), now: Self.at(5))
        #expect(CoreHarness.commands(joined).isEmpty, "the player was told the retained transition: \(joined)")
        let request = try #require(CoreHarness.sent(joined).first { if case .queueRequest = $0 { true } else { false } })
        _ = core.receive(.message(request, sender: "j", sequence: 7), now: Self.at(5.01))
        #expect(CoreHarness.commands(core.tick(now: Self.at(5.02))).isEmpty)

        // The answer: the queue, and the group's state at the request (e1 paused at 2 s).
        var paused = Self.state(entry: "e1", command: .pause, at: 3, itemTime: 2, rate: 0).state
        paused.revision = 6
        var queue = PlayQueue()
        queue.apply(.add(Self.entries, at: .end))
        let answer = QueueSnapshotPart.parts(of: queue, snapshot: "host.1", request: 7, through: 7, state: paused, sentAt: Self.at(5.02))
        let answered = core.receive(.message(.queueSnapshot(answer[0]), sender: "host", sequence: 8), now: Self.at(5.03))
        #expect(core.hasQueue && core.state?.entry == "e1")
        let commands = CoreHarness.commands(answered)
        #expect(commands.allSatisfy { $0.expectedItemIdentifier == "i1" } && !commands.isEmpty, "\(commands)")
        guard case .pause(let itemTime, _)? = commands.last?.kind else {
            Issue.record("the player should be paused on e1 at 2 s: \(commands)")
            return
        }
        #expect(itemTime == 2)
    }

    @Test("a joiner waits for an answer from its request's place in the order, however long the relay holds the request")
    func answerWaitCountsFromTheOrder() throws {
        var core = Self.joiner()
        _ = core.receive(.joined("host"), now: Self.at(1))
        let joined = core.receive(.joined("j"), now: Self.at(1))
        let request = try #require(CoreHarness.sent(joined).first { if case .queueRequest = $0 { true } else { false } })
        // The relay is down for 10 s: no answer, and no starting from the retained copy meanwhile.
        _ = core.tick(now: Self.at(11))
        #expect(!core.hasQueue)
        _ = core.receive(.message(request, sender: "j", sequence: 9), now: Self.at(11.5))
        _ = core.tick(now: Self.at(11.5) + QueueReplica.answerTimeout - .milliseconds(1))
        #expect(!core.hasQueue)
        // Nobody answered within the wait after its place in the order: the retained copy (here none).
        _ = core.tick(now: Self.at(11.5) + QueueReplica.answerTimeout)
        #expect(core.hasQueue && core.queue.isEmpty)
    }

    @Test("at the queue's end nothing is proposed; an entry added before the end is moved to on the shared clock")
    func refilledBeforeTheEnd() throws {
        var harness = CoreHarness("me", item: "i1")
        _ = harness.deliver(.queueEdit(QueueEditNotice(edit: .add([Self.entries[0]], at: .end), sentAt: Self.at(0.1))), from: "host", at: 0.1)
        _ = harness.deliver(.state(Self.state(entry: "e1", command: .play, at: 1)), from: "host", at: 0.5)
        // e1 ends at 4 s; the transition is looked at a lead (tens of ms) and 0.5 s before.
        let due = try #require(harness.core.transitionDue)
        #expect(due < Self.at(3.5))
        let nothing = harness.core.tick(now: due)
        #expect(!CoreHarness.sent(nothing).contains { if case .state = $0 { true } else { false } })
        #expect(harness.core.transitionDue == nil)
        _ = harness.deliver(.queueEdit(QueueEditNotice(edit: .add([Self.entries[1]], at: .end), sentAt: Self.at(3.5))), from: "host", at: 3.5)
        let again = try #require(harness.core.nextTickDeadline)
        #expect(again <= Self.at(3.5))
        let proposed = CoreHarness.sent(harness.core.tick(now: Self.at(3.5)))
        let transition = try #require(proposed.compactMap { if case .state(let proposal) = $0 { proposal } else { nil } }.first)
        #expect(transition.command == .advance && transition.follows == "e1" && transition.state.entry == "e2")
        #expect(transition.state.anchorReferenceTime == Self.at(4) && transition.state.anchorItemTime == 0)
    }
}
