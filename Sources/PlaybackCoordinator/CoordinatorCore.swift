/// The coordinator's deterministic, sans-IO state machine.
///
/// Inputs are channel events, local API calls and the passage of time, each with the reference
/// time "now"; outputs are ``CoordinatorAction`` values (messages to send, commands for the local
/// player, events). It never reads a clock, sleeps or sends anything itself, so tests (and the
/// deterministic network simulation) drive it exactly; ``PlaybackCoordinator`` is the async shell.
///
/// The model:
/// - The group's base state is the accepted ``PlaybackState`` with the highest channel sequence.
///   A local command only *proposes* a state (anchored `lead` in the future); it takes effect when
///   the channel delivers it back in the total order, exactly as for everyone else.
/// - Suspensions that make the group wait are reference-time intervals
///   `[effectiveAt of begin, min(effectiveAt of end, begin + timeout))`, known to everyone from the
///   same ordered messages. The effective timeline is the base state with those intervals held
///   still (``segments()``), so every member computes the same pauses and resumptions, and a
///   timeout needs no message at all: a dead member stops blocking at the same instant everywhere.
///
/// ```swift
/// var core = CoordinatorCore(participant: "alice", localItem: "clip")
/// let actions = try core.proposeRate(1, now: now)        // -> [.send(.state(...), retainKey: ...)]
/// let applied = core.receive(.message(message, sender: "alice", sequence: 1), now: later)
/// // -> [.event(play), .command(.seek ...), .command(.play(itemTime: 0, referenceTime: ..., rate: 1))]
/// ```
public struct CoordinatorCore: Sendable {
    struct SuspensionRecord: Hashable, Sendable {
        var id: String
        var participant: PlaybackParticipantID
        var reason: SuspensionReason
        var begin: ReferenceTime
        var end: ReferenceTime?
        var timeout: Duration
        var counted: Bool
        var endReported: Bool

        var deadline: ReferenceTime { begin + timeout }
        var waitEnd: ReferenceTime { min(end ?? deadline, deadline) }
    }

    /// The local participant.
    public let participant: PlaybackParticipantID
    /// The configuration.
    public var configuration: CoordinatorConfiguration
    /// The group's accepted state (highest sequence), if any.
    public internal(set) var state: PlaybackState?
    /// The item the local player has loaded.
    public internal(set) var localItem: String?
    /// Current members of the group, as the channel reported them.
    public private(set) var members: Set<PlaybackParticipantID> = []
    /// The local participant's display name, sent in presence reports.
    public let name: String?
    /// Display names the members announced (in their presence reports).
    public private(set) var names: [PlaybackParticipantID: String] = [:]
    /// Whether the local member only sends a command or looks (`coplay control`): its presence
    /// reports say so (``PresenceReport/oneShot``), and the others do not announce its coming and going.
    public let oneShot: Bool
    /// The members whose presence reports said they only send a command or look.
    public private(set) var oneShotMembers: Set<PlaybackParticipantID> = []
    /// How far the local player was off when it last jumped back into step, in seconds, until the
    /// next presence report carries it (``noteCaughtUp(offBy:)``).
    private var pendingCaughtUp: Double?

    let canPresent: (@Sendable (String) -> Bool)?
    /// The items the local member can play, with their durations (its presence reports carry them).
    public private(set) var items: [PresenceReport.ItemSummary]
    /// The end this member last reported with an ``PlaybackEvent/EventType/itemEnded`` event: the
    /// state's (revision, item, entry, ``endKey(_:)``) and the instant. An end is reported once: each
    /// wait while the group is held there (a member buffering at the end, a joiner learning the waits
    /// before it) starts the timeline's last segment anew, and reporting each new segment said "ended"
    /// once per wait on every member's terminal and screen (found with 270 one-shot suspends at an
    /// end); another state with the same end (a joiner's answer replacing its retained state) is the
    /// same end too.
    private var reportedEnd: (key: String, at: ReferenceTime)?
    private var suspensions: [String: SuspensionRecord] = [:]
    private var suspensionOrder: [String] = []
    private var reports: [PlaybackParticipantID: PresenceReport] = [:]
    private var delays: [Duration] = []
    private var delayCursor = 0
    var announced: [TimelineSegment] = []
    var announcedRevision: UInt64?
    private var ignoredRevision: UInt64?
    private var nextPresence: ReferenceTime?
    private var suspensionCounter = 0
    /// Whether the channel has reported the local member's own `joined`.
    private(set) var joinedSelf = false
    /// Suspensions of members that left which this member sent an end for, with that end, until an
    /// end is delivered (its later notices tell these ends: they replace the earlier ones in the
    /// relay's retained slot of that member).
    private var behalfEnds: [(id: String, end: ReferenceTime)] = []
    /// This member's own suspensions as it sent them, until the channel has delivered what it sent
    /// (its begin, and its end once sent): its notices' histories tell them before the group
    /// knows, since a later notice replaces an earlier one in the relay's retained slot.
    private var ownPending: [SuspensionHistory.Entry] = []
    private var presenceCount = 0
    /// The unsupported messages already reported, as "SENDER KIND VERSION".
    private var reportedUnsupported: Set<String> = []
    /// The local suspensions not yet ended, in the order they began.
    private var localSuspensions: [(id: String, reason: SuspensionReason, waits: Bool)] = []
    /// Every member's suspensions whose begin the channel delivered and whose end it did not, in
    /// the order they began (the local member's included, once delivered).
    private var openSuspensionsByMember: [PlaybackParticipantID: [(id: String, reason: SuspensionReason)]] = [:]
    /// This member's copy of the group's queue (`CoordinatorCore+Queue.swift`).
    var queueReplica: QueueReplica
    /// The state proposals this member received before it had the queue (and the answer's
    /// state): replayed on that state if it differs from the retained one it started from.
    var joinLog: [(proposal: StateProposal, sender: PlaybackParticipantID, sequence: UInt64)] = []
    /// The transition to the next entry this member proposed: the revision it follows and the
    /// end instant it assumed (proposed again only if either changes).
    var proposedTransition: (revision: UInt64, end: ReferenceTime)?
    /// When ``proposedTransition`` was looked at, nothing followed the entry (the queue's end, or
    /// an empty queue): a queue edit makes this member look again.
    var transitionAwaitsQueue = false
    /// While this member plays on by transitions it computed itself because none was ordered in
    /// time (``assumeTransitionIfLate(now:)``): the group's ordered state they follow (``state`` is
    /// then the last of ``assumedChain``).
    var assumedFrom: PlaybackState?
    /// The transitions assumed since ``assumedFrom``, in order; each carries its revision.
    var assumedChain: [PlaybackState] = []
    /// The ordered or assumed state and end whose late transition was last looked at (``assumeTransitionIfLate(now:)``).
    var assumeChecked: (revision: UInt64, end: ReferenceTime)?
    /// The state this joiner read from the relay (the retained one) is a transition at an entry's
    /// end, which it cannot judge without the queue: the group may have stopped or moved elsewhere
    /// at that end, and the transition stayed retained only because it came last. Its player gets
    /// nothing until the queue and the group's state at its request arrive
    /// (``releaseHeldCommands(now:)``). Group model seed 2567: a joiner during a relay outage
    /// showed such a transition's entry, paused, while the group held another entry's frame 2 s in.
    var holdsForQueueAnswer = false
    /// The state this joiner held when each of its queue requests came back in the order: an
    /// answer with that same state means what it processed since then is the group's own.
    var statesAtOwnRequests: [UInt64: PlaybackState] = [:]
    /// While the group plays a queue entry this member cannot present: the local suspension held
    /// for it and the entry last reported (``CoordinatorConfiguration/suspendsWhileEntryMissing``).
    var missingEntry: (suspension: String, entry: String)?

