import Testing

@testable import PlaybackCoordinator

/// A member that has no copy of the entry the group plays
/// (``CoordinatorConfiguration/suspendsWhileEntryMissing``): it says so, sits the entry out under a
/// `coordinatedPlaybackNotPossible` suspension the group does not wait for, and follows again from
/// the next entry it has.
@Suite("A member missing a queue entry")
struct MissingEntryTests {
    static let entries = [("e1", "i1"), ("e2", "i2"), ("e3", "i3")].map { id, item in
        QueueEntry(id: id, item: item, title: "Episode \(id.dropFirst())", duration: 3, frameRate: 25, addedBy: "host", addedByName: "host")
    }

    /// A member with copies of i1 and i3, in a session whose queue is e1, e2, e3, playing e1.
    static func harness(suspends: Bool = true) -> CoreHarness {
        var configuration = CoordinatorConfiguration()
        configuration.suspendsWhileEntryMissing = suspends
        var harness = CoreHarness(configuration: configuration)
        let has: Set<String> = ["i1", "i3"]
        harness.core = CoordinatorCore(
            participant: "me", configuration: configuration, localItem: "i1", canPresent: { has.contains($0) }, name: "ana")
        _ = harness.core.receive(.joined("me"), now: ReferenceTime(seconds: 0))
        _ = harness.deliver(.queueEdit(QueueEditNotice(edit: .add(entries, at: .end), sentAt: ReferenceTime(seconds: 0.1))), from: "host", at: 0.1)
        _ = harness.deliver(state(entries[0], command: .play, at: 1), from: "host", at: 0.5)
        return harness
    }

    static func state(_ entry: QueueEntry, command: CommandLabel, at seconds: Double, follows: String? = nil) -> CoordinationMessage {
        .state(StateProposal(
            state: PlaybackState(
                item: entry.item, rate: 1, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(seconds: seconds), originator: "host",
                intendedRate: 1, duration: entry.duration, entry: entry.id),
            command: command, sentAt: ReferenceTime(seconds: seconds - 0.5), follows: follows))
    }

    static func suspensions(_ actions: [CoordinatorAction]) -> [SuspensionNotice] {
        CoreHarness.sent(actions).compactMap { if case .suspension(let notice) = $0 { notice } else { nil } }
    }

    @Test("the group moves to an entry it lacks: a missingEntry event, a suspension the group does not wait for, no command")
    func sitsOut() throws {
        var harness = Self.harness()
        let moved = harness.deliver(Self.state(Self.entries[1], command: .next, at: 4), from: "host", at: 3.5)
        let events = CoreHarness.events(moved)
        let missing = try #require(events.first { $0.type == .missingEntry })
        #expect(missing.entry == "e2" && missing.item == "i2" && missing.detail == "Episode 2" && missing.originator == "me")
        #expect(!events.contains { $0.type == .commandIgnored })
        #expect(CoreHarness.commands(moved).isEmpty)
        let begin = try #require(Self.suspensions(moved).first)
        #expect(begin.phase == .begin && begin.reason == .coordinatedPlaybackNotPossible && !begin.waits)
        #expect(harness.core.suspensionReasons == [.coordinatedPlaybackNotPossible])
        // The group does not wait for it.
        let echoed = harness.deliver(.suspension(begin), from: "me", at: 3.6)
        #expect(!harness.core.isWaiting(at: ReferenceTime(seconds: 5)))
        #expect(CoreHarness.commands(echoed).isEmpty)
        // Another message about the same entry says nothing again.
        let again = harness.deliver(Self.state(Self.entries[1], command: .seek, at: 4.5), from: "host", at: 4.2)
        #expect(!CoreHarness.events(again).contains { $0.type == .missingEntry })
        #expect(Self.suspensions(again).isEmpty)
    }

    @Test("the group reaches an entry it has: the suspension ends and the player gets that entry from its first instant")
    func comesBack() throws {
        var harness = Self.harness()
        let moved = harness.deliver(Self.state(Self.entries[1], command: .next, at: 4), from: "host", at: 3.5)
        _ = harness.deliver(.suspension(try #require(Self.suspensions(moved).first)), from: "me", at: 3.6)
        // e2 (3 s from 4 s) ends at 7 s: the transition the group's members propose at its end.
        let back = harness.deliver(Self.state(Self.entries[2], command: .advance, at: 7, follows: "e2"), from: "host", at: 6.4)
        let end = try #require(Self.suspensions(back).first)
        #expect(end.phase == .end && end.reason == .coordinatedPlaybackNotPossible)
        #expect(harness.core.suspensionReasons.isEmpty)
        #expect(harness.core.localItem == "i3")
        let commands = CoreHarness.commands(back)
        #expect(!commands.isEmpty && commands.allSatisfy { $0.expectedItemIdentifier == "i3" })
        // Playing from e3's first instant (then held at its end, 3 s later).
        #expect(commands.contains { $0.kind == .play(itemTime: 0, referenceTime: ReferenceTime(seconds: 7), rate: 1) }, "\(commands.map(\.kind))")
        #expect(!CoreHarness.events(back).contains { $0.type == .missingEntry })
    }

    @Test("from one missing entry to another: one suspension, one event per entry")
    func twoMissing() throws {
        var harness = Self.harness()
        var fourth = Self.entries[1]
        fourth.id = "e4"
        _ = harness.deliver(.queueEdit(QueueEditNotice(edit: .add([fourth], at: .end), sentAt: ReferenceTime(seconds: 1))), from: "host", at: 1)
        let first = harness.deliver(Self.state(Self.entries[1], command: .next, at: 4), from: "host", at: 3.5)
        let second = harness.deliver(Self.state(fourth, command: .jump, at: 5), from: "host", at: 4.5)
        #expect(Self.suspensions(first).count == 1 && Self.suspensions(second).isEmpty)
        #expect(CoreHarness.events(second).filter { $0.type == .missingEntry }.map(\.entry) == ["e4"])
        #expect(harness.core.suspensionReasons == [.coordinatedPlaybackNotPossible])
    }

    @Test("without the setting, a member without the entry only reports the ignored command")
    func settingOff() throws {
        var harness = Self.harness(suspends: false)
        let moved = harness.deliver(Self.state(Self.entries[1], command: .next, at: 4), from: "host", at: 3.5)
        #expect(CoreHarness.events(moved).contains { $0.type == .commandIgnored })
        #expect(!CoreHarness.events(moved).contains { $0.type == .missingEntry })
        #expect(Self.suspensions(moved).isEmpty)
    }
}
