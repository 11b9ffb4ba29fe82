/// One member's copy of the group's queue, kept equal to every other member's (sans-IO, held by
/// ``CoordinatorCore``).
///
/// Edits travel as ``QueueEditNotice``s and are applied in the channel's total order, so members
/// that have the queue go through the same states. A joiner does not have it: after its own
/// `joined` it sends a ``QueueRequest``, buffers the edits that follow, and takes the first
/// complete answer: the queue as of the request's place in the order, which the answering member
/// computed when it processed the request, so the buffered edits apply on top exactly. Every
/// member that has the queue may answer; the member first among them by id answers at once, the
/// others wait a step per rank and drop their answer when they see one (so one answer usually
/// travels). A joiner whose answerers all left asks again; one that is alone starts from the
/// retained copy (``QueueSnapshotPart`` with no request), which the member whose edit it was
/// publishes after its own edits (at most once a second), as does one whose request nobody
/// answered within ``answerTimeout`` of its place in the order (every member that could answer
/// left).
///
/// An answer also carries the group's playback state at the request's place in the order: the
/// core takes it over the retained state it started from (``answeredState``).
struct QueueReplica: Sendable {
    /// The queue, once this member has it.
    private(set) var queue = PlayQueue()
    /// Whether this member has the queue (it joined an empty session, or an answer came).
    private(set) var isComplete = false

    private let participant: PlaybackParticipantID
    /// The edits that arrived while this member did not have the queue yet, in the channel's
    /// order, each with the entry the group played when it arrived.
    private var buffered: [(sequence: UInt64, edit: QueueEdit, playing: String?)] = []
    /// This member's requests, by channel sequence once delivered.
    private var ownRequests: [UInt64] = []
    /// Whether a request of this member is on its way (sent, not yet delivered).
    private var requestInFlight = false
    /// Parts of answers to this member's requests, by copy.
    private var answers: [String: [QueueSnapshotPart]] = [:]
    /// The senders of those answers, by copy.
    private var answerers: [String: PlaybackParticipantID] = [:]
    /// Retained parts from the replay, by copy.
    private var retained: [String: [QueueSnapshotPart]] = [:]
    /// Answers this member will send unless another member answers first.
    private var scheduledAnswers: [(request: UInt64, requester: PlaybackParticipantID, due: ReferenceTime, parts: [QueueSnapshotPart])] = []
    /// When this member last published the retained copy, and a publication it owes.
    private var lastPublished: ReferenceTime?
    private var publishDue: ReferenceTime?
    /// The highest channel sequence this member processed.
    private var lastSequence: UInt64 = 0
    private var copies = 0
    /// When this member stops waiting for an answer and starts from the retained copy.
    private var answerDeadline: ReferenceTime?
    /// The state and place in the order of the answer this member completed with, until the
    /// core took it, with the edits buffered after that place. Those the core applies itself, in
    /// the order's turn with the proposals it replays on the answer's state: which entry played
    /// when an edit arrived (what a removal of the playing entry keeps) is known only then.
    private(set) var answeredState: (state: PlaybackState?, through: UInt64, edits: [(sequence: UInt64, edit: QueueEdit, playing: String?)])?

    /// How long each rank waits before answering a request.
    static let answerStep: Duration = .milliseconds(250)
    /// The least time between two retained copies from one member.
    static let publishInterval: Duration = .seconds(1)
    /// How long a joiner waits for an answer before it starts from the retained copy.
    static let answerTimeout: Duration = .seconds(3)

    init(participant: PlaybackParticipantID) {
        self.participant = participant
    }

    /// Hands the answer's state to the core, once.
    mutating func takeAnsweredState() -> (state: PlaybackState?, through: UInt64, edits: [(sequence: UInt64, edit: QueueEdit, playing: String?)])? {
        defer { answeredState = nil }
        return answeredState
    }