    /// Creates a core.
    ///
    /// - Parameters:
    ///   - participant: the local participant.
    ///   - configuration: tuning.
    ///   - localItem: the item the local player has loaded, if any.
    ///   - canPresent: when given, the core switches the local item by itself to any group item
    ///     for which it returns `true` (a pure predicate, such as "is in my playlist").
    ///   - name: the local participant's display name: events name members by their names
    ///     (the channel's id until a member's name is known).
    ///   - items: the items the local member can play, with their durations: the group's timeline
    ///     ends at an item's duration, and proposals are checked against what members have.
    ///   - oneShot: the local member only sends a command or looks (``oneShot``).
    public init(
        participant: PlaybackParticipantID,
        configuration: CoordinatorConfiguration = .init(),
        localItem: String? = nil,
        canPresent: (@Sendable (String) -> Bool)? = nil,
        name: String? = nil,
        items: [PresenceReport.ItemSummary] = [],
        oneShot: Bool = false
    ) {
        self.participant = participant
        self.name = name
        self.oneShot = oneShot
        if let name { names[participant] = name }
        self.configuration = configuration
        self.localItem = localItem
        self.canPresent = canPresent
        self.items = items
        self.queueReplica = QueueReplica(participant: participant)
    }

    // MARK: Items

    /// The duration of `item` as this member knows it: the group's state (when it is about that
    /// item), the member's own files, what another member reported, or a queue entry of it.
    public func duration(of item: String) -> Double? {
        if let state, state.item == item, let duration = state.duration { return duration }
        if let known = items.first(where: { $0.item == item })?.duration { return known }
        for member in reports.keys.sorted() where members.contains(member) {
            if let known = reports[member]?.items?.first(where: { $0.item == item })?.duration { return known }
        }
        // The queue's entries carry the duration their adder probed (a member with no copy of the
        // item and nobody left who has it still knows where it ends).
        return queue.entries.first { $0.item == item && $0.duration != nil }?.duration
    }

    /// The members known to have `item`: this member if it is among its ``items`` or loaded, and
    /// every current member whose latest presence report lists it or has it loaded.
    public func members(having item: String) -> Set<PlaybackParticipantID> {
        var result = Set<PlaybackParticipantID>()
        if localItem == item || items.contains(where: { $0.item == item }) { result.insert(participant) }
        for (member, report) in reports where members.contains(member) {
            if report.item == item || report.items?.contains(where: { $0.item == item }) == true { result.insert(member) }
        }
        return result
    }

    /// The current members other than this one that have a player (their presence reports name an
    /// item loaded or items they can play), as far as their reports tell.
    public var otherPlayingMembers: Set<PlaybackParticipantID> {
        Set(reports.compactMap { member, report in
            member != participant && members.contains(member) && (report.item != nil || report.items?.isEmpty == false) ? member : nil
        })
    }

    /// Whether this member knows who is in the group (the channel reported its own `joined`, which
    /// comes after the others' at admission) and every other member has sent a presence report.
    public var heardFromEveryMember: Bool {
        joinedSelf && members.allSatisfy { $0 == participant || reports[$0] != nil }
    }

    /// Why the group could not follow a change to `item`, or `nil` when someone can play it.
    ///
    /// Refused: an item no member is known to have; and, in a group with other players, an item
    /// that none of them has (only the sender could play it; everyone else would stop).
    public func itemUnavailability(_ item: String) -> PlaybackCoordinatorError? {
        let having = members(having: item)
        let others = otherPlayingMembers
        if having.isEmpty { return .itemUnavailable(item, detail: "no member has it") }
        if !others.isEmpty, having.isDisjoint(with: others) {
            return .itemUnavailable(item, detail: "no other member has it (only this one)")
        }
        return nil
    }

    // MARK: Lead

    /// The current lead: the largest one-way delay anyone reported (or this member measured) plus
    /// the margin plus the largest decoder preroll, clamped to the configured bounds.
    public var lead: Duration {
        var delay = observedDelay
        var preroll = configuration.preroll
        for (member, report) in reports where members.contains(member) {
            delay = max(delay, report.observedDelay)
            preroll = max(preroll, report.preroll)
        }
        let raw = delay + configuration.margin + preroll
        return min(max(raw, configuration.minimumLead), configuration.maximumLead)
    }

    /// The largest one-way delay this member measured over the recent window, leaving out samples
    /// far above the window's median (more than four times it and more than
    /// ``heldDelayAllowance`` over it): those are messages held through a relay restart or a
    /// reconnection, not the path's delay. Counted, one presence report held 1.5 s made every
    /// member's lead the 2 s maximum for a minute after each restart (`coplay bench --scenario
    /// queue`): commands took 2 s to apply, and two given a second apart took effect at the same
    /// instant, so the first was never seen.
    ///
    /// Computed when a sample is recorded, not each time the lead is read (every tick deadline reads it).
    public private(set) var observedDelay: Duration = .zero

    private static func pathDelay(of delays: [Duration]) -> Duration {
        guard !delays.isEmpty else { return .zero }
        let sorted = delays.sorted()
        let median = sorted[(sorted.count - 1) / 2]
        let bound = max(median * 4, median + heldDelayAllowance)
        return sorted.last { $0 <= bound } ?? .zero
    }

    /// How far above the window's median a delay sample may be and still count as the path's
    /// (``observedDelay``).
    public static let heldDelayAllowance: Duration = .milliseconds(250)

    private mutating func recordDelay(_ delay: Duration) {
        let sample = max(delay, .zero)
        if delays.count < max(1, configuration.delayWindow) {
            delays.append(sample)
        } else {
            delays[delayCursor] = sample
            delayCursor = (delayCursor + 1) % delays.count
        }
        observedDelay = Self.pathDelay(of: delays)
    }

    // MARK: Timeline

    /// The intervals during which the group waits for suspended participants, merged and sorted.
    func waitIntervals(after start: ReferenceTime) -> [(ReferenceTime, ReferenceTime)] {
        var intervals: [(ReferenceTime, ReferenceTime)] = []
        for id in suspensionOrder {
            guard let record = suspensions[id], record.counted else { continue }
            let b = max(record.begin, start)
            let e = record.waitEnd
            if e > b { intervals.append((b, e)) }
        }
        intervals.sort { $0.0 < $1.0 }
        var merged: [(ReferenceTime, ReferenceTime)] = []
        for interval in intervals {
            if let last = merged.last, interval.0 <= last.1 {
                merged[merged.count - 1].1 = max(last.1, interval.1)
            } else {
                merged.append(interval)
            }
        }
        return merged
    }

