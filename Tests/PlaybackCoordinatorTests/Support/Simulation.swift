@testable import PlaybackCoordinator
import TestSupport

/// A deterministic discrete-event simulation of a coplay group: a relay with a total order and
/// retained messages, a network with latency, jitter, loss (TCP-like retransmission) and
/// asymmetry, and nodes whose local clocks have offsets and drift and whose reference-clock
/// estimates (the job of ClockSync) carry a small, re-estimated error.
///
/// Time is "true time" in nanoseconds; nothing reads a real clock, so runs are exactly
/// reproducible from the seed and independent of machine speed.
final class Simulation {
    /// One direction of a node's link to the relay.
    struct Link {
        var latency: Duration = .microseconds(200)
        var jitter: Duration = .microseconds(50)
        var loss: Double = 0
        var retransmissionTimeout: Duration = .milliseconds(200)
    }

    /// How a node's clocks behave.
    struct ClockModel {
        var offset: Duration = .zero
        var driftPPM: Double = 0
        /// Offset-measurement error of each re-estimation (uniform +-).
        var estimateError: Duration = .microseconds(50)
        /// Drift-estimate error in ppm (uniform +-).
        var driftEstimateErrorPPM: Double = 0.5
        var pollInterval: Duration = .seconds(8)
    }

    struct NodeSpec {
        var name: PlaybackParticipantID
        var uplink = Link()
        var downlink = Link()
        var clock = ClockModel()
        var imperfections = HeadlessPlayerCore.Imperfections()
        var controller = SyncController.Configuration()
        /// As ``GroupPlayback`` configures members: commands held until the member's own `joined`.
        var configuration: CoordinatorConfiguration = {
            var configuration = CoordinatorConfiguration()
            configuration.holdsCommandsUntilJoined = true
            return configuration
        }()
    }

    struct PresentedFrame: Hashable {
        var node: PlaybackParticipantID
        var item: String
        var index: Int
        var pts: Double
        var trueTime: Int64
    }

    struct Stop: Hashable {
        var node: PlaybackParticipantID
        var item: String
        var index: Int?
        var itemTime: Double
        var trueTime: Int64
        var waiting: Bool
    }

    final class Node {
        let spec: NodeSpec
        var core: CoordinatorCore
        var player: HeadlessPlayerCore
        var alive = true
        var joined = false
        var wakeGeneration = 0
        var tickGeneration = 0
        // Reference estimate, re-estimated at each poll.
        var pollTrue: Int64 = 0
        var pollEpsilon: Double = 0
        var driftEstimate: Double = 0
        var lastUp: Int64 = 0
        var lastDown: Int64 = 0
        /// While cut off (``cutOff(_:at:for:)``): the true time the path delivers again.
        var heldUntil: Int64?
        var events: [PlaybackEvent] = []
        /// The commands the coordinator gave the player, with the true time it gave them.
        var commands: [(command: PlaybackCommand, trueTime: Int64)] = []
        var corrections: [(kind: String, errorMs: Double, trueTime: Int64)] = []

        init(spec: NodeSpec, items: [MediaTimeline]) {
            self.spec = spec
            let itemIDs = Set(items.map(\.identifier))
            self.core = CoordinatorCore(
                participant: spec.name, configuration: spec.configuration, localItem: items.first?.identifier,
                canPresent: { itemIDs.contains($0) })
            self.player = HeadlessPlayerCore(items: items, imperfections: spec.imperfections, controller: spec.controller)
        }

        /// The node's local monotonic clock (seconds) at true time `t`.
        func local(_ t: Int64) -> Double {
            spec.clock.offset.secondsValue + (1 + spec.clock.driftPPM / 1e6) * Double(t) / 1e9
        }

        /// The node's reference-time estimate at true time `t`.
        func reference(_ t: Int64) -> ReferenceTime {
            let elapsedLocal = local(t) - local(pollTrue)
            let seconds = Double(pollTrue) / 1e9 + pollEpsilon + elapsedLocal / (1 + driftEstimate)
            return ReferenceTime(seconds: seconds)
        }

