import Foundation
import Logging
import TestSupport
import Testing

@testable import PlaybackCoordinator

/// Per-participant playback state, the suspension reasons Apple has and coplay lacked, the
/// participant limit per reason and waiting reasons changed at run time: the core by hand, then
/// the actor over the in-memory hub.
@Suite("Participant state and suspension reasons")
struct ParticipantStateTests {
    /// A core for "me" in a group with "bob" (named Bob) and "cy", playing "clip" from 0 at 1 s.
    static func playingGroup(configuration: CoordinatorConfiguration = .init()) -> CoreHarness {
        var harness = CoreHarness("me", configuration: configuration)
        _ = harness.core.receive(.joined("bob"), now: ReferenceTime(seconds: 0))
        _ = harness.core.receive(.joined("cy"), now: ReferenceTime(seconds: 0))
        let report = PresenceReport(sentAt: ReferenceTime(seconds: 0), observedDelay: .zero, preroll: .zero, item: "clip", name: "Bob")
        _ = harness.deliver(.presence(report), from: "bob", at: 0)
        let state = PlaybackState(item: "clip", rate: 1, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(seconds: 1), originator: "bob")
        _ = harness.deliver(.state(StateProposal(state: state, command: .play, sentAt: ReferenceTime(seconds: 0))), from: "bob", at: 0)
        return harness
    }

    static func notice(_ id: String, _ phase: SuspensionNotice.Phase, _ reason: SuspensionReason, at seconds: Double, waits: Bool = true)
        -> CoordinationMessage
    {
        .suspension(SuspensionNotice(
            id: id, phase: phase, reason: reason, effectiveAt: ReferenceTime(seconds: seconds), waits: waits, timeout: .seconds(10),
            sentAt: ReferenceTime(seconds: seconds - 0.1)))
    }