    /// The group's effective timeline from the base state's anchor on: the base state with the
    /// wait intervals held still. Empty before any state.
    ///
    /// When the item's duration is known (the state's, or this member's own file's), the timeline
    /// stops there: an ``TimelineSegment/ended`` segment at the instant the item time reaches the
    /// duration, holding it (rate 0), and nothing after. A paused state past the end holds the end.
    public func segments() -> [TimelineSegment] {
        guard let state else { return [] }
        return segments(endingAt: state.duration ?? items.first(where: { $0.item == state.item })?.duration)
    }

    /// The effective timeline, ending at the item time `end` when given.
    func segments(endingAt end: Double?) -> [TimelineSegment] {
        guard let state else { return [] }
        if let end, state.anchorItemTime >= end {
            return [TimelineSegment(start: state.anchorReferenceTime, itemTime: end, rate: 0, waiting: false, ended: state.rate > 0)]
        }
        var result = [
            TimelineSegment(start: state.anchorReferenceTime, itemTime: state.anchorItemTime, rate: state.rate, waiting: false)
        ]
        guard state.rate > 0 else { return result }
        for (b, e) in waitIntervals(after: state.anchorReferenceTime) {
            if let end, result[result.count - 1].itemTime(at: b) >= end { break }
            let held = result[result.count - 1].itemTime(at: b)
            result.append(TimelineSegment(start: b, itemTime: held, rate: 0, waiting: true, waitEnd: e))
            result.append(TimelineSegment(start: e, itemTime: held, rate: state.rate, waiting: false))
        }
        if let end, let last = result.last, last.rate > 0 {
            let at = last.start + .secondsRounded((end - last.itemTime) / last.rate)
            result.append(TimelineSegment(start: at, itemTime: end, rate: 0, waiting: false, ended: true))
        }
        return result
    }

    /// The group's item time at `t` on the effective timeline (extrapolated from the first segment
    /// before the anchor), or `nil` before any state.
    public func effectiveItemTime(at t: ReferenceTime) -> Double? {
        let all = segments()
        guard let first = all.first else { return nil }
        let segment = all.last(where: { $0.start <= t }) ?? first
        return segment.itemTime(at: t)
    }

    /// The effective rate at `t` (0 while paused or waiting), or `nil` before any state.
    public func effectiveRate(at t: ReferenceTime) -> Double? {
        let all = segments()
        guard let first = all.first else { return nil }
        return (all.last(where: { $0.start <= t }) ?? first).rate
    }

    /// Whether the group is waiting for a suspended participant at `t`.
    public func isWaiting(at t: ReferenceTime) -> Bool {
        segments().last(where: { $0.start <= t })?.waiting ?? false
    }

    // MARK: Inputs from the channel

    /// Handles one channel event received at reference time `now`.
    public mutating func receive(_ event: CoordinationChannelEvent, now: ReferenceTime) -> [CoordinatorAction] {
        switch event {
        case .joined(let member):
            members.insert(member)
            var actions: [CoordinatorAction] = [.event(PlaybackEvent(type: .joined, realtime: 0, player: label(participant), originator: member, originatorName: names[member], referenceTime: now.seconds))]
            if member == participant {
                nextPresence = nil
                presenceCount = 0
                actions += tick(now: now)
                if !joinedSelf {
                    joinedSelf = true
                    // The retained messages are all in: the player's first commands.
                    if configuration.holdsCommandsUntilJoined { actions += followEntryAvailability(now: now) + announce(now: now) }
                }
                actions += queueReplica.joinedSelf(others: members.subtracting([participant]), now: now)
                actions += releaseHeldCommands(now: now)
            }
            return actions
        case .left(let member):
            members.remove(member)
            reports[member] = nil
            oneShotMembers.remove(member)
            if member != participant { openSuspensionsByMember[member] = nil }
            let actions: [CoordinatorAction] = [
                .event(PlaybackEvent(type: .left, realtime: 0, player: label(participant), originator: member, originatorName: names[member], referenceTime: now.seconds))
            ]
            return actions + endSuspensions(of: member, now: now)
                + queueReplica.left(member, others: members.subtracting([participant]), now: now)
                + releaseHeldCommands(now: now)
        case .message(let message, let sender, let sequence):
            queueReplica.processed(sequence)
            switch message {
            case .state(let proposal):
                if !queueReplica.isComplete { joinLog.append((proposal, sender, sequence)) }
                return accept(proposal, from: sender, sequence: sequence, now: now)
            case .suspension(let notice): return accept(notice, from: sender, now: now)
            case .presence(let report):
                recordDelay(now - report.sentAt)
                reports[sender] = report
                if let name = report.name, !name.isEmpty { names[sender] = name }
                if report.oneShot == true { oneShotMembers.insert(sender) }
                guard let off = report.caughtUp, sender != participant else { return [] }
                return [.event(PlaybackEvent(
                    type: .caughtUp, realtime: 0, player: label(participant), originator: sender, originatorName: names[sender],
                    item: report.item, referenceTime: now.seconds, errorMs: off * 1000))]
            case .queueEdit(let notice): return receiveQueueEdit(notice, from: sender, sequence: sequence, now: now)
            case .queueRequest:
                if sender == participant, !hasQueue, let held = assumedFrom ?? state { statesAtOwnRequests[sequence] = held }
                queueReplica.receive(requestFrom: sender, sequence: sequence, members: members, state: assumedFrom ?? state, now: now)
                return tickQueue(now: now)
            case .queueSnapshot(let part):
                let wasComplete = queueReplica.isComplete
                queueReplica.receive(part: part, from: sender, sequence: sequence)
                var actions = queueReplica.tick(now: now, members: members)
                if !wasComplete && queueReplica.isComplete { actions += queueReceived(now: now) }
                return actions
            case .unsupported(let kind, let version):
                return reportUnsupported(kind: kind, version: version, from: sender, now: now)
            case .signed:
                // Unwrapped by the channel's gate where only hosts control; without one, not read.
                return []
            }
        }
    }

    /// Says once per sender, kind and version that a message could not be read (a member runs a
    /// newer coplay); the message itself is ignored, and the group carries on with the rest.
    private mutating func reportUnsupported(kind: String, version: Int, from sender: PlaybackParticipantID, now: ReferenceTime) -> [CoordinatorAction] {
        guard reportedUnsupported.insert("\(sender) \(kind) \(version)").inserted else { return [] }
        return [.event(PlaybackEvent(
            type: .unsupportedMessage, realtime: 0, player: label(participant), originator: sender, originatorName: names[sender],
            referenceTime: now.seconds, detail: CoordinationMessage.unsupportedDescription(kind: kind, version: version)))]
    }