        /// The true time at which the node's reference estimate reads `r` (rounded up).
        func trueTime(atReference r: ReferenceTime) -> Int64 {
            let localElapsed = (r.seconds - Double(pollTrue) / 1e9 - pollEpsilon) * (1 + driftEstimate)
            let trueElapsed = localElapsed / (1 + spec.clock.driftPPM / 1e6)
            return pollTrue + Int64((trueElapsed * 1e9).rounded(.up))
        }
    }

    private struct Scheduled {
        var time: Int64
        var order: UInt64
        var action: (Simulation) -> Void
    }

    private(set) var now: Int64 = 0
    private var queue: [Scheduled] = []
    private var order: UInt64 = 0
    var random: SplitMix64
    private(set) var nodes: [PlaybackParticipantID: Node] = [:]
    private(set) var nodeOrder: [PlaybackParticipantID] = []
    private var relayMembers: [PlaybackParticipantID] = []
    private var relaySequence: UInt64 = 0
    private var retained: [String: (CoordinationMessage, PlaybackParticipantID, UInt64)] = [:]
    private var retainedOrder: [String] = []
    let items: [MediaTimeline]
    private(set) var frames: [PresentedFrame] = []
    private(set) var stops: [Stop] = []
    private(set) var messagesSent = 0

    init(seed: UInt64, items: [MediaTimeline]) {
        self.random = SplitMix64(seed: seed)
        self.items = items
    }

    // MARK: Event queue

    func schedule(at time: Int64, _ action: @escaping (Simulation) -> Void) {
        order += 1
        let entry = Scheduled(time: max(time, now), order: order, action: action)
        // Binary insertion keeps the queue sorted by (time, order).
        var low = 0
        var high = queue.count
        while low < high {
            let mid = (low + high) / 2
            if (queue[mid].time, queue[mid].order) < (entry.time, entry.order) { low = mid + 1 } else { high = mid }
        }
        queue.insert(entry, at: low)
    }

    func schedule(after delay: Duration, _ action: @escaping (Simulation) -> Void) {
        schedule(at: now + delay.nanosecondsValue, action)
    }

    /// Runs every event up to and including true time `end` (seconds).
    func run(until end: Double) {
        let limit = Int64(end * 1e9)
        var steps = 0
        while let first = queue.first, first.time <= limit {
            queue.removeFirst()
            now = first.time
            first.action(self)
            steps += 1
            precondition(steps < 5_000_000, "simulation did not settle")
        }
        now = max(now, limit)
    }

    // MARK: Nodes

    /// Adds a node that joins the relay at true time `at` seconds.
    @discardableResult
    func addNode(_ spec: NodeSpec, joiningAt at: Double = 0) -> Node {
        let node = Node(spec: spec, items: items)
        node.pollTrue = Int64(at * 1e9)
        nodes[spec.name] = node
        nodeOrder.append(spec.name)
        reestimate(node)
        schedule(at: Int64(at * 1e9)) { sim in sim.join(node) }
        return node
    }

    private func reestimate(_ node: Node) {
        node.pollTrue = now
        node.pollEpsilon = random.symmetric(node.spec.clock.estimateError.secondsValue)
        node.driftEstimate = node.spec.clock.driftPPM / 1e6 + random.symmetric(node.spec.clock.driftEstimateErrorPPM) / 1e6
        schedule(after: node.spec.clock.pollInterval) { sim in
            if node.alive { sim.reestimate(node) }
        }
    }

    private func join(_ node: Node) {
        sendUp(from: node) { sim in
            sim.relayMembers.append(node.spec.name)
            for member in sim.relayMembers where member != node.spec.name {
                sim.sendDown(to: node, .joined(member))
            }
            for key in sim.retainedOrder {
                if let (message, sender, sequence) = sim.retained[key] {
                    sim.sendDown(to: node, .message(message, sender: sender, sequence: sequence))
                }
            }
            for member in sim.relayMembers {
                if let target = sim.nodes[member] { sim.sendDown(to: target, .joined(node.spec.name)) }
            }
        }
        node.joined = true
    }

