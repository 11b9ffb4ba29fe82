import Foundation
import PropertyBased
import Testing
import TestSupport

@testable import PlaybackCoordinator

/// The coordination messages' wire format (docs/protocol.md, "Coordination messages"), pinned by
/// the shared vectors `Tests/Vectors/messages/coordination.json`.
///
/// The file is written from the values below: every message kind (every command, phase and
/// suspension reason, with and without each optional field), messages this coplay cannot read
/// (`unsupported`: an unknown kind, a newer version, the unversioned form of older builds), messages that read like a canonical one
/// (`lenient`: unknown fields, `null` optionals) and bodies that are no message (`malformed`).
/// `Tests/Web/messages.test.mjs` checks the page's `messages.js` against the same file. After a
/// deliberate change of the format:
///
/// ```sh
/// COPLAY_WRITE_VECTORS=1 swift test --filter CoordinationMessageVectorTests
/// ```
@Suite struct CoordinationMessageVectorTests {
    static let file = CoordinatorVectorTests.directory.deletingLastPathComponent()
        .appendingPathComponent("messages").appendingPathComponent("coordination.json")

    struct Vector: Codable, Equatable {
        var description: String
        /// Canonical messages: each decodes and encodes back to exactly this JSON.
        var messages: [Sample]
        /// Messages this coplay cannot read: each decodes as `unsupported(kind, version)`.
        var unsupported: [Unsupported]
        /// Each decodes to the same message as `same` does.
        var lenient: [Lenient]
        /// Each fails to decode.
        var malformed: [Sample]
    }

    struct Sample: Codable, Equatable {
        var name: String
        var json: JSONValue
    }

    struct Unsupported: Codable, Equatable {
        var name: String
        var json: JSONValue
        var kind: String
        var version: Int
        /// What the coordinator's `unsupportedMessage` event says about it.
        var detail: String
    }

    struct Lenient: Codable, Equatable {
        var name: String
        var json: JSONValue
        var same: JSONValue
    }

    static let participant: PlaybackParticipantID = "0123456789abcdef"
    static let sent = ReferenceTime(nanoseconds: 1_790_000_000_950_000_000)
    static let effect = ReferenceTime(nanoseconds: 1_790_000_001_000_000_000)

    static func state(
        _ command: CommandLabel, rate: Double, intendedRate: Double? = nil, duration: Double? = nil, item: String = "clip",
        entry: String? = nil, follows: String? = nil
    ) -> CoordinationMessage {
        .state(StateProposal(
            state: PlaybackState(
                item: item, rate: rate, anchorItemTime: command == .advance || command == .next || command == .previous || command == .jump ? 0 : 12.5,
                anchorReferenceTime: effect, originator: participant, intendedRate: intendedRate, duration: duration, entry: entry),
            command: command, sentAt: sent, follows: follows))
    }

    static let entries = [
        QueueEntry(id: "0123456789abcdef.1790000000950000000.0", item: "v2:59189:5d1c", title: "Episode 1.mkv", duration: 1_420.5, frameRate: 23.976, addedBy: participant, addedByName: "Ana"),
        QueueEntry(id: "0123456789abcdef.1790000000950000000.1", item: "v2:61002:9a0e", title: "Episode 2.mkv", addedBy: participant),
        // A stream identity with the file's fingerprint (how `coplay host` queues files; browsers match by it).
        QueueEntry(
            id: "0123456789abcdef.1790000000950000000.2", item: "v3:1800:8c41", fingerprint: "v2:64210:77b3", title: "Episode 3.mkv",
            duration: 1_388, frameRate: 25, addedBy: participant),
    ]