    mutating func accept(_ proposal: StateProposal, from sender: PlaybackParticipantID, sequence: UInt64, now: ReferenceTime) -> [CoordinatorAction] {
        guard let ordered = assumedFrom else { return acceptOrdered(proposal, from: sender, sequence: sequence, now: now, shown: state) }
        // While playing on by assumed transitions, a proposal is judged against the group's ordered
        // state, as every member judges it; what the member shows stays unless the order moves it.
        let shown = state
        let chain = assumedChain
        state = ordered
        assumedFrom = nil
        assumedChain = []
        let actions = acceptOrdered(proposal, from: sender, sequence: sequence, now: now, shown: shown, chain: chain)
        if assumedFrom == nil, let after = state, after.sameTimeline(as: ordered) {
            // Nothing ordered moved the group (a duplicate or stale proposal, a restatement): play on.
            assumedFrom = after
            assumedChain = chain.map { var link = $0; link.revision = after.revision; return link }
            state = assumedChain.last
            return actions
        }
        if assumedFrom == nil, let after = state, after.anchorReferenceTime > now, !chain.contains(where: { $0.sameTimeline(as: after) }) {
            return bridge(from: ordered, before: after, replacing: actions, now: now)
        }
        return actions
    }

    /// The order replaced this member's assumed transitions by a state that takes effect later:
    /// until its anchor the group shows its ordered state, so the player is put on that first, then
    /// told the new state (commands replace what was scheduled at or after their instant, so the
    /// order of the two matters). Group model seed 9022: a member that had assumed the next entry
    /// at a seek to the end kept showing the next entry's first frame for 1.4 s, until a rate change
    /// took effect, while the group held the end of the entry before.
    private mutating func bridge(
        from ordered: PlaybackState, before next: PlaybackState, replacing actions: [CoordinatorAction], now: ReferenceTime
    ) -> [CoordinatorAction] {
        state = ordered
        announced = []
        announcedRevision = nil
        let meanwhile = announce(now: now)
        state = next
        announced = []
        announcedRevision = nil
        let then = announce(now: now)
        return actions.filter { if case .command = $0 { false } else { true } } + meanwhile + then
    }

    /// ``accept(_:from:sequence:now:)`` on the ordered state. `shown` is what the local player was
    /// last told (the ordered state, or the last transition assumed); a new state that is one of the
    /// transitions of `chain` (assumed, in order) confirms it, and the later ones are kept.
    private mutating func acceptOrdered(
        _ proposal: StateProposal, from sender: PlaybackParticipantID, sequence: UInt64, now: ReferenceTime,
        shown: PlaybackState?, chain: [PlaybackState] = []
    ) -> [CoordinatorAction] {
        if let state, sequence <= state.revision { return [] }
        var proposal = proposal
        if proposal.isUnauthenticated {
            guard let authentic = authenticTransition(proposal, from: sender) else { return [] }
            proposal = authentic
        }
        // A transition applies only to the entry and end instant it was computed from: the first
        // one ordered wins, the others (every member proposes it) change nothing; a restatement
        // only when it is the group's state.
        if (proposal.command == .advance && !transitionApplies(proposal))
            || (proposal.command == .restate && state.map({ !$0.sameTimeline(as: proposal.state) }) ?? false)
        {
            return restateIfReplaced(by: proposal, from: sender, now: now)
        }
        if proposal.command == .restate, var current = state {
            current.revision = sequence
            state = current
            return []
        }
        if state == nil, proposal.command == .advance, !hasQueue { holdsForQueueAnswer = true }
        var next = proposal.state
        next.revision = sequence
        let previousItem = shown?.item
        let previousEntry = shown?.entry
        state = next
        if let confirmed = chain.firstIndex(where: { $0.sameTimeline(as: next) }) {
            // One of this member's assumed transitions, now ordered: the player already follows it
            // (or a later one, kept until it is ordered too).
            let rest = chain[(confirmed + 1)...].map { var link = $0; link.revision = sequence; return link }
            if !rest.isEmpty {
                assumedFrom = next
                assumedChain = Array(rest)
                state = rest.last
            }
        }
        guard let next = state else { return [] }
        var actions: [CoordinatorAction] = []
        if proposal.command != .advance && proposal.command != .restate {
            actions.append(.event(PlaybackEvent(
                type: PlaybackEvent.EventType(rawValue: proposal.command.rawValue) ?? .rate, realtime: 0,
                player: label(participant), originator: next.originator, originatorName: names[next.originator], item: next.item, itemTime: next.anchorItemTime,
                rate: next.rate, referenceTime: next.anchorReferenceTime.seconds, revision: sequence, entry: next.entry)))
        }
        if previousItem != next.item || previousEntry != next.entry {
            actions.append(changedItem(to: next, revision: sequence, by: proposal.command, from: previousItem))
        }
        return actions + followEntryAvailability(now: now) + announce(now: now)
    }

    private mutating func accept(_ notice: SuspensionNotice, from sender: PlaybackParticipantID, now: ReferenceTime) -> [CoordinatorAction] {
        // What the sender knew comes first: a member that joined after a wait learns it here (the
        // relay keeps only each member's latest notice), before the notice itself applies.
        if let history = notice.history {
            // Whose suspension the notice is about: the sender's, or a member's that left.
            let owner = suspensions[notice.id]?.participant
                ?? history.suspensions.first(where: { $0.id == notice.id })?.participant ?? sender
            if let ordered = assumedFrom {
                // What the sender knew is of the group's ordered state, not of this member's assumed transitions.
                let shown = state
                state = ordered
                learn(from: history, owner: owner, now: now)
                assumedFrom = state
                state = shown
            } else {
                learn(from: history, owner: owner, now: now)
            }
        }
        var actions = record(notice, from: sender)
        if sender == participant, let index = ownPending.firstIndex(where: { $0.id == notice.id }),
            notice.phase == .end || ownPending[index].end == nil
        {
            ownPending.remove(at: index)
        }
        if notice.phase == .end, let index = behalfEnds.firstIndex(where: { $0.id == notice.id }) {
            behalfEnds.remove(at: index)
            if sender != participant, let record = suspensions[notice.id], let end = record.end {
                // Another member's end for a member that left was ordered before ours, and ours will
                // replace it in the relay's retained slot: say again what the group applied.
                actions.append(.send(
                    .suspension(SuspensionNotice(
                        id: record.id, phase: .end, reason: record.reason, effectiveAt: end, waits: record.counted,
                        timeout: record.timeout, sentAt: now, history: history())),
                    retainKey: CoordinationMessage.suspensionKey(for: record.participant)))
            }
        }
        return actions + revalidateAssumption(now: now) + announce(now: now)
    }