    /// Makes the node stop doing anything (a crash; the relay does not notice).
    func kill(_ name: PlaybackParticipantID) {
        nodes[name]?.alive = false
    }

    /// The node's connection dies: the relay notices at once and tells the others it left.
    func dropConnection(_ name: PlaybackParticipantID) {
        guard let node = nodes[name] else { return }
        node.alive = false
        relayMembers.removeAll { $0 == name }
        for member in relayMembers {
            if let target = nodes[member] { sendDown(to: target, .left(name)) }
        }
    }

    /// The node's path to the relay stalls from true time `at` for `duration` seconds and then
    /// delivers everything held, in order, in both directions (a relay restart the session resumes
    /// from, a network that stops and comes back): the relay does not notice, the node plays on.
    func cutOff(_ name: PlaybackParticipantID, at seconds: Double, for duration: Double) {
        schedule(at: Int64(seconds * 1e9)) { sim in
            guard let node = sim.nodes[name] else { return }
            node.heldUntil = sim.now + Int64(duration * 1e9)
            sim.schedule(at: node.heldUntil!) { _ in node.heldUntil = nil }
        }
    }

    /// The node leaves cleanly.
    func leave(_ name: PlaybackParticipantID) {
        guard let node = nodes[name] else { return }
        sendUp(from: node) { sim in
            sim.relayMembers.removeAll { $0 == name }
            for member in sim.relayMembers {
                if let target = sim.nodes[member] { sim.sendDown(to: target, .left(name)) }
            }
        }
        node.alive = false
    }

    // MARK: Network

    private func delay(_ link: Simulation.Link) -> Int64 {
        var total = link.latency.secondsValue + random.symmetric(link.jitter.secondsValue)
        while random.chance(link.loss) { total += link.retransmissionTimeout.secondsValue }
        return Int64(max(0, total) * 1e9)
    }

    private func sendUp(from node: Node, _ arrive: @escaping (Simulation) -> Void) {
        let at = max(now + delay(node.spec.uplink), node.lastUp + 1, node.heldUntil.map { $0 + delay(node.spec.uplink) } ?? 0)
        node.lastUp = at
        schedule(at: at, arrive)
    }

    private func sendDown(to node: Node, _ event: CoordinationChannelEvent) {
        let at = max(now + delay(node.spec.downlink), node.lastDown + 1, node.heldUntil.map { $0 + delay(node.spec.downlink) } ?? 0)
        node.lastDown = at
        schedule(at: at) { sim in sim.deliver(event, to: node) }
    }

    private func relay(_ message: CoordinationMessage, from sender: PlaybackParticipantID, key: String?) {
        guard relayMembers.contains(sender) else { return }
        relaySequence += 1
        if let key {
            if retained[key] == nil { retainedOrder.append(key) }
            retained[key] = (message, sender, relaySequence)
        }
        for member in relayMembers {
            if let target = nodes[member] {
                sendDown(to: target, .message(message, sender: sender, sequence: relaySequence))
            }
        }
    }

    // MARK: Node behaviour

    private func deliver(_ event: CoordinationChannelEvent, to node: Node) {
        guard node.alive else { return }
        let reference = node.reference(now)
        perform(node.core.receive(event, now: reference), at: node)
        afterActivity(node)
    }

    /// Runs `body` on a node's coordinator at the current true time (a user action).
    func act(_ name: PlaybackParticipantID, _ body: @escaping (inout CoordinatorCore, ReferenceTime) throws -> [CoordinatorAction]) {
        guard let node = nodes[name], node.alive else { return }
        let actions = try! body(&node.core, node.reference(now))
        perform(actions, at: node)
        afterActivity(node)
    }

    /// Schedules a user action at true time `at` seconds.
    func at(_ seconds: Double, _ name: PlaybackParticipantID, _ body: @escaping (inout CoordinatorCore, ReferenceTime) throws -> [CoordinatorAction]) {
        schedule(at: Int64(seconds * 1e9)) { sim in sim.act(name, body) }
    }

