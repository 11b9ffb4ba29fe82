import GroupSessions
import Logging
import PlaybackCoordinator
import SessionRelay
import Testing
import TestSupport

/// The coordination channel's total order, over a real relay on loopback: the coordinator applies
/// messages in arrival order (suspension bookkeeping depends on it), so every member must see them
/// in strictly increasing relay sequence, its own messages included, without any sorting.
@Suite("GroupSession channel order over a real relay")
struct ChannelOrderTests {
    static let members = 4
    static let messagesEach = 60

    @Test("several concurrent senders: every member sees every message in strictly increasing sequence")
    func strictlyIncreasingUnderConcurrentSenders() async throws {
        try await withLocalRelay(withTime: false) { invite in
            var sessions: [GroupSession<TestActivity>] = []
            let host = GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"))
            sessions.append(try await host.activate(TestActivity(item: "a"), invite: invite))
            try await sessions[0].join()
            for _ in 1..<Self.members {
                let center = GroupActivityCenter<TestActivity>(transport: RelayTransport(invite: invite), logger: Logger(label: "test"))
                let session = try await center.accept(invite)
                try await session.join()
                sessions.append(session)
            }
            defer { for session in sessions { session.leave() } }

            let channels = sessions.map { GroupSessionCoordinationChannel(session: $0, logger: Logger(label: "test")) }
            let collectors = channels.map { Collector($0.events()) }
            await eventually("every member sees every member") {
                collectors.allSatisfy { collector in
                    collector.values.filter { if case .joined = $0 { true } else { false } }.count == Self.members
                }
            }

            // Every member sends at once, interleaving its own messages with everyone else's on the wire.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, channel) in channels.enumerated() {
                    group.addTask {
                        for count in 0..<Self.messagesEach {
                            let message = Self.message(member: index, count: count, by: channel.localParticipant)
                            try await channel.send(message, retainingUnder: count.isMultiple(of: 7) ? "k\(index)" : nil)
                            if count.isMultiple(of: 5) { await Task.yield() }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let total = Self.members * Self.messagesEach
            await eventually("every member received every message", timeout: .seconds(30)) {
                collectors.allSatisfy { Self.messages($0.values).count == total }
            }

            var reference: [UInt64: CoordinationMessage]?
            for (index, collector) in collectors.enumerated() {
                let delivered = Self.messages(collector.values)
                #expect(delivered.count == total, "member \(index)")
                // Strictly increasing in delivery order: no sorting here.
                let sequences = delivered.map(\.sequence)
                let firstViolation = zip(sequences, sequences.dropFirst()).first { $0 >= $1 }
                #expect(firstViolation == nil, "member \(index) got sequence \(firstViolation.map { "\($0.1) after \($0.0)" } ?? "")")
                // Every member's own messages are among them, in the order it sent them.
                let own = delivered.filter { $0.sender == channels[index].localParticipant }.map(\.message)
                #expect(own == (0..<Self.messagesEach).map { Self.message(member: index, count: $0, by: channels[index].localParticipant) })
                // And every member agrees on which message has which sequence.
                let bySequence = Dictionary(uniqueKeysWithValues: delivered.map { ($0.sequence, $0.message) })
                if let reference { #expect(bySequence == reference, "member \(index)") } else { reference = bySequence }
            }
        }
    }

    static func message(member: Int, count: Int, by originator: PlaybackParticipantID) -> CoordinationMessage {
        .state(StateProposal(
            state: PlaybackState(
                item: "m\(member)", rate: Double(count), anchorItemTime: Double(member),
                anchorReferenceTime: ReferenceTime(nanoseconds: Int64(count)), originator: originator),
            command: .play, sentAt: ReferenceTime(nanoseconds: 0)))
    }

    static func messages(_ events: [CoordinationChannelEvent]) -> [(message: CoordinationMessage, sender: PlaybackParticipantID, sequence: UInt64)] {
        events.compactMap {
            if case .message(let message, let sender, let sequence) = $0 { return (message, sender, sequence) }
            return nil
        }
    }
}
