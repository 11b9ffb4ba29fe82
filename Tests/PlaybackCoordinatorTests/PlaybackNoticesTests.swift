import Foundation
import Logging
import TestSupport
import Testing

@testable import PlaybackCoordinator

/// The notices people see over the video (`PlaybackNotices`), the shared vectors the page's
/// `notices.js` also runs, and who is announced as joining and leaving (`MembershipAnnouncements`).
@Suite("Notices: their words, the shared vectors, one-shot members, catching up")
struct PlaybackNoticesTests {
    static let file = CoordinatorVectorTests.directory.deletingLastPathComponent()
        .appendingPathComponent("notices").appendingPathComponent("notices.json")

    struct Vector: Decodable {
        struct Case: Decodable {
            var name: String
            var level: String
            var local: String
            var titles: [String: String]
            var steps: [Step]
        }
        struct Step: Decodable {
            var event: [String: JSONValue]
            var text: String?
        }
        var cases: [Case]
    }

    /// Any JSON value, re-encoded to decode a `PlaybackEvent`.
    enum JSONValue: Codable {
        case string(String), number(Double), bool(Bool), null

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Double.self) { self = .number(value) }
            else { self = .string(try container.decode(String.self)) }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .string(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            case .null: try container.encodeNil()
            }
        }
    }

    static func cases() throws -> [Vector.Case] {
        try JSONDecoder().decode(Vector.self, from: Data(contentsOf: file)).cases
    }

    @Test("the shared vectors: every case's events give its texts")
    func vectors() throws {
        let cases = try Self.cases()
        #expect(cases.count >= 8)
        var checked = 0
        for vector in cases {
            var notices = PlaybackNotices(
                level: try #require(PlaybackNotices.Level(rawValue: vector.level)), local: PlaybackParticipantID(vector.local),
                titles: vector.titles)
            for (index, step) in vector.steps.enumerated() {
                var fields = step.event
                fields["realtime"] = .number(0)
                let data = try JSONEncoder().encode(fields)
                guard let event = try? JSONDecoder().decode(PlaybackEvent.self, from: data) else {
                    // A type this build does not know (chat, before chat messages exist).
                    guard case .string(let type)? = step.event["type"], PlaybackEvent.EventType(rawValue: type) == nil else {
                        Issue.record("\(vector.name) step \(index): cannot read \(step.event)")
                        continue
                    }
                    continue
                }
                #expect(notices.notice(for: event) == step.text, "\(vector.name) step \(index) (\(event.type.rawValue))")
                checked += 1
            }
        }
        #expect(checked >= 60)
    }

    static let positionCases: [(Double, String)] = [
        (0.0, "0:00"), (9.99, "0:09"), (754.6, "12:34"), (3599.9, "59:59"), (3600, "1:00:00"), (3723.5, "1:02:03"),
        (36000, "10:00:00"), (-3, "0:00"), (Double.nan, "0:00"),
    ]

    @Test("positions: m:ss under an hour, h:mm:ss from an hour, the second on screen", arguments: positionCases)
    func positions(_ seconds: Double, _ text: String) {
        #expect(PlaybackNotices.position(seconds) == text)
    }

    static let rateCases: [(Double, String)] = [
        (1.25, "1.25"), (2, "2"), (0.5, "0.5"), (0.0625, "0.0625"), (1.0 / 3, "0.3333"), (16, "16"), (1.1, "1.1"),
    ]

    @Test("rates: shortest form, at most four decimals", arguments: rateCases)
    func rates(_ rate: Double, _ text: String) {
        #expect(PlaybackNotices.number(rate) == text)
    }

    // MARK: Who is announced

    typealias Presence = (reported: Bool, oneShot: Bool, name: String?)

    static func joined(_ member: PlaybackParticipantID) -> PlaybackEvent {
        PlaybackEvent(type: .joined, realtime: 0, originator: member, referenceTime: 10)
    }

    static func left(_ member: PlaybackParticipantID) -> PlaybackEvent {
        PlaybackEvent(type: .left, realtime: 0, originator: member, referenceTime: 20)
    }

    @Test("a member's joined waits for its presence report and is told with its name; its left follows")
    func namedMember() {
        var gate = MembershipAnnouncements()
        var known: [PlaybackParticipantID: Presence] = [:]
        let t = ReferenceTime(seconds: 10)
        let held = gate.pass(Self.joined("d4"), local: "me", now: t) { known[$0] ?? (false, false, nil) }
        #expect(held.isEmpty)
        #expect(gate.nextDeadline == t + .seconds(3))
        let early = gate.release(now: t + .milliseconds(10)) { known[$0] ?? (false, false, nil) }
        #expect(early.isEmpty)
        known["d4"] = (true, false, "dave")
        let told = gate.release(now: t + .milliseconds(20)) { known[$0] ?? (false, false, nil) }
        #expect(told.map(\.type) == [.joined])
        #expect(told.first?.originatorName == "dave")
        #expect(told.first?.referenceTime == 10)
        #expect(gate.nextDeadline == nil)
        let left = gate.pass(Self.left("d4"), local: "me", now: t + .seconds(5)) { known[$0] ?? (false, false, nil) }
        #expect(left.map(\.type) == [.left])
    }

    @Test("a one-shot member is announced neither joining nor leaving; its command passes")
    func oneShotMember() {
        var gate = MembershipAnnouncements()
        var known: [PlaybackParticipantID: Presence] = [:]
        let t = ReferenceTime(seconds: 10)
        let held = gate.pass(Self.joined("c1"), local: "me", now: t) { known[$0] ?? (false, false, nil) }
        #expect(held.isEmpty)
        known["c1"] = (true, true, "alice")
        let released = gate.release(now: t + .milliseconds(5)) { known[$0] ?? (false, false, nil) }
        #expect(released.isEmpty)
        let pause = PlaybackEvent(type: .pause, realtime: 0, originator: "c1", originatorName: "alice", itemTime: 754, rate: 0)
        let passed = gate.pass(pause, local: "me", now: t + .milliseconds(6)) { known[$0] ?? (false, false, nil) }
        #expect(passed == [pause])
        let left = gate.pass(Self.left("c1"), local: "me", now: t + .milliseconds(9)) { known[$0] ?? (false, false, nil) }
        #expect(left.isEmpty)
        let later = gate.release(now: t + .seconds(10)) { known[$0] ?? (false, false, nil) }
        #expect(later.isEmpty)
    }

    @Test("a member silent for the name wait is told by id; one that came and went silent is not told at all")
    func silentMembers() {
        var gate = MembershipAnnouncements(nameWait: .seconds(3))
        let nobody: (PlaybackParticipantID) -> Presence = { _ in (false, false, nil) }
        let t = ReferenceTime(seconds: 10)
        var told = gate.pass(Self.joined("s1"), local: "me", now: t, presence: nobody)
        #expect(told.isEmpty)
        told = gate.release(now: t + .milliseconds(2999), presence: nobody)
        #expect(told.isEmpty)
        told = gate.release(now: t + .seconds(3), presence: nobody)
        #expect(told.map(\.originator) == ["s1"])
        told = gate.pass(Self.joined("s2"), local: "me", now: t, presence: nobody)
        #expect(told.isEmpty)
        told = gate.pass(Self.left("s2"), local: "me", now: t + .seconds(1), presence: nobody)
        #expect(told.isEmpty)
        told = gate.release(now: t + .seconds(9), presence: nobody)
        #expect(told.isEmpty)
        // The local member's own joined and left pass at once.
        told = gate.pass(Self.joined("me"), local: "me", now: t, presence: nobody)
        #expect(told.count == 1)
    }

    // MARK: Over coordinators

    @Test("over coordinators: a one-shot member's pause names it, and nobody hears it join or leave; a player is told joining by name")
    func coordinators() async throws {
        let hub = InMemoryCoordinationHub()
        let reference = MonotonicReferenceTimeSource()
        let watcher = PlaybackCoordinator(
            channel: await hub.connect("w"), reference: reference, delegate: RecordingDelegate(), localItem: "clip", name: "watcher", logger: Logger(label: "test"))
        let events = Collector<PlaybackEvent>()
        var tasks = [Task { await watcher.run() }, events.start(watcher.events)]
        defer { for task in tasks { task.cancel() } }
        try await watcher.pause()
        await eventually { await watcher.state != nil }

        let control = PlaybackCoordinator(
            channel: await hub.connect("c1"), reference: reference, delegate: RecordingDelegate(), name: "alice", oneShot: true, logger: Logger(label: "test"))
        tasks.append(Task { await control.run() })
        await eventually { await control.state != nil }
        try await control.announce()
        try await control.play()
        await eventually { await events.items.contains { $0.type == .play } }
        await hub.disconnect("c1")

        let dave = PlaybackCoordinator(
            channel: await hub.connect("d4"), reference: reference, delegate: RecordingDelegate(), localItem: "clip", name: "dave", logger: Logger(label: "test"))
        tasks.append(Task { await dave.run() })
        await eventually { await events.items.contains { $0.type == .joined && $0.originator == "d4" } }
        await hub.disconnect("d4")
        await eventually { await events.items.contains { $0.type == .left && $0.originator == "d4" } }

        let seen = await events.items
        let play = try #require(seen.first { $0.type == .play })
        #expect(play.originator == "c1")
        #expect(play.originatorName == "alice")
        #expect(!seen.contains { [.joined, .left].contains($0.type) && $0.originator == "c1" }, "\(seen.map(\.jsonLine))")
        #expect(seen.first { $0.type == .joined && $0.originator == "d4" }?.originatorName == "dave")
    }

    @Test("catching up: the member's next presence report carries it once; the others report a caughtUp event")
    func caughtUp() throws {
        var alice = CoreHarness("a1")
        var bob = CoreHarness("b2")
        _ = bob.core.receive(.joined("a1"), now: ReferenceTime(seconds: 1))
        alice.core.noteCaughtUp(offBy: -20.3)
        let first = CoreHarness.sent(alice.core.presenceReport(now: ReferenceTime(seconds: 2)))
        guard case .presence(let report)? = first.first else { Issue.record("no presence report"); return }
        #expect(report.caughtUp == -20.3)
        guard case .presence(let next)? = CoreHarness.sent(alice.core.presenceReport(now: ReferenceTime(seconds: 3))).first else { return }
        #expect(next.caughtUp == nil)
        let events = CoreHarness.events(bob.deliver(.presence(report), from: "a1", at: 2.01))
        #expect(events.map(\.type) == [.caughtUp])
        #expect(events.first?.errorMs == -20300)
        #expect(events.first?.originator == "a1")
        var notices = PlaybackNotices(local: "b2")
        #expect(notices.notice(for: events[0]) == "member a1 caught up after 20 s away")
        // The wire form carries it, and a one-shot flag.
        let encoded = String(decoding: try JSONEncoder().encode(CoordinationMessage.presence(PresenceReport(
            sentAt: ReferenceTime(nanoseconds: 5), observedDelay: .zero, preroll: .zero, item: nil, oneShot: true, caughtUp: -20.3))), as: UTF8.self)
        #expect(encoded.contains("\"oneShot\":true"))
        #expect(encoded.contains("\"caughtUp\":-20.3"))
    }
}
