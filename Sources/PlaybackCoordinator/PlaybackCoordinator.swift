import Logging

/// Coordinates the local player with the group: the async shell over ``CoordinatorCore``.
///
/// Modelled on `AVDelegatingPlaybackCoordinator`: the app calls ``coordinateRateChange(to:)``,
/// ``coordinateSeek(to:)``, ``transitionToItem(identifier:at:)`` and suspensions; the coordinator
/// turns them into states anchored slightly in the future on the shared reference clock, sends
/// them over the ``CoordinationChannel``, and when the channel delivers them back in its total
/// order it drives the local player through its ``PlaybackControlDelegate``. Everything that
/// happens is published on ``events``.
///
/// Call ``run()`` (for example from a ServiceLifecycle service) for as long as the coordinator
/// should work; it returns when the channel ends or the task is cancelled.
///
/// ```swift
/// let coordinator = PlaybackCoordinator(channel: channel, reference: clock, delegate: player,
///                                       localItem: "clip", logger: logger)
/// async let running: Void = coordinator.run()
/// try await coordinator.play()
/// ```
public actor PlaybackCoordinator {
    var core: CoordinatorCore
    private let channel: any CoordinationChannel
    private let reference: any ReferenceTimeSource
    private let delegate: any PlaybackControlDelegate
    let clock: any Clock<Duration>
    let logger: Logger
    private let realtime: @Sendable () -> Double
    private let eventContinuation: AsyncStream<PlaybackEvent>.Continuation
    private let commandContinuation: AsyncStream<PlaybackCommand>.Continuation
    private let commandStream: AsyncStream<PlaybackCommand>
    private let sendContinuation: AsyncStream<(CoordinationMessage, String?)>.Continuation
    private let sendStream: AsyncStream<(CoordinationMessage, String?)>
    private var lastNow = ReferenceTime(nanoseconds: 0)
    /// Messages queued for the send task, and those it has handed to the channel (``flush(within:)``).
    private var sendsQueued = 0
    private var sendsDone = 0
    private let readinessContinuation: AsyncStream<PlayerReadiness>.Continuation
    private let readinessStream: AsyncStream<PlayerReadiness>
    /// The player's last reported readiness, a counter of reports, and the suspension it holds.
    var readiness = PlayerReadiness.ready
    var readinessReports = 0
    var readinessSuspension = ReadinessSuspension.none
    /// Holds other members' `joined` until they said who they are; silences one-shot members.
    private var announcements = MembershipAnnouncements()

    /// Everything that happens, in order: accepted commands, membership, suspensions, item changes.
    public nonisolated let events: AsyncStream<PlaybackEvent>

    /// Creates a coordinator.
    ///
    /// - Parameters:
    ///   - channel: the group channel.
    ///   - reference: the shared reference clock.
    ///   - delegate: the local player.
    ///   - configuration: tuning (lead, suspensions).
    ///   - localItem: the item the local player has loaded.
    ///   - canPresent: when given, the local item follows the group to any item it accepts.
    ///   - name: the local member's display name; events name members by their announced names
    ///     (their channel ids until known).
    ///   - items: the items the local player can play, with their durations (the timeline ends at
    ///     an item's duration; other members check their proposals against them).
    ///   - oneShot: this member only sends a command or looks (`coplay control`): the others do
    ///     not announce its coming and going (``PresenceReport/oneShot``).
    ///   - clock: the clock the coordinator sleeps on between ticks.
    ///   - realtime: the `CLOCK_REALTIME` reading used to stamp events.
    ///   - logger: where the coordinator logs (info and below).
    public init(
        channel: any CoordinationChannel,
        reference: any ReferenceTimeSource,
        delegate: any PlaybackControlDelegate,
        configuration: CoordinatorConfiguration = .init(),
        localItem: String? = nil,
        canPresent: (@Sendable (String) -> Bool)? = nil,
        name: String? = nil,
        items: [PresenceReport.ItemSummary] = [],
        oneShot: Bool = false,
        clock: any Clock<Duration> = ContinuousClock(),
        realtime: @escaping @Sendable () -> Double = Realtime.now,
        logger: Logger
    ) {
        self.core = CoordinatorCore(
            participant: channel.localParticipant, configuration: configuration, localItem: localItem, canPresent: canPresent,
            name: name, items: items, oneShot: oneShot)
        self.channel = channel
        self.reference = reference
        self.delegate = delegate
        self.clock = clock
        self.realtime = realtime
        self.logger = logger
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
        (commandStream, commandContinuation) = AsyncStream.makeStream()
        (sendStream, sendContinuation) = AsyncStream.makeStream()
        (readinessStream, readinessContinuation) = AsyncStream.makeStream()
    }

    /// The local participant.
    public nonisolated var participant: PlaybackParticipantID { channel.localParticipant }

    /// The group's accepted state, if any.
    public var state: PlaybackState? { core.state }

    /// The current lead (delay from a command to its reference instant).
    public var lead: Duration { core.lead }

    /// Sets how long the local player needs between a command and its effect (its preroll: an mpv
    /// opening the next entry's file). The member's presence reports carry it, and every member that
    /// proposes a change sizes the change's lead to cover the largest preroll it heard (``lead``).
    ///
    /// ```swift
    /// await coordinator.setPreroll(.milliseconds(60))
    /// ```
    public func setPreroll(_ preroll: Duration) {
        core.configuration.preroll = max(.zero, preroll)
    }

    /// Whether every current member has sent a presence report (items, delays), as far as this
    /// member knows: a member that just joined waits for this before checking an item change.
    public var heardFromEveryMember: Bool { core.heardFromEveryMember }

    /// Why the group could not follow a change to `item` (nobody has it, or only this member), or
    /// `nil` when someone can play it. See ``CoordinatorCore/itemUnavailability(_:)``.
    public func itemUnavailability(_ item: String) -> PlaybackCoordinatorError? { core.itemUnavailability(item) }

    /// Current members of the group.
    public var members: Set<PlaybackParticipantID> { core.members }

    /// Whether the group is waiting for a suspended participant now.
    public var isWaiting: Bool { core.isWaiting(at: now()) }

    /// The group's item time now, or `nil` before any state.
    public var currentItemTime: Double? { core.effectiveItemTime(at: now()) }

    /// The item time the group is expected to be at at reference instant `time` (past or future),
    /// or `nil` before any state.
    ///
    /// Like `AVPlaybackCoordinator.expectedItemTime(atHostTime:)`, with the shared reference clock
    /// instead of the host clock: the group's effective timeline, with the waits for suspended
    /// members known so far held still. A later command or suspension can change the answer for a
    /// future instant.
    ///
    /// ```swift
    /// let inOneSecond = await coordinator.expectedItemTime(at: reference.now()! + .seconds(1))
    /// ```
    public func expectedItemTime(at time: ReferenceTime) -> Double? { core.effectiveItemTime(at: time) }

    /// The other members and why each is suspended, sorted by id (`AVPlaybackCoordinator`'s
    /// `otherParticipants`). See ``CoordinatedPlaybackParticipant``.
    public var otherParticipants: [CoordinatedPlaybackParticipant] { core.otherParticipants }

    /// Why the local member is suspended now: the reasons of its suspensions not yet ended, oldest
    /// first; empty while it takes part (`AVPlaybackCoordinator.suspensionReasons`). Includes the
    /// suspension the coordinator holds for a player that reported it is not ready.
    public var suspensionReasons: [SuspensionReason] { core.suspensionReasons }

    /// The reasons for which the group waits out this member's suspensions
    /// (``CoordinatorConfiguration/waitingReasons``; Apple's `suspensionReasonsThatTriggerWaiting`).
    public var suspensionReasonsThatTriggerWaiting: Set<SuspensionReason> { core.configuration.waitingReasons }

    /// Changes which reasons make the group wait out this member's suspensions from now on.
    ///
    /// Each member decides for its own suspensions when it begins one, and its notice carries the
    /// decision, so suspensions already begun keep theirs and every member still holds the same
    /// intervals. An actor property cannot be set from outside, hence a method.
    ///
    /// ```swift
    /// await coordinator.setSuspensionReasonsThatTriggerWaiting([.stallRecovery, .buffering, .playingInterstitial])
    /// ```
    public func setSuspensionReasonsThatTriggerWaiting(_ reasons: Set<SuspensionReason>) {
        core.configuration.waitingReasons = reasons
    }

    /// Sets the largest group (members, this one included) that still waits out this member's
    /// suspensions with `reason`; in a larger group they do not make anyone wait. Applies to
    /// suspensions begun from now on.
    ///
    /// - Parameters:
    ///   - participantLimit: the largest group size that waits; `nil` removes the limit.
    ///   - reason: the suspension reason it applies to.
    public func setParticipantLimit(_ participantLimit: Int?, forWaitingOutSuspensionsWithReason reason: SuspensionReason) {
        core.configuration.participantLimits[reason] = participantLimit
    }

    /// The participant limit for `reason` (``setParticipantLimit(_:forWaitingOutSuspensionsWithReason:)``),
    /// or `nil` when there is none.
    public func participantLimitForWaitingOutSuspensions(withReason reason: SuspensionReason) -> Int? {
        core.configuration.participantLimits[reason]
    }

    /// Runs the coordinator: applies channel events, sends presence, delivers commands to the
    /// delegate in order. Returns when the channel's event stream ends or the task is cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [commandStream, delegate] in
                for await command in commandStream { await delegate.handle(command) }
            }
            group.addTask { [sendStream, channel, logger] in
                for await (message, key) in sendStream {
                    do { try await channel.send(message, retainingUnder: key) } catch {
                        logger.info("send failed", metadata: ["error": "\(error)"])
                    }
                    await self.sendCompleted()
                }
            }
            group.addTask { await self.tickLoop() }
            group.addTask { [readinessStream] in await self.followReadiness(readinessStream) }
            for await event in channel.events() {
                perform(core.receive(event, now: now()))
                releaseAnnouncements()
            }
            logger.info("coordinator stopped", metadata: ["participant": "\(participant)"])
            group.cancelAll()
        }
        commandContinuation.finish()
        sendContinuation.finish()
        readinessContinuation.finish()
        eventContinuation.finish()
    }

    private func tickLoop() async {
        while !Task.isCancelled {
            perform(core.tick(now: now()))
            releaseAnnouncements()
            var pause = Duration.milliseconds(250)
            if let deadline = core.nextTickDeadline { pause = min(pause, max(.zero, deadline - now())) }
            if let deadline = announcements.nextDeadline { pause = min(pause, max(.zero, deadline - now())) }
            do { try await clock.sleep(for: pause + .microseconds(100)) } catch { return }
        }
    }

    /// Proposes a new rate to the group (0 pauses).
    ///
    /// - Parameter rate: 0 (paused) or within ``CoordinatorCore/playingRates`` (1/16 to 16).
    /// - Throws: ``PlaybackCoordinatorError`` for a bad rate, no item, no clock, or a send failure.
    public func coordinateRateChange(to rate: Double) async throws {
        let actions = try core.proposeRate(rate, now: try synchronizedNow())
        try await send(actions)
    }

    /// Sends this member's presence report (its name among it) now, before anything it proposes
    /// next: for a member that joins only to send a command (`coplay control`).
    public func announce() async throws {
        try await send(core.presenceReport(now: try synchronizedNow()))
    }

    /// Tells the others, in the next presence report, that the local player jumped back into step
    /// after being `seconds` off the group's timeline (negative: behind): their coordinators report a
    /// ``PlaybackEvent/EventType/caughtUp`` event ("alice caught up after 20 s away").
    /// ``GroupPlayback`` calls it for a player's re-anchoring beyond ``GroupPlayback/caughtUpThreshold``.
    public func noteCaughtUp(offBy seconds: Double) {
        core.noteCaughtUp(offBy: seconds)
    }

    /// Resumes at the intended rate (1 unless a rate was chosen).
    public func play() async throws {
        try await send(try core.proposePlay(now: try synchronizedNow()))
    }

    /// Pauses the group: everyone stops at the same item time at the same instant.
    public func pause() async throws { try await coordinateRateChange(to: 0) }

    /// Proposes a seek to `itemTime` (seconds), keeping the rate.
    public func coordinateSeek(to itemTime: Double) async throws {
        try await send(try core.proposeSeek(to: itemTime, now: try synchronizedNow()))
    }

    /// Loads `identifier` locally and moves the group to it at `itemTime`, keeping the rate.
    public func transitionToItem(identifier: String, at itemTime: Double = 0) async throws {
        try await send(try core.proposeItem(identifier, at: itemTime, now: try synchronizedNow()))
    }

    // MARK: Queue

    /// The group's queue as this member has it (see ``hasQueue``).
    public var queue: PlayQueue { core.queue }

    /// Whether this member has the group's queue (it asks for it on joining).
    public var hasQueue: Bool { core.hasQueue }

    /// The queue entry the group plays, if it plays from the queue.
    public var currentEntry: QueueEntry? { core.currentEntry }

    /// Proposes an edit of the group's queue (applied when the channel delivers it back).
    public func editQueue(_ edit: QueueEdit) async throws {
        try await send(core.proposeQueueEdit(edit, now: try synchronizedNow()))
    }

    /// Entries for `items` with ids unique in the session, added by this member (under its display
    /// name, when it has one).
    public func makeQueueEntries(_ items: [QueueItem]) throws -> [QueueEntry] {
        let now = try synchronizedNow()
        return items.enumerated().map { index, item in
            QueueEntry(
                id: PlayQueue.entryID(participant: core.participant, sentAt: now, index: index), item: item.item, fingerprint: item.fingerprint, title: item.title,
                duration: item.duration, frameRate: item.frameRate, addedBy: core.participant,
                addedByName: core.name)
        }
    }

    /// Moves the group to the next entry of the queue.
    public func coordinateNext() async throws {
        try await send(try core.proposeNext(now: try synchronizedNow()))
    }

    /// Moves the group to the previous entry of the queue.
    public func coordinatePrevious() async throws {
        try await send(try core.proposePrevious(now: try synchronizedNow()))
    }

    /// Moves the group to the entry at 1-based `position` of the queue's play order.
    public func coordinateJump(toPosition position: Int) async throws {
        try await send(try core.proposeJump(toPosition: position, now: try synchronizedNow()))
    }

    /// Tells the coordinator which item the local player has loaded, without proposing it.
    public func setLocalItem(_ identifier: String?) {
        perform(core.setLocalItem(identifier))
    }

    /// Gives the local player the group's current state again.
    public func reapplyCurrentState() {
        perform(core.reapplyCurrentState())
    }

    /// Begins a suspension; the group waits if `reason` is a waiting reason (up to the limits).
    ///
    /// A reason in ``SuspensionReason/detachingReasons`` also stops the commands to the local
    /// player until the last such suspension ends; the player then gets the group's current state.
    ///
    /// - Returns: the suspension, to end later.
    public func beginSuspension(_ reason: SuspensionReason) async throws -> PlaybackSuspension {
        let (id, actions) = core.beginSuspension(reason, now: try synchronizedNow())
        try await send(actions)
        return PlaybackSuspension(id: id, reason: reason, coordinator: self)
    }

    /// Apple's spelling of ``beginSuspension(_:)``.
    public func beginSuspension(for reason: SuspensionReason) async throws -> PlaybackSuspension {
        try await beginSuspension(reason)
    }

    func endSuspension(_ id: String, proposing itemTime: Double?) async throws {
        try await send(try core.endSuspension(id, proposing: itemTime, now: try synchronizedNow()))
    }

    /// What the group knows of suspension `id` (this member's or another's): `nil` until the channel
    /// has delivered its begin notice in the group's order. See ``SuspensionStatus``.
    public func suspensionStatus(_ id: String) -> SuspensionStatus? {
        core.suspensionStatus(id)
    }

    /// Tells the coordinator whether the local player can play now.
    ///
    /// A player that stays not ready for ``CoordinatorConfiguration/readinessGrace`` makes the
    /// coordinator begin a suspension for it (``PlayerReadiness/suspensionReason``: `buffering`
    /// while loading or seeking, `stallRecovery` when starved), so the group holds still until the
    /// player reports ``PlayerReadiness/ready``, which ends the suspension, or until the suspension
    /// timeout. Reports are cheap: call this on every change; repeats are ignored.
    ///
    /// ```swift
    /// coordinator.reportReadiness(.seeking)
    /// // ... the seek completes:
    /// coordinator.reportReadiness(.ready)
    /// ```
    public nonisolated func reportReadiness(_ readiness: PlayerReadiness) {
        readinessContinuation.yield(readiness)
    }

    /// The suspension timeout this coordinator puts on its own suspensions.
    public var suspensionTimeout: Duration { core.configuration.suspensionTimeout }

    /// Waits until the messages the coordinator sent on its own so far (presence, the queue's
    /// retained copy after an edit, answers) are handed to the channel, for at most `timeout`.
    ///
    /// A member that leaves right after a command (`coplay control`) calls this first, so that
    /// what its command made it send, such as the queue's retained copy, is not lost.
    ///
    /// - Returns: whether they were all handed over in time.
    public func flush(within timeout: Duration = .seconds(2)) async -> Bool {
        let target = sendsQueued
        let deadline = ContinuousClock.now + timeout
        while sendsDone < target {
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    private func sendCompleted() { sendsDone += 1 }

    // MARK: Plumbing

    func now() -> ReferenceTime {
        if let now = reference.now() { lastNow = max(lastNow, now) }
        return lastNow
    }

    private func synchronizedNow() throws -> ReferenceTime {
        guard reference.now() != nil else { throw PlaybackCoordinatorError.notSynchronized }
        return now()
    }

    private func send(_ actions: [CoordinatorAction]) async throws {
        for action in actions {
            if case .send(let message, let key) = action {
                try await channel.send(message, retainingUnder: key)
            } else {
                perform([action])
            }
        }
    }

    private func perform(_ actions: [CoordinatorAction]) {
        for action in actions {
            switch action {
            case .send(let message, let key):
                sendsQueued += 1
                sendContinuation.yield((message, key))
            case .command(let command):
                logger.debug("command", metadata: ["kind": "\(command.kind)", "revision": "\(command.revision)"])
                commandContinuation.yield(command)
            case .event(let event):
                let core = self.core
                for var told in announcements.pass(event, local: participant, now: now(), presence: { Self.presence(of: $0, in: core) }) {
                    publish(&told)
                }
            }
        }
    }

    private func publish(_ event: inout PlaybackEvent) {
        event.realtime = realtime()
        if event.type != .frame { logger.debug("event", metadata: ["line": "\(event.jsonLine)"]) }
        eventContinuation.yield(event)
    }

    /// Tells the held `joined` events whose member has now said who it is (or waited long enough).
    private func releaseAnnouncements() {
        guard announcements.nextDeadline != nil else { return }
        let core = self.core
        for var told in announcements.release(now: now(), presence: { Self.presence(of: $0, in: core) }) { publish(&told) }
    }

    private static func presence(
        of member: PlaybackParticipantID, in core: CoordinatorCore
    ) -> (reported: Bool, oneShot: Bool, name: String?) {
        let known = core.presence(of: member)
        return (known.reported, known.oneShot, core.names[member])
    }
}
