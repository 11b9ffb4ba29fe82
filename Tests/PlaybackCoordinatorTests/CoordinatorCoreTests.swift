import Foundation
import PropertyBased
import Testing

@testable import PlaybackCoordinator

/// Drives one core by hand: proposals are "sent" by taking them out of the actions and handing
/// them back with the next sequence number, as the relay would.
struct CoreHarness {
    var core: CoordinatorCore
    var sequence: UInt64 = 0

    init(_ participant: PlaybackParticipantID = "me", item: String? = "clip", configuration: CoordinatorConfiguration = .init()) {
        core = CoordinatorCore(participant: participant, configuration: configuration, localItem: item)
        _ = core.receive(.joined(participant), now: ReferenceTime(seconds: 0))
    }

    static func sent(_ actions: [CoordinatorAction]) -> [CoordinationMessage] {
        actions.compactMap { if case .send(let message, _) = $0 { message } else { nil } }
    }

    static func commands(_ actions: [CoordinatorAction]) -> [PlaybackCommand] {
        actions.compactMap { if case .command(let command) = $0 { command } else { nil } }
    }

    static func events(_ actions: [CoordinatorAction]) -> [PlaybackEvent] {
        actions.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    /// Delivers `message` from `sender` with the next sequence number.
    mutating func deliver(_ message: CoordinationMessage, from sender: PlaybackParticipantID = "me", at seconds: Double) -> [CoordinatorAction] {
        sequence += 1
        return core.receive(.message(message, sender: sender, sequence: sequence), now: ReferenceTime(seconds: seconds))
    }

    /// Proposes via `body` at `seconds` and delivers every proposal back right away.
    mutating func loop(at seconds: Double, _ body: (inout CoordinatorCore, ReferenceTime) throws -> [CoordinatorAction]) rethrows -> [CoordinatorAction] {
        let proposed = try body(&core, ReferenceTime(seconds: seconds))
        var actions: [CoordinatorAction] = []
        for message in Self.sent(proposed) where !(message.isPresence) { actions += deliver(message, at: seconds) }
        return actions
    }
}

extension CoordinationMessage {
    var isPresence: Bool { if case .presence = self { true } else { false } }
    /// A state or a suspension notice: a message that moves the group's timeline.
    var isTimeline: Bool {
        switch self {
        case .state, .suspension: true
        case .presence, .queueEdit, .queueRequest, .queueSnapshot, .signed, .unsupported: false
        }
    }
}

@Suite("CoordinatorCore")
struct CoordinatorCoreTests {
    @Test("play becomes a state anchored one lead ahead, then seek and play commands for the player")
    func playAnchorsAhead() throws {
        var harness = CoreHarness()
        let proposed = try harness.core.proposePlay(now: ReferenceTime(seconds: 10))
        let messages = CoreHarness.sent(proposed)
        guard case .state(let proposal) = messages.first else { Issue.record("no state proposal"); return }
        #expect(proposal.command == .play)
        #expect(proposal.state.anchorReferenceTime == ReferenceTime(seconds: 10) + harness.core.lead)
        #expect(harness.core.state == nil)  // not applied before the channel delivers it

        let applied = harness.deliver(messages[0], at: 10.001)
        #expect(harness.core.state?.revision == 1)
        let commands = CoreHarness.commands(applied)
        #expect(commands.count == 2)
        #expect(commands.last?.kind == .play(itemTime: 0, referenceTime: proposal.state.anchorReferenceTime, rate: 1))
        #expect(CoreHarness.events(applied).contains { $0.type == .play && $0.originator == "me" })
    }

    @Test("pause snaps to the originator's item time at the anchor")
    func pauseSnaps() throws {
        var harness = CoreHarness()
        _ = try harness.loop(at: 10) { core, now in try core.proposePlay(now: now) }
        let anchor = harness.core.state!.anchorReferenceTime
        let actions = try harness.loop(at: 20) { core, now in try core.proposeRate(0, now: now) }
        let state = harness.core.state!
        #expect(state.rate == 0)
        let expected = (state.anchorReferenceTime - anchor).secondsValue
        #expect(abs(state.anchorItemTime - expected) < 1e-9)
        #expect(CoreHarness.commands(actions).last?.kind == .pause(itemTime: state.anchorItemTime, referenceTime: state.anchorReferenceTime))
        #expect(CoreHarness.events(actions).first?.type == .pause)
    }

