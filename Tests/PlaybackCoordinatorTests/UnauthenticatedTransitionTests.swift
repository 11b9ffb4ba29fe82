import Testing

@testable import PlaybackCoordinator

/// Where only hosts control, a member without control still proposes the transition at an entry's
/// end, unsigned (the channel's gate marks it ``StateProposal/isUnauthenticated``): the program moves
/// on whether or not a controller is there. The core takes nothing from such a proposal but the
/// trigger: it applies the transition it computes itself, and only when the proposal names it.
@Suite("Unauthenticated transitions at an entry's end")
struct UnauthenticatedTransitionTests {
    static let entries = [("e1", "i1"), ("e2", "i2"), ("e3", "i3")].map { id, item in
        QueueEntry(id: id, item: item, title: "Episode \(id.dropFirst())", duration: 3, frameRate: 25, addedBy: "host", addedByName: "host")
    }

    /// A member in a session whose queue is e1, e2, e3, playing e1 from 1 s (its end: 4 s).
    static func harness() -> CoreHarness {
        var harness = CoreHarness()
        _ = harness.deliver(.queueEdit(QueueEditNotice(edit: .add(entries, at: .end), sentAt: ReferenceTime(seconds: 0.1))), from: "host", at: 0.1)
        _ = harness.deliver(state(item: "i1", entry: "e1", command: .play, at: 1), from: "host", at: 0.5)
        return harness
    }

    static func state(
        item: String, entry: String, command: CommandLabel, at seconds: Double, rate: Double = 1, duration: Double = 3,
        follows: String? = nil, unauthenticated: Bool = false
    ) -> CoordinationMessage {
        .state(StateProposal(
            state: PlaybackState(
                item: item, rate: rate, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(seconds: seconds), originator: "viewer",
                intendedRate: 1, duration: duration, entry: entry),
            command: command, sentAt: ReferenceTime(seconds: seconds - 0.6), follows: follows, isUnauthenticated: unauthenticated))
    }

    @Test("the transition the member computes applies, with its own values (the queue's duration), under the sender's name")
    func honest() throws {
        var harness = Self.harness()
        // The sender claims a 999 s entry and a rate of 4: only the trigger counts.
        let moved = harness.deliver(
            Self.state(item: "i2", entry: "e2", command: .advance, at: 4, rate: 4, duration: 999, follows: "e1", unauthenticated: true),
            from: "viewer", at: 3.4)
        let state = try #require(harness.core.state)
        #expect(state.entry == "e2" && state.item == "i2")
        #expect(state.anchorReferenceTime == ReferenceTime(seconds: 4) && state.anchorItemTime == 0)
        #expect(state.rate == 1 && state.duration == 3 && state.originator == "viewer")
        let changed = try #require(CoreHarness.events(moved).first { $0.type == .itemChanged })
        #expect(changed.reason == "end" && changed.entry == "e2")
    }

    @Test(
        "a forged one changes nothing",
        arguments: [
            ("another anchor", state(item: "i2", entry: "e2", command: .advance, at: 4.5, follows: "e1", unauthenticated: true)),
            ("another entry", state(item: "i3", entry: "e3", command: .advance, at: 4, follows: "e1", unauthenticated: true)),
            ("another item", state(item: "i9", entry: "e2", command: .advance, at: 4, follows: "e1", unauthenticated: true)),
            ("another entry it follows", state(item: "i3", entry: "e3", command: .advance, at: 4, follows: "e2", unauthenticated: true)),
            ("not a transition", state(item: "i1", entry: "e1", command: .pause, at: 2, rate: 0, follows: "e1", unauthenticated: true)),
        ])
    func forged(_ what: String, _ message: CoordinationMessage) throws {
        var harness = Self.harness()
        let before = harness.core.state
        let actions = harness.deliver(message, from: "viewer", at: 3.4)
        #expect(harness.core.state == before, "\(what)")
        #expect(CoreHarness.events(actions).isEmpty, "\(what)")
    }

    @Test("a member without a state (a joiner) cannot check it and takes nothing; the signed state it reads later applies")
    func joiner() throws {
        var harness = CoreHarness()
        _ = harness.deliver(.queueEdit(QueueEditNotice(edit: .add(Self.entries, at: .end), sentAt: ReferenceTime(seconds: 0.1))), from: "host", at: 0.1)
        _ = harness.deliver(
            Self.state(item: "i2", entry: "e2", command: .advance, at: 4, follows: "e1", unauthenticated: true), from: "viewer", at: 3.4)
        #expect(harness.core.state == nil)
        _ = harness.deliver(Self.state(item: "i1", entry: "e1", command: .play, at: 1), from: "host", at: 3.5)
        #expect(harness.core.state?.entry == "e1")
    }

    @Test("of the members' identical transitions the first ordered applies; a later one, signed or not, changes nothing")
    func firstWins() throws {
        var harness = Self.harness()
        _ = harness.deliver(
            Self.state(item: "i2", entry: "e2", command: .advance, at: 4, follows: "e1", unauthenticated: true), from: "viewer", at: 3.4)
        let revision = try #require(harness.core.state?.revision)
        _ = harness.deliver(Self.state(item: "i2", entry: "e2", command: .advance, at: 4, follows: "e1"), from: "host", at: 3.45)
        _ = harness.deliver(
            Self.state(item: "i2", entry: "e2", command: .advance, at: 4, follows: "e1", unauthenticated: true), from: "other", at: 3.5)
        #expect(harness.core.state?.revision == revision && harness.core.state?.entry == "e2")
        // e2 ends at 7 s: the next one follows e2.
        _ = harness.deliver(
            Self.state(item: "i3", entry: "e3", command: .advance, at: 7, follows: "e2", unauthenticated: true), from: "viewer", at: 6.4)
        #expect(harness.core.state?.entry == "e3" && harness.core.state?.anchorReferenceTime == ReferenceTime(seconds: 7))
    }
}
