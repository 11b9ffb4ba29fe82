import Foundation

@testable import PlaybackCoordinator
import TestSupport

/// A randomized, deterministic model of a whole group, driving the real ``CoordinatorCore`` of
/// every member on a simulated clock.
///
/// One seed gives one run: a relay that stamps messages in one total order, keeps retained messages
/// by key and replays them to joiners (and may restart: while it is down, messages wait and are
/// stamped when it is back, as a relay with a state directory resumes its sessions; a member that
/// leaves meanwhile never resumes, and what it had not got through is lost); members with
/// their own link delays and reference-clock errors that join at any moment (late joiners), leave
/// cleanly or drop, and act at random: play, pause, seek, rate, item, suspensions that make the
/// group wait (ended early, late, past their timeout, with and without proposing a time) or detach
/// the member's player; one-shot controllers (`coplay control`) that join, propose one command and
/// leave.
///
/// Each member's player is ideal: it follows the core's commands exactly (a command replaces
/// whatever was scheduled at or after its instant; a late one snaps), so what the model checks is
/// what the cores told the players to do:
/// - **agreement**: every 50 ms, every member that plays the group's item and is not detached
///   has been told the same motion as every other, whenever it joined: at one reference instant
///   their players' positions agree within a microsecond (each player's clock error then shifts
///   only when it shows that position);
/// - **pauses land where the players were**: a pause proposed with full knowledge of the group's
///   messages stops every member's player at the item time that player was about to show;
/// - **the proposer agrees with its player**: what a member's core believes the group's position
///   is (what a command it proposes starts from) is what its player shows.
///
/// Nothing reads a real clock; a run is exactly reproducible from its seed and takes milliseconds.
/// With `recordTraces`, every input each core received is kept as the steps of a coordinator
/// vector (`Tests/Vectors/coordinator/`), which the JavaScript port runs too.
final class GroupModel {
    struct Options {
        var seed: UInt64
        /// Simulated seconds of random activity (the run then settles for a few more seconds).
        var duration: Double = 30
        /// Most members alive at once (one-shot controllers not counted).
        var maximumMembers = 5
        /// Keep every core input as vector steps.
        var recordTraces = false
        /// Whether the relay may restart.
        var relayRestarts = true
        /// The durations of the items every member with a player has (its `items`): the group's
        /// timeline ends there. `nil`: members know no durations (the model before item ends, as
        /// the regression seeds were found).
        var itemDurations: [String: Double]? = ["clip": 20, "other": 13.5]
        /// Whether the group plays from a queue: the first member queues entries and members edit
        /// the queue and move through it (next, previous, jump) at random; entries end and the
        /// group moves on by itself. Every member's queue must equal every other's at the same
        /// point of the channel's order.
        var queue = false

        /// Options for a run with a queue of short entries (many transitions).
        static func queue(seed: UInt64) -> Options {
            var options = Options(seed: seed)
            options.queue = true
            options.itemDurations = ["clip": 3, "other": 2.5]
            return options
        }
    }

    /// A broken invariant.
    struct Violation: CustomStringConvertible {
        var time: Double
        var kind: String
        var detail: String
        var description: String { String(format: "t=%.3f %@: %@", time, kind, detail) }
    }

    /// The reference time that true time 0 corresponds to (an ordinary Unix date).
    static let epoch: Int64 = 1_790_000_000_000_000_000
    /// Every member's configuration: the defaults, with commands held until the member's own
    /// `joined` as ``GroupPlayback`` does.
    static let configuration: CoordinatorConfiguration = {
        var configuration = CoordinatorConfiguration()
        configuration.holdsCommandsUntilJoined = true
        return configuration
    }()
    /// A queue run's configuration: as ``GroupPlayback`` has it, members sit out entries they have
    /// no copy of (``CoordinatorConfiguration/suspendsWhileEntryMissing``).
    var configuration: CoordinatorConfiguration {
        var configuration = Self.configuration
        if options.queue { configuration.suspendsWhileEntryMissing = true }
        return configuration
    }
    /// What a member with a player has: every item, with the options' durations.
    var itemSummaries: [PresenceReport.ItemSummary] {
        guard let durations = options.itemDurations else { return [] }
        return Self.items.map { PresenceReport.ItemSummary(item: $0.identifier, duration: durations[$0.identifier]) }
    }

    static let items = [
        MediaTimeline(identifier: "clip", duration: 60, frameRate: 25),
        MediaTimeline(identifier: "other", duration: 45, frameRate: 30),
    ]

    final class Member {
        let name: PlaybackParticipantID
        var core: CoordinatorCore
        let clockError: Int64
        let uplink: (latency: Int64, jitter: Int64)
        let downlink: (latency: Int64, jitter: Int64)
        let oneShot: Bool
        /// The items it has a copy of (in a queue run some members lack `other` and sit its entries out).
        let presentable: [String]
        var alive = true
        var lastUp: Int64 = 0
        var lastDown: Int64 = 0
        /// True time from which its player is compared with the others' (after the joiner's replay).
        var checkFrom: Int64 = .max
        var tickGeneration = 0
        /// The highest stamp delivered to it.
        var seen: UInt64 = 0
        /// Its own timeline messages (not presence) sent and not yet delivered back to it.
        var inFlight = 0
        /// The ideal player: motion breakpoints (reference ns, item time, rate, item).
        var breakpoints: [(ref: Int64, itemTime: Double, rate: Double, item: String)] = []
        var openLocal: [String] = []
        /// It sat out an entry and has not been compared with the others since.
        var satOut = false
        /// It left while the relay was down: it never resumes, and what it sent after the relay
        /// went down never arrives.
        var abandoned = false
        var steps: [VectorStep] = []