    private func perform(_ actions: [CoordinatorAction], at node: Node) {
        let reference = node.reference(now)
        for action in actions {
            switch action {
            case .send(let message, let key):
                messagesSent += 1
                let sender = node.spec.name
                sendUp(from: node) { sim in sim.relay(message, from: sender, key: key) }
            case .command(let command):
                node.commands.append((command, now))
                record(node.player.apply(command, now: reference), at: node)
            case .event(var event):
                event.realtime = Double(now) / 1e9
                node.events.append(event)
            }
        }
    }

    private func record(_ outputs: [HeadlessPlayerCore.PlayerOutput], at node: Node) {
        for output in outputs {
            switch output {
            case .frame(let index, let pts, _, let item):
                frames.append(PresentedFrame(node: node.spec.name, item: item, index: index, pts: pts, trueTime: now))
            case .stopped(let index, let itemTime, _, let item, let waiting):
                stops.append(Stop(node: node.spec.name, item: item, index: index, itemTime: itemTime, trueTime: now, waiting: waiting))
            case .correction(let kind, let errorMs, _):
                node.corrections.append((kind, errorMs, now))
            case .ignored:
                break
            }
        }
    }

    /// After anything happened at a node: reschedule its player wake-up and coordinator tick.
    private func afterActivity(_ node: Node) {
        schedulePlayerWake(node)
        scheduleTick(node)
    }

    /// Reschedules the node's player wake-up (all that a presented frame changes: the coordinator's
    /// next tick stays where it was, which keeps long runs cheap).
    private func schedulePlayerWake(_ node: Node) {
        node.wakeGeneration += 1
        let generation = node.wakeGeneration
        if let wake = node.player.nextWake {
            schedule(at: node.trueTime(atReference: wake)) { sim in
                guard node.alive, node.wakeGeneration == generation else { return }
                var reference = node.reference(sim.now)
                if reference < wake, wake - reference < .microseconds(1) { reference = wake }
                sim.record(node.player.advance(to: reference), at: node)
                sim.schedulePlayerWake(node)
            }
        }
    }

    /// Reschedules the node's coordinator tick.
    private func scheduleTick(_ node: Node) {
        node.tickGeneration += 1
        let tickGeneration = node.tickGeneration
        if let deadline = node.core.nextTickDeadline {
            schedule(at: node.trueTime(atReference: deadline)) { sim in
                guard node.alive, node.tickGeneration == tickGeneration else { return }
                sim.perform(node.core.tick(now: node.reference(sim.now)), at: node)
                sim.afterActivity(node)
            }
        }
    }

    // MARK: Analysis

    /// For every (item, frame index) presented by more than one node, the spread of true
    /// presentation times in milliseconds, considering only each node's first presentation of it
    /// and only frames presented in `window` (true seconds).
    func frameSpreads(in window: ClosedRange<Double> = 0...Double.infinity, nodes names: [PlaybackParticipantID]? = nil) -> [(item: String, index: Int, spreadMs: Double, count: Int)] {
        var firsts: [String: [PlaybackParticipantID: Int64]] = [:]
        for frame in frames {
            let seconds = Double(frame.trueTime) / 1e9
            guard window.contains(seconds), names?.contains(frame.node) ?? true else { continue }
            let key = "\(frame.item)#\(frame.index)"
            if firsts[key, default: [:]][frame.node] == nil { firsts[key, default: [:]][frame.node] = frame.trueTime }
        }
        return firsts.compactMap { key, byNode in
            guard byNode.count > 1 else { return nil }
            let parts = key.split(separator: "#")
            let spread = Double(byNode.values.max()! - byNode.values.min()!) / 1e6
            return (String(parts[0]), Int(parts[1])!, spread, byNode.count)
        }.sorted { ($0.item, $0.index) < ($1.item, $1.index) }
    }

    /// Frames presented by `node`, in order.
    func frames(of node: PlaybackParticipantID) -> [PresentedFrame] { frames.filter { $0.node == node } }
}