    @Test("the highest sequence wins; older or repeated sequences are ignored")
    func highestSequenceWins() {
        var core = CoordinatorCore(participant: "me", localItem: "clip")
        func proposal(_ item: Double) -> CoordinationMessage {
            .state(StateProposal(
                state: PlaybackState(item: "clip", rate: 1, anchorItemTime: item, anchorReferenceTime: ReferenceTime(seconds: 1), originator: "x"),
                command: .seek, sentAt: ReferenceTime(seconds: 0)))
        }
        _ = core.receive(.message(proposal(5), sender: "x", sequence: 10), now: ReferenceTime(seconds: 0.5))
        let stale = core.receive(.message(proposal(7), sender: "y", sequence: 9), now: ReferenceTime(seconds: 0.5))
        #expect(stale.isEmpty)
        #expect(core.state?.anchorItemTime == 5)
        _ = core.receive(.message(proposal(9), sender: "y", sequence: 11), now: ReferenceTime(seconds: 0.5))
        #expect(core.state?.anchorItemTime == 9)
        #expect(core.state?.revision == 11)
    }

    @Test("commands for another item are ignored (once) until that item is loaded")
    func otherItemIgnored() {
        var core = CoordinatorCore(participant: "me", localItem: "clip")
        let message = CoordinationMessage.state(StateProposal(
            state: PlaybackState(item: "movie", rate: 1, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(seconds: 1), originator: "x"),
            command: .item, sentAt: ReferenceTime(seconds: 0)))
        let actions = core.receive(.message(message, sender: "x", sequence: 1), now: ReferenceTime(seconds: 0.5))
        #expect(CoreHarness.commands(actions).isEmpty)
        let events = CoreHarness.events(actions)
        #expect(events.map(\.type) == [.item, .itemChanged, .commandIgnored])
        #expect(core.reapplyCurrentState().allSatisfy { if case .event = $0 { true } else { false } })
        let loaded = core.setLocalItem("movie")
        #expect(CoreHarness.commands(loaded).last?.expectedItemIdentifier == "movie")
    }

    @Test("with canPresent the local item follows the group")
    func followsItems() {
        var core = CoordinatorCore(participant: "me", localItem: "clip", canPresent: { $0.hasPrefix("ep") })
        let message = CoordinationMessage.state(StateProposal(
            state: PlaybackState(item: "ep2", rate: 1, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(seconds: 1), originator: "x"),
            command: .item, sentAt: ReferenceTime(seconds: 0)))
        let actions = core.receive(.message(message, sender: "x", sequence: 1), now: ReferenceTime(seconds: 0.5))
        #expect(core.localItem == "ep2")
        #expect(CoreHarness.commands(actions).last?.expectedItemIdentifier == "ep2")
    }

    @Test("the lead grows with the delays members report, within the bounds")
    func leadAdapts() {
        var configuration = CoordinatorConfiguration()
        configuration.margin = .milliseconds(20)
        configuration.minimumLead = .milliseconds(40)
        configuration.maximumLead = .milliseconds(500)
        var harness = CoreHarness(configuration: configuration)
        #expect(harness.core.lead == .milliseconds(40))
        _ = harness.core.receive(.joined("far"), now: ReferenceTime(seconds: 1))
        _ = harness.deliver(.presence(PresenceReport(sentAt: ReferenceTime(seconds: 1), observedDelay: .milliseconds(150), preroll: .milliseconds(30), item: "clip")), from: "far", at: 1.002)
        #expect(harness.core.lead == .milliseconds(200))
        _ = harness.deliver(.presence(PresenceReport(sentAt: ReferenceTime(seconds: 2), observedDelay: .seconds(3), preroll: .zero, item: "clip")), from: "far", at: 2.001)
        #expect(harness.core.lead == .milliseconds(500))
        _ = harness.core.receive(.left("far"), now: ReferenceTime(seconds: 3))
        #expect(harness.core.lead == .milliseconds(40))
    }