    /// Applies an edit of ``answeredState``'s, in its turn (`playing`: the entry the group played then).
    mutating func applyAnswered(_ edit: QueueEdit, playing: String?) {
        queue.apply(edit, playing: playing)
    }

    // MARK: Channel

    /// The local member's own `joined` arrived (the retained messages are in): ask the others for
    /// the queue, or start from the retained copy when nobody else is here.
    mutating func joinedSelf(others: Set<PlaybackParticipantID>, now: ReferenceTime) -> [CoordinatorAction] {
        guard !isComplete else { return [] }
        if others.isEmpty {
            adoptRetained()
            return []
        }
        requestInFlight = true
        return [.send(.queueRequest(QueueRequest(sentAt: now)), retainKey: nil)]
    }

    /// A member left: a joiner whose answerers are all gone asks again, or starts from the retained
    /// copy when it is alone now.
    mutating func left(_ member: PlaybackParticipantID, others: Set<PlaybackParticipantID>, now: ReferenceTime) -> [CoordinatorAction] {
        scheduledAnswers.removeAll { $0.requester == member }
        guard !isComplete, !ownRequests.isEmpty || requestInFlight else { return [] }
        if others.isEmpty {
            adoptRetained()
            return []
        }
        let answering = answers.contains { snapshot, parts in
            parts.first.flatMap(\.request).map(ownRequests.contains) == true && answerers[snapshot].map(others.contains) == true
        }
        guard !answering, !requestInFlight else { return [] }
        requestInFlight = true
        return [.send(.queueRequest(QueueRequest(sentAt: now)), retainKey: nil)]
    }

    /// An edit, in the channel's order. `playing` is the entry the group plays at this point.
    mutating func receive(
        edit: QueueEdit, from sender: PlaybackParticipantID, sequence: UInt64, playing: String?, now: ReferenceTime
    ) {
        lastSequence = max(lastSequence, sequence)
        guard isComplete else {
            buffered.append((sequence, edit, playing))
            return
        }
        queue.apply(edit, playing: playing)
        if sender == participant {
            // Keep the retained copy current for a member that joins an empty session later.
            let earliest = lastPublished.map { $0 + Self.publishInterval } ?? now
            publishDue = min(publishDue ?? earliest, max(earliest, now))
        }
    }

    /// A request for the queue, in the channel's order.
    mutating func receive(
        requestFrom sender: PlaybackParticipantID, sequence: UInt64, members: Set<PlaybackParticipantID>,
        state: PlaybackState?, now: ReferenceTime
    ) {
        lastSequence = max(lastSequence, sequence)
        if sender == participant {
            requestInFlight = false
            ownRequests.append(sequence)
            // The wait for an answer counts from the request's place in the order: the members
            // present then answer it. Counted from sending, a relay outage longer than the wait
            // made the joiner take the retained copy, which lacks the edits since it was published.
            answerDeadline = now + Self.answerTimeout
            completeIfAnswered()
            return
        }
        // Only a member that has the queue answers (one that waits for its own answer does not
        // know the state at this point for sure: it may have started from a retained one).
        guard isComplete else { return }
        scheduleAnswer(to: sequence, from: sender, members: members, state: state, now: now)
    }

    /// A part of a copy of the queue.
    mutating func receive(part: QueueSnapshotPart, from sender: PlaybackParticipantID, sequence: UInt64) {
        lastSequence = max(lastSequence, sequence)
        guard let request = part.request else {
            if !isComplete { retained[part.snapshot, default: []].append(part) }
            return
        }
        // Somebody answered: nobody else needs to.
        scheduledAnswers.removeAll { $0.request == request }
        guard !isComplete else { return }
        // Kept whoever asked: the answer to this member's request can arrive before the channel
        // has handed its own request back to it.
        answers[part.snapshot, default: []].append(part)
        answerers[part.snapshot] = sender
        completeIfAnswered()
    }

