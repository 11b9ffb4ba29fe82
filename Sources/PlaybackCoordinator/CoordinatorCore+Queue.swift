/// The group's queue in the core: edits, the queue commands (next, previous, jump) and the
/// transition from one entry to the next on the shared clock.
///
/// A transition is an ordinary state, anchored at the instant the playing entry ends, at item time
/// 0 of the entry the queue plays next. Every member computes that instant from the same state and
/// waits, and proposes the same state a lead (plus ``transitionNotice``) before it; the first
/// proposal in the channel's order applies and the others change nothing
/// (``StateProposal/follows``). So the group moves on as if the program were one timeline, without
/// any member having to be there: a member that joins later reads the retained state.
extension CoordinatorCore {
    /// How much earlier than the lead a member proposes the transition at an entry's end.
    public static let transitionNotice: Duration = .milliseconds(500)

    /// The group's queue as this member has it (empty until it arrived, see ``hasQueue``).
    public var queue: PlayQueue { queueReplica.queue }

    /// Whether this member has the group's queue: it joined an empty session, or a member answered
    /// its request. Queue commands need it.
    public var hasQueue: Bool { queueReplica.isComplete }

    /// The entry the group plays, if it plays from the queue and the entry is still queued.
    public var currentEntry: QueueEntry? {
        state?.entry.flatMap { queue.entry($0) }
    }

    // MARK: Commands

    /// Proposes an edit of the queue; it applies when the channel delivers it back.
    public func proposeQueueEdit(_ edit: QueueEdit, now: ReferenceTime) -> [CoordinatorAction] {
        queueReplica.send(edit, now: now)
    }

    /// Proposes moving the group to the next entry (the first, before anything played).
    ///
    /// - Throws: ``PlaybackCoordinatorError/queueNotReceived`` before the queue arrived,
    ///   ``PlaybackCoordinatorError/noEntry(_:)`` after the last entry when repeat is not `all`.
    public mutating func proposeNext(now: ReferenceTime) throws -> [CoordinatorAction] {
        guard hasQueue else { throw PlaybackCoordinatorError.queueNotReceived }
        guard let entry = queue.entryForNext(from: state?.entry) else {
            throw PlaybackCoordinatorError.noEntry(queue.isEmpty ? "the queue is empty" : "there is no entry after the last one (repeat is \(queue.repeatMode.rawValue))")
        }
        return try proposeEntry(entry, command: .next, now: now)
    }

    /// Proposes moving the group to the previous entry.
    public mutating func proposePrevious(now: ReferenceTime) throws -> [CoordinatorAction] {
        guard hasQueue else { throw PlaybackCoordinatorError.queueNotReceived }
        guard let entry = queue.entryForPrevious(from: state?.entry) else {
            throw PlaybackCoordinatorError.noEntry(queue.isEmpty ? "the queue is empty" : "there is no entry before the first one (repeat is \(queue.repeatMode.rawValue))")
        }
        return try proposeEntry(entry, command: .previous, now: now)
    }

    /// Proposes moving the group to the entry at 1-based `position` of the play order.
    public mutating func proposeJump(toPosition position: Int, now: ReferenceTime) throws -> [CoordinatorAction] {
        guard hasQueue else { throw PlaybackCoordinatorError.queueNotReceived }
        guard let entry = queue.entry(atPosition: position) else {
            throw PlaybackCoordinatorError.noEntry("there is no entry \(position): the queue has \(queue.entries.count)")
        }
        return try proposeEntry(entry, command: .jump, now: now)
    }

    /// Proposes playing `entry` from its start, keeping the group's motion (playing stays playing
    /// at the same rate; paused stays paused).
    private mutating func proposeEntry(_ entry: QueueEntry, command: CommandLabel, now: ReferenceTime) throws -> [CoordinatorAction] {
        if let problem = itemUnavailability(entry.item) { throw problem }
        if canPresent?(entry.item) == true || items.contains(where: { $0.item == entry.item }) { localItem = entry.item }
        let next = PlaybackState(
            item: entry.item, rate: state?.rate ?? 0, anchorItemTime: 0, anchorReferenceTime: proposalAnchor(now: now),
            originator: participant, intendedRate: state?.intendedRate, duration: entry.duration ?? duration(of: entry.item),
            entry: entry.id)
        return [.send(.state(StateProposal(state: next, command: command, sentAt: now)), retainKey: CoordinationMessage.stateKey)]
    }

