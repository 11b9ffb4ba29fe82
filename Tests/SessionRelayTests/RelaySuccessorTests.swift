import Foundation
@testable import GroupSessions
import Logging
import SessionRelay
import Testing
import TestSupport

@Suite("Successor sessions over the relay (TCP on loopback)", .timeLimit(.minutes(10)))
struct RelaySuccessorTests {
    @Test("a new activity's session reaches every member, sealed; the old session's end follows the announcement")
    func successorOverRelay() async throws {
        let records = LockedBox<[String]>([])
        let logger = Logger(label: "relay") { _ in CapturingLogHandler(records: records) }
        let canary = "CANARY-successor-\(UUID().uuidString)"
        try await withRelay(logger: logger) { _, port in
            let transport = RelayTransport(host: "127.0.0.1", port: port)
            let centers = (0..<3).map { _ in GroupActivityCenter<WatchMovie>(transport: transport, logger: Logger(label: "test")) }
            let delivered = centers.map { Collector($0.sessions) }
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let oldA = try await centers[0].activate(WatchMovie(movie: "first"), invite: invite)
            try await oldA.join()
            let spy = try await RawClient.connect(port: port, invite: invite)
            let oldB = try await centers[1].accept(invite)
            let oldC = try await centers[2].accept(invite)
            try await oldB.join()
            try await oldC.join()
            await eventually("four members") { oldA.activeParticipants.count == 4 }

            let newA = try await centers[0].activate(WatchMovie(movie: canary), replacing: oldA)
            await eventually("b and c got the successor") { delivered[1].count == 2 && delivered[2].count == 2 }
            let others = [delivered[1].values[1], delivered[2].values[1]]
            for session in others {
                #expect(session.id == newA.id)
                #expect(session.activity == WatchMovie(movie: canary))
                try await session.join()
            }
            for old in [oldA, oldB, oldC] {
                await eventually("old session ended") {
                    if case .invalidated(.ended) = old.state { return true }
                    return false
                }
            }
            let all = [newA] + others
            let chats = all.map { Collector(GroupSessionMessenger(session: $0).messages(of: Chat.self)) }
            await eventually("three members in the successor") { all.allSatisfy { $0.activeParticipants.count == 3 } }
            for (index, session) in all.enumerated() {
                try GroupSessionMessenger(session: session).send(Chat(sender: index, index: 1))
            }
            await eventually("every member got the others' messages") { chats.allSatisfy { $0.count == 2 } }

            // The spy stayed in the old session: it saw the announcement as one sealed data
            // frame from A, stamped just before the end.
            await eventually("spy saw the end") { spy.received.values.contains { $0.type == .end } }
            let frames = spy.received.values.filter { $0.type != .ping }
            let endIndex = try #require(frames.firstIndex { $0.type == .end })
            let announcement = try #require(endIndex > 0 ? frames[endIndex - 1] : nil)
            #expect(announcement.type == .data)
            #expect(announcement.sender == oldA.localParticipant.id)
            #expect(announcement.sequence < frames[endIndex].sequence)
            let wire = spy.wireBytes()
            let needles = [
                newA.id.bytes, Array(newA.id.description.utf8), Array(canary.utf8), Array("coplay.successor".utf8),
                newA.invite.secret, Array(newA.invite.description.split(separator: "#")[1].utf8),
            ]
            for needle in needles {
                #expect(!wire.contains(subsequence: needle))
            }
            let secretText = String(newA.invite.description.split(separator: "#")[1])
            for record in records.value {
                #expect(!record.contains(canary))
                #expect(!record.contains(secretText))
            }
        }
    }
}
