import Crypto
import Foundation
import NIOCore
import Testing
import TestSupport

// Only what the crypto vector needs: GroupSessions also has a PlaybackParticipantID (the relay's 64-bit ids).
import struct GroupSessions.DataRoute
import struct GroupSessions.Frame
import enum GroupSessions.FrameCodec
import struct GroupSessions.FrameType
import struct GroupSessions.PayloadCipher
import struct GroupSessions.SessionID
import struct GroupSessions.SessionKeys

@testable import PlaybackCoordinator
/// Runs the shared coordinator vectors in `Tests/Vectors/coordinator/*.json` against ``CoordinatorCore``.
///
/// The same files are run against the browser's JavaScript port (`Web/static/sync/coordinator.js`) by
/// `Tests/Web/coordinator.test.mjs`, so the two implementations cannot drift apart unnoticed.
///
/// A vector is a participant, a configuration and steps (channel events, ticks, API calls, each
/// with "now"); each step records what the core must answer: its actions (messages to send in
/// their wire JSON, player commands, events without their `realtime` stamp) and, after the
/// step, the lead, the next tick deadline and the effective timeline. Messages, in inputs and sends,
/// are in their wire JSON (docs/protocol.md, "Coordination messages"). The expected outputs are
/// Swift's: after a deliberate behaviour change, refresh them with
///
/// ```sh
/// COPLAY_WRITE_VECTORS=1 swift test --filter CoordinatorVectorTests
/// ```
///
/// and review the diff (then make the JavaScript port pass again). The file format is described
/// in `Web/README.md`, "Coordinator vectors".
@Suite struct CoordinatorVectorTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors").appendingPathComponent("coordinator")

    /// The vectors: the hand-written ones, then `model/`, the traces of ``GroupModelTests``'
    /// regression seeds (one file per member, written compactly: they are long).
    static var files: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let model = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("model").path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted() + model.filter { $0.hasSuffix(".json") }.sorted().map { "model/" + $0 }
    }

    /// Writes a vector: pretty-printed by hand, compact in `model/`.
    static func write(_ vector: CoordinatorVector, to url: URL, compact: Bool) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = compact ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(vector)
        data.append(0x0A)
        try data.write(to: url)
    }

    static var writing: Bool { ProcessInfo.processInfo.environment["COPLAY_WRITE_VECTORS"] == "1" }

    @Test func vectorsArePresent() {
        #expect(Self.files.count >= 10, "expected the shared vectors in \(Self.directory.path)")
    }

    @Test(arguments: files)
    func vector(_ file: String) throws {
        let url = Self.directory.appendingPathComponent(file)
        var vector = try JSONDecoder().decode(CoordinatorVector.self, from: Data(contentsOf: url))
        let results = try Self.run(vector)
        if Self.writing {
            for index in vector.steps.indices { vector.steps[index].expect = results[index] }
            try Self.write(vector, to: url, compact: file.hasPrefix("model/"))
            return
        }
        for (index, step) in vector.steps.enumerated() {
            #expect(step.expect != nil, "\(file) step \(index) (\(step.op)) has no expected output; run with COPLAY_WRITE_VECTORS=1")
            guard let expected = step.expect else { continue }
            let actual = results[index]
            #expect(actual.actions.count == expected.actions.count, "\(file) step \(index) (\(step.op)): action count")
            for (position, pair) in zip(actual.actions, expected.actions).enumerated() {
                #expect(pair.0 == pair.1, "\(file) step \(index) (\(step.op)) action \(position)")
            }
            #expect(actual == expected, "\(file) step \(index) (\(step.op))")
        }
    }

    // MARK: Running a vector

    static func run(_ vector: CoordinatorVector) throws -> [VectorExpectation] {
        var configuration = CoordinatorConfiguration()
        if let c = vector.configuration {
            if let v = c.margin { configuration.margin = .nanoseconds(v) }
            if let v = c.minimumLead { configuration.minimumLead = .nanoseconds(v) }
            if let v = c.maximumLead { configuration.maximumLead = .nanoseconds(v) }
            if let v = c.preroll { configuration.preroll = .nanoseconds(v) }
            if let v = c.presenceInterval { configuration.presenceInterval = .nanoseconds(v) }
            if let v = c.delayWindow { configuration.delayWindow = v }
            if let v = c.waitingReasons { configuration.waitingReasons = Set(v) }
            if let v = c.maximumWaitingParticipants { configuration.maximumWaitingParticipants = v }
            if let v = c.suspensionTimeout { configuration.suspensionTimeout = .nanoseconds(v) }
            if let v = c.holdsCommandsUntilJoined { configuration.holdsCommandsUntilJoined = v }
            if let v = c.suspendsWhileEntryMissing { configuration.suspendsWhileEntryMissing = v }
            for limit in c.participantLimits ?? [] { configuration.participantLimits[limit.reason] = limit.limit }
        }
        var canPresent: (@Sendable (String) -> Bool)?
        if let items = vector.canPresent { canPresent = { items.contains($0) } }
        let participant = PlaybackParticipantID(vector.participant)
        var core = CoordinatorCore(
            participant: participant, configuration: configuration, localItem: vector.localItem, canPresent: canPresent,
            name: vector.name, items: vector.items ?? [])
        var outbox: [CoordinationMessage] = []
        var results: [VectorExpectation] = []
        for step in vector.steps {
            let now = ReferenceTime(nanoseconds: step.now ?? 0)
            var actions: [CoordinatorAction] = []
            var error: String?
            var id: String?
            do {
                switch step.op {
                case "receive":
                    let event = try #require(step.event, "receive needs an event")
                    actions = core.receive(try event.channelEvent(), now: now)
                case "deliver":
                    let index = try #require(step.outbox, "deliver needs an outbox index")
                    try #require(index < outbox.count, "outbox \(index) was not sent yet")
                    let sequence = try #require(step.sequence, "deliver needs a sequence")
                    actions = core.receive(
                        .message(outbox[index], sender: PlaybackParticipantID(step.sender ?? vector.participant), sequence: sequence), now: now)
                case "tick":
                    actions = core.tick(now: now)
                case "proposeRate":
                    actions = try core.proposeRate(try #require(step.rate), now: now)
                case "proposePlay":
                    actions = try core.proposePlay(now: now)
                case "proposeSeek":
                    actions = try core.proposeSeek(to: try #require(step.itemTime), now: now)
                case "proposeItem":
                    actions = try core.proposeItem(try #require(step.item), at: step.itemTime ?? 0, now: now)
                case "setLocalItem":
                    actions = core.setLocalItem(step.item)
                case "proposeQueueEdit":
                    actions = core.proposeQueueEdit(try #require(step.edit), now: now)
                case "proposeNext":
                    actions = try core.proposeNext(now: now)
                case "proposePrevious":
                    actions = try core.proposePrevious(now: now)
                case "proposeJump":
                    actions = try core.proposeJump(toPosition: try #require(step.position), now: now)
                case "reapplyCurrentState":
                    actions = core.reapplyCurrentState()
                case "beginSuspension":
                    let begun = core.beginSuspension(try #require(step.reason), now: now)
                    id = begun.id
                    actions = begun.actions
                case "endSuspension":
                    actions = try core.endSuspension(try #require(step.id), proposing: step.itemTime, now: now)
                default:
                    Issue.record("unknown op \(step.op)")
                }
            } catch let failure as PlaybackCoordinatorError {
                error = Self.code(of: failure, step: step)
            }
            for action in actions {
                if case .send(let message, _) = action { outbox.append(message) }
            }
            results.append(
                VectorExpectation(
                    actions: actions.map(VectorAction.init), error: error, id: id, lead: core.lead.nanosecondsValue,
                    nextTickDeadline: core.nextTickDeadline?.nanoseconds, segments: core.segments().map(VectorSegment.init),
                    participants: core.otherParticipants.isEmpty ? nil : core.otherParticipants.map(VectorParticipant.init),
                    suspensionReasons: core.suspensionReasons.isEmpty ? nil : core.suspensionReasons.map(\.description),
                    queue: core.queue == PlayQueue() ? nil : core.queue))
        }
        return results
    }

    /// The name of the `PlaybackCoordinatorError` constructor that made `error`.
    static func code(of error: PlaybackCoordinatorError, step: VectorStep) -> String {
        if error == .noItem { return "noItem" }
        if let rate = step.rate, error == .invalidRate(rate) { return "invalidRate" }
        if let time = step.itemTime, error == .invalidItemTime(time) { return "invalidItemTime" }
        if let id = step.id, error == .unknownSuspension(id) { return "unknownSuspension" }
        if "\(error)".hasPrefix("cannot seek to") { return "seekPastEnd" }
        return "\(error)"
    }
}

// MARK: File format

/// One vector file.
struct CoordinatorVector: Codable {
    var description: String
    var participant: String
    var name: String?
    var localItem: String?
    /// When present, the core's `canPresent` predicate returns `true` exactly for these items.
    var canPresent: [String]?
    /// The items the member has, with their durations (the core's `items`).
    var items: [PresenceReport.ItemSummary]?
    var configuration: VectorConfiguration?
    var steps: [VectorStep]
}

/// Overrides of ``CoordinatorConfiguration``; durations in integer nanoseconds.
struct VectorConfiguration: Codable {
    var margin: Int64?
    var minimumLead: Int64?
    var maximumLead: Int64?
    var preroll: Int64?
    var presenceInterval: Int64?
    var delayWindow: Int?
    var waitingReasons: [SuspensionReason]?
    var maximumWaitingParticipants: Int?
    var suspensionTimeout: Int64?
    var holdsCommandsUntilJoined: Bool?
    var suspendsWhileEntryMissing: Bool?
    var participantLimits: [VectorParticipantLimit]?
}

/// One entry of ``CoordinatorConfiguration/participantLimits``.
struct VectorParticipantLimit: Codable {
    var reason: SuspensionReason
    var limit: Int
}

/// One input and, in `expect`, the core's answer to it.
struct VectorStep: Codable {
    /// receive, deliver, tick, proposeRate, proposePlay, proposeSeek, proposeItem, setLocalItem,
    /// reapplyCurrentState, beginSuspension, endSuspension.
    var op: String
    /// Reference time of the step in nanoseconds.
    var now: Int64?
    /// receive: the channel event.
    var event: VectorChannelEvent?
    /// deliver: index of a message this core sent earlier (every send action counts, from 0),
    /// handed back as the channel would, from `sender` (default: the participant) with `sequence`.
    var outbox: Int?
    var sender: String?
    var sequence: UInt64?
    var rate: Double?
    var itemTime: Double?
    var item: String?
    var reason: SuspensionReason?
    var id: String?
    /// proposeQueueEdit: the edit.
    var edit: QueueEdit?
    /// proposeJump: the 1-based position.
    var position: Int?
    var expect: VectorExpectation?
}

/// `{"joined": id}`, `{"left": id}` or `{"message": CoordinationMessage, "sender": id, "sequence": n}`,
/// with `"unauthenticated": true` for a `state` the channel's gate let through unsigned
/// (``StateProposal/isUnauthenticated``).
struct VectorChannelEvent: Codable {
    var joined: String?
    var left: String?
    var message: CoordinationMessage?
    var sender: String?
    var sequence: UInt64?
    var unauthenticated: Bool?

    func channelEvent() throws -> CoordinationChannelEvent {
        if let joined { return .joined(PlaybackParticipantID(joined)) }
        if let left { return .left(PlaybackParticipantID(left)) }
        var message = try #require(message, "an event is joined, left or message")
        if unauthenticated == true, case .state(var proposal) = message {
            proposal.isUnauthenticated = true
            message = .state(proposal)
        }
        return .message(message, sender: PlaybackParticipantID(try #require(sender)), sequence: try #require(sequence))
    }
}

/// What the core answered to a step, and its state after it.
struct VectorExpectation: Codable, Equatable {
    var actions: [VectorAction]
    /// The `PlaybackCoordinatorError` constructor's name when the call threw.
    var error: String?
    /// beginSuspension: the identifier it returned.
    var id: String?
    /// `lead` after the step, nanoseconds.
    var lead: Int64
    /// `nextTickDeadline` after the step, nanoseconds.
    var nextTickDeadline: Int64?
    /// `segments()` after the step.
    var segments: [VectorSegment]
    /// `otherParticipants` after the step; absent when there are none.
    var participants: [VectorParticipant]?
    /// `suspensionReasons` (descriptions) after the step; absent when empty.
    var suspensionReasons: [String]?
    /// `queue` after the step; absent while it is empty (no entries, repeat off, no shuffle).
    var queue: PlayQueue?
}

/// A ``CoordinatedPlaybackParticipant``: id, name, open suspensions (`"ID reason"`).
struct VectorParticipant: Codable, Equatable {
    var id: String
    var name: String?
    var suspensions: [String]

    init(_ participant: CoordinatedPlaybackParticipant) {
        id = participant.id.rawValue
        name = participant.name
        suspensions = participant.suspensions.map { "\($0.id) \($0.reason)" }
    }
}

/// Exactly one of `send`, `command`, `event`.
struct VectorAction: Codable, Equatable {
    var send: VectorSend?
    var command: VectorCommand?
    var event: VectorEvent?

    init(_ action: CoordinatorAction) {
        switch action {
        case .send(let message, let retainKey): send = VectorSend(message: message, retainKey: retainKey)
        case .command(let command): self.command = VectorCommand(command)
        case .event(let event): self.event = VectorEvent(event)
        }
    }
}

struct VectorSend: Codable, Equatable {
    var message: CoordinationMessage
    var retainKey: String?
}

/// A ``PlaybackCommand``: kind (play, pause, seek, buffer) and its fields, times in nanoseconds.
struct VectorCommand: Codable, Equatable {
    var kind: String
    var itemTime: Double
    var referenceTime: Int64
    var rate: Double?
    var completionDueDate: Int64?
    var originator: String
    var originatorName: String?
    var expectedItemIdentifier: String
    var revision: UInt64

    init(_ command: PlaybackCommand) {
        switch command.kind {
        case .play(let itemTime, let referenceTime, let rate):
            (kind, self.itemTime, self.referenceTime, self.rate) = ("play", itemTime, referenceTime.nanoseconds, rate)
        case .pause(let itemTime, let referenceTime):
            (kind, self.itemTime, self.referenceTime) = ("pause", itemTime, referenceTime.nanoseconds)
        case .seek(let itemTime, let referenceTime, let due):
            (kind, self.itemTime, self.referenceTime, completionDueDate) = ("seek", itemTime, referenceTime.nanoseconds, due.nanoseconds)
        case .buffer(let itemTime, let referenceTime, let due):
            (kind, self.itemTime, self.referenceTime, completionDueDate) = ("buffer", itemTime, referenceTime.nanoseconds, due.nanoseconds)
        }
        originator = command.originator.rawValue
        originatorName = command.originatorName
        expectedItemIdentifier = command.expectedItemIdentifier
        revision = command.revision
    }
}

/// A ``PlaybackEvent`` without `realtime` (the core leaves it 0) and the player-only fields.
struct VectorEvent: Codable, Equatable {
    var type: String
    var player: String?
    var originator: String?
    var originatorName: String?
    var item: String?
    var itemTime: Double?
    var rate: Double?
    var referenceTime: Double?
    var revision: UInt64?
    var reason: String?
    var suspension: String?
    var waits: Bool?
    var timedOut: Bool?
    var detail: String?

    init(_ event: PlaybackEvent) {
        #expect(event.realtime == 0 && event.index == nil && event.pts == nil && event.errorMs == nil)
        type = event.type.rawValue
        player = event.player?.rawValue
        originator = event.originator?.rawValue
        originatorName = event.originatorName
        item = event.item
        itemTime = event.itemTime
        rate = event.rate
        referenceTime = event.referenceTime
        revision = event.revision
        reason = event.reason
        suspension = event.suspension
        waits = event.waits
        timedOut = event.timedOut
        detail = event.detail
    }
}

/// A ``TimelineSegment``, times in nanoseconds.
struct VectorSegment: Codable, Equatable {
    var start: Int64
    var itemTime: Double
    var rate: Double
    var waiting: Bool
    var waitEnd: Int64?
    /// `true` for the item's end (left out otherwise).
    var ended: Bool?

    init(_ segment: TimelineSegment) {
        start = segment.start.nanoseconds
        itemTime = segment.itemTime
        rate = segment.rate
        waiting = segment.waiting
        waitEnd = segment.waitEnd?.nanoseconds
        ended = segment.ended ? true : nil
    }
}

// MARK: - Session crypto vector

/// Writes and checks `Tests/Vectors/crypto/session.json`: the key derivations of docs/protocol.md
/// ("Cryptography", both AEAD suites), and a data frame sealed with
/// each suite, computed here with swift-crypto and GroupSessions' own ``SessionKeys`` and
/// ``PayloadCipher``. `Tests/Web/crypto.test.mjs` checks the browser's WebCrypto code against the
/// same file. (The AES-256-GCM frame is sealed here by hand from the documented rules; once
/// GroupSessions has the suite, it should produce the same bytes.)
@Suite struct SessionCryptoVectorTests {
    static let file = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors").appendingPathComponent("crypto").appendingPathComponent("session.json")

    struct Vector: Codable, Equatable {
        var description: String
        var secret: String
        var session: String
        var sender: String
        var joinToken: String
        var joinTokenHash: String
        var retainKeys: [String: String]
        var chachaPayloadKey: String
        var aesPayloadKey: String
        var senderSequence: UInt64
        var flags: UInt16
        var retainName: String
        var plaintext: String
        var associatedData: String
        var chachaFrame: String
        var aesFrame: String
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func make() throws -> Vector {
        let secret = (0..<32).map { UInt8($0 &* 7 &+ 3) }
        let session = SessionID(high: 0x0011_2233_4455_6677, low: 0x8899_aabb_ccdd_eeff)
        // The relay's 64-bit participant id (its type name would clash with the coordinator's PlaybackParticipantID).
        let sender = Frame(type: .ping, session: session, sender: .init(rawValue: 0x0123_4567_89ab_cdef)).sender
        let keys = SessionKeys(secret: secret, session: session)
        let names = ["coplay.activity", "message:coplay.playback.state", "message:coplay.playback.suspension.0123456789abcdef"]
        var retainKeys: [String: String] = [:]
        for name in names { retainKeys[name] = hex(keys.retainKey(for: name)) }
        let chachaKey = keys.payloadKey(for: sender).withUnsafeBytes { Array($0) }
        var info = Array("coplay v1 payload aes-256-gcm".utf8)
        withUnsafeBytes(of: sender.rawValue.bigEndian) { info.append(contentsOf: $0) }
        let aesKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: secret), salt: session.bytes, info: info, outputByteCount: 32
        ).withUnsafeBytes { Array($0) }

        // An envelope (kind 1, name CoordinationMessage) around a small JSON body.
        let body = Array(#"{"kind":"presence","v":1,"sentAt":1790000000000000000,"observedDelayNs":0,"prerollNs":0}"#.utf8)
        let name = Array("CoordinationMessage".utf8)
        let plaintext = [1, 1, 0, UInt8(name.count)] + name + [0, 0] + body
        let senderSequence: UInt64 = 0x0102_0304_0506_0708
        let retainName = "message:coplay.playback.state"
        let route = DataRoute(senderSequence: senderSequence, recipients: [], retainKey: keys.retainKey(for: retainName))

        var cipher = PayloadCipher(keys: keys)
        let chachaFrame = try cipher.seal(plaintext, route: route, flags: [], sender: sender)
        var chachaBytes = ByteBuffer()
        FrameCodec.encode(chachaFrame, into: &chachaBytes)

        // AES-256-GCM, from the rules: same associated data and nonce, the AES key above.
        var aad: [UInt8] = [Frame.version, FrameType.data.rawValue, 0, 0] + session.bytes
        withUnsafeBytes(of: sender.rawValue.bigEndian) { aad.append(contentsOf: $0) }
        withUnsafeBytes(of: senderSequence.bigEndian) { aad.append(contentsOf: $0) }
        aad += [UInt8(route.retainKey.count)] + route.retainKey
        var nonce = [UInt8](repeating: 0, count: 4)
        withUnsafeBytes(of: senderSequence.bigEndian) { nonce.append(contentsOf: $0) }
        let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: aesKey), nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
        var payload = ByteBuffer()
        route.encode(into: &payload)
        payload.writeBytes(box.ciphertext)
        payload.writeBytes(box.tag)
        var aesBytes = ByteBuffer()
        FrameCodec.encode(Frame(type: .data, session: session, sender: sender, payload: payload), into: &aesBytes)

        return Vector(
            description: "Key derivations (join token, retain keys, payload keys of both suites) and one data frame sealed with each suite; hex unless noted, secret in base64url.",
            secret: Data(secret).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: ""),
            session: session.description, sender: sender.description,
            joinToken: hex(keys.joinToken), joinTokenHash: hex(SessionKeys.joinTokenHash(keys.joinToken)),
            retainKeys: retainKeys, chachaPayloadKey: hex(chachaKey), aesPayloadKey: hex(aesKey),
            senderSequence: senderSequence, flags: 0, retainName: retainName, plaintext: hex(plaintext),
            associatedData: hex(aad), chachaFrame: hex(chachaBytes.readableBytesView), aesFrame: hex(aesBytes.readableBytesView))
    }

    @Test func sessionCryptoVector() throws {
        let vector = try Self.make()
        guard let stored = try VectorFile.writeOrRead(vector, at: Self.file, writing: CoordinatorVectorTests.writing) else { return }
        #expect(stored == vector)
        // The ChaCha20-Poly1305 frame opens with GroupSessions' own cipher.
        var bytes = ByteBuffer(bytes: Array(hexBytes(stored.chachaFrame)))
        let frame = try #require(try FrameCodec.decode(from: &bytes))
        var cipher = PayloadCipher(keys: SessionKeys(secret: (0..<32).map { UInt8($0 &* 7 &+ 3) }, session: frame.session))
        #expect(try cipher.open(frame).plaintext == Array(hexBytes(stored.plaintext)))
    }

    /// GroupSessions' AES-256-GCM suite produces the frame the rules (and the browser) produce, and
    /// opens it; the other suite's cipher refuses it (keys are per suite).
    @Test func aesSuiteMatchesTheVector() throws {
        let stored = try JSONDecoder().decode(Vector.self, from: Data(contentsOf: Self.file))
        var bytes = ByteBuffer(bytes: Array(hexBytes(stored.aesFrame)))
        let frame = try #require(try FrameCodec.decode(from: &bytes))
        let secret = (0..<32).map { UInt8($0 &* 7 &+ 3) }
        let keys = SessionKeys(secret: secret, session: frame.session, suite: .aes256GCM)
        #expect(Self.hex(keys.payloadKey(for: frame.sender).withUnsafeBytes { Array($0) }) == stored.aesPayloadKey)
        var cipher = PayloadCipher(keys: keys)
        let opened = try cipher.open(frame)
        #expect(opened.plaintext == Array(hexBytes(stored.plaintext)))
        let resealed = try cipher.seal(opened.plaintext, route: opened.route, flags: [], sender: frame.sender)
        var resealedBytes = ByteBuffer()
        FrameCodec.encode(resealed, into: &resealedBytes)
        #expect(Self.hex(resealedBytes.readableBytesView) == stored.aesFrame)
        var chacha = PayloadCipher(keys: SessionKeys(secret: secret, session: frame.session, suite: .chaCha20Poly1305))
        #expect(throws: (any Error).self) { try chacha.open(frame) }
    }

    private func hexBytes(_ text: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            result.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return result
    }
}