    /// Takes what a notice's sender knew of the group's waits: the suspensions of `owner` (the
    /// member the notice is about) this member does not know yet (it joined later), the group's
    /// decision whether each known one waits and when it ended, and the state's anchor once older
    /// waits were folded into it.
    ///
    /// Only the owner's notices add suspensions: the relay keeps each member's latest notice, so
    /// that member's slot is the one complete, current account of its suspensions, while another
    /// member's older notice may still show one open that has long ended. Whether a suspension
    /// waits and when it ended never change once delivered, so any notice may tell them.
    private mutating func learn(from history: SuspensionHistory, owner: PlaybackParticipantID, now: ReferenceTime) {
        if var current = state, let revision = history.revision, revision == current.revision,
            let at = history.anchorReferenceTime, let itemTime = history.anchorItemTime, at > current.anchorReferenceTime
        {
            let sameLine = effectiveItemTime(at: at).map { abs($0 - itemTime) < 1e-9 } ?? false
            let wasAnnounced = announcedRevision == current.revision && announced == segments()
            current.anchorReferenceTime = at
            current.anchorItemTime = itemTime
            state = current
            if sameLine && wasAnnounced {
                announced = segments()
            } else if !sameLine {
                // The sender folded in waits this member never saw: start the player over.
                announced = []
                announcedRevision = nil
            }
        }
        for entry in history.suspensions {
            if var record = suspensions[entry.id] {
                record.counted = entry.waits
                if let end = entry.end.map({ max($0, record.begin) }), record.end != end {
                    if record.end == nil { closeOpenSuspension(entry.id, of: record.participant) }
                    record.end = end
                    record.endReported = true
                }
                suspensions[entry.id] = record
                continue
            }
            guard entry.participant == owner else { continue }
            var record = SuspensionRecord(
                id: entry.id, participant: entry.participant, reason: entry.reason, begin: entry.begin,
                end: entry.end.map { max($0, entry.begin) }, timeout: entry.timeout, counted: entry.waits, endReported: false)
            record.endReported = record.end != nil || now >= record.deadline
            suspensions[entry.id] = record
            suspensionOrder.append(entry.id)
            if record.end == nil, entry.participant != participant, members.contains(entry.participant) {
                openSuspensionsByMember[entry.participant, default: []].append((entry.id, entry.reason))
            }
        }
    }

    private mutating func closeOpenSuspension(_ id: String, of member: PlaybackParticipantID) {
        openSuspensionsByMember[member]?.removeAll { $0.id == id }
        if openSuspensionsByMember[member]?.isEmpty == true { openSuspensionsByMember[member] = nil }
    }

    /// What this member knows of the group's waits, for the notices it sends: every suspension it
    /// still keeps (``tick(now:)`` forgets them a minute after their wait), including those that
    /// ended before the state's anchor. A later revision may be anchored earlier than the state
    /// it replaces (a controller proposed before the previous one reached it), and then such a
    /// wait moves the timeline again: a member that joins after its owner left learns it only here
    /// (seed 2900 of the group model).
    private func history() -> SuspensionHistory {
        let base = assumedFrom ?? state
        let anchor = base?.anchorReferenceTime
        var entries: [SuspensionHistory.Entry] = []
        for id in suspensionOrder {
            guard let record = suspensions[id] else { continue }
            let pendingEnd = record.end == nil
                ? ownPending.first(where: { $0.id == id })?.end ?? behalfEnds.first(where: { $0.id == id })?.end : nil
            entries.append(SuspensionHistory.Entry(
                id: record.id, participant: record.participant, reason: record.reason, begin: record.begin,
                end: record.end ?? pendingEnd, timeout: record.timeout, waits: record.counted))
        }
        entries += ownPending.filter { suspensions[$0.id] == nil }
        return SuspensionHistory(
            revision: base?.revision, anchorReferenceTime: anchor, anchorItemTime: base?.anchorItemTime, suspensions: entries)
    }

    /// Folds the waits that ended before `horizon` into the state's anchor (the same timeline,
    /// anchored after them), so their records can be forgotten without moving anyone.
    private mutating func foldWaits(before horizon: ReferenceTime) {
        guard assumedFrom == nil, var current = state, current.rate > 0,
            let last = waitIntervals(after: current.anchorReferenceTime).last(where: { $0.1 < horizon }),
            let itemTime = effectiveItemTime(at: last.1)
        else { return }
        let wasAnnounced = announcedRevision == current.revision && announced == segments()
        current.anchorReferenceTime = last.1
        current.anchorItemTime = itemTime
        state = current
        if wasAnnounced { announced = segments() }
    }

    /// Records a suspension notice; returns its events.
    private mutating func record(_ notice: SuspensionNotice, from sender: PlaybackParticipantID) -> [CoordinatorAction] {
        switch notice.phase {
        case .begin:
            guard suspensions[notice.id] == nil else { return [] }
            var counted = false
            if notice.waits {
                let deadline = notice.effectiveAt + notice.timeout
                var waiting = Set<PlaybackParticipantID>()
                for record in suspensions.values where record.counted && record.participant != sender {
                    if record.begin < deadline && record.waitEnd > notice.effectiveAt { waiting.insert(record.participant) }
                }
                counted = waiting.count < configuration.maximumWaitingParticipants
            }
            suspensions[notice.id] = SuspensionRecord(
                id: notice.id, participant: sender, reason: notice.reason, begin: notice.effectiveAt, end: nil,
                timeout: notice.timeout, counted: counted, endReported: false)
            suspensionOrder.append(notice.id)
            openSuspensionsByMember[sender, default: []].append((notice.id, notice.reason))
            return [.event(PlaybackEvent(
                type: .suspensionBegan, realtime: 0, player: label(participant), originator: sender, originatorName: names[sender], item: state?.item,
                itemTime: effectiveItemTime(at: notice.effectiveAt), referenceTime: notice.effectiveAt.seconds,
                reason: notice.reason.description, suspension: notice.id, waits: counted))]
        case .end:
            guard var record = suspensions[notice.id], record.end == nil else { return [] }
            record.end = max(notice.effectiveAt, record.begin)
            let timedOut = record.end! > record.deadline
            let wasReported = record.endReported
            record.endReported = true
            suspensions[notice.id] = record
            closeOpenSuspension(notice.id, of: record.participant)
            var actions: [CoordinatorAction] = []
            if !wasReported {
                // The originator is the suspended member, also when another member ended it because it left.
                actions.append(.event(PlaybackEvent(
                    type: .suspensionEnded, realtime: 0, player: label(participant), originator: record.participant, originatorName: names[record.participant], item: state?.item,
                    itemTime: notice.proposedItemTime, referenceTime: record.waitEnd.seconds,
                    reason: record.reason.description, suspension: record.id, waits: record.counted, timedOut: timedOut,
                    detail: sender == record.participant ? nil : "member left")))
            }
            return actions
        }
    }

    /// Ends, on behalf of a member that left, its suspensions that still hold the group.
    ///
    /// Every remaining member sends the same end notice (effective one lead ahead, so everyone has
    /// it before it applies); the first in the channel's total order ends the suspension
    /// identically everywhere, the others are ignored. It is retained under the member's key, so
    /// a later joiner does not inherit a suspension whose owner is gone; a member whose end lost
    /// the race sends the winning end again once it is delivered, because its own, ordered later,
    /// is what the relay keeps for later joiners.
    private mutating func endSuspensions(of member: PlaybackParticipantID, now: ReferenceTime) -> [CoordinatorAction] {
        guard member != participant else { return [] }
        var actions: [CoordinatorAction] = []
        for id in suspensionOrder {
            guard let record = suspensions[id], record.participant == member, record.end == nil, !record.endReported,
                now < record.deadline
            else { continue }
            let notice = SuspensionNotice(
                id: id, phase: .end, reason: record.reason, effectiveAt: max(now + lead, record.begin), waits: record.counted,
                timeout: record.timeout, sentAt: now, history: history())
            actions.append(.send(.suspension(notice), retainKey: CoordinationMessage.suspensionKey(for: member)))
            behalfEnds.append((id, notice.effectiveAt))
        }
        return actions
    }