    // MARK: Transitions

    /// The instant the group's timeline reaches the state's own duration (waits included), which
    /// every member computes alike: only the state's duration counts here, not a member's file.
    func groupEnd() -> ReferenceTime? {
        guard let state, let duration = state.duration, let last = segments(endingAt: duration).last, last.ended else { return nil }
        return last.start
    }

    /// When this member proposes the transition at the end of the playing entry, if it has one
    /// to propose.
    var transitionDue: ReferenceTime? {
        unhandledEnd(handled: proposedTransition).map { $0 - lead - Self.transitionNotice }
    }

    /// The group's end of the queue entry it plays (while playing, with the queue known), unless
    /// `handled` already names this state's revision and that end.
    private func unhandledEnd(handled: (revision: UInt64, end: ReferenceTime)?) -> ReferenceTime? {
        guard let state, state.entry != nil, state.rate > 0, hasQueue, let end = groupEnd() else { return nil }
        if let handled, handled.revision == state.revision, handled.end == end { return nil }
        return end
    }

    /// Proposes the next entry at the playing entry's end, once due.
    mutating func proposeTransitionIfDue(now: ReferenceTime) -> [CoordinatorAction] {
        guard let due = transitionDue, now >= due, let state, let entry = state.entry, let end = groupEnd() else { return [] }
        proposedTransition = (state.revision, end)
        guard let following = transition(originator: participant) else {
            transitionAwaitsQueue = true
            return []
        }
        transitionAwaitsQueue = false
        return [.send(
            .state(StateProposal(state: following, command: .advance, sentAt: now, follows: entry)),
            retainKey: CoordinationMessage.stateKey)]
    }

    // MARK: Transitions not ordered in time

    /// When this member plays on by the transition at the playing entry's end if none was ordered
    /// by then: a lead before the end, the latest a timely transition arrives (every member proposes
    /// it ``transitionNotice`` earlier); nil once looked at for this state and end.
    var assumeDue: ReferenceTime? {
        unhandledEnd(handled: assumeChecked).map { $0 - lead }
    }

    /// Plays on by the transition every member proposes at the playing entry's end when none was
    /// ordered a lead before it: this member is cut off from the relay (a restart, a failover, the
    /// network), as it plays on through an entry while cut off, so the group's program stays one
    /// timeline for it. ``state`` becomes the transition (keeping the ordered revision), and the
    /// ordered state is kept in ``assumedFrom``: proposals are judged against it as everywhere
    /// else; the transition, once ordered, confirms what the member shows, and anything else
    /// ordered replaces it (``accept(_:from:sequence:now:)``). Not into an entry this member has no
    /// copy of (it sits those out when they are ordered), nor past the queue's end.
    ///
    /// Found by an exploratory run (a relay SIGKILLed and restarted across an entry's end): the
    /// members cut off held the entry's last frame until they reconnected, up to two seconds, and
    /// then jumped into the next one, each at its own moment.
    mutating func assumeTransitionIfLate(now: ReferenceTime) -> [CoordinatorAction] {
        guard let due = assumeDue, now >= due, let ordered = state, let end = groupEnd() else { return [] }
        assumeChecked = (ordered.revision, end)
        // Only for an end that has not long passed: one this member learns of more than a lead
        // after it (it joined, or learnt the state, later) was decided by the queue as it was then,
        // not as it is now (group model seed 3164); within a lead the transition is merely late.
        guard now < end + lead else { return [] }
        guard var following = transition(originator: participant),
            following.item == localItem || canPresent?(following.item) == true || items.contains(where: { $0.item == following.item })
        else { return [] }
        following.revision = ordered.revision
        if assumedFrom == nil { assumedFrom = ordered }
        assumedChain.append(following)
        state = following
        // Announced as a new state (it keeps the ordered revision, but it is not that state's
        // timeline moved): the player is told where to be from its anchor on, nothing before.
        announcedRevision = nil
        var actions: [CoordinatorAction] = []
        if ordered.item != following.item || ordered.entry != following.entry {
            actions.append(changedItem(to: following, revision: following.revision, by: .advance, from: ordered.item))
        }
        return actions + followEntryAvailability(now: now) + announce(now: now)
    }