    @Test("a report held through a relay restart does not set the lead; a path that is slow throughout does")
    func heldReportLeftOut() {
        var harness = CoreHarness()
        _ = harness.core.receive(.joined("other"), now: ReferenceTime(seconds: 0))
        // Reports that take 2 ms, then one held 1.5 s by a restart (sent at 10, delivered at 11.5).
        for second in 1...9 {
            let sent = ReferenceTime(seconds: Double(second))
            _ = harness.deliver(.presence(PresenceReport(sentAt: sent, observedDelay: .zero, preroll: .zero, item: "clip")), from: "other", at: Double(second) + 0.002)
        }
        let before = harness.core.lead
        _ = harness.deliver(.presence(PresenceReport(sentAt: ReferenceTime(seconds: 10), observedDelay: .zero, preroll: .zero, item: "clip")), from: "other", at: 11.5)
        #expect(harness.core.observedDelay < .milliseconds(3))
        #expect(harness.core.lead == before)

        // A path that takes 300 ms, every time: its delay counts.
        var slow = CoreHarness()
        _ = slow.core.receive(.joined("far"), now: ReferenceTime(seconds: 0))
        for second in 1...9 {
            _ = slow.deliver(.presence(PresenceReport(sentAt: ReferenceTime(seconds: Double(second)), observedDelay: .zero, preroll: .zero, item: "clip")), from: "far", at: Double(second) + 0.3)
        }
        #expect(slow.core.observedDelay > .milliseconds(299) && slow.core.observedDelay < .milliseconds(301))
    }

    @Test("bad input throws clear errors", arguments: [-1.0, .nan, .infinity])
    func badRates(rate: Double) {
        var core = CoordinatorCore(participant: "me", localItem: "clip")
        // (NaN is not equal to itself, so compare the descriptions.)
        let rateError = #expect(throws: PlaybackCoordinatorError.self) { try core.proposeRate(rate, now: ReferenceTime(seconds: 0)) }
        #expect(rateError?.description == PlaybackCoordinatorError.invalidRate(rate).description)
        let seekError = #expect(throws: PlaybackCoordinatorError.self) { try core.proposeSeek(to: rate, now: ReferenceTime(seconds: 0)) }
        #expect(seekError?.description == PlaybackCoordinatorError.invalidItemTime(rate).description)
        var empty = CoordinatorCore(participant: "me")
        #expect(throws: PlaybackCoordinatorError.noItem) { try empty.proposePlay(now: ReferenceTime(seconds: 0)) }
        #expect(throws: PlaybackCoordinatorError.unknownSuspension("nope")) { try core.endSuspension("nope", now: ReferenceTime(seconds: 0)) }
        #expect(PlaybackCoordinatorError.invalidRate(-1).description.contains("between 0.0625 and 16"))
    }

    @Test("rates outside 1/16...16 (other than 0) are refused; the bounds and 0 are accepted", arguments: [1e9, 0.01, 16.5, 0.0624])
    func outOfRangeRates(rate: Double) throws {
        var core = CoordinatorCore(participant: "me", localItem: "clip")
        #expect(throws: PlaybackCoordinatorError.invalidRate(rate)) { try core.proposeRate(rate, now: ReferenceTime(seconds: 0)) }
        for allowed in [0, 0.0625, 16] {
            #expect(throws: Never.self) { try core.proposeRate(allowed, now: ReferenceTime(seconds: 0)) }
        }
    }

