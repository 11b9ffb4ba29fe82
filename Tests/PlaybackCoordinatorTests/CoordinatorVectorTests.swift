import Foundation
import Testing

@testable import PlaybackCoordinator

/// Runs the shared coordinator vectors in `Tests/Vectors/coordinator/*.json` against ``CoordinatorCore``.
///
/// The same files are run against the browser's JavaScript port (`Web/static/coordinator.js`) by
/// `Tests/Web/coordinator.test.mjs`, so the two implementations cannot drift apart unnoticed.
///
/// A vector is a participant, a configuration and steps (channel events, ticks, API calls, each
/// with "now"); each step records what the core must answer: its actions (messages to send in
/// their Codable JSON, player commands, events without their `realtime` stamp) and, after the
/// step, the lead, the next tick deadline and the effective timeline. The expected outputs are
/// Swift's: after a deliberate behaviour change, refresh them with
///
/// ```sh
/// COPLAY_WRITE_VECTORS=1 swift test --filter CoordinatorVectorTests
/// ```
///
/// and review the diff (then make the JavaScript port pass again). The file format is described
/// in `Web/PROTOCOL-WEB.md`, "Coordinator vectors".
@Suite struct CoordinatorVectorTests {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors").appendingPathComponent("coordinator")

    static var files: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.sorted()
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
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            var data = try encoder.encode(vector)
            data.append(0x0A)
            try data.write(to: url)
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
        }
        var canPresent: (@Sendable (String) -> Bool)?
        if let items = vector.canPresent { canPresent = { items.contains($0) } }
        let participant = ParticipantID(vector.participant)
        var core = CoordinatorCore(
            participant: participant, configuration: configuration, localItem: vector.localItem, canPresent: canPresent,
            name: vector.name)
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
                        .message(outbox[index], sender: ParticipantID(step.sender ?? vector.participant), sequence: sequence), now: now)
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
                    nextTickDeadline: core.nextTickDeadline?.nanoseconds, segments: core.segments().map(VectorSegment.init)))
        }
        return results
    }

    /// The name of the `PlaybackCoordinatorError` constructor that made `error`.
    static func code(of error: PlaybackCoordinatorError, step: VectorStep) -> String {
        if error == .noItem { return "noItem" }
        if let rate = step.rate, error == .invalidRate(rate) { return "invalidRate" }
        if let time = step.itemTime, error == .invalidItemTime(time) { return "invalidItemTime" }
        if let id = step.id, error == .unknownSuspension(id) { return "unknownSuspension" }
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
    var expect: VectorExpectation?
}

/// `{"joined": id}`, `{"left": id}` or `{"message": CoordinationMessage, "sender": id, "sequence": n}`.
struct VectorChannelEvent: Codable {
    var joined: String?
    var left: String?
    var message: CoordinationMessage?
    var sender: String?
    var sequence: UInt64?

    func channelEvent() throws -> CoordinationChannelEvent {
        if let joined { return .joined(ParticipantID(joined)) }
        if let left { return .left(ParticipantID(left)) }
        let message = try #require(message, "an event is joined, left or message")
        return .message(message, sender: ParticipantID(try #require(sender)), sequence: try #require(sequence))
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
        expectedItemIdentifier = command.expectedItemIdentifier
        revision = command.revision
    }
}

/// A ``PlaybackEvent`` without `realtime` (the core leaves it 0) and the player-only fields.
struct VectorEvent: Codable, Equatable {
    var type: String
    var player: String?
    var originator: String?
    var item: String?
    var itemTime: Double?
    var rate: Double?
    var referenceTime: Double?
    var revision: UInt64?
    var reason: String?
    var waits: Bool?
    var timedOut: Bool?
    var detail: String?

    init(_ event: PlaybackEvent) {
        #expect(event.realtime == 0 && event.index == nil && event.pts == nil && event.errorMs == nil)
        type = event.type.rawValue
        player = event.player?.rawValue
        originator = event.originator?.rawValue
        item = event.item
        itemTime = event.itemTime
        rate = event.rate
        referenceTime = event.referenceTime
        revision = event.revision
        reason = event.reason
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

    init(_ segment: TimelineSegment) {
        start = segment.start.nanoseconds
        itemTime = segment.itemTime
        rate = segment.rate
        waiting = segment.waiting
        waitEnd = segment.waitEnd?.nanoseconds
    }
}
