import GroupSessions
import Logging
import PlaybackCoordinator
import Testing
import TestSupport

@Suite("GroupSession as the coordinator's channel")
struct CoordinationChannelAdapterTests {

    static func proposal(_ item: String, rate: Double, by originator: PlaybackParticipantID) -> CoordinationMessage {
        .state(StateProposal(
            state: PlaybackState(
                item: item, rate: rate, anchorItemTime: 0, anchorReferenceTime: ReferenceTime(nanoseconds: 1),
                originator: originator),
            command: .play, sentAt: ReferenceTime(nanoseconds: 0)))
    }

    static func messages(_ events: [CoordinationChannelEvent]) -> [(CoordinationMessage, PlaybackParticipantID, UInt64)] {
        events.compactMap {
            if case .message(let message, let sender, let sequence) = $0 { return (message, sender, sequence) }
            return nil
        }
    }

    @Test("every member, the sender included, sees each message once with the same relay sequence")
    func sameSequenceEverywhere() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<TestActivity>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "local", port: 1)
        let hostSession = try await center.activate(TestActivity(item: "a"), invite: invite)
        try await hostSession.join()
        let guestSession = try await center.accept(invite)
        try await guestSession.join()

        let host = GroupSessionCoordinationChannel(session: hostSession, logger: Logger(label: "test"))
        let guest = GroupSessionCoordinationChannel(session: guestSession, logger: Logger(label: "test"))
        #expect(host.localParticipant != guest.localParticipant)
        #expect(host.localParticipant == GroupSessionCoordinationChannel<TestActivity>.participant(hostSession.localParticipant))
        let hostEvents = Collector(host.events())
        let guestEvents = Collector(guest.events())
        await eventually("both see both members") {
            hostEvents.values.filter { if case .joined = $0 { true } else { false } }.count == 2
                && guestEvents.values.filter { if case .joined = $0 { true } else { false } }.count == 2
        }

        for index in 0..<10 {
            let sender = index.isMultiple(of: 2) ? host : guest
            try await sender.send(Self.proposal("a", rate: Double(index), by: sender.localParticipant), retainingUnder: nil)
        }
        await eventually("ten messages each") {
            Self.messages(hostEvents.values).count == 10 && Self.messages(guestEvents.values).count == 10
        }
        let fromHost = Dictionary(uniqueKeysWithValues: Self.messages(hostEvents.values).map { ($0.0, ($0.1, $0.2)) })
        let fromGuest = Dictionary(uniqueKeysWithValues: Self.messages(guestEvents.values).map { ($0.0, ($0.1, $0.2)) })
        #expect(fromHost.count == 10)
        for (message, (sender, sequence)) in fromHost {
            #expect(fromGuest[message]?.0 == sender)
            #expect(fromGuest[message]?.1 == sequence)
        }
        // Sequences are the relay's total order: distinct and increasing in the order sent.
        let ordered = fromHost.sorted { $0.value.1 < $1.value.1 }.map { message -> Double in
            if case .state(let proposal) = message.key { return proposal.state.rate }
            return -1
        }
        #expect(ordered == (0..<10).map(Double.init))
        hostSession.leave()
        guestSession.leave()
    }

    /// What a newer coplay might send: a kind this build does not know, under the same envelope name.
    enum Newer {
        struct CoordinationMessage: Encodable, Sendable {
            var kind = "queue"
            var v = 1
            var sentAt: Int64 = 5
            var entries = ["clip", "other"]
        }
    }

    @Test("a message of a newer coplay arrives as unsupported, and the channel carries on")
    func unsupportedMessageArrives() async throws {
        let transport = InMemoryTransport()
        let center = GroupActivityCenter<TestActivity>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "local", port: 1)
        let newerSession = try await center.activate(TestActivity(item: "a"), invite: invite)
        try await newerSession.join()
        let session = try await center.accept(invite)
        try await session.join()
        let channel = GroupSessionCoordinationChannel(session: session, logger: Logger(label: "test"))
        let events = Collector(channel.events())

        try GroupSessionMessenger(session: newerSession).send(Newer.CoordinationMessage())
        let newer = GroupSessionCoordinationChannel(session: newerSession, logger: Logger(label: "test"))
        try await newer.send(Self.proposal("a", rate: 1, by: newer.localParticipant), retainingUnder: nil)
        await eventually("both messages") { Self.messages(events.values).count == 2 }
        let received = Self.messages(events.values)
        #expect(received[0].0 == .unsupported(kind: "queue", version: 1))
        #expect(received[0].1 == newer.localParticipant)
        #expect(received[1].0 == Self.proposal("a", rate: 1, by: newer.localParticipant))
        #expect(received[0].2 < received[1].2)
        newerSession.leave()
        session.leave()
    }

    /// A session on `transport` that a host created and joined, with the host's channel and its events.
    static func hostedSession(on transport: InMemoryTransport) async throws -> (
        center: GroupActivityCenter<TestActivity>, invite: Invite, session: GroupSession<TestActivity>,
        channel: GroupSessionCoordinationChannel<TestActivity>, events: Collector<CoordinationChannelEvent>
    ) {
        let center = GroupActivityCenter<TestActivity>(transport: transport, logger: Logger(label: "test"))
        let invite = Invite.generate(host: "local", port: 1)
        let session = try await center.activate(TestActivity(item: "a"), invite: invite)
        try await session.join()
        let channel = GroupSessionCoordinationChannel(session: session, logger: Logger(label: "test"))
        return (center, invite, session, channel, Collector(channel.events()))
    }

    @Test("a retained state reaches a late joiner; a member leaving is reported")
    func retainedAndPresence() async throws {
        let (center, invite, hostSession, host, hostEvents) = try await Self.hostedSession(on: InMemoryTransport())
        let message = Self.proposal("a", rate: 1, by: host.localParticipant)
        try await host.send(message, retainingUnder: CoordinationMessage.stateKey)
        await eventually("host sees its own state") { Self.messages(hostEvents.values).count == 1 }
        let stamped = try #require(Self.messages(hostEvents.values).first)

        let lateSession = try await center.accept(invite)
        try await lateSession.join()
        let late = GroupSessionCoordinationChannel(session: lateSession, logger: Logger(label: "test"))
        let lateEvents = Collector(late.events())
        await eventually("late joiner gets the retained state") { Self.messages(lateEvents.values).count == 1 }
        let received = try #require(Self.messages(lateEvents.values).first)
        #expect(received.0 == message)
        #expect(received.1 == host.localParticipant)
        #expect(received.2 == stamped.2)

        await eventually("host sees the late joiner") { hostEvents.values.contains(.joined(late.localParticipant)) }
        lateSession.leave()
        await eventually("host sees it leave") { hostEvents.values.contains(.left(late.localParticipant)) }
        hostSession.leave()
        await eventually("the channel ends with the session") {
            hostEvents.values.count >= 0 && { if case .invalidated = hostSession.state { true } else { false } }()
        }
    }

    @Test("members that suspended and left do not fill the relay's retained keys: their slots make room for new ones")
    func suspensionSlotsMakeRoom() async throws {
        var limits = HubLimits()
        limits.maximumRetainedKeys = 6
        let (center, invite, hostSession, host, hostEvents) = try await Self.hostedSession(on: InMemoryTransport(limits: limits))
        let state = Self.proposal("a", rate: 1, by: host.localParticipant)
        try await host.send(state, retainingUnder: CoordinationMessage.stateKey)

        // Ten members in turn: each joins, suspends (its own retained slot) and leaves. With the
        // activity's slot and the state's, the sixth would be the session's seventh key.
        func suspensions(_ events: [CoordinationChannelEvent]) -> [String] {
            Self.messages(events).compactMap { if case .suspension(let notice) = $0.0 { notice.id } else { nil } }
        }
        for index in 0..<10 {
            let session = try await center.accept(invite)
            try await session.join()
            let member = GroupSessionCoordinationChannel(session: session, logger: Logger(label: "test"))
            _ = member.events()
            let notice = SuspensionNotice(
                id: "member\(index)#1", phase: .begin, reason: .stallRecovery, effectiveAt: ReferenceTime(nanoseconds: 2),
                waits: true, timeout: .seconds(1), sentAt: ReferenceTime(nanoseconds: 1))
            try await member.send(.suspension(notice), retainingUnder: CoordinationMessage.suspensionKey(for: member.localParticipant))
            // (Refused by a full relay, it never arrives: stop at the first.)
            guard await eventually("the host has member \(index)'s suspension", timeout: .seconds(10), {
                suspensions(hostEvents.values).contains("member\(index)#1")
            }) else { return }
            session.leave()
            await eventually("member \(index) left") { hostEvents.values.contains(.left(member.localParticipant)) }
        }
        // A new key that is never evicted (a viewer's transition) still finds room.
        let transition = Self.proposal("b", rate: 1, by: host.localParticipant)
        try await host.send(transition, retainingUnder: CoordinationMessage.transitionKey)
        await eventually("the host has the transition") { Self.messages(hostEvents.values).contains { $0.0 == transition } }

        // A late joiner receives the state, the transition and the most recent suspension slots.
        let lateSession = try await center.accept(invite)
        try await lateSession.join()
        let late = GroupSessionCoordinationChannel(session: lateSession, logger: Logger(label: "test"))
        let lateEvents = Collector(late.events())
        await eventually("the late joiner has the retained state and transition") {
            let messages = Self.messages(lateEvents.values).map(\.0)
            return messages.contains(state) && messages.contains(transition)
        }
        #expect(suspensions(lateEvents.values) == ["member7#1", "member8#1", "member9#1"])
        lateSession.leave()
        hostSession.leave()
    }
}