    @Test("events and commands carry the originator's id, and its announced name beside it once known")
    func labels() throws {
        var core = CoordinatorCore(participant: "a1b2", localItem: "clip", name: "ana")
        let joined = CoreHarness.events(core.receive(.joined("c3d4"), now: ReferenceTime(seconds: 1)))
        #expect(joined.map(\.originator) == ["c3d4"])
        #expect(joined.map(\.originatorName) == [nil])
        #expect(joined.first?.jsonLine.contains(#""originator":"c3d4","originatorId":"c3d4""#) == true)
        #expect(joined.map(\.player) == ["ana"])
        // Our own presence report carries our name.
        let sent = CoreHarness.sent(core.tick(now: ReferenceTime(seconds: 100)))
        guard case .presence(let own)? = sent.first else { Issue.record("no presence"); return }
        #expect(own.name == "ana")
        let report = PresenceReport(sentAt: ReferenceTime(seconds: 1), observedDelay: .zero, preroll: .zero, item: "clip", name: "cy")
        _ = core.receive(.message(.presence(report), sender: "c3d4", sequence: 1), now: ReferenceTime(seconds: 1))
        let state = PlaybackState(item: "clip", rate: 1, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(seconds: 2), originator: "c3d4")
        let actions = core.receive(
            .message(.state(StateProposal(state: state, command: .play, sentAt: ReferenceTime(seconds: 1))), sender: "c3d4", sequence: 2),
            now: ReferenceTime(seconds: 1))
        let play = CoreHarness.events(actions).first { $0.type == .play }
        #expect(play?.originator == "c3d4" && play?.originatorName == "cy" && play?.player == "ana")
        #expect(CoreHarness.commands(actions).allSatisfy { $0.originator == "c3d4" && $0.originatorName == "cy" })
        // The JSON line keeps schema 1's `originator` (the label) and adds the id.
        let line = try #require(play?.jsonLine)
        #expect(line.contains(#""originator":"cy","originatorId":"c3d4""#))
        let parsed = try PlaybackEvent(jsonLine: line)
        #expect(parsed.originator == "c3d4" && parsed.originatorName == "cy")
        // A line from before `originatorId` reads as it always did: the label in `originator`.
        let old = try PlaybackEvent(jsonLine: #"{"type":"play","v":1,"realtime":1,"originator":"cy"}"#)
        #expect(old.originator == "cy" && old.originatorName == nil)
        let left = CoreHarness.events(core.receive(.left("c3d4"), now: ReferenceTime(seconds: 3)))
        #expect(left.map(\.originator) == ["c3d4"] && left.map(\.originatorName) == ["cy"])
        // A name-less member (an old client) is still named by its id.
        #expect(core.label("e5f6") == "e5f6")
    }

    @Test("a waiting suspension holds the timeline; ending it resumes at the end instant")
    func suspensionHolds() throws {
        var harness = CoreHarness()
        _ = try harness.loop(at: 1) { core, now in try core.proposePlay(now: now) }
        var id = ""
        let began = harness.loop(at: 5) { core, now in
            let (suspension, actions) = core.beginSuspension(.buffering, now: now)
            id = suspension
            return actions
        }
        let buffer = CoreHarness.commands(began).first
        guard case .buffer(let held, let start, let due)? = buffer?.kind else { Issue.record("no buffer command"); return }
        #expect(due == start + harness.core.configuration.suspensionTimeout)
        #expect(harness.core.isWaiting(at: start + .seconds(1)))
        #expect(harness.core.effectiveItemTime(at: start + .seconds(3)) == held)
        let ended = try harness.loop(at: 7) { core, now in try core.endSuspension(id, now: now) }
        guard case .play(let resumeItem, let resumeAt, _)? = CoreHarness.commands(ended).last?.kind else { Issue.record("no play"); return }
        #expect(resumeItem == held)
        #expect(resumeAt == ReferenceTime(seconds: 7) + harness.core.lead)
        #expect(CoreHarness.events(ended).contains { $0.type == .suspensionEnded && $0.timedOut == false })
    }

    @Test("a suspension's status appears when its begin is delivered, and its end when the end is")
    func suspensionStatus() throws {
        var harness = CoreHarness()
        _ = try harness.loop(at: 1) { core, now in try core.proposePlay(now: now) }
        let (id, begin) = harness.core.beginSuspension(.buffering, now: ReferenceTime(seconds: 5))
        // Sent, not yet delivered back: the group does not have it.
        #expect(harness.core.suspensionStatus(id) == nil)
        for message in CoreHarness.sent(begin) { _ = harness.deliver(message, at: 5.01) }
        let lead = harness.core.lead
        let began = try #require(harness.core.suspensionStatus(id))
        #expect(began.participant == "me" && began.reason == .buffering && began.waits)
        #expect(began.begin == ReferenceTime(seconds: 5) + lead)
        #expect(began.deadline == began.begin + harness.core.configuration.suspensionTimeout)
        #expect(!began.isEnded && began.waitEnd == began.deadline)
        #expect(!began.timedOut(at: began.begin + .seconds(1)) && began.timedOut(at: began.deadline))

        let end = try harness.core.endSuspension(id, now: ReferenceTime(seconds: 7))
        #expect(harness.core.suspensionStatus(id)?.isEnded == false)
        for message in CoreHarness.sent(end) { _ = harness.deliver(message, at: 7.01) }
        let ended = try #require(harness.core.suspensionStatus(id))
        #expect(ended.end == ReferenceTime(seconds: 7) + lead)
        #expect(ended.waitEnd == ended.end && !ended.timedOut(at: ReferenceTime(seconds: 100)))
        #expect(ended.waited == .seconds(2))
        // A reason that does not make the group wait: known, but it waited for nothing.
        let (other, actions) = harness.core.beginSuspension(.interruption, now: ReferenceTime(seconds: 8))
        for message in CoreHarness.sent(actions) { _ = harness.deliver(message, at: 8.01) }
        #expect(harness.core.suspensionStatus(other)?.waits == false)
        #expect(harness.core.suspensionStatus(other)?.waited == .zero)
        #expect(harness.core.suspensionStatus("nobody#1") == nil)
    }

    @Test("ending with a proposed time sends a seek after the end notice")
    func endProposingTime() throws {
        var harness = CoreHarness()
        _ = try harness.loop(at: 1) { core, now in try core.proposePlay(now: now) }
        let (id, _) = harness.core.beginSuspension(.userChangingTime, now: ReferenceTime(seconds: 2))
        let messages = CoreHarness.sent(try harness.core.endSuspension(id, proposing: 42, now: ReferenceTime(seconds: 3)))
        #expect(messages.count == 2)
        guard case .suspension(let notice) = messages[0], case .state(let seek) = messages[1] else { Issue.record("wrong messages"); return }
        #expect(notice.phase == .end && notice.proposedItemTime == 42)
        #expect(seek.command == .seek && seek.state.anchorItemTime == 42 && seek.state.rate == 1)
    }

    @Test("coordination messages survive a JSON round trip")
    func messagesCodable() async throws {
        await propertyCheck(input: Gen.double(in: 0...1e4), Gen.double(in: 0...4), Gen.int(in: 0...Int(Int32.max))) { item, rate, nanos in
            let messages: [CoordinationMessage] = [
                .state(StateProposal(
                    state: PlaybackState(item: "c\"lip", rate: rate, anchorItemTime: item, anchorReferenceTime: ReferenceTime(nanoseconds: Int64(nanos)), originator: "a", revision: 3),
                    command: .rate, sentAt: ReferenceTime(nanoseconds: 5))),
                .suspension(SuspensionNotice(id: "a#1", phase: .end, reason: .custom("ad break"), effectiveAt: ReferenceTime(nanoseconds: Int64(nanos)), waits: true, timeout: .seconds(10), proposedItemTime: item, sentAt: ReferenceTime(nanoseconds: 1))),
                .presence(PresenceReport(sentAt: ReferenceTime(nanoseconds: 9), observedDelay: .nanoseconds(nanos), preroll: .milliseconds(5), item: nil)),
            ]
            for message in messages {
                let data = try! JSONEncoder().encode(message)
                #expect(try! JSONDecoder().decode(CoordinationMessage.self, from: data) == message)
            }
        }
    }
}