    /// Completes with the first whole answer to one of this member's requests, if there is one.
    private mutating func completeIfAnswered() {
        for snapshot in answers.keys.sorted() {
            guard let parts = answers[snapshot], let request = parts.first?.request, ownRequests.contains(request),
                let copy = QueueSnapshotPart.assemble(parts)
            else { continue }
            queue = copy
            let through = parts[0].through
            let state = parts.first { $0.part == 0 }?.state
            // With the group's state at the request, the edits after it wait for the core (the
            // entry each found playing is known once the core replays the proposals on that state).
            let edits = state == nil ? [] : buffered.filter { $0.sequence > through }
            if state != nil { buffered = [] }
            answeredState = (state, through, edits)
            finish(from: through)
            return
        }
    }

    /// Any other message's sequence (the order this member has processed through).
    mutating func processed(_ sequence: UInt64) {
        lastSequence = max(lastSequence, sequence)
    }

    // MARK: Time

    /// Sends answers and the retained copy when due.
    mutating func tick(now: ReferenceTime, members: Set<PlaybackParticipantID>) -> [CoordinatorAction] {
        var actions: [CoordinatorAction] = []
        if !isComplete, let deadline = answerDeadline, now >= deadline {
            // Nobody answered (those who could left): start from the retained copy.
            adoptRetained()
        }
        while let index = scheduledAnswers.firstIndex(where: { $0.due <= now }) {
            let answer = scheduledAnswers.remove(at: index)
            actions += answer.parts.map { .send(.queueSnapshot($0), retainKey: nil) }
        }
        if let due = publishDue, due <= now, isComplete {
            publishDue = nil
            lastPublished = now
            copies += 1
            let parts = QueueSnapshotPart.parts(
                of: queue, snapshot: "\(participant.rawValue).\(copies)", request: nil, through: lastSequence, sentAt: now)
            actions += parts.map { .send(.queueSnapshot($0), retainKey: CoordinationMessage.queueSnapshotKey(part: $0.part)) }
        }
        return actions
    }

    /// The next instant ``tick(now:members:)`` has something to do.
    var nextDeadline: ReferenceTime? {
        let answer = scheduledAnswers.map(\.due).min()
        return [answer, publishDue, isComplete ? nil : answerDeadline].compactMap { $0 }.min()
    }

    // MARK: Local edits

    /// The message for a local edit (applied when the channel delivers it back).
    func send(_ edit: QueueEdit, now: ReferenceTime) -> [CoordinatorAction] {
        [.send(.queueEdit(QueueEditNotice(edit: edit, sentAt: now)), retainKey: nil)]
    }

    // MARK: Private

    private mutating func scheduleAnswer(
        to request: UInt64, from requester: PlaybackParticipantID, members: Set<PlaybackParticipantID>,
        state: PlaybackState?, now: ReferenceTime
    ) {
        let ranked = members.subtracting([requester]).sorted()
        let rank = ranked.firstIndex(of: participant) ?? ranked.count
        copies += 1
        let parts = QueueSnapshotPart.parts(
            of: queue, snapshot: "\(participant.rawValue).\(copies)", request: request, through: request, state: state, sentAt: now)
        scheduledAnswers.append((request, requester, now + Self.answerStep * rank, parts))
    }

    private mutating func adoptRetained() {
        let copies = retained.values.compactMap { parts in QueueSnapshotPart.assemble(parts).map { (parts[0].through, $0) } }
        queue = copies.max { $0.0 < $1.0 }?.1 ?? PlayQueue()
        finish(from: copies.map(\.0).max() ?? 0)
    }

    /// Takes the queue as complete through `through` and applies the edits buffered after it.
    private mutating func finish(from through: UInt64) {
        isComplete = true
        answerDeadline = nil
        for entry in buffered where entry.sequence > through {
            queue.apply(entry.edit, playing: entry.playing)
        }
        buffered = []
        answers = [:]
        answerers = [:]
        retained = [:]
        ownRequests = []
    }
}