        init(name: PlaybackParticipantID, core: CoordinatorCore, clockError: Int64,
             uplink: (Int64, Int64), downlink: (Int64, Int64), oneShot: Bool, presentable: [String]) {
            self.presentable = presentable
            self.name = name
            self.core = core
            self.clockError = clockError
            self.uplink = uplink
            self.downlink = downlink
            self.oneShot = oneShot
        }

        func reference(_ trueTime: Int64) -> ReferenceTime {
            ReferenceTime(nanoseconds: GroupModel.epoch + trueTime + clockError)
        }

        func trueTime(_ reference: ReferenceTime) -> Int64 {
            reference.nanoseconds - GroupModel.epoch - clockError
        }

        /// The item time its player shows at reference instant `r`, or nil before its first command
        /// takes effect (a joiner shows nothing until then).
        func position(at r: Int64) -> Double? {
            guard let point = breakpoints.last(where: { $0.ref <= r }) else { return nil }
            return point.itemTime + point.rate * Double(r - point.ref) / 1e9
        }

        /// The item its player shows at reference instant `r`.
        func item(at r: Int64) -> String? {
            breakpoints.last(where: { $0.ref <= r })?.item
        }

        func rate(at r: Int64) -> Double {
            (breakpoints.last(where: { $0.ref <= r }) ?? breakpoints.first)?.rate ?? 0
        }
    }

    private struct Scheduled: Comparable {
        var time: Int64
        var order: UInt64
        var action: (GroupModel) -> Void
        static func < (a: Scheduled, b: Scheduled) -> Bool { (a.time, a.order) < (b.time, b.order) }
        static func == (a: Scheduled, b: Scheduled) -> Bool { (a.time, a.order) == (b.time, b.order) }
    }

    let options: Options
    private(set) var now: Int64 = 0
    private var heap: [Scheduled] = []
    private var order: UInt64 = 0
    private var random: SplitMix64
    /// Draws for the channel's own choices (the order of a joiner's first events), apart from
    /// `random` so that adding them left every earlier seed's run, and its vectors, as they were.
    private var channelRandom: SplitMix64
    /// Draws for which copies a member has (queue runs), apart from the others for the same reason.
    private var copiesRandom: SplitMix64
    private(set) var members: [Member] = []
    private var byName: [PlaybackParticipantID: Member] = [:]
    private var relayMembers: [PlaybackParticipantID] = []
    private var relayDownUntil: Int64?
    /// What reached the relay's address while it was down, by sender (`nil`: the relay's own
    /// doing), delivered in order when it is back, as a client resends its unacknowledged messages
    /// when it resumes.
    private var heldUplinks: [(sender: PlaybackParticipantID?, arrive: (GroupModel) -> Void)] = []
    private var sequence: UInt64 = 0
    private var lastTimelineStamp: UInt64 = 0
    private var retained: [String: (CoordinationMessage, PlaybackParticipantID, UInt64)] = [:]
    /// Checks of agreement are skipped until then: a message reached someone after it took effect.
    private var graceUntil: Int64 = 0
    /// Proposals sent with full knowledge of the group's timeline messages, by (sender, sentAt).
    private var informed: Set<String> = []
    private var completeStamps: Set<UInt64> = []
    /// The queue every member that has one holds after processing each stamp (the first member
    /// to get there sets it; every other must match).
    private var queueAtStamp: [UInt64: (PlaybackParticipantID, PlayQueue)] = [:]
    private var entryCounter = 0
    private var nameCounter = 0
    private(set) var violations: [Violation] = []
    private(set) var log: [String] = []
    private(set) var checks = 0
    /// Transitions at an entry's end and queue edits the members applied (each member counts).
    private(set) var transitions = 0
    private(set) var queueEdits = 0
    /// Entries members sat out (no copy), and times such a member was compared again afterwards
    /// (it came back: its player agreed with the others, or the check above reported it).
    private(set) var missingEntries = 0
    private(set) var rejoins = 0

    init(_ options: Options) {
        self.options = options
        self.random = SplitMix64(seed: options.seed &* 0x2545_F491_4F6C_DD1D &+ 1)
        self.channelRandom = SplitMix64(seed: options.seed &* 0x9E37_79B9_7F4A_7C15 &+ 7)
        self.copiesRandom = SplitMix64(seed: options.seed &* 0xD1B5_4A32_D192_ED03 &+ 11)
    }

    // MARK: Running