    /// The canonical messages, by name.
    static let samples: [(name: String, message: CoordinationMessage)] = [
        ("state: play, the item's duration known", state(.play, rate: 1, duration: 60)),
        ("state: pause, keeping the rate a later play resumes at", state(.pause, rate: 0, intendedRate: 1.5)),
        ("state: seek", state(.seek, rate: 1, duration: 60)),
        ("state: rate", state(.rate, rate: 2, duration: 60)),
        ("state: item", state(.item, rate: 1, item: "other")),
        ("state: next (a queue entry)", state(.next, rate: 1, duration: 1_420.5, entry: "e2")),
        ("state: previous", state(.previous, rate: 0, entry: "e1")),
        ("state: jump", state(.jump, rate: 1, entry: "e7")),
        ("state: advance at the end of an entry, following it", state(.advance, rate: 1, duration: 60, entry: "e3", follows: "e2")),
        ("state: restate (the group's state sent again)", state(.restate, rate: 1, duration: 60, entry: "e3")),
        ("queueEdit: add at the end", .queueEdit(QueueEditNotice(edit: .add(entries, at: .end), sentAt: sent))),
        ("queueEdit: add after an entry", .queueEdit(QueueEditNotice(edit: .add([entries[1]], at: .after(entries[0].id)), sentAt: sent))),
        ("queueEdit: remove", .queueEdit(QueueEditNotice(edit: .remove([entries[0].id]), sentAt: sent))),
        ("queueEdit: move to the start", .queueEdit(QueueEditNotice(edit: .move(entries[1].id, to: .start), sentAt: sent))),
        ("queueEdit: clear", .queueEdit(QueueEditNotice(edit: .clear, sentAt: sent))),
        ("queueEdit: repeat all", .queueEdit(QueueEditNotice(edit: .repeatMode(.all), sentAt: sent))),
        ("queueEdit: shuffle on", .queueEdit(QueueEditNotice(edit: .shuffle(seed: 42), sentAt: sent))),
        ("queueEdit: shuffle off", .queueEdit(QueueEditNotice(edit: .shuffle(seed: nil), sentAt: sent))),
        ("queueRequest", .queueRequest(QueueRequest(sentAt: sent))),
        (
            "queueSnapshot: an answer's first part, with the state at the request",
            .queueSnapshot(QueueSnapshotPart(
                snapshot: "0123456789abcdef.3", request: 41, through: 41, part: 0, parts: 1, entries: entries, repeatMode: .all,
                shuffleSeed: 42, removedPlaying: .init(id: "gone", successor: entries[1].id),
                state: PlaybackState(
                    item: "v2:59189:5d1c", rate: 1, anchorItemTime: 0, anchorReferenceTime: effect, originator: participant, revision: 40,
                    duration: 1_420.5, entry: entries[0].id),
                sentAt: sent))
        ),
        (
            "queueSnapshot: the retained copy of an empty queue",
            .queueSnapshot(QueueSnapshotPart(
                snapshot: "0123456789abcdef.4", request: nil, through: 57, part: 0, parts: 1, entries: [], repeatMode: .off,
                shuffleSeed: nil, removedPlaying: nil, sentAt: sent))
        ),
        (
            "suspension: begin, buffering, the group waits",
            .suspension(SuspensionNotice(
                id: "0123456789abcdef#1", phase: .begin, reason: .buffering, effectiveAt: effect, waits: true, timeout: .seconds(10),
                sentAt: sent))
        ),
        (
            "suspension: end proposing an item time, with the sender's history (every reason)",
            .suspension(SuspensionNotice(
                id: "0123456789abcdef#2", phase: .end, reason: .userChangingTime, effectiveAt: effect, waits: false,
                timeout: .milliseconds(2500), proposedItemTime: 42.25, sentAt: sent,
                history: SuspensionHistory(
                    revision: 17, anchorReferenceTime: ReferenceTime(nanoseconds: 1_789_999_990_000_000_000), anchorItemTime: 3.5,
                    suspensions: [
                        .init(id: "a#1", participant: "a", reason: .stallRecovery, begin: ReferenceTime(nanoseconds: 1_789_999_991_000_000_000),
                              end: ReferenceTime(nanoseconds: 1_789_999_992_000_000_000), timeout: .seconds(10), waits: true),
                        .init(id: "a#2", participant: "a", reason: .interruption, begin: ReferenceTime(nanoseconds: 1_789_999_993_000_000_000),
                              end: nil, timeout: .seconds(10), waits: false),
                        .init(id: "b#1", participant: "b", reason: .playingInterstitial, begin: ReferenceTime(nanoseconds: 1_789_999_994_000_000_000),
                              end: nil, timeout: .seconds(10), waits: false),
                        .init(id: "b#2", participant: "b", reason: .coordinatedPlaybackNotPossible,
                              begin: ReferenceTime(nanoseconds: 1_789_999_995_000_000_000), end: nil, timeout: .seconds(10), waits: false),
                        .init(id: "c#1", participant: "c", reason: .userActionRequired, begin: ReferenceTime(nanoseconds: 1_789_999_996_000_000_000),
                              end: nil, timeout: .seconds(10), waits: false),
                        .init(id: "c#2", participant: "c", reason: .custom("ad break"), begin: ReferenceTime(nanoseconds: 1_789_999_997_000_000_000),
                              end: ReferenceTime(nanoseconds: 1_789_999_998_000_000_000), timeout: .milliseconds(2500), waits: true),
                    ])))
        ),
        (
            "suspension: begin with an empty history (before any state)",
            .suspension(SuspensionNotice(
                id: "0123456789abcdef#3", phase: .begin, reason: .custom("napping"), effectiveAt: effect, waits: false,
                timeout: .seconds(10), sentAt: sent,
                history: SuspensionHistory(revision: nil, anchorReferenceTime: nil, anchorItemTime: nil, suspensions: [])))
        ),
        (
            "presence: a member without a player (coplay control)",
            .presence(PresenceReport(sentAt: sent, observedDelay: .nanoseconds(3_250_117), preroll: .zero, item: nil))
        ),
        (
            "presence: a player with its name and items",
            .presence(PresenceReport(
                sentAt: sent, observedDelay: .milliseconds(12), preroll: .milliseconds(40), item: "clip", name: "Ana",
                items: [.init(item: "clip", duration: 60), .init(item: "other", duration: nil), .init(item: "v3:ab12", duration: 40, frameIdentical: false)]))
        ),
        (
            "presence: a one-shot member (coplay control --name alice), announced neither joining nor leaving",
            .presence(PresenceReport(sentAt: sent, observedDelay: .zero, preroll: .zero, item: nil, name: "alice", oneShot: true))
        ),
        (
            "presence: a player that caught up after 20.3 s away (its next report after the jump)",
            .presence(PresenceReport(sentAt: sent, observedDelay: .zero, preroll: .zero, item: "clip", name: "Ana", caughtUp: -20.3))
        ),
    ]

