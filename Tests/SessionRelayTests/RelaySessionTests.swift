import Foundation
import GroupSessions
import Logging
import NIOCore
import SessionRelay
import Testing
import TestSupport

@Suite("Group sessions over the relay (TCP on loopback)", .timeLimit(.minutes(10)))
struct RelaySessionTests {
    @Test("lifecycle, participant deltas and end() with three members")
    func lifecycle() async throws {
        try await withRelay { relay, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "A"), invite: invite)
            let aStates = Collector(a.states)
            let deltas = Collector(a.activeParticipantsUpdates)
            try await a.join()
            let b = try await center.accept(invite)
            #expect(b.state == .waiting)
            #expect(b.activity == WatchMovie(movie: "A"))
            try await b.join()
            let c = try await center.accept(invite)
            try await c.join()
            let everyone: Set = [a.localParticipant, b.localParticipant, c.localParticipant]
            await eventually("all see three") {
                a.activeParticipants == everyone && b.activeParticipants == everyone && c.activeParticipants == everyone
            }
            c.leave()
            #expect(c.state == .invalidated(reason: .left))
            await eventually("a and b see c leave") {
                a.activeParticipants.count == 2 && b.activeParticipants.count == 2
            }
            // a's participant stream shows each delta as a whole set.
            await eventually("deltas") { deltas.values.last?.count == 2 }
            let counts = deltas.values.map(\.count)
            #expect(counts.contains(1) && counts.contains(3) && counts.last == 2)
            #expect(relay.metrics.participants == 2)

            try b.end()
            await eventually("everyone invalidated by b's end") {
                a.state == .invalidated(reason: .ended(by: b.localParticipant))
                    && b.state == .invalidated(reason: .ended(by: b.localParticipant))
            }
            await eventually("state stream finished with invalidated") {
                aStates.values.last == .invalidated(reason: .ended(by: b.localParticipant))
            }
            #expect(aStates.values.first == .waiting)
            #expect(aStates.values.contains(.joined))
            await eventually("relay forgot the session") { relay.metrics.sessions == 0 }
        }
    }

    @Test("two members setting the activity at the same moment converge on the relay's order")
    func activityConvergence() async throws {
        try await withRelay { _, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "start"), invite: invite)
            try await a.join()
            let b = try await center.accept(invite)
            try await b.join()
            let c = try await center.accept(invite)
            try await c.join()
            for round in 0..<20 {
                async let setA: Void = a.setActivity(WatchMovie(movie: "a\(round)"))
                async let setB: Void = b.setActivity(WatchMovie(movie: "b\(round)"))
                _ = try await (setA, setB)
                let converged = await eventually("round \(round) converges") {
                    let value = a.activity
                    return value.movie.hasSuffix("\(round)") && b.activity == value && c.activity == value
                }
                if !converged { break }
            }
            // A late joiner sees the converged value.
            let d = try await center.accept(invite)
            #expect(d.activity == a.activity)
        }
    }

    @Test("3 senders x 10,000 reliable messages: every member gets all, in each sender's order")
    func reliableFIFO() async throws {
        try await withRelay { relay, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            var sessions = [try await center.activate(WatchMovie(movie: "load"), invite: invite)]
            try await sessions[0].join()
            for _ in 0..<3 {
                let session = try await center.accept(invite)
                try await session.join()
                sessions.append(session)
            }
            await eventually("all joined") { sessions.allSatisfy { $0.activeParticipants.count == 4 } }
            let collectors = sessions.map { Collector(GroupSessionMessenger(session: $0).messages(of: Chat.self)) }
            let perSender = 10_000
            try await withThrowingTaskGroup(of: Void.self) { group in
                for sender in 0..<3 {
                    let messenger = GroupSessionMessenger(session: sessions[sender])
                    group.addTask {
                        for index in 0..<perSender {
                            try messenger.send(Chat(sender: sender, index: index))
                            if index % 500 == 0 { await Task.yield() }
                        }
                    }
                }
                try await group.waitForAll()
            }
            for (member, collector) in collectors.enumerated() {
                let expected = member < 3 ? 2 * perSender : 3 * perSender
                await eventually("member \(member) has \(expected)", timeout: .seconds(300)) { collector.count >= expected }
                let received = collector.values
                #expect(received.count == expected)
                for sender in 0..<3 where sender != member {
                    let indices = received.filter { $0.0.sender == sender }.map(\.0.index)
                    #expect(indices == Array(0..<perSender), "member \(member) from sender \(sender)")
                }
                let sequences = received.map(\.1.sequence)
                #expect(sequences == sequences.sorted(), "relay sequence increases for member \(member)")
            }
            #expect(relay.metrics.counters.framesForwarded >= UInt64(3 * 3 * perSender))
        }
    }

    @Test("a late joiner gets retained messages at once, without anyone re-sending")
    func retained() async throws {
        try await withRelay { _, port in
            let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
            let invite = Invite.generate(host: "127.0.0.1", port: port)
            let a = try await center.activate(WatchMovie(movie: "m"), invite: invite)
            try await a.join()
            let observer = try await center.accept(invite)
            let observed = Collector(GroupSessionMessenger(session: observer).messages(of: Chat.self))
            try await observer.join()
            await eventually("observer joined") { a.activeParticipants.count == 2 }
            let messenger = GroupSessionMessenger(session: a)
            for index in 0..<5 { try messenger.send(Chat(sender: 0, index: index), retainedAs: "state") }
            try messenger.send(Chat(sender: 0, index: 99, text: "other key"), retainedAs: "other")
            try messenger.send(Chat(sender: 0, index: 1000, text: "not retained"))
            // Once the observer has the last message, the relay has ordered all of them.
            await eventually("observer has all") { observed.values.contains { $0.0.index == 1000 } }
            let b = try await center.accept(invite)
            let late = Collector(GroupSessionMessenger(session: b).messages(of: Chat.self))
            await eventually("retained handed over") { late.count == 2 }
            #expect(Set(late.values.map(\.0.index)) == [4, 99])
            let allRetained = late.values.allSatisfy { $0.1.isRetained }
            #expect(allRetained)
            let fromA = late.values.allSatisfy { $0.1.source == a.localParticipant }
            #expect(fromA)
        }
    }
}