    /// After a wait was ordered or learnt: the assumed transitions hold only while each is still at
    /// the end of the state before it (a wait moves the end later); otherwise the member goes back
    /// to the ordered state, and assumes again at its new end if still nothing is ordered.
    mutating func revalidateAssumption(now: ReferenceTime) -> [CoordinatorAction] {
        guard let ordered = assumedFrom else { return [] }
        let shown = state
        state = ordered
        var holds = true
        for link in assumedChain {
            guard groupEnd() == link.anchorReferenceTime else {
                holds = false
                break
            }
            state = link
        }
        if holds { return [] }
        state = ordered
        assumedFrom = nil
        assumedChain = []
        assumeChecked = nil
        announcedRevision = nil
        guard let shown, shown.item != ordered.item || shown.entry != ordered.entry else { return [] }
        return [changedItem(to: ordered, revision: ordered.revision, by: nil, from: shown.item)] + followEntryAvailability(now: now)
    }

    /// The state the group moves to at the playing entry's end, by this member's state and queue.
    private func transition(originator: PlaybackParticipantID) -> PlaybackState? {
        guard let state, let entry = state.entry, let end = groupEnd(), let next = queue.entryAfterEnd(of: entry) else { return nil }
        return PlaybackState(
            item: next.item, rate: state.rate, anchorItemTime: 0, anchorReferenceTime: end, originator: originator,
            intendedRate: state.intendedRate, duration: next.duration ?? duration(of: next.item), entry: next.id)
    }

    /// What an unauthenticated transition (from a member without control, where only hosts
    /// control) applies: the transition this member computes itself, when the proposal names it
    /// (the entry it follows and its end, the next entry and its item); otherwise nothing. A
    /// member without a state or the queue cannot check it and takes nothing (a joiner starts
    /// from the last signed state and moves on by its own transitions).
    func authenticTransition(_ proposal: StateProposal, from sender: PlaybackParticipantID) -> StateProposal? {
        guard proposal.command == .advance, state != nil, hasQueue, transitionApplies(proposal),
            let following = transition(originator: sender),
            following.entry == proposal.state.entry, following.item == proposal.state.item
        else { return nil }
        return StateProposal(state: following, command: .advance, sentAt: proposal.sentAt, follows: proposal.follows)
    }

    /// Whether a transition proposal applies: the group plays the entry it follows, and the
    /// group's end of it (with the waits known at this point of the channel's order) is its
    /// anchor. A member without a state takes it (a joiner reading the retained state).
    func transitionApplies(_ proposal: StateProposal) -> Bool {
        guard let state else { return true }
        guard let follows = proposal.follows, state.entry == follows, let end = groupEnd() else { return false }
        return end == proposal.state.anchorReferenceTime
    }

    /// After this member's own transition (or restatement) was ordered and changed nothing: the
    /// relay now keeps it as the retained state, which is not the group's state unless it says the
    /// same (a duplicate of the transition that applied). Sends the group's state again, so a
    /// joiner starts from the right one.
    mutating func restateIfReplaced(by proposal: StateProposal, from sender: PlaybackParticipantID, now: ReferenceTime) -> [CoordinatorAction] {
        guard sender == participant, let state, !state.sameTimeline(as: proposal.state) else { return [] }
        return [.send(.state(StateProposal(state: state, command: .restate, sentAt: now)), retainKey: CoordinationMessage.stateKey)]
    }