    /// A presence report now (name, delay, preroll, item), whatever the schedule: a member about
    /// to propose right after joining sends it first, so the others know its name when the
    /// proposal arrives (one sender's messages arrive in order).
    public mutating func presenceReport(now: ReferenceTime) -> [CoordinatorAction] {
        return [.send(.presence(makePresenceReport(now: now)), retainKey: nil)]
    }

    /// The local member's presence report now; it carries a pending ``noteCaughtUp(offBy:)`` once.
    private mutating func makePresenceReport(now: ReferenceTime) -> PresenceReport {
        defer { pendingCaughtUp = nil }
        return PresenceReport(
            sentAt: now, observedDelay: observedDelay, preroll: configuration.preroll, item: localItem, name: name,
            items: items.isEmpty ? nil : items, oneShot: oneShot ? true : nil, caughtUp: pendingCaughtUp)
    }

    /// The local player jumped back into step after being `seconds` off the group's timeline
    /// (negative: behind), far more than any ordinary correction: the next presence report tells the
    /// others, whose coordinators report a ``PlaybackEvent/EventType/caughtUp`` event.
    public mutating func noteCaughtUp(offBy seconds: Double) {
        guard seconds.isFinite else { return }
        pendingCaughtUp = seconds
    }

    /// What this member knows of `member` from its presence reports: whether one arrived, and
    /// whether it said it only sends a command or looks.
    public func presence(of member: PlaybackParticipantID) -> (reported: Bool, oneShot: Bool) {
        (reports[member] != nil || oneShotMembers.contains(member), oneShotMembers.contains(member))
    }

    // MARK: Time

    /// Advances time: sends presence when due, reports suspensions that timed out, forgets old ones.
    public mutating func tick(now: ReferenceTime) -> [CoordinatorAction] {
        var actions: [CoordinatorAction] = []
        if nextPresence.map({ now >= $0 }) ?? true {
            // Report quickly after joining (the lead needs the others' delays), then settle.
            presenceCount += 1
            let divisor = presenceCount < 8 ? Int64(1) << (8 - presenceCount) : 1
            nextPresence = now + max(configuration.presenceInterval / divisor, .milliseconds(20))
            actions.append(.send(.presence(makePresenceReport(now: now)), retainKey: nil))
        }
        for id in suspensionOrder {
            guard var record = suspensions[id], !record.endReported, record.end == nil, now >= record.deadline else { continue }
            record.endReported = true
            suspensions[id] = record
            actions.append(.event(PlaybackEvent(
                type: .suspensionEnded, realtime: 0, player: label(participant), originator: record.participant, originatorName: names[record.participant], item: state?.item,
                referenceTime: record.deadline.seconds, reason: record.reason.description, suspension: record.id,
                waits: record.counted, timedOut: true)))
        }
        if let state, let end = segments().last, end.ended {
            if now < end.start {
                // The end is ahead again (a wait before it, learnt after it was reported): say it when it
                // comes (at the latest at the next tick after this one).
                reportedEnd = nil
            } else if !isReported(end.start) {
                reportedEnd = (Self.endKey(state), end.start)
                actions.append(.event(PlaybackEvent(
                    type: .itemEnded, realtime: 0, player: label(participant), item: state.item, itemTime: end.itemTime,
                    rate: 0, referenceTime: end.start.seconds, revision: state.revision)))
            }
        }
        actions += tickQueue(now: now)
        actions += proposeTransitionIfDue(now: now)
        actions += assumeTransitionIfLate(now: now)
        let horizon = now - .seconds(60)
        foldWaits(before: horizon)
        ownPending.removeAll { $0.begin + $0.timeout < horizon }
        // A wait the timeline still needs (after the anchor, while playing) stays until it is folded.
        let base = assumedFrom ?? state
        let anchor = base?.rate ?? 0 > 0 ? base?.anchorReferenceTime : nil
        suspensionOrder.removeAll { id in
            guard let record = suspensions[id], record.waitEnd < horizon else { return false }
            if record.counted, let anchor, record.waitEnd > anchor { return false }
            suspensions[id] = nil
            behalfEnds.removeAll { $0.id == id }
            return true
        }
        return actions
    }

    /// What ``reportedEnd`` compares: the state whose end was reported.
    private static func endKey(_ state: PlaybackState) -> String {
        "\(state.revision) \(state.item) \(state.entry ?? "")"
    }

    /// Whether the end at `instant` of the state in force was reported already (``reportedEnd``).
    private func isReported(_ instant: ReferenceTime) -> Bool {
        guard let reportedEnd, let state else { return false }
        return reportedEnd.key == Self.endKey(state) || reportedEnd.at == instant
    }

    /// The next reference instant at which ``tick(now:)`` has something to do.
    public var nextTickDeadline: ReferenceTime? {
        var deadline = nextPresence
        for record in suspensions.values where !record.endReported && record.end == nil {
            deadline = min(deadline ?? record.deadline, record.deadline)
        }
        if let end = segments().last, end.ended, !isReported(end.start) {
            deadline = min(deadline ?? end.start, end.start)
        }
        for due in [queueReplica.nextDeadline, transitionDue, assumeDue] {
            if let due { deadline = min(deadline ?? due, due) }
        }
        return deadline
    }

    // MARK: Commands to the local player

    /// The local player's commands for what changed in the group's timeline since the last ones.
    ///
    /// With `now`, segments that are over by then are left out: the player gets the one in force
    /// and what follows (commands are absolute, and the first replaces whatever was scheduled
    /// after it), so a late joiner or a member that learns of a past wait is told once where to
    /// be, not walked through the past one command at a time, each a frame or a seek.
    mutating func announce(now: ReferenceTime? = nil) -> [CoordinatorAction] {
        guard let state, !isDetached, joinedSelf || !configuration.holdsCommandsUntilJoined, !holdsForQueueAnswer else { return [] }
        guard state.item == localItem else {
            announced = []
            announcedRevision = nil
            guard ignoredRevision != state.revision else { return [] }
            ignoredRevision = state.revision
            return [.event(PlaybackEvent(
                type: .commandIgnored, realtime: 0, player: label(participant), originator: state.originator, originatorName: names[state.originator], item: state.item,
                revision: state.revision, detail: "local item \(localItem ?? "none")"))]
        }
        let current = segments()
        var actions: [CoordinatorAction] = []
        var from = 0
        var backfill: PlaybackCommand.Kind?
        if announcedRevision == state.revision {
            while from < current.count, from < announced.count, current[from].sameMotion(as: announced[from]) { from += 1 }
            // A command replaces only what is scheduled at or after its instant: when a segment
            // the player was given moved later or went away (a wait extended by another
            // suspension, or no longer counted), the player is told what holds at its instant.
            if from < announced.count, from >= current.count || current[from].start > announced[from].start {
                let instant = announced[from].start
                backfill = Self.kind(of: current[current.lastIndex(where: { $0.start <= instant }) ?? 0], at: instant)
            }
            if from < current.count { from = max(from, Self.segmentInForce(current, at: now)) }
        } else {
            from = Self.segmentInForce(current, at: now)
            let first = current[from]
            let before = announced.last(where: { $0.start <= first.start }) ?? announced.first
            if before.map({ abs($0.itemTime(at: first.start) - first.itemTime) > 1e-6 }) ?? true {
                actions.append(.command(command(.seek(itemTime: first.itemTime, referenceTime: first.start, completionDueDate: first.start), state)))
            }
        }
        if let backfill = backfill.map({ command($0, state) }), from >= current.count || backfill.referenceTime < current[from].start {
            actions.append(.command(backfill))
        }
        for segment in current[from...] {
            actions.append(.command(command(Self.kind(of: segment, at: segment.start), state)))
        }
        announced = current
        announcedRevision = state.revision
        return actions
    }

