import Foundation
import Testing

@testable import PlaybackCoordinator

/// The end of an item on the shared clock, and the proposals the group refuses.
@Suite("The item's end and refused commands")
struct ItemEndTests {
    static let clip = PresenceReport.ItemSummary(item: "clip", duration: 60)

    static func harness(_ participant: PlaybackParticipantID = "me", items: [PresenceReport.ItemSummary] = [clip]) -> CoreHarness {
        var harness = CoreHarness(participant)
        harness.core = CoordinatorCore(participant: participant, localItem: "clip", items: items)
        _ = harness.core.receive(.joined(participant), now: ReferenceTime(seconds: 0))
        return harness
    }

    static func state(_ actions: [CoordinatorAction]) -> PlaybackState? {
        for case .state(let proposal) in CoreHarness.sent(actions) { return proposal.state }
        return nil
    }

    @Test("a playing timeline ends at the item's duration: the last segment holds the end, attributed to nobody")
    func timelineEnds() throws {
        var harness = Self.harness()
        let proposed = try harness.core.proposeSeek(to: 50, now: ReferenceTime(seconds: 10))
        #expect(Self.state(proposed)?.duration == 60, "the proposal carries the item's duration")
        _ = harness.loop(at: 10) { core, now in proposed }
        let applied = try harness.loop(at: 11) { core, now in try core.proposePlay(now: now) }
        let state = try #require(harness.core.state)
        #expect(state.rate == 1 && state.duration == 60)
        let segments = harness.core.segments()
        let end = try #require(segments.last)
        #expect(end.ended && end.rate == 0 && end.itemTime == 60)
        #expect(end.start == state.anchorReferenceTime + .secondsRounded(60 - state.anchorItemTime))
        #expect(harness.core.effectiveItemTime(at: end.start + .seconds(30)) == 60)
        // The player is told to stop there, by the same state (no new proposal, nobody's command).
        let commands = CoreHarness.commands(applied)
        #expect(commands.last.map { if case .pause(let itemTime, let at) = $0.kind { itemTime == 60 && at == end.start } else { false } } == true,
                "commands: \(commands.map(\.kind))")
        // One itemEnded event when the end comes, with no originator; the tick deadline wakes for it.
        #expect(harness.core.nextTickDeadline.map { $0 <= end.start } == true)
        #expect(CoreHarness.events(harness.core.tick(now: end.start - .milliseconds(1))).allSatisfy { $0.type != .itemEnded })
        let ended = CoreHarness.events(harness.core.tick(now: end.start)).filter { $0.type == .itemEnded }
        #expect(ended.count == 1)
        #expect(ended.first?.originator == nil && ended.first?.itemTime == 60 && ended.first?.item == "clip")
        #expect(CoreHarness.events(harness.core.tick(now: end.start + .seconds(1))).allSatisfy { $0.type != .itemEnded })
    }

    @Test("a wait before the end moves the end later by the wait; a wait after it changes nothing")
    func waitMovesTheEnd() throws {
        var harness = Self.harness()
        _ = try harness.loop(at: 0) { core, now in try core.proposeSeek(to: 55, now: now) }
        _ = try harness.loop(at: 1) { core, now in try core.proposePlay(now: now) }
        let before = try #require(harness.core.segments().last)
        let begun = harness.core.beginSuspension(.buffering, now: ReferenceTime(seconds: 2))
        for message in CoreHarness.sent(begun.actions) { _ = harness.deliver(message, at: 2) }
        let ended = try harness.core.endSuspension(begun.id, now: ReferenceTime(seconds: 4))
        for message in CoreHarness.sent(ended) { _ = harness.deliver(message, at: 4) }
        let after = try #require(harness.core.segments().last)
        #expect(after.ended)
        #expect(abs((after.start - before.start).secondsValue - 2) < 1e-6, "the end moved by \((after.start - before.start).secondsValue) s")
    }

    @Test("an end is reported once: waits while the group is held there, folded a minute later, start its last segment anew and say nothing")
    func endReportedOnce() throws {
        var harness = Self.harness()
        _ = try harness.loop(at: 0) { core, now in try core.proposeSeek(to: 55, now: now) }
        _ = try harness.loop(at: 1) { core, now in try core.proposePlay(now: now) }
        let end = try #require(harness.core.segments().last)
        #expect(CoreHarness.events(harness.core.tick(now: end.start)).filter { $0.type == .itemEnded }.count == 1)
        var ended = 0
        for wait in 0..<3 {
            // A member buffers while the group is held at the end (found: 270 one-shot suspends said
            // "ended" 114 times on the host, once per wait as it was folded).
            // `coplay control suspend`: a member that joins, suspends, ends it and leaves.
            let at = end.start + .seconds(2 + 4 * Double(wait))
            let member = PlaybackParticipantID("ctl\(wait)")
            var other = CoordinatorCore(participant: member, localItem: nil, items: [])
            _ = harness.core.receive(.joined(member), now: at)
            _ = other.receive(.joined(member), now: at)
            let begun = other.beginSuspension(.buffering, now: at)
            for message in CoreHarness.sent(begun.actions) { _ = harness.deliver(message, from: member, at: at.seconds) }
            let over = try other.endSuspension(begun.id, now: at + .seconds(1))
            for message in CoreHarness.sent(over) { _ = harness.deliver(message, from: member, at: (at + .seconds(1)).seconds) }
            _ = harness.core.receive(.left(member), now: at + .seconds(1.5))
            ended += CoreHarness.events(harness.core.tick(now: at + .seconds(3))).filter { $0.type == .itemEnded }.count
        }
        // A minute later each wait is folded into the state's anchor, which then lies at the wait's
        // end: the ended timeline's last segment starts there, later than the end it reported.
        for second in 60...75 {
            ended += CoreHarness.events(harness.core.tick(now: end.start + .seconds(Double(second)))).filter { $0.type == .itemEnded }.count
        }
        let last = try #require(harness.core.segments().last)
        #expect(last.ended && last.itemTime == 60)
        #expect(last.start > end.start, "the folded waits start the last segment anew (what the old rule reported each time)")
        #expect(ended == 0)
        // A seek back and play: a new end, reported again when it comes.
        _ = try harness.loop(at: (last.start + .seconds(5)).seconds) { core, now in try core.proposeSeek(to: 58, now: now) }
        _ = try harness.loop(at: (last.start + .seconds(6)).seconds) { core, now in try core.proposePlay(now: now) }
        let again = try #require(harness.core.segments().last)
        #expect(CoreHarness.events(harness.core.tick(now: again.start)).filter { $0.type == .itemEnded }.count == 1)
    }

    @Test("a member without the file learns the duration from the state; a paused state past the end holds the end")
    func durationFromTheState() throws {
        var owner = Self.harness("alice")
        let proposed = try owner.core.proposeSeek(to: 59, now: ReferenceTime(seconds: 1))
        var viewer = CoreHarness("bob", item: nil)
        _ = viewer.core.receive(.joined("alice"), now: ReferenceTime(seconds: 1))
        for message in CoreHarness.sent(proposed) { _ = viewer.deliver(message, from: "alice", at: 1) }
        #expect(viewer.core.duration(of: "clip") == 60)
        #expect(throws: PlaybackCoordinatorError.seekPastEnd(61, duration: 60)) {
            try viewer.core.proposeSeek(to: 61, now: ReferenceTime(seconds: 2))
        }
        // A state from an older member, past the end and paused: the timeline holds the end.
        var state = PlaybackState(item: "clip", rate: 0, anchorItemTime: 500, anchorReferenceTime: ReferenceTime(seconds: 3), originator: "old")
        state.duration = 60
        _ = viewer.deliver(.state(StateProposal(state: state, command: .seek, sentAt: ReferenceTime(seconds: 2))), from: "old", at: 2)
        #expect(viewer.core.segments() == [TimelineSegment(start: ReferenceTime(seconds: 3), itemTime: 60, rate: 0, waiting: false)])
    }

    @Test("seeks outside the item are refused with the item's length; rates outside the range as before")
    func refusals() throws {
        var harness = Self.harness()
        #expect(throws: PlaybackCoordinatorError.seekPastEnd(500, duration: 60)) {
            try harness.core.proposeSeek(to: 500, now: ReferenceTime(seconds: 1))
        }
        #expect("\(PlaybackCoordinatorError.seekPastEnd(500, duration: 60))".contains("the item is 60.0 s long"))
        #expect(throws: PlaybackCoordinatorError.invalidItemTime(-1)) { try harness.core.proposeSeek(to: -1, now: ReferenceTime(seconds: 1)) }
        #expect(throws: PlaybackCoordinatorError.invalidRate(32)) { try harness.core.proposeRate(32, now: ReferenceTime(seconds: 1)) }
        // The end itself is a valid seek (the last frame).
        #expect(throws: Never.self) { try harness.core.proposeSeek(to: 60, now: ReferenceTime(seconds: 1)) }
    }

    @Test("ending a suspension with a time past the end still sends the end, and proposes the end itself")
    func endSuspensionPastTheEnd() throws {
        var harness = Self.harness()
        let begun = harness.core.beginSuspension(.buffering, now: ReferenceTime(seconds: 1))
        for message in CoreHarness.sent(begun.actions) { _ = harness.deliver(message, at: 1) }
        let ended = try harness.core.endSuspension(begun.id, proposing: 75, now: ReferenceTime(seconds: 2))
        let sent = CoreHarness.sent(ended)
        #expect(sent.contains { if case .suspension(let notice) = $0 { notice.phase == .end && notice.proposedItemTime == 60 } else { false } })
        #expect(Self.state(ended)?.anchorItemTime == 60)
        #expect(harness.core.openSuspensions.isEmpty)
        // An invalid time is refused before anything changes: the suspension stays open.
        let again = harness.core.beginSuspension(.buffering, now: ReferenceTime(seconds: 3))
        #expect(throws: PlaybackCoordinatorError.invalidItemTime(-2)) {
            try harness.core.endSuspension(again.id, proposing: -2, now: ReferenceTime(seconds: 4))
        }
        #expect(harness.core.openSuspensions == [again.id])
    }

    @Test("an item change nobody could follow is refused: nobody has it, or only the sender among the players")
    func itemAvailability() throws {
        var control = CoreHarness("control", item: nil)
        control.core = CoordinatorCore(participant: "control")
        let now = ReferenceTime(seconds: 1)
        for member: PlaybackParticipantID in ["alice", "bob"] { _ = control.core.receive(.joined(member), now: now) }
        #expect(!control.core.heardFromEveryMember)
        // Who is there is known once the member's own `joined` came (after the others' at admission).
        _ = control.core.receive(.joined("control"), now: now)
        let alice = PresenceReport(
            sentAt: now, observedDelay: .zero, preroll: .zero, item: "a", name: "alice",
            items: [.init(item: "a", duration: 60), .init(item: "b", duration: 30)])
        let bob = PresenceReport(sentAt: now, observedDelay: .zero, preroll: .zero, item: "a", name: "bob", items: [.init(item: "a", duration: 60)])
        _ = control.deliver(.presence(alice), from: "alice", at: 1)
        _ = control.deliver(.presence(bob), from: "bob", at: 1)
        #expect(control.core.heardFromEveryMember)
        #expect(control.core.itemUnavailability("a") == nil)
        #expect(control.core.itemUnavailability("b") == nil, "alice has it")
        #expect(control.core.members(having: "b") == ["alice"])
        #expect(control.core.duration(of: "b") == 30)
        let nobody = try #require(control.core.itemUnavailability("v2:1:00"))
        #expect("\(nobody)".contains("no member has it"))
        // From alice's side: b is hers alone while bob plays, so bob could not follow.
        var aliceCore = Self.harness("alice", items: [.init(item: "a", duration: 60), .init(item: "b", duration: 30)])
        _ = aliceCore.core.receive(.joined("bob"), now: now)
        _ = aliceCore.deliver(.presence(bob), from: "bob", at: 1)
        #expect("\(try #require(aliceCore.core.itemUnavailability("b")))".contains("only this one"))
        // Alone, a member may switch to any item it has.
        let alone = Self.harness("solo", items: [.init(item: "a", duration: 60), .init(item: "b", duration: 30)])
        #expect(alone.core.itemUnavailability("b") == nil)
    }

    @Test("presence reports carry the member's items and durations; a member without items sends none")
    func presenceCarriesItems() throws {
        var harness = Self.harness()
        let report = CoreHarness.sent(harness.core.tick(now: ReferenceTime(seconds: 1))).compactMap { message -> PresenceReport? in
            if case .presence(let report) = message { report } else { nil }
        }.first
        #expect(report?.items == [Self.clip])
        var bare = CoreHarness("control", item: nil)
        let bareReport = CoreHarness.sent(bare.core.tick(now: ReferenceTime(seconds: 1))).compactMap { message -> PresenceReport? in
            if case .presence(let report) = message { report } else { nil }
        }.first
        #expect(bareReport != nil && bareReport?.items == nil)
        // On the wire: an optional field, left out when nil, so older members decode it.
        let data = try JSONEncoder().encode(try #require(bareReport))
        #expect(!String(decoding: data, as: UTF8.self).contains("items"))
    }
}