    /// Why the group's entry changed, for ``PlaybackEvent/EventType/itemChanged``.
    /// The member moved to `next`'s item or entry (from `previous`): its `itemChanged` event, with
    /// the reason `command` gives (none for a return to the ordered state, `command` nil) and the
    /// originator unless the change was automatic (an entry's end, or that return); the local item
    /// follows when this member can present it.
    mutating func changedItem(
        to next: PlaybackState, revision: UInt64, by command: CommandLabel?, from previous: String?
    ) -> CoordinatorAction {
        let automatic = command == nil || command == .advance
        if next.item != localItem, canPresent?(next.item) == true { localItem = next.item }
        return .event(PlaybackEvent(
            type: .itemChanged, realtime: 0, player: label(participant), originator: automatic ? nil : next.originator,
            originatorName: automatic ? nil : names[next.originator], item: next.item,
            referenceTime: next.anchorReferenceTime.seconds, revision: revision, reason: command.flatMap(Self.changeReason),
            detail: previous.map { "from \($0)" }, entry: next.entry))
    }

    static func changeReason(_ command: CommandLabel) -> String? {
        switch command {
        case .advance: "end"
        case .next, .previous, .jump, .item: command.rawValue
        case .play, .pause, .seek, .rate, .restate: nil
        }
    }

    // MARK: Channel

    mutating func receiveQueueEdit(
        _ notice: QueueEditNotice, from sender: PlaybackParticipantID, sequence: UInt64, now: ReferenceTime
    ) -> [CoordinatorAction] {
        queueReplica.receive(edit: notice.edit, from: sender, sequence: sequence, playing: (assumedFrom ?? state)?.entry, now: now)
        if transitionAwaitsQueue, hasQueue {
            // An entry may follow now: propose the transition after all (group model seed 4160: the
            // queue was cleared while an entry played and refilled before its end; the member that
            // had found nothing to propose never proposed, and a joiner stopped at that end).
            proposedTransition = nil
            transitionAwaitsQueue = false
        }
        var actions = tickQueue(now: now)
        if hasQueue { actions += queueEvent(.queueChanged, originator: sender, detail: Self.describe(notice.edit), now: now) }
        return actions
    }

    /// The replica's work when due (answers, the retained copy), and the player's commands held
    /// for the queue if it started from the retained copy meanwhile (nobody answered).
    mutating func tickQueue(now: ReferenceTime) -> [CoordinatorAction] {
        queueReplica.tick(now: now, members: members) + releaseHeldCommands(now: now)
    }

    /// The player's first commands, held while this joiner's state was a retained transition it
    /// could not judge (``holdsForQueueAnswer``), once the queue is in.
    mutating func releaseHeldCommands(now: ReferenceTime) -> [CoordinatorAction] {
        guard holdsForQueueAnswer, hasQueue else { return [] }
        holdsForQueueAnswer = false
        return followEntryAvailability(now: now) + announce(now: now)
    }

    /// The queue arrived (an answer, or the retained copy): take the answer's state if it is not
    /// the one this member started from, and replay on it the proposals and queue edits ordered
    /// after the request, each in its turn.
    ///
    /// An edit's turn matters: a removal of the playing entry keeps where the group goes on, and
    /// which entry played is what the replayed proposals say, not what this member believed when
    /// the edit arrived (group model seed 2459: a joiner that had read a transition the group then
    /// replaced marked the wrong entry as removed while playing, and its queue differed).
    mutating func queueReceived(now: ReferenceTime) -> [CoordinatorAction] {
        let actions = queueEvent(.queueChanged, originator: nil, detail: "received", now: now)
        let log = joinLog
        joinLog = []
        let held = statesAtOwnRequests
        statesAtOwnRequests = [:]
        guard let (answered, through, edits) = queueReplica.takeAnsweredState(), let answered else {
            return actions + releaseHeldCommands(now: now)
        }
        if let mine = held[through], mine.revision == answered.revision, mine.sameTimeline(as: answered) {
            // This member held the group's state at its request: what it processed since, in the
            // order, is the group's. A replay would judge the proposals against waits ordered after
            // them (group model seed 23984: a transition replayed after a wait that moved the end
            // no longer applied, and the joiner stayed on the entry before).
            for edit in edits { queueReplica.applyAnswered(edit.edit, playing: edit.playing) }
            return actions + releaseHeldCommands(now: now)
        }
        let before = state
        state = answered
        var pending = edits[...]
        let applyEdits = { (core: inout CoordinatorCore, before: UInt64) in
            while let edit = pending.first, edit.sequence < before {
                core.queueReplica.applyAnswered(edit.edit, playing: (core.assumedFrom ?? core.state)?.entry)
                pending.removeFirst()
            }
        }
        for entry in log where entry.sequence > through {
            applyEdits(&self, entry.sequence)
            _ = accept(entry.proposal, from: entry.sender, sequence: entry.sequence, now: now)
        }
        applyEdits(&self, .max)
        if let before, let after = state, before.revision == after.revision, before.sameTimeline(as: after) {
            return actions + releaseHeldCommands(now: now)
        }
        holdsForQueueAnswer = false
        if let item = state?.item, item != localItem, canPresent?(item) == true { localItem = item }
        announced = []
        announcedRevision = nil
        return actions + followEntryAvailability(now: now) + announce(now: now)
    }