    /// Runs the seed: two members to begin with, then random activity, then a quiet settling.
    @discardableResult
    func run() -> [Violation] {
        let first = addMember(at: 0)
        addMember(at: Int64(random.uniform(0.01, 0.3) * 1e9))
        if options.queue {
            // The host queues a few entries and plays.
            schedule(at: Int64(0.3e9)) { model in
                model.queueEdit(first, .add((0..<3).map { model.newEntry(for: first, index: $0) }, at: .end))
            }
            schedule(at: Int64(0.35e9)) { model in model.queueEdit(first, .repeatMode(.all)) }
            schedule(at: Int64(0.45e9)) { model in model.propose(first, .play) }
        }
        schedule(at: Int64(0.5e9)) { model in model.randomAction() }
        for sample in stride(from: Int64(0), through: Int64((options.duration + 5) * 1e9), by: 50_000_000) {
            schedule(at: sample) { model in model.checkAgreement() }
        }
        let end = Int64((options.duration + 5) * 1e9)
        var steps = 0
        while let first = pop(), first.time <= end {
            now = first.time
            first.action(self)
            steps += 1
            precondition(steps < 2_000_000, "the model did not settle")
            if violations.count >= 5 { break }
        }
        return violations
    }

    private func schedule(at time: Int64, _ action: @escaping (GroupModel) -> Void) {
        order += 1
        heap.append(Scheduled(time: max(time, now), order: order, action: action))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child] < heap[parent] else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() -> Scheduled? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let first = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left] < heap[smallest] { smallest = left }
            if right < heap.count, heap[right] < heap[smallest] { smallest = right }
            if smallest == parent { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }

    private func note(_ text: String) {
        log.append(String(format: "%8.3f ", Double(now) / 1e9) + text)
    }

    private func violation(_ kind: String, _ detail: String) {
        violations.append(Violation(time: Double(now) / 1e9, kind: kind, detail: detail))
    }

    // MARK: Members

    @discardableResult
    private func addMember(at time: Int64, oneShot: Bool = false) -> Member {
        nameCounter += 1
        let name = PlaybackParticipantID(oneShot ? "ctl\(nameCounter)" : "m\(nameCounter)")
        // In a queue run about one member in four has no copy of `other`: it sits out those entries
        // (the group does not wait) and must come back in step at the next `clip` entry.
        let lacksOther = options.queue && !oneShot && copiesRandom.chance(0.25)
        let presentable = Self.items.map(\.identifier).filter { !lacksOther || $0 != "other" }
        let ids = Set(presentable)
        let core = CoordinatorCore(
            participant: name, configuration: configuration, localItem: Self.items[0].identifier,
            canPresent: { ids.contains($0) }, name: name.rawValue,
            items: oneShot ? [] : itemSummaries.filter { ids.contains($0.item) })
        let link = { (model: GroupModel) -> (Int64, Int64) in
            let fast = model.random.chance(0.6)
            let latency = fast ? model.random.uniform(0.0001, 0.002) : model.random.uniform(0.005, 0.03)
            return (Int64(latency * 1e9), Int64(latency * 0.3 * 1e9))
        }
        let member = Member(
            name: name, core: core, clockError: Int64(random.symmetric(50e-6) * 1e9),
            uplink: link(self), downlink: link(self), oneShot: oneShot, presentable: presentable)
        members.append(member)
        byName[name] = member
        schedule(at: time) { model in
            model.note("\(name) connects")
            model.sendUp(from: member) { model in model.admit(member) }
        }
        return member
    }

    /// The relay admits a member: who is there, the retained messages in stamp order, then
    /// everyone learns of the newcomer.
    ///
    /// The joiner's channel (`GroupSessionCoordinationChannel`) yields the retained messages as
    /// they arrive and the members present from the relay's welcome when its events are first
    /// read, so the members already there come before or after the retained messages; its own
    /// `joined` always comes after both (the core takes it as "everyone present is known").
    private func admit(_ member: Member) {
        guard member.alive else { return }
        relayMembers.append(member.name)
        let othersFirst = channelRandom.chance(0.5)
        if othersFirst { for other in relayMembers where other != member.name { sendDown(to: member, .joined(other)) } }
        for (message, sender, stamp) in retained.values.sorted(by: { $0.2 < $1.2 }) {
            sendDown(to: member, .message(message, sender: sender, sequence: stamp))
        }
        if !othersFirst { for other in relayMembers where other != member.name { sendDown(to: member, .joined(other)) } }
        member.checkFrom = member.lastDown + 1_000_000
        for other in relayMembers { if let target = byName[other] { sendDown(to: target, .joined(member.name)) } }
        if member.oneShot {
            // `coplay control`: once the retained state is in, propose one command, then leave.
            schedule(at: member.checkFrom + Int64(random.uniform(0.01, 0.2) * 1e9)) { model in model.oneShotCommand(member) }
        }
    }

    private func leave(_ member: Member, drop: Bool) {
        note("\(member.name) \(drop ? "drops" : "leaves")")
        let gone = { (model: GroupModel) in
            guard model.relayMembers.contains(member.name) else { return }
            model.relayMembers.removeAll { $0 == member.name }
            for other in model.relayMembers { if let target = model.byName[other] { model.sendDown(to: target, .left(member.name)) } }
        }
        if relayDownUntil != nil {
            // A member that leaves while the relay is down never resumes: what it had not got
            // through is lost with it (`GroupSession.leave()` sends no `leave` frame without a
            // connection, and its unacknowledged messages go with the process), and the relay
            // finds it gone when it is back.
            member.alive = false
            member.abandoned = true
            heldUplinks.removeAll { $0.sender == member.name }
            heldUplinks.append((nil, gone))
        } else if drop {
            member.alive = false
            gone(self)
        } else {
            sendUp(from: member, gone)
            member.alive = false
        }
    }

    // MARK: Network and relay

    private func delay(_ link: (latency: Int64, jitter: Int64)) -> Int64 {
        max(0, link.latency + Int64(random.symmetric(Double(link.jitter))))
    }

    @discardableResult
    private func sendUp(from member: Member, _ arrive: @escaping (GroupModel) -> Void) -> Int64 {
        let at = max(now + delay(member.uplink), member.lastUp + 1)
        member.lastUp = at
        schedule(at: at) { model in
            if model.relayDownUntil != nil {
                if !member.abandoned { model.heldUplinks.append((member.name, arrive)) }
            } else {
                arrive(model)
            }
        }
        return at
    }

    @discardableResult
    private func sendDown(to member: Member, _ event: CoordinationChannelEvent) -> Int64 {
        let at = max(now + delay(member.downlink), member.lastDown + 1)
        member.lastDown = at
        schedule(at: at) { model in model.deliver(event, to: member) }
        return at
    }

    /// When a timeline message takes effect (model time), if it is one.
    private static func effect(of message: CoordinationMessage) -> Int64? {
        switch message {
        case .state(let proposal): proposal.state.anchorReferenceTime.nanoseconds - Self.epoch
        case .suspension(let notice): notice.effectiveAt.nanoseconds - Self.epoch
        case .presence, .queueEdit, .queueRequest, .queueSnapshot, .signed, .unsupported: nil
        }
    }

    private func stamp(_ message: CoordinationMessage, from sender: PlaybackParticipantID, key: String?, informedProposal: Bool) {
        guard relayMembers.contains(sender) else { return }
        sequence += 1
        if message.isTimeline {
            if informedProposal { completeStamps.insert(sequence) }
            lastTimelineStamp = sequence
        }
        if let key { retained[key] = (message, sender, sequence) }
        let effect = Self.effect(of: message)
        var latest: Int64 = 0
        for name in relayMembers {
            guard let target = byName[name] else { continue }
            latest = max(latest, sendDown(to: target, .message(message, sender: sender, sequence: sequence)))
        }
        // A message that reaches someone after the instant it takes effect: that member's player
        // snaps late; agreement is judged again once everyone has it.
        if let effect, latest + 200_000 > effect { graceUntil = max(graceUntil, latest + 20_000_000) }
    }

    private func restartRelay() {
        let outage = Int64(random.uniform(0.2, 4) * 1e9)
        note("relay restarts (down \(String(format: "%.2f", Double(outage) / 1e9)) s)")
        relayDownUntil = now + outage
        schedule(at: now + outage) { model in
            model.relayDownUntil = nil
            let held = model.heldUplinks
            model.heldUplinks = []
            for (_, arrive) in held { arrive(model) }
        }
    }

    // MARK: Cores

    private func record(_ member: Member, _ step: VectorStep) {
        if options.recordTraces { member.steps.append(step) }
    }

    private func deliver(_ event: CoordinationChannelEvent, to member: Member) {
        guard member.alive else { return }
        let r = member.reference(now)
        if case .message(let message, let sender, let stamp) = event {
            member.seen = max(member.seen, stamp)
            if sender == member.name, message.isTimeline { member.inFlight -= 1 }
            record(member, VectorStep(op: "receive", now: r.nanoseconds, event: VectorChannelEvent(message: message, sender: sender.rawValue, sequence: stamp)))
            if case .state(let proposal) = message, proposal.command == .pause, completeStamps.contains(stamp) {
                checkPause(proposal, at: member, stamp: stamp)
            }
        } else if case .joined(let who) = event {
            record(member, VectorStep(op: "receive", now: r.nanoseconds, event: VectorChannelEvent(joined: who.rawValue)))
        } else if case .left(let who) = event {
            record(member, VectorStep(op: "receive", now: r.nanoseconds, event: VectorChannelEvent(left: who.rawValue)))
        }
        perform(member.core.receive(event, now: r), at: member)
        if Self.traced.contains(member.name.rawValue) {
            note("  \(member.name) got \(Self.describe(event)): \(Self.describe(member.core))\(member.core.hasQueue ? " queue " + Self.describe(member.core.queue) : "")")
        }
        if options.queue, case .message(_, _, let stamp) = event, member.core.hasQueue {
            if let (first, queue) = queueAtStamp[stamp] {
                if queue != member.core.queue {
                    violation("queues differ", "after stamp \(stamp): \(first) has \(Self.describe(queue)); \(member.name) has \(Self.describe(member.core.queue))")
                }
            } else {
                queueAtStamp[stamp] = (member.name, member.core.queue)
            }
        }
    }

    /// The members whose every received event is logged (`COPLAY_MODEL_TRACE=m3,m4`), read once.
    static let traced: Set<String> = Set(
        (ProcessInfo.processInfo.environment["COPLAY_MODEL_TRACE"] ?? "").split(separator: ",").map(String.init))

    /// A channel event in a few words, for traces (`COPLAY_MODEL_TRACE=m3,m4` logs every event those
    /// members receive, with the state and queue their cores hold after it).
    static func describe(_ event: CoordinationChannelEvent) -> String {
        switch event {
        case .joined(let who): return "joined \(who)"
        case .left(let who): return "left \(who)"
        case .message(let message, let sender, let stamp):
            let what: String
            switch message {
            case .state(let proposal):
                what = String(format: "%@ %@ at %.3f from %.3f x%.2f", proposal.command.rawValue, proposal.state.entry ?? proposal.state.item,
                              proposal.state.anchorItemTime, Double(proposal.state.anchorReferenceTime.nanoseconds - epoch) / 1e9, proposal.state.rate)
            case .suspension(let notice): what = "suspension \(notice.id)"
            case .presence: what = "presence"
            case .queueEdit(let notice): what = "edit " + CoordinatorCore.describe(notice.edit)
            case .queueRequest: what = "queue request"
            case .queueSnapshot(let part): what = "snapshot \(part.snapshot) part \(part.part) request \(part.request.map(String.init) ?? "-") through \(part.through)"
            case .signed: what = "signed"
            case .unsupported(let kind, _): what = "unsupported \(kind)"
            }
            return "#\(stamp) \(what) by \(sender)"
        }
    }

    static func describe(_ queue: PlayQueue) -> String {
        "[\(queue.playOrder.map { "\($0.id)=\($0.item)" }.joined(separator: " "))] repeat \(queue.repeatMode.rawValue) shuffle \(queue.shuffleSeed.map(String.init) ?? "off")"
            + (queue.removedPlaying.map { " removed \($0.id)->\($0.successor ?? "-")" } ?? "")
    }

    private func perform(_ actions: [CoordinatorAction], at member: Member) {
        for action in actions {
            switch action {
            case .send(let message, let key):
                // Informed: it has every timeline message ordered so far and none of its own on the way
                // (a command racing another message, its own included, may legitimately differ).
                let seen = member.inFlight == 0 ? member.seen : nil
                if message.isTimeline { member.inFlight += 1 }
                let sender = member.name
                let arrival = sendUp(from: member) { model in
                    let informed = seen.map { $0 >= model.lastTimelineStamp } ?? false
                    model.stamp(message, from: sender, key: key, informedProposal: informed)
                }
                // One that takes effect before the relay has it (a transition proposed after its
                // entry's end): every member snaps to it late, and one that anticipated it rightly
                // (an assumed transition) shows it meanwhile while the others hold. The relay's
                // fan-out extends this grace until everyone has it (seed 24838).
                if let effect = Self.effect(of: message), arrival + 200_000 > effect {
                    graceUntil = max(graceUntil, arrival + 20_000_000)
                }
            case .command(let command):
                apply(command, to: member)
            case .event(let event):
                if event.type == .itemChanged, event.reason == "end" { transitions += 1 }
                if event.type == .queueChanged, event.originator != nil { queueEdits += 1 }
                if event.type == .missingEntry { missingEntries += 1 }
            }
        }
        // Not following the group, however briefly (between two samples of the checks: seed 3190's
        // member lacked the entry the group played for 41 ms and kept its last frame meanwhile).
        if let state = member.core.state, state.item != member.core.localItem || member.core.isDetached { member.satOut = true }
        scheduleTick(member)
    }

    /// The ideal player: a command replaces everything scheduled at or after its instant.
    private func apply(_ command: PlaybackCommand, to member: Member) {
        let ref = command.referenceTime.nanoseconds
        let item = command.expectedItemIdentifier
        // A command for an item it has no copy of changes nothing (coplay's players ignore it:
        // `commandIgnored`, "item not loaded").
        guard member.presentable.contains(item) else { return }
        // Another item: the player loads it now and shows nothing until its first command's
        // instant (as coplay's players do today). A member that moves on later than the others
        // still shows the old item meanwhile, which the check of items below catches.
        if member.breakpoints.last?.item != item { member.breakpoints = [] }
        let point: (ref: Int64, itemTime: Double, rate: Double, item: String)
        switch command.kind {
        case .play(let itemTime, _, let rate): point = (ref, itemTime, rate, item)
        case .pause(let itemTime, _), .buffer(let itemTime, _, _): point = (ref, itemTime, 0, item)
        case .seek(let itemTime, _, _): point = (ref, itemTime, member.rate(at: ref), item)
        }
        member.breakpoints.removeAll { $0.ref >= ref }
        member.breakpoints.append(point)
    }

    private func scheduleTick(_ member: Member) {
        member.tickGeneration += 1
        let generation = member.tickGeneration
        guard let deadline = member.core.nextTickDeadline else { return }
        schedule(at: member.trueTime(deadline)) { model in
            guard member.alive, member.tickGeneration == generation else { return }
            let r = member.reference(model.now)
            model.record(member, VectorStep(op: "tick", now: r.nanoseconds))
            model.perform(member.core.tick(now: r), at: member)
        }
    }

    /// Runs a local API call on a member's core; errors (no item, a bad rate) are ordinary.
    private func act(_ member: Member, _ step: VectorStep, _ body: (inout CoordinatorCore, ReferenceTime) throws -> [CoordinatorAction]) {
        guard member.alive else { return }
        let r = member.reference(now)
        var step = step
        step.now = r.nanoseconds
        record(member, step)
        do {
            perform(try body(&member.core, r), at: member)
        } catch {
            scheduleTick(member)
        }
    }

    // MARK: Random activity

    private var active: [Member] { members.filter { $0.alive && !$0.oneShot && relayMembers.contains($0.name) } }

    private func randomAction() {
        defer {
            if now < Int64(options.duration * 1e9) {
                schedule(at: now + Int64(random.exponential(mean: 0.7) * 1e9)) { model in model.randomAction() }
            }
        }
        let alive = active
        let count = members.filter { $0.alive && !$0.oneShot }.count
        var choices: [(Double, () -> Void)] = []
        if options.queue, let member = alive.randomElement(using: &random) {
            choices += [
                (2, { self.randomQueueEdit(member) }),
                (1.2, { self.randomQueueMove(member) }),
            ]
        }
        if let member = alive.randomElement(using: &random) {
            choices += [
                (3, { self.propose(member, self.randomCommand()) }),
                (3, { self.suspend(member, reason: self.random.chance(0.5) ? .buffering : .stallRecovery) }),
                (1, { self.suspend(member, reason: self.random.chance(0.5) ? .userChangingTime : .custom("away")) }),
                (0.6, { self.leave(member, drop: self.random.chance(0.5)) }),
            ]
        }
        if count < options.maximumMembers { choices.append((alive.count < 2 ? 4 : 1.5, { self.addMember(at: self.now) })) }
        choices.append((1.2, { self.addMember(at: self.now, oneShot: true) }))
        if options.relayRestarts, relayDownUntil == nil { choices.append((0.25, { self.restartRelay() })) }
        let total = choices.reduce(0) { $0 + $1.0 }
        var pick = random.uniform(0, total)
        for (weight, action) in choices {
            if pick < weight { action(); return }
            pick -= weight
        }
        choices.last?.1()
    }

    private enum Command { case play, pause, seek(Double), rate(Double), item(String) }

    private func randomCommand() -> Command {
        switch random.uniform(0, 10) {
        case ..<3: .play
        case ..<5.5: .pause
        case ..<7.5: .seek((random.uniform(0, 40) * 25).rounded() / 25)
        case ..<9: .rate([0.5, 1, 1.25, 2][Int(random.uniform(0, 4)) % 4])
        default: .item(Self.items[Int(random.uniform(0, 2)) % 2].identifier)
        }
    }

    private func propose(_ member: Member, _ command: Command) {
        switch command {
        case .play:
            note("\(member.name) play")
            act(member, VectorStep(op: "proposePlay")) { core, r in try core.proposePlay(now: r) }
        case .pause:
            note("\(member.name) pause")
            act(member, VectorStep(op: "proposeRate", rate: 0)) { core, r in try core.proposeRate(0, now: r) }
        case .seek(let time):
            note("\(member.name) seek \(time)")
            act(member, VectorStep(op: "proposeSeek", itemTime: time)) { core, r in try core.proposeSeek(to: time, now: r) }
        case .rate(let rate):
            note("\(member.name) rate \(rate)")
            act(member, VectorStep(op: "proposeRate", rate: rate)) { core, r in try core.proposeRate(rate, now: r) }
        case .item(let item):
            note("\(member.name) item \(item)")
            act(member, VectorStep(op: "proposeItem", itemTime: 0, item: item)) { core, r in try core.proposeItem(item, at: 0, now: r) }
        }
    }

    private func oneShotCommand(_ member: Member, attempts: Int = 0) {
        guard member.alive else { return }
        if options.queue, !member.core.hasQueue, attempts < 40 {
            // `coplay control` waits for the group's queue (and the state its answer carries).
            schedule(at: now + 100_000_000) { model in model.oneShotCommand(member, attempts: attempts + 1) }
            return
        }
        if options.queue, random.chance(0.4) {
            if random.chance(0.5) { randomQueueEdit(member) } else { randomQueueMove(member) }
        } else {
            propose(member, randomCommand())
        }
        schedule(at: now + Int64(random.uniform(0.05, 0.4) * 1e9)) { model in model.leave(member, drop: false) }
    }

    // MARK: Queue

    func newEntry(for member: Member, index: Int) -> QueueEntry {
        entryCounter += 1
        let item = Self.items[Int(random.uniform(0, 2)) % 2].identifier
        return QueueEntry(
            id: "\(member.name.rawValue).e\(entryCounter)", item: item, title: "\(item) \(entryCounter)",
            duration: options.itemDurations?[item], frameRate: 25, addedBy: member.name)
    }

    private func queueEdit(_ member: Member, _ edit: QueueEdit) {
        note("\(member.name) queue \(CoordinatorCore.describe(edit))")
        act(member, VectorStep(op: "proposeQueueEdit", edit: edit)) { core, r in core.proposeQueueEdit(edit, now: r) }
    }

    /// A random edit, naming entries as the member knows them (and now and then one it does not).
    private func randomQueueEdit(_ member: Member) {
        let ids = member.core.queue.entries.map(\.id)
        let someID = { () -> String in
            self.random.chance(0.1) || ids.isEmpty ? "gone.\(self.entryCounter)" : ids[Int(self.random.uniform(0, Double(ids.count))) % ids.count]
        }
        let position = { () -> QueuePosition in
            switch self.random.uniform(0, 3) {
            case ..<1: .end
            case ..<1.5: .start
            default: .after(someID())
            }
        }
        let edit: QueueEdit
        switch random.uniform(0, 10) {
        case ..<3.5: edit = .add((0..<(1 + Int(random.uniform(0, 3)))).map { newEntry(for: member, index: $0) }, at: position())
        case ..<5.5: edit = .remove([someID()])
        case ..<7.5: edit = .move(someID(), to: position())
        case ..<8.8: edit = .repeatMode(RepeatMode.allCases[Int(random.uniform(0, 3)) % 3])
        case ..<9.7: edit = .shuffle(seed: random.chance(0.6) ? UInt32(random.uniform(0, 1e6)) : nil)
        default: edit = .clear
        }
        queueEdit(member, edit)
    }

    /// next, previous or jump.
    private func randomQueueMove(_ member: Member) {
        switch random.uniform(0, 3) {
        case ..<1:
            note("\(member.name) next")
            act(member, VectorStep(op: "proposeNext")) { core, r in try core.proposeNext(now: r) }
        case ..<2:
            note("\(member.name) previous")
            act(member, VectorStep(op: "proposePrevious")) { core, r in try core.proposePrevious(now: r) }
        default:
            let position = 1 + Int(random.uniform(0, Double(max(member.core.queue.entries.count, 1)) + 1))
            note("\(member.name) jump \(position)")
            act(member, VectorStep(op: "proposeJump", position: position)) { core, r in try core.proposeJump(toPosition: position, now: r) }
        }
    }

    private func suspend(_ member: Member, reason: SuspensionReason) {
        let r = member.reference(now)
        record(member, VectorStep(op: "beginSuspension", now: r.nanoseconds, reason: reason))
        let begun = member.core.beginSuspension(reason, now: r)
        member.openLocal.append(begun.id)
        note("\(member.name) suspends \(begun.id) (\(reason))")
        perform(begun.actions, at: member)
        let length = random.chance(0.15) ? random.uniform(9, 14) : random.uniform(0.05, 4)
        let proposing: Double? = random.chance(0.3) ? (random.uniform(0, 40) * 25).rounded() / 25 : nil
        schedule(at: now + Int64(length * 1e9)) { model in
            guard member.alive else { return }
            model.note("\(member.name) ends \(begun.id)\(proposing.map { " proposing \($0)" } ?? "")")
            member.openLocal.removeAll { $0 == begun.id }
            model.act(member, VectorStep(op: "endSuspension", itemTime: proposing, id: begun.id)) { core, r in
                try core.endSuspension(begun.id, proposing: proposing, now: r)
            }
        }
    }

    // MARK: Invariants

    /// Members whose players show the group's item now.
    private func comparable() -> [Member] {
        members.filter { member in
            guard member.alive, !member.oneShot, now >= member.checkFrom, relayMembers.contains(member.name),
                !options.queue || member.core.hasQueue,
                let state = member.core.state, !member.breakpoints.isEmpty
            else { return false }
            // Not following the group: the group plays an item it has no copy of (an entry it sits
            // out, or an `item` command), or its player is detached by a suspension.
            guard state.item == member.core.localItem, !member.core.isDetached else {
                member.satOut = true
                return false
            }
            // One that did not follow shows whatever its player held meanwhile until the state that
            // brought it back takes effect on its player (from then on it must agree).
            if member.satOut {
                guard let last = member.breakpoints.last, last.item == state.item, last.ref <= member.reference(now).nanoseconds
                else { return false }
            }
            return true
        }
    }

    private func checkAgreement() {
        guard now >= graceUntil, relayDownUntil == nil else { return }
        let group = comparable()
        for member in group where member.satOut && group.count > 1 {
            member.satOut = false
            rejoins += 1
        }
        for member in group {
            // The core's idea of the group's position is what its player shows.
            // (Before the state's anchor the core extrapolates the new state; the player still shows the old one.)
            let r = member.reference(now)
            if let state = member.core.state, r >= state.anchorReferenceTime,
                let believed = member.core.effectiveItemTime(at: r), let shown = member.position(at: r.nanoseconds),
                abs(believed - shown) > 1e-6 || member.item(at: r.nanoseconds) != state.item {
                violation("core and player disagree", "\(member.name): core \(believed), player \(shown); \(Self.describe(member.core)); player \(member.breakpoints.suffix(4).map { (Double($0.ref - Self.epoch) / 1e9, $0.itemTime, $0.rate) })")
            }
        }
        // Every player's motion at one reference instant: what the cores told them must be the same
        // line (each player's own clock error only shifts when it shows it, by microseconds).
        let instant = Self.epoch + now
        var byItem: [String: [(Member, Double)]] = [:]
        for member in group {
            guard let shown = member.position(at: instant), let item = member.item(at: instant) else { continue }
            byItem[item, default: []].append((member, shown))
        }
        // Everyone shows the same item: an item change (a transition at an entry's end included)
        // happens at one instant for all.
        if byItem.count > 1 {
            checks += 1
            violation("members show different items", byItem.sorted { $0.key < $1.key }.map { item, shown in
                "\(item): " + shown.map { "\($0.0.name) \(Self.describe($0.0.core))" }.joined(separator: ", ")
            }.joined(separator: "; "))
        }
        // Nobody plays past an item's end: the group holds it there.
        if let durations = options.itemDurations {
            for (item, shown) in byItem {
                guard let end = durations[item], let past = shown.first(where: { $0.1 > end + 1e-6 }) else { continue }
                violation("past the end", String(format: "%@ shows %@ at %.4f s, after its end at %.4f s", past.0.name.rawValue, item, past.1, end)
                    + "; \(Self.describe(past.0.core))")
            }
        }
        for (item, shown) in byItem.sorted(by: { $0.key < $1.key }) where shown.count > 1 {
            checks += 1
            let low = shown.min { $0.1 < $1.1 }!
            let high = shown.max { $0.1 < $1.1 }!
            if high.1 - low.1 > 1e-6 {
                violation(
                    "members disagree",
                    String(format: "%@: %@ at %.4f s, %@ at %.4f s (%.1f ms apart)", item, low.0.name.rawValue, low.1,
                           high.0.name.rawValue, high.1, (high.1 - low.1) * 1000)
                        + "; \(low.0.name): \(Self.describe(low.0.core)) player \(low.0.breakpoints.suffix(4).map { (Double($0.ref - Self.epoch) / 1e9, $0.itemTime, $0.rate, $0.item) }); \(high.0.name): \(Self.describe(high.0.core)) player \(high.0.breakpoints.suffix(4).map { (Double($0.ref - Self.epoch) / 1e9, $0.itemTime, $0.rate, $0.item) })")
            }
        }
    }

    /// A pause proposed with full knowledge stops the member's player where it was going to be.
    private func checkPause(_ proposal: StateProposal, at member: Member, stamp: UInt64) {
        let anchor = proposal.state.anchorReferenceTime.nanoseconds
        guard comparable().contains(where: { $0 === member }), member.item(at: proposal.state.anchorReferenceTime.nanoseconds) == proposal.state.item,
            anchor > member.reference(now).nanoseconds, let before = member.position(at: anchor)
        else { return }
        // A pause past the item's end (proposed by one that did not know it) holds the end.
        let held = options.itemDurations?[proposal.state.item].map { min($0, proposal.state.anchorItemTime) } ?? proposal.state.anchorItemTime
        if abs(before - held) > 1e-6 {
            violation(
                "pause off the shown frame",
                String(format: "%@ would show %.4f s at the pause instant; the pause (stamp %llu by %@) holds %.4f s",
                       member.name.rawValue, before, stamp, proposal.state.originator.rawValue, proposal.state.anchorItemTime)
                    + "; \(member.name): \(Self.describe(member.core)); proposer: \(byName[proposal.state.originator].map { Self.describe($0.core) } ?? "?")")
        }
    }

    /// A core's timeline, for failure reports (times relative to the model's start).
    static func describe(_ core: CoordinatorCore) -> String {
        guard let state = core.state else { return "no state" }
        let t = { (r: ReferenceTime) in String(format: "%.3f", Double(r.nanoseconds - epoch) / 1e9) }
        return "rev \(state.revision) \(state.item)\(state.entry.map { " entry \($0)" } ?? "") " + core.segments().map { segment in
            "[\(t(segment.start)) \(String(format: "%.3f", segment.itemTime)) x\(segment.rate)\(segment.waiting ? " wait" : "")\(segment.ended ? " end" : "")]"
        }.joined(separator: " ")
    }

    // MARK: Traces

    /// Each member's inputs as a coordinator vector (expected outputs left for the runner to fill).
    func vectors(description: String) -> [(PlaybackParticipantID, CoordinatorVector)] {
        members.filter { !$0.steps.isEmpty }.map { member in
            (member.name, CoordinatorVector(
                description: description, participant: member.name.rawValue, name: member.name.rawValue,
                localItem: Self.items[0].identifier, canPresent: member.presentable,
                items: member.oneShot || itemSummaries.isEmpty ? nil : itemSummaries.filter { member.presentable.contains($0.item) },
                configuration: VectorConfiguration(
                    holdsCommandsUntilJoined: true, suspendsWhileEntryMissing: options.queue ? true : nil),
                steps: member.steps))
        }
    }
}

extension SplitMix64 {
    mutating func uniform(_ low: Double, _ high: Double) -> Double {
        low == high ? low : Double.random(in: low..<high, using: &self)
    }

    mutating func exponential(mean: Double) -> Double {
        -mean * log(1 - Double.random(in: 0..<1, using: &self))
    }
}