    /// The command that puts a player on `segment`'s motion from `instant` on.
    private static func kind(of segment: TimelineSegment, at instant: ReferenceTime) -> PlaybackCommand.Kind {
        if segment.waiting {
            .buffer(itemTime: segment.itemTime, referenceTime: instant, completionDueDate: segment.waitEnd ?? instant)
        } else if segment.rate > 0 {
            .play(itemTime: segment.itemTime(at: instant), referenceTime: instant, rate: segment.rate)
        } else {
            .pause(itemTime: segment.itemTime, referenceTime: instant)
        }
    }

    /// The index of the segment in force at `now` (0 without `now`, or before the second segment).
    private static func segmentInForce(_ segments: [TimelineSegment], at now: ReferenceTime?) -> Int {
        guard let now else { return 0 }
        var index = 0
        while index + 1 < segments.count, segments[index + 1].start <= now { index += 1 }
        return index
    }

    private func command(_ kind: PlaybackCommand.Kind, _ state: PlaybackState) -> PlaybackCommand {
        PlaybackCommand(kind: kind, originator: state.originator, originatorName: names[state.originator], expectedItemIdentifier: state.item, revision: state.revision)
    }

    /// How events name a member: its announced name when known, its channel id otherwise.
    public func label(_ member: PlaybackParticipantID) -> PlaybackParticipantID {
        names[member].map { PlaybackParticipantID($0) } ?? member
    }

    // MARK: Local API

    /// The playing rates a group may be set to (0, paused, is allowed besides): 1/16 to 16, what
    /// every player coplay drives can present (Chromium's `playbackRate` range; mpv's audio
    /// time-stretching is useless beyond it).
    public static let playingRates: ClosedRange<Double> = 0.0625...16

    /// Where a proposal made now is anchored: one lead ahead, and never before the current state's
    /// anchor. A command given while the previous one has not yet taken effect (a pause right
    /// after a seek) follows it instead of undoing it: it starts from where the players will be
    /// once the previous one applies, never from a position they would never show.
    func proposalAnchor(now: ReferenceTime) -> ReferenceTime {
        max(now + lead, state?.anchorReferenceTime ?? now)
    }

    /// Proposes a rate change (0 pauses; the previous intended rate resumes on `play`).
    ///
    /// - Parameters:
    ///   - rate: the new rate: 0 or within ``playingRates``.
    ///   - now: the reference time now.
    /// - Returns: the message to send; the change applies when the channel delivers it back.
    public mutating func proposeRate(_ rate: Double, now: ReferenceTime) throws -> [CoordinatorAction] {
        guard rate == 0 || Self.playingRates.contains(rate) else { throw PlaybackCoordinatorError.invalidRate(rate) }
        let anchor = proposalAnchor(now: now)
        let label: CommandLabel
        let next: PlaybackState
        if let state {
            label = rate == 0 ? .pause : (state.rate == 0 ? .play : .rate)
            next = PlaybackState(
                item: state.item, rate: rate, anchorItemTime: max(0, effectiveItemTime(at: anchor) ?? 0),
                anchorReferenceTime: anchor, originator: participant, intendedRate: rate > 0 ? rate : state.intendedRate,
                duration: duration(of: state.item), entry: state.entry)
        } else if let entry = queue.playOrder.first(where: { $0.item == localItem }) ?? (localItem == nil ? queue.playOrder.first : nil) {
            // The first play of a queue: the local item's entry, or the first entry.
            if localItem == nil { localItem = entry.item }
            label = rate == 0 ? .pause : .play
            next = PlaybackState(
                item: entry.item, rate: rate, anchorItemTime: 0, anchorReferenceTime: anchor, originator: participant,
                duration: entry.duration ?? duration(of: entry.item), entry: entry.id)
        } else {
            guard let localItem else { throw PlaybackCoordinatorError.noItem }
            label = rate == 0 ? .pause : .play
            next = PlaybackState(
                item: localItem, rate: rate, anchorItemTime: 0, anchorReferenceTime: anchor, originator: participant,
                duration: duration(of: localItem))
        }
        return [.send(.state(StateProposal(state: next, command: label, sentAt: now)), retainKey: CoordinationMessage.stateKey)]
    }

    /// Proposes `play` at the intended rate.
    public mutating func proposePlay(now: ReferenceTime) throws -> [CoordinatorAction] {
        try proposeRate(state?.intendedRate ?? 1, now: now)
    }

    /// Proposes a seek to `itemTime`, keeping the current rate.
    ///
    /// - Throws: ``PlaybackCoordinatorError/invalidItemTime(_:)`` for a negative or non-finite time,
    ///   ``PlaybackCoordinatorError/seekPastEnd(_:duration:)`` past the item's known duration.
    public mutating func proposeSeek(to itemTime: Double, now: ReferenceTime) throws -> [CoordinatorAction] {
        guard itemTime.isFinite, itemTime >= 0 else { throw PlaybackCoordinatorError.invalidItemTime(itemTime) }
        guard let item = state?.item ?? localItem else { throw PlaybackCoordinatorError.noItem }
        let duration = duration(of: item)
        if let duration, itemTime > duration { throw PlaybackCoordinatorError.seekPastEnd(itemTime, duration: duration) }
        let next = PlaybackState(
            item: item, rate: state?.rate ?? 0, anchorItemTime: itemTime, anchorReferenceTime: proposalAnchor(now: now),
            originator: participant, intendedRate: state?.intendedRate, duration: duration, entry: state?.entry)
        return [.send(.state(StateProposal(state: next, command: .seek, sentAt: now)), retainKey: CoordinationMessage.stateKey)]
    }

    /// Loads `identifier` locally and proposes it to the group, starting at `itemTime` and keeping
    /// the current rate.
    public mutating func proposeItem(_ identifier: String, at itemTime: Double = 0, now: ReferenceTime) throws -> [CoordinatorAction] {
        guard itemTime.isFinite, itemTime >= 0 else { throw PlaybackCoordinatorError.invalidItemTime(itemTime) }
        let duration = duration(of: identifier)
        if let duration, itemTime > duration { throw PlaybackCoordinatorError.seekPastEnd(itemTime, duration: duration) }
        // The proposer's player loads it, unless this member has no copy of it (its player would
        // ignore the commands: it sits the item out instead).
        if canPresent?(identifier) ?? true { localItem = identifier }
        let next = PlaybackState(
            item: identifier, rate: state?.rate ?? 0, anchorItemTime: itemTime, anchorReferenceTime: proposalAnchor(now: now),
            originator: participant, intendedRate: state?.intendedRate, duration: duration)
        return [.send(.state(StateProposal(state: next, command: .item, sentAt: now)), retainKey: CoordinationMessage.stateKey)]
    }