    // MARK: A missing entry

    /// Whether the group plays a queue entry whose item this member cannot present.
    var lacksCurrentEntry: Bool {
        guard let state, state.entry != nil, let canPresent else { return false }
        return state.item != localItem && !canPresent(state.item)
    }

    /// Suspends this member while the group plays a queue entry it has no copy of, and ends the
    /// suspension once the group plays an item it has (``CoordinatorConfiguration/suspendsWhileEntryMissing``).
    ///
    /// The suspension (``SuspensionReason/coordinatedPlaybackNotPossible``) detaches the local
    /// player, so it gets no command for the missing entry (and says nothing about ignoring one),
    /// and does not make the group wait. Ending it gives the player the group's state again: the
    /// state that moved the group to an entry it has is anchored at least a lead ahead, so the
    /// player shows that entry's first frame with everyone else.
    mutating func followEntryAvailability(now: ReferenceTime) -> [CoordinatorAction] {
        guard configuration.suspendsWhileEntryMissing, joinedSelf || !configuration.holdsCommandsUntilJoined, !holdsForQueueAnswer else { return [] }
        if lacksCurrentEntry, let state, let entry = state.entry {
            guard missingEntry?.entry != entry else { return [] }
            let known = queue.entry(entry)
            var actions: [CoordinatorAction] = [.event(PlaybackEvent(
                type: .missingEntry, realtime: 0, player: label(participant), originator: participant, originatorName: name,
                item: state.item, referenceTime: state.anchorReferenceTime.seconds, revision: state.revision,
                detail: known?.title, entry: entry))]
            if let missing = missingEntry {
                missingEntry = (missing.suspension, entry)
            } else {
                let (id, begin) = beginSuspension(.coordinatedPlaybackNotPossible, now: now)
                missingEntry = (id, entry)
                actions += begin
            }
            return actions
        }
        guard let missing = missingEntry else { return [] }
        missingEntry = nil
        return (try? endSuspension(missing.suspension, now: now)) ?? []
    }

    func queueEvent(_ type: PlaybackEvent.EventType, originator: PlaybackParticipantID?, detail: String, now: ReferenceTime) -> [CoordinatorAction] {
        [.event(PlaybackEvent(
            type: type, realtime: 0, player: label(participant), originator: originator,
            originatorName: originator.flatMap { names[$0] }, referenceTime: now.seconds, detail: detail, entry: state?.entry))]
    }

    /// An edit in words, for events.
    static func describe(_ edit: QueueEdit) -> String {
        switch edit {
        case .add(let entries, let position):
            let titles = entries.prefix(3).map(\.title).joined(separator: ", ") + (entries.count > 3 ? ", …" : "")
            let place = switch position {
            case .end: "at the end"
            case .start: "at the start"
            case .after: "after another entry"
            }
            return "added \(entries.count) (\(titles)) \(place)"
        case .remove(let ids): return "removed \(ids.count)"
        case .move: return "moved an entry"
        case .clear: return "cleared the queue"
        case .repeatMode(let mode): return "repeat \(mode.rawValue)"
        case .shuffle(let seed): return seed == nil ? "shuffle off" : "shuffle on"
        }
    }
}