    @Test("otherParticipants lists each member with its id, name and open suspension reasons; left members go")
    func otherParticipants() throws {
        var harness = Self.playingGroup()
        #expect(harness.core.otherParticipants == [
            CoordinatedPlaybackParticipant(id: "bob", name: "Bob"), CoordinatedPlaybackParticipant(id: "cy"),
        ])
        _ = harness.deliver(Self.notice("bob#1", .begin, .stallRecovery, at: 2), from: "bob", at: 1.9)
        _ = harness.deliver(Self.notice("bob#2", .begin, .userChangingTime, at: 2.5, waits: false), from: "bob", at: 2.4)
        let bob = try #require(harness.core.otherParticipants.first)
        #expect(bob.suspensionReasons == [.stallRecovery, .userChangingTime] && bob.isSuspended && bob.label == "Bob")
        #expect(bob.suspensions.map(\.id) == ["bob#1", "bob#2"])
        // A suspension that timed out still counts: the member has not ended it, the group only stopped waiting.
        _ = harness.core.tick(now: ReferenceTime(seconds: 13))
        #expect(harness.core.otherParticipants.first?.suspensionReasons == [.stallRecovery, .userChangingTime])
        _ = harness.deliver(Self.notice("bob#1", .end, .stallRecovery, at: 14), from: "bob", at: 13.9)
        #expect(harness.core.otherParticipants.first?.suspensionReasons == [.userChangingTime])
        _ = harness.core.receive(.left("bob"), now: ReferenceTime(seconds: 15))
        #expect(harness.core.otherParticipants.map(\.id) == ["cy"])
        #expect(harness.core.otherParticipants.first?.label == "cy")
    }

    @Test("suspensionReasons are the local member's open suspensions, from begin to end, oldest first")
    func localReasons() throws {
        var harness = Self.playingGroup()
        #expect(harness.core.suspensionReasons.isEmpty)
        let first = harness.core.beginSuspension(.buffering, now: ReferenceTime(seconds: 2))
        let second = harness.core.beginSuspension(.custom("ad"), now: ReferenceTime(seconds: 2.1))
        #expect(harness.core.suspensionReasons == [.buffering, .custom("ad")])
        _ = try harness.core.endSuspension(first.id, now: ReferenceTime(seconds: 3))
        #expect(harness.core.suspensionReasons == [.custom("ad")])
        _ = try harness.core.endSuspension(second.id, now: ReferenceTime(seconds: 3))
        #expect(harness.core.suspensionReasons.isEmpty)
    }

    @Test("suspension events carry the suspension's id, the one beginSuspension returned")
    func suspensionIDs() throws {
        var harness = Self.playingGroup()
        let begun = harness.core.beginSuspension(.buffering, now: ReferenceTime(seconds: 2))
        let began = CoreHarness.events(CoreHarness.sent(begun.actions).flatMap { harness.deliver($0, at: 2) })
        #expect(began.map(\.type) == [.suspensionBegan] && began.first?.suspension == begun.id)
        let ended = try harness.core.endSuspension(begun.id, now: ReferenceTime(seconds: 3))
        let endEvents = CoreHarness.events(CoreHarness.sent(ended).flatMap { harness.deliver($0, at: 3) })
        #expect(endEvents.map(\.type) == [.suspensionEnded] && endEvents.first?.suspension == begun.id)
        #expect(endEvents.first?.jsonLine.contains(#""suspension":"\#(begun.id)""#) == true)
        // A timeout reported by tick names it too.
        _ = harness.deliver(Self.notice("cy#1", .begin, .buffering, at: 4), from: "cy", at: 3.9)
        let timedOut = CoreHarness.events(harness.core.tick(now: ReferenceTime(seconds: 15)))
        #expect(timedOut.first { $0.type == .suspensionEnded }?.suspension == "cy#1")
    }

    @Test(
        "a detaching reason withholds commands while open and gives the player the group's state at its end; the group does not wait by default",
        arguments: [SuspensionReason.playingInterstitial, .coordinatedPlaybackNotPossible, .userActionRequired])
    func detachingReason(_ reason: SuspensionReason) throws {
        var harness = Self.playingGroup()
        #expect(reason.detachesPlayer && !SuspensionReason.defaultWaitingReasons.contains(reason))
        let begun = harness.core.beginSuspension(reason, now: ReferenceTime(seconds: 2))
        #expect(harness.core.isDetached)
        let delivered = CoreHarness.sent(begun.actions).flatMap { harness.deliver($0, at: 2) }
        let began = try #require(CoreHarness.events(delivered).first)
        #expect(began.reason == reason.description && began.waits == false)
        #expect(harness.core.segments().allSatisfy { !$0.waiting })  // the others play on
        // A seek accepted while detached: the event, no command for the player.
        let seek = PlaybackState(item: "clip", rate: 1, anchorItemTime: 40, anchorReferenceTime: ReferenceTime(seconds: 3), originator: "bob")
        let accepted = harness.deliver(.state(StateProposal(state: seek, command: .seek, sentAt: ReferenceTime(seconds: 2.5))), from: "bob", at: 2.5)
        #expect(CoreHarness.events(accepted).map(\.type) == [.seek])
        #expect(CoreHarness.commands(accepted).isEmpty)
        // The end rejoins the group where it is: a seek to its anchor, then its motion.
        let ended = try harness.core.endSuspension(begun.id, now: ReferenceTime(seconds: 5))
        let commands = CoreHarness.commands(ended)
        #expect(!harness.core.isDetached)
        #expect(commands.map(\.itemTime) == [40, 40] && commands.last?.rate == 1 && commands.allSatisfy { $0.revision == 4 })
        #expect(harness.core.effectiveItemTime(at: ReferenceTime(seconds: 5)) == 42)
    }

    @Test("a detaching reason the app makes a waiting reason holds the group, up to the timeout")
    func detachingReasonThatWaits() throws {
        var configuration = CoordinatorConfiguration()
        configuration.waitingReasons.insert(.playingInterstitial)
        var harness = Self.playingGroup(configuration: configuration)
        let begun = harness.core.beginSuspension(.playingInterstitial, now: ReferenceTime(seconds: 2))
        _ = CoreHarness.sent(begun.actions).flatMap { harness.deliver($0, at: 2) }
        #expect(harness.core.suspensionStatus(begun.id)?.waits == true)
        #expect(harness.core.isWaiting(at: ReferenceTime(seconds: 5)))
        #expect(!harness.core.isWaiting(at: ReferenceTime(seconds: 13)))  // the 10 s timeout released the group
    }

    @Test("the other reasons keep the local player following the group", arguments: [
        SuspensionReason.buffering, .stallRecovery, .userChangingTime, .interruption, .custom("x"),
    ])
    func attachedReason(_ reason: SuspensionReason) throws {
        var harness = Self.playingGroup()
        let begun = harness.core.beginSuspension(reason, now: ReferenceTime(seconds: 2))
        _ = CoreHarness.sent(begun.actions).flatMap { harness.deliver($0, at: 2) }
        #expect(!harness.core.isDetached)
        let seek = PlaybackState(item: "clip", rate: 1, anchorItemTime: 40, anchorReferenceTime: ReferenceTime(seconds: 3), originator: "bob")
        let accepted = harness.deliver(.state(StateProposal(state: seek, command: .seek, sentAt: ReferenceTime(seconds: 2.5))), from: "bob", at: 2.5)
        #expect(!CoreHarness.commands(accepted).isEmpty)
    }

    @Test("a participant limit per reason: a larger group plays on, a group within the limit waits")
    func participantLimit() throws {
        var configuration = CoordinatorConfiguration()
        configuration.participantLimits[.buffering] = 2
        var three = Self.playingGroup(configuration: configuration)  // me, bob, cy
        #expect(!three.core.waitsOut(.buffering) && three.core.waitsOut(.stallRecovery))
        let begun = three.core.beginSuspension(.buffering, now: ReferenceTime(seconds: 2))
        guard case .suspension(let notice)? = CoreHarness.sent(begun.actions).first else { Issue.record("no notice"); return }
        #expect(!notice.waits)
        _ = three.core.receive(.left("cy"), now: ReferenceTime(seconds: 3))  // now two
        #expect(three.core.waitsOut(.buffering))
        three.core.configuration.participantLimits[.buffering] = nil
        _ = three.core.receive(.joined("dee"), now: ReferenceTime(seconds: 3))
        #expect(three.core.waitsOut(.buffering))
    }

    @Test("a notice with a new reason round-trips through its Codable form")
    func newReasonsCodable() throws {
        for reason in [SuspensionReason.playingInterstitial, .coordinatedPlaybackNotPossible, .userActionRequired] {
            let message = Self.notice("x#1", .begin, reason, at: 1)
            let data = try JSONEncoder().encode(message)
            #expect(try JSONDecoder().decode(CoordinationMessage.self, from: data) == message)
            #expect(String(decoding: data, as: UTF8.self).contains(#""reason":"\#(reason.description)""#))
        }
        #expect(SuspensionReason.audioSessionInterrupted == .interruption && SuspensionReason.userIsChangingCurrentTime == .userChangingTime)
    }

    // MARK: Through the actor

    @Test("the actor: expectedItemTime(at:), otherParticipants, suspensionReasons, waiting reasons and limits changed at run time")
    func actor() async throws {
        let hub = InMemoryCoordinationHub()
        let reference = MonotonicReferenceTimeSource()
        var configuration = CoordinatorConfiguration()
        configuration.minimumLead = .milliseconds(100)
        let player = PlaybackCoordinator(
            channel: await hub.connect("player"), reference: reference, delegate: RecordingDelegate(), configuration: configuration,
            localItem: "clip", name: "Pia", logger: Logger(label: "test"))
        let other = PlaybackCoordinator(
            channel: await hub.connect("other"), reference: reference, delegate: RecordingDelegate(), configuration: configuration,
            localItem: "clip", name: "Oz", logger: Logger(label: "test"))
        let tasks = [Task { await player.run() }, Task { await other.run() }]
        defer { for task in tasks { task.cancel() } }
        await eventually { await player.otherParticipants.first?.name == "Oz" }
        #expect(await player.otherParticipants.map(\.id) == ["other"])

        #expect(await player.expectedItemTime(at: reference.now()!) == nil)
        try await player.play()
        await eventually { await player.state?.rate == 1 }
        let anchor = try #require(await player.state?.anchorReferenceTime)
        #expect(await player.expectedItemTime(at: anchor + .seconds(3)) == 3)
        #expect(await player.expectedItemTime(at: anchor + .seconds(3)) == player.core.effectiveItemTime(at: anchor + .seconds(3)))

        // Not a waiting reason by default; made one at run time, the next suspension waits.
        #expect(await !other.suspensionReasonsThatTriggerWaiting.contains(.userChangingTime))
        let before = try await other.beginSuspension(for: .userChangingTime)
        await other.setSuspensionReasonsThatTriggerWaiting([.userChangingTime, .buffering])
        let after = try await other.beginSuspension(.userChangingTime)
        #expect(await other.suspensionReasons == [.userChangingTime, .userChangingTime])
        await eventually { await player.suspensionStatus(after.id) != nil }
        #expect(await player.suspensionStatus(before.id)?.waits == false)  // begun before the change: keeps its decision
        #expect(await player.suspensionStatus(after.id)?.waits == true)
        #expect(await player.otherParticipants.first?.suspensions.map(\.id) == [before.id, after.id])

        // A limit of 1 member for buffering: this group of 2 plays on.
        await other.setParticipantLimit(1, forWaitingOutSuspensionsWithReason: .buffering)
        #expect(await other.participantLimitForWaitingOutSuspensions(withReason: .buffering) == 1)
        let limited = try await other.beginSuspension(.buffering)
        await eventually { await player.suspensionStatus(limited.id) != nil }
        #expect(await player.suspensionStatus(limited.id)?.waits == false)
        await other.setParticipantLimit(nil, forWaitingOutSuspensionsWithReason: .buffering)
        #expect(await other.participantLimitForWaitingOutSuspensions(withReason: .buffering) == nil)

        for suspension in [before, after, limited] { try await suspension.end() }
        #expect(await other.suspensionReasons.isEmpty)
        await eventually { await player.otherParticipants.first?.isSuspended == false }
    }
}