    /// Tells the core which item the local player has loaded (without proposing it); commands for
    /// it flow again if it is the group's item.
    public mutating func setLocalItem(_ identifier: String?) -> [CoordinatorAction] {
        guard identifier != localItem else { return [] }
        localItem = identifier
        announced = []
        announcedRevision = nil
        ignoredRevision = nil
        return announce()
    }

    /// Gives the local player the current state again (for example after it reloaded).
    public mutating func reapplyCurrentState() -> [CoordinatorAction] {
        announced = []
        announcedRevision = nil
        ignoredRevision = nil
        return announce()
    }

    /// Begins a local suspension; returns its identifier and the message to send.
    ///
    /// The group waits (from `now + lead`) when ``waitsOut(_:)`` says so for `reason` now and fewer
    /// than ``CoordinatorConfiguration/maximumWaitingParticipants`` already make it wait; at most
    /// for the timeout. A reason in ``SuspensionReason/detachingReasons`` detaches the local player
    /// at once: no commands reach it until the last such suspension ends.
    public mutating func beginSuspension(_ reason: SuspensionReason, now: ReferenceTime) -> (id: String, actions: [CoordinatorAction]) {
        suspensionCounter += 1
        let id = "\(participant.rawValue)#\(suspensionCounter)"
        let waits = waitsOut(reason)
        localSuspensions.append((id, reason, waits))
        let notice = SuspensionNotice(
            id: id, phase: .begin, reason: reason, effectiveAt: now + lead,
            waits: waits, timeout: configuration.suspensionTimeout, sentAt: now, history: history())
        ownPending.append(SuspensionHistory.Entry(
            id: id, participant: participant, reason: reason, begin: notice.effectiveAt, end: nil,
            timeout: notice.timeout, waits: waits))
        return (id, [.send(.suspension(notice), retainKey: CoordinationMessage.suspensionKey(for: participant))])
    }

    /// Whether a suspension for `reason` begun now makes the group wait: `reason` is one of
    /// ``CoordinatorConfiguration/waitingReasons`` and the group has no more members than the
    /// reason's ``CoordinatorConfiguration/participantLimits`` entry, if it has one.
    ///
    /// The suspending member decides, when it begins the suspension, and says so in its notice, so
    /// every member holds the same interval; changing the configuration later does not change a
    /// suspension already begun.
    public func waitsOut(_ reason: SuspensionReason) -> Bool {
        guard configuration.waitingReasons.contains(reason) else { return false }
        guard let limit = configuration.participantLimits[reason] else { return true }
        return max(members.count, 1) <= limit
    }

    /// Whether the local player is detached: a local suspension for one of
    /// ``SuspensionReason/detachingReasons`` is open, so commands are withheld from it.
    public var isDetached: Bool { localSuspensions.contains { $0.reason.detachesPlayer } }

    /// Ends a local suspension, optionally proposing a new item time (sent as a seek after it).
    ///
    /// Ending the last suspension that detached the local player gives the player the group's
    /// current state (a seek to where the group is, then its motion), as ``reapplyCurrentState()``.
    public mutating func endSuspension(_ id: String, proposing itemTime: Double? = nil, now: ReferenceTime) throws -> [CoordinatorAction] {
        guard let index = localSuspensions.firstIndex(where: { $0.id == id }) else {
            throw PlaybackCoordinatorError.unknownSuspension(id)
        }
        // Checked before anything changes: the end goes out whatever the proposal, and a time past
        // the item's end proposes the end (a throw after the suspension was removed here would
        // leave the group waiting for an end that is never sent).
        if let itemTime, !itemTime.isFinite || itemTime < 0 { throw PlaybackCoordinatorError.invalidItemTime(itemTime) }
        let itemTime = itemTime.map { time in (state?.item ?? localItem).flatMap(duration(of:)).map { min(time, $0) } ?? time }
        let wasDetached = isDetached
        let (_, reason, waits) = localSuspensions.remove(at: index)
        let effective = now + lead
        let notice = SuspensionNotice(
            id: id, phase: .end, reason: reason, effectiveAt: effective, waits: waits,
            timeout: configuration.suspensionTimeout, proposedItemTime: itemTime, sentAt: now, history: history())
        if let pending = ownPending.firstIndex(where: { $0.id == id }) {
            ownPending[pending].end = max(effective, ownPending[pending].begin)
        } else if let record = suspensions[id] {
            ownPending.append(SuspensionHistory.Entry(
                id: id, participant: participant, reason: reason, begin: record.begin, end: max(effective, record.begin),
                timeout: record.timeout, waits: record.counted))
        }
        var actions: [CoordinatorAction] = [.send(.suspension(notice), retainKey: CoordinationMessage.suspensionKey(for: participant))]
        if wasDetached && !isDetached { actions += reapplyCurrentState() }
        if let itemTime { actions += try proposeSeek(to: itemTime, now: now) }
        return actions
    }

    /// Identifiers of the local suspensions not yet ended.
    public var openSuspensions: [String] { localSuspensions.map(\.id).sorted() }

    /// Why the local participant is suspended now: the reasons of its suspensions not yet ended, in
    /// the order they began (empty when it takes part in coordinated playback). Like
    /// `AVPlaybackCoordinator.suspensionReasons`; a suspension counts from the local
    /// ``beginSuspension(_:now:)`` on, before the channel delivered it.
    public var suspensionReasons: [SuspensionReason] { localSuspensions.map(\.reason) }

    /// The other members and why each is suspended, sorted by id. Like
    /// `AVPlaybackCoordinator.otherParticipants`: a member is listed from its `joined` event until
    /// its `left`; its ``CoordinatedPlaybackParticipant/suspensionReasons`` are those of its suspensions
    /// whose begin the channel delivered and whose end it did not (a suspension that timed out
    /// still counts: the member has not ended it, the group only stopped waiting for it).
    public var otherParticipants: [CoordinatedPlaybackParticipant] {
        members.subtracting([participant]).sorted().map { member in
            CoordinatedPlaybackParticipant(
                id: member, name: names[member],
                suspensions: (openSuspensionsByMember[member] ?? []).map { CoordinatedPlaybackParticipant.Suspension(id: $0.id, reason: $0.reason) })
        }
    }

    /// What the group knows of suspension `id`: `nil` until the channel delivered its begin notice
    /// (and again about a minute after its wait ended, when the core forgets it).
    ///
    /// A local suspension shows up here only once the channel has ordered its begin notice, so a
    /// non-nil status is the confirmation that the whole group has it; `end` likewise appears once
    /// the end notice has been ordered.
    public func suspensionStatus(_ id: String) -> SuspensionStatus? {
        guard let record = suspensions[id] else { return nil }
        return SuspensionStatus(
            id: record.id, participant: record.participant, reason: record.reason, begin: record.begin,
            deadline: record.deadline, end: record.end, waits: record.counted)
    }
}