    static let unsupported: [(name: String, json: String, kind: String, version: Int)] = [
        ("a newer version of a known kind", #"{"kind":"state","v":2,"sentAt":1790000000950000000,"anchor":{"itemTime":12.5}}"#, "state", 2),
        ("a kind this coplay does not know", #"{"kind":"playlist","v":1,"sentAt":1790000000950000000,"entries":[]}"#, "playlist", 1),
        ("only a kind and a version", #"{"kind":"presence","v":7}"#, "presence", 7),
        (
            "the unversioned form of builds before this format (Swift's synthesized enum coding), as version 0",
            #"{"presence":{"_0":{"sentAt":5,"observedDelay":[0,0],"preroll":[0,0]}}}"#, "presence", 0
        ),
    ]

    static let lenient: [(name: String, json: String, same: String)] = [
        (
            "fields a kind does not define are ignored, null is absent",
            #"{"kind":"presence","v":1,"sentAt":5,"observedDelayNs":0,"prerollNs":0,"item":null,"battery":0.5}"#,
            #"{"kind":"presence","v":1,"sentAt":5,"observedDelayNs":0,"prerollNs":0}"#
        ),
        (
            "a null duration is an unknown one",
            #"{"kind":"state","v":1,"sentAt":5,"command":"play","item":"clip","rate":1,"intendedRate":1,"anchorItemTime":0,"anchorReferenceTime":6,"originator":"a","duration":null}"#,
            #"{"kind":"state","v":1,"sentAt":5,"command":"play","item":"clip","rate":1,"intendedRate":1,"anchorItemTime":0,"anchorReferenceTime":6,"originator":"a"}"#
        ),
    ]

    static let malformed: [(name: String, json: String)] = [
        ("not an object", "[]"),
        ("no kind", #"{"v":1,"sentAt":5,"observedDelayNs":0,"prerollNs":0}"#),
        ("no version", #"{"kind":"presence","sentAt":5,"observedDelayNs":0,"prerollNs":0}"#),
        ("a version below 1", #"{"kind":"presence","v":0,"sentAt":5,"observedDelayNs":0,"prerollNs":0}"#),
        ("a version that is a string", #"{"kind":"presence","v":"1","sentAt":5,"observedDelayNs":0,"prerollNs":0}"#),
        ("a kind that is not a string", #"{"kind":7,"v":1}"#),
        ("two cases in the unversioned form", #"{"presence":{"_0":{}},"state":{"_0":{}}}"#),
        ("a missing field", #"{"kind":"presence","v":1,"sentAt":5,"observedDelayNs":0}"#),
        ("a fractional reference time", #"{"kind":"presence","v":1,"sentAt":1.5,"observedDelayNs":0,"prerollNs":0}"#),
        ("a duration as [seconds, attoseconds]", #"{"kind":"presence","v":1,"sentAt":5,"observedDelayNs":[0,0],"prerollNs":0}"#),
        ("items that are not a list", #"{"kind":"presence","v":1,"sentAt":5,"observedDelayNs":0,"prerollNs":0,"items":{"a":1}}"#),
        (
            "an unknown command",
            #"{"kind":"state","v":1,"sentAt":5,"command":"skip","item":"clip","rate":1,"intendedRate":1,"anchorItemTime":0,"anchorReferenceTime":6,"originator":"a"}"#
        ),
        (
            "an unknown phase",
            #"{"kind":"suspension","v":1,"sentAt":5,"id":"a#1","phase":"middle","reason":"buffering","effectiveAt":6,"waits":true,"timeoutNs":10}"#
        ),
        (
            "an unknown suspension reason",
            #"{"kind":"suspension","v":1,"sentAt":5,"id":"a#1","phase":"begin","reason":"napping","effectiveAt":6,"waits":true,"timeoutNs":10}"#
        ),
        (
            "a Boolean written as a number",
            #"{"kind":"suspension","v":1,"sentAt":5,"id":"a#1","phase":"begin","reason":"buffering","effectiveAt":6,"waits":1,"timeoutNs":10}"#
        ),
        (
            "a history without its suspensions",
            #"{"kind":"suspension","v":1,"sentAt":5,"id":"a#1","phase":"begin","reason":"buffering","effectiveAt":6,"waits":true,"timeoutNs":10,"history":{"revision":1}}"#
        ),
    ]

    static func json(_ text: String) throws -> JSONValue { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }

    static func json(_ message: CoordinationMessage) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(message))
    }

    static func message(_ json: JSONValue) throws -> CoordinationMessage {
        try JSONDecoder().decode(CoordinationMessage.self, from: JSONEncoder().encode(json))
    }

    static func make() throws -> Vector {
        Vector(
            description: "Coordination messages in their wire JSON (docs/protocol.md, \"Coordination messages\"), written by CoordinationMessageVectorTests.swift, read by Tests/Web/messages.test.mjs. messages: canonical, each decodes and encodes back to its json; unsupported: each decodes as unsupported(kind, version), which the coordinator's event describes as detail; lenient: each decodes to what same decodes to; malformed: each fails to decode.",
            messages: try samples.map { Sample(name: $0.name, json: try json($0.message)) },
            unsupported: try unsupported.map {
                Unsupported(
                    name: $0.name, json: try json($0.json), kind: $0.kind, version: $0.version,
                    detail: CoordinationMessage.unsupportedDescription(kind: $0.kind, version: $0.version))
            },
            lenient: try lenient.map { Lenient(name: $0.name, json: try json($0.json), same: try json($0.same)) },
            malformed: try malformed.map { Sample(name: $0.name, json: try json($0.json)) })
    }

    @Test func sharedVectors() throws {
        let vector = try Self.make()
        guard let stored = try VectorFile.writeOrRead(vector, at: Self.file, writing: CoordinatorVectorTests.writing) else { return }
        #expect(stored == vector, "the file differs from the Swift values' encoding; run with COPLAY_WRITE_VECTORS=1 after a deliberate change")
        #expect(Set(Self.samples.compactMap(\.message.kind)) == Set(CoordinationMessage.Kind.allCases), "every kind has a sample")
        for (sample, expected) in zip(stored.messages, Self.samples) {
            let decoded = try Self.message(sample.json)
            #expect(decoded == expected.message, "\(sample.name)")
            #expect(try Self.json(decoded) == sample.json, "\(sample.name)")
        }
        for entry in stored.unsupported {
            #expect(try Self.message(entry.json) == .unsupported(kind: entry.kind, version: entry.version), "\(entry.name)")
        }
        for entry in stored.lenient {
            #expect(try Self.message(entry.json) == Self.message(entry.same), "\(entry.name)")
        }
        for entry in stored.malformed {
            #expect(throws: DecodingError.self, "\(entry.name)") { try Self.message(entry.json) }
        }
    }

    @Test func everyCommandPhaseAndReasonHasASample() throws {
        var commands = Set<CommandLabel>()
        var phases = Set<SuspensionNotice.Phase>()
        var reasons = Set<String>()
        for (_, message) in Self.samples {
            switch message {
            case .state(let proposal): commands.insert(proposal.command)
            case .suspension(let notice):
                phases.insert(notice.phase)
                reasons.insert(notice.reason.description)
                for entry in notice.history?.suspensions ?? [] { reasons.insert(entry.reason.description) }
            case .presence, .queueEdit, .queueRequest, .queueSnapshot, .signed, .unsupported: break
            }
        }
        #expect(commands == Set(CommandLabel.allCases))
        #expect(phases == Set(SuspensionNotice.Phase.allCases))
        #expect(Set(SuspensionReason.named.map(\.description)).isSubset(of: reasons))
        #expect(reasons.contains { $0.hasPrefix("custom:") })
    }

    @Test func unsupportedMessagesEncodeAsTheirKindAndVersion() throws {
        let message = CoordinationMessage.unsupported(kind: "queue", version: 3)
        #expect(try Self.json(message) == Self.json(#"{"kind":"queue","v":3}"#))
        #expect(try Self.message(Self.json(message)) == message)
        #expect(message.sentAt == nil && message.kind == nil)
        #expect(CoordinationMessage.unsupportedDescription(kind: "state", version: 2)
            == #"coordination message "state" v2, newer than this coplay reads (v1): update coplay"#)
        #expect(CoordinationMessage.unsupportedDescription(kind: "presence", version: 0)
            == #"coordination message "presence" in the unversioned form of older coplay builds: that member should update coplay"#)
    }

    /// Any message with whole-nanosecond durations and revision 0 (what the core sends) survives
    /// encoding and decoding unchanged.
    @Test func codecRoundTrips() async throws {
        await propertyCheck(
            input: Gen.int64(in: -(1 << 62)...(1 << 62)), Gen.double(in: 0...1e5), Gen.int64(in: 0...(1 << 40)), Gen.int(in: 0...5)
        ) { instant, itemTime, nanoseconds, shape in
            let at = ReferenceTime(nanoseconds: instant)
            let message: CoordinationMessage =
                switch shape {
                case 0:
                    .state(StateProposal(
                        state: PlaybackState(item: "i\(shape)", rate: itemTime / 1e4, anchorItemTime: itemTime, anchorReferenceTime: at, originator: "p"),
                        command: .seek, sentAt: at))
                case 1:
                    .state(StateProposal(
                        state: PlaybackState(
                            item: "ü", rate: 0, anchorItemTime: itemTime, anchorReferenceTime: at, originator: "p", intendedRate: 0.0625, duration: itemTime * 2),
                        command: .pause, sentAt: at))
                case 2:
                    .suspension(SuspensionNotice(
                        id: "p#\(nanoseconds)", phase: .end, reason: .custom("x:\(nanoseconds)"), effectiveAt: at, waits: true,
                        timeout: .nanoseconds(nanoseconds), proposedItemTime: itemTime, sentAt: at,
                        history: SuspensionHistory(revision: UInt64(nanoseconds), anchorReferenceTime: at, anchorItemTime: itemTime, suspensions: [
                            .init(id: "q#1", participant: "q", reason: .buffering, begin: at, end: at + .nanoseconds(nanoseconds), timeout: .nanoseconds(-nanoseconds), waits: false)
                        ])))
                case 3:
                    .suspension(SuspensionNotice(
                        id: "p#1", phase: .begin, reason: .stallRecovery, effectiveAt: at, waits: false, timeout: .nanoseconds(nanoseconds), sentAt: at))
                case 4:
                    .presence(PresenceReport(
                        sentAt: at, observedDelay: .nanoseconds(nanoseconds), preroll: .nanoseconds(-nanoseconds), item: "i", name: "n \(nanoseconds)",
                        items: [.init(item: "i", duration: itemTime)]))
                default:
                    .presence(PresenceReport(sentAt: at, observedDelay: .nanoseconds(nanoseconds), preroll: .zero, item: nil))
                }
            let data = try JSONEncoder().encode(message)
            #expect(try JSONDecoder().decode(CoordinationMessage.self, from: data) == message)
        }
    }
}

/// Any JSON value, to compare JSON by value (key order and number spelling aside).
enum JSONValue: Codable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsigned(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .unsigned(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}
