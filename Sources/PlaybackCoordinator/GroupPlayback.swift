import ClockSync
import GroupSessions
import Logging
import Synchronization

/// Coordinated playback over a joined `GroupSession`: the one call an app makes, the analogue of
/// `AVPlayer.playbackCoordinator.coordinateWithSession(_:)`.
///
/// ``prepare(session:timeServer:clock:options:gate:logger:)`` synchronises a `SyncedClock` with an NTP
/// server (the relay's own, at the invite's address) until the estimate is good enough to present
/// frames, and builds the coordination channel over the session. With an invite naming several
/// nodes, the clock polls the first node that answers and moves to the next node of the invite when
/// its node stops answering (ClockSync's `TimeSourceFailover`; a `timeSource` event says so). ``run(_:localItem:canPresent:name:items:publishInitialState:queue:repeatMode:succession:onEvent:started:)``
/// then runs the clock's polling, the ``PlaybackCoordinator`` and the player as children of one task
/// until the session ends (the member left, the group ended it, the relay was lost), the player ends
/// (its process quit), or the calling task is cancelled; whichever comes first ends the others, and the
/// member leaves the session.
///
/// ```swift
/// let session = try await center.accept(invite)
/// try await session.join()
/// let playback = try await GroupPlayback.prepare(session: session, timeServer: invite)
/// let player = HeadlessPlayer(items: [clip], reference: playback.reference, logger: logger)
/// try await playback.run(player, localItem: clip.identifier) { event in print(event.jsonLine) }
/// ```
///
/// Or in one call: ``coordinate(session:timeServer:clock:options:logger:player:localItem:canPresent:name:publishInitialState:onEvent:started:)``.
public struct GroupPlayback<Activity: GroupActivity, LocalClock: Clock>: Sendable where LocalClock.Duration == Duration {
    /// Tuning.
    public struct Options: Sendable, Hashable {
        /// The coordinator's tuning. The default's lead is at least 120 ms, so that members on a busy
        /// machine or a slow link still get each command before it applies.
        public var coordinator: CoordinatorConfiguration
        /// The NTP client's tuning (default: ClockSync's `TimeClient.Configuration.playback`, 500 ms timeout).
        public var timeClient: TimeClient<LocalClock>.Configuration
        /// How the synced clock follows the estimate (default: ClockSync's `SyncedClock.Configuration.playback`).
        public var syncedClock: SyncedClock<LocalClock>.Configuration
        /// Poll until the clock estimate is good before returning (ClockSync's `TimeClient.converge`),
        /// as a member that presents frames must; `false` takes 8 quick samples, enough for a member
        /// that only sends commands (every player applies a command at one reference instant).
        public var converge: Bool

        /// The defaults for a member that presents frames.
        public init() {
            var coordinator = CoordinatorConfiguration()
            coordinator.holdsCommandsUntilJoined = true
            coordinator.suspendsWhileEntryMissing = true
            coordinator.minimumLead = .milliseconds(120)
            self.coordinator = coordinator
            var timeClient = TimeClient<LocalClock>.Configuration.playback
            timeClient.timeout = .milliseconds(500)
            self.timeClient = timeClient
            self.syncedClock = .playback
            self.converge = true
        }
    }

    /// The group session.
    public let session: GroupSession<Activity>
    /// The coordination channel over the session.
    public let channel: GroupSessionCoordinationChannel<Activity>
    /// The NTP client keeping ``reference`` in step with the time server.
    public let timeClient: TimeClient<LocalClock>
    /// The shared reference clock players present on.
    public let reference: SyncedReferenceTimeSource<LocalClock>
    /// The options it was prepared with.
    public let options: Options
    /// The channel's gate (where only hosts control), `nil` where everyone controls.
    public let gate: (any CoordinationGate)?
    private let logger: Logger

    /// Synchronises with the time server and builds the channel over `session` (joined, or about to
    /// be joined).
    ///
    /// - Parameters:
    ///   - session: the group session.
    ///   - timeServer: where the NTP server answers on UDP: the relay named by the invite (`coplay
    ///     serve` answers NTP on its own port).
    ///   - clock: the local clock the synced clock, the time client and the players read.
    ///   - options: tuning.
    ///   - gate: where only hosts control, the channel's ``CoordinationGate`` (GroupChat's
    ///     `RoleGate`, made over the joined session before this call).
    ///   - logger: where it logs.
    /// - Throws: ``GroupPlaybackError/timeServerSilent(_:_:)`` when the time server cannot be reached
    ///   or does not answer well enough; the session is left.
    public static func prepare(
        session: GroupSession<Activity>, timeServer: Invite, clock: LocalClock, options: Options = Options(),
        gate: (any CoordinationGate)? = nil, logger: Logger
    ) async throws -> Self {
        let synced = SyncedClock(clock: clock, configuration: options.syncedClock, logger: logger)
        // An invite naming several nodes of one relay service: any node's time server will do
        // (they all serve UTC). The client polls the first that answers and moves to the next
        // node of the invite when it stops answering, keeping the synced clock (slewed over).
        let sources = timeServer.relays.map { relay in
            TimeSource(name: "\(relay)") {
                try await UDPTimeTransport.connect(host: relay.host, port: relay.port, timescale: synced.timescale)
            }
        }
        let client = TimeClient(sources: sources, syncedClock: synced, configuration: options.timeClient, logger: logger)
        do {
            if options.converge {
                _ = try await client.converge()
            } else {
                _ = try await client.measure(samples: 8, interval: .milliseconds(20))
            }
        } catch {
            session.leave()
            throw GroupPlaybackError.timeServerSilent("\(client.currentSource)", error)
        }
        return Self(
            session: session, channel: GroupSessionCoordinationChannel(session: session, gate: gate, logger: logger), timeClient: client,
            reference: SyncedReferenceTimeSource(client: client), options: options, gate: gate, logger: logger)
    }

    /// Builds a coordinator for `delegate` over this playback's channel and clock.
    ///
    /// ``run(_:localItem:canPresent:name:items:publishInitialState:queue:repeatMode:succession:onEvent:started:)`` does this itself; a
    /// member without a player (one that only sends commands) uses it directly.
    public func makeCoordinator(
        delegate: any PlaybackControlDelegate, localItem: String? = nil, canPresent: (@Sendable (String) -> Bool)? = nil,
        name: String? = nil, items: [PresenceReport.ItemSummary] = [], oneShot: Bool = false
    ) -> PlaybackCoordinator {
        PlaybackCoordinator(
            channel: channel, reference: reference, delegate: delegate, configuration: options.coordinator,
            localItem: localItem, canPresent: canPresent, name: name, items: items, oneShot: oneShot, logger: logger)
    }

    /// A player's re-anchoring beyond this error (seconds) is no ordinary correction: the member was
    /// away (its laptop slept, its process was stopped) and the others hear that it caught up
    /// (``PlaybackCoordinator/noteCaughtUp(offBy:)``). Ordinary re-anchorings are tens of ms.
    public static var caughtUpThreshold: Double { 2 }

    /// Coordinates `player` with the group until the session ends, the player ends, or the task is
    /// cancelled; then leaves the session.
    ///
    /// - Parameters:
    ///   - player: the local player.
    ///   - localItem: the item it has loaded.
    ///   - canPresent: when given, the player follows the group to any item it accepts.
    ///   - name: the member's display name in events.
    ///   - items: the items the player can play, with their durations (the group's timeline ends
    ///     at an item's duration).
    ///   - publishInitialState: publish "paused at 0" first, so that the group has a state (the
    ///     member that created the session does this).
    ///   - queue: with `publishInitialState`, the items the group's queue starts with (the first
    ///     is the initial state's entry); empty: no queue.
    ///   - repeatMode: the queue's repeat mode (with `queue`).
    ///   - succession: where the app says that the session continues in a successor
    ///     (``PlaybackSuccession``): when the session ends with a successor expected, playback moves
    ///     there with a new coordinator over the same player, instead of ending.
    ///   - onEvent: every event of the coordinator and the player, as they happen.
    ///   - started: called once the coordinator runs (an app's controls drive it from here); an
    ///     error it throws ends the playback with that error. Called again with each successor
    ///     session's coordinator (an error it throws there is logged, and playback goes on).
    /// - Throws: what the player's ``CoordinatedPlayer/run(coordinator:)`` threw (its process crashed).
    public func run<Player: CoordinatedPlayer>(
        _ player: Player, localItem: String?, canPresent: (@Sendable (String) -> Bool)? = nil, name: String? = nil,
        items: [PresenceReport.ItemSummary] = [],
        publishInitialState: Bool = false, queue: [QueueItem] = [], repeatMode: RepeatMode = .off,
        succession: PlaybackSuccession<Activity>? = nil,
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void = { _ in },
        started: @escaping @Sendable (PlaybackCoordinator) async throws -> Void = { _ in }
    ) async throws {
        let coordinator = makeCoordinator(delegate: player, localItem: localItem, canPresent: canPresent, name: name, items: items)
        let current = CurrentPlayback(session: session, coordinator: coordinator)
        defer {
            current.session.leave()
            succession?.finish()
        }
        let (coordinators, nextCoordinator) = AsyncStream.makeStream(of: PlaybackCoordinator.self)
        nextCoordinator.yield(coordinator)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [timeClient] in try? await timeClient.run() }
            let label = name.map { PlaybackParticipantID($0) }
            group.addTask { [timeClient] () async throws -> Void in
                // The time server changed (the node died): one `timeSource` event per move.
                for await change in timeClient.sourceChanges {
                    onEvent(PlaybackEvent(type: .timeSource, realtime: Realtime.now(), player: label, detail: "\(change)"))
                }
            }
            group.addTask {
                for await event in player.events {
                    onEvent(event)
                    // A jump back into step from far off: the others hear of it.
                    if event.type == .correction, event.detail == "seek", let error = event.errorMs,
                        abs(error) >= Self.caughtUpThreshold * 1000
                    {
                        await current.coordinator.noteCaughtUp(offBy: error / 1000)
                    }
                }
            }
            // Each coordinator's events, one coordinator after the other (a successor session's
            // coordinator follows when the previous one stopped).
            group.addTask { for await coordinator in coordinators { for await event in coordinator.events { onEvent(event) } } }
            group.addTask { [logger] in
                if publishInitialState {
                    do {
                        // A host that came back to its session (`coplay host --resume`) finds the
                        // group's state and queue there: it follows them and publishes nothing.
                        if try await Self.sessionIsNew(coordinator) {
                            if !queue.isEmpty { try await Self.startQueue(queue, repeat: repeatMode, on: coordinator) }
                            try await coordinator.pause()
                        } else {
                            logger.info("the session already has a state: the initial one is not published")
                        }
                    } catch {
                        logger.notice("could not publish the initial state", metadata: ["error": "\(error)"])
                    }
                }
                // What `started` throws ends the coordination with that error.
                try await started(coordinator)
                // Parked until the group is cancelled: returning would not end the coordination.
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            }
            // The three that end the coordination: the session (unless it has a successor), the player, cancellation.
            group.addTask { [logger] in
                var playback = self
                var coordinator = coordinator
                while true {
                    await coordinator.run()
                    guard let succession, !Task.isCancelled, let successor = await succession.take() else {
                        nextCoordinator.finish()
                        throw Ended.session
                    }
                    let next = successor.session
                    // Where only hosts control, so in the successor: without its gate everyone would.
                    guard playback.gate == nil || successor.gate != nil else {
                        logger.error(
                            "the successor session came without a gate where only hosts control: playback ends with the session",
                            metadata: ["session": "\(next.id)"])
                        next.leave()
                        nextCoordinator.finish()
                        throw Ended.session
                    }
                    // The same player and clock, a new channel (with the successor's own gate) and
                    // coordinator: the player plays on.
                    let handOver = await coordinator.handOver()
                    playback = playback.continuing(in: next, gate: successor.gate)
                    coordinator = playback.makeCoordinator(
                        delegate: player, localItem: handOver.localItem, canPresent: canPresent, name: name, items: items)
                    await coordinator.adopt(handOver)
                    await player.follow(coordinator)
                    current.set(session: next, coordinator: coordinator)
                    nextCoordinator.yield(coordinator)
                    succession.moved(to: next)
                    logger.notice("playback moved to the successor session", metadata: ["session": "\(next.id)"])
                    let moved = coordinator
                    Task { [logger] in
                        do { try await started(moved) } catch {
                            logger.notice("the started hook failed in the successor session", metadata: ["error": "\(error)"])
                        }
                    }
                }
            }
            group.addTask {
                try await player.run(coordinator: coordinator)
                throw Ended.player
            }
            defer { group.cancelAll() }
            do {
                try await group.next()
            } catch let ended as Ended {
                logger.info("coordinated playback ended", metadata: ["by": "\(ended)"])
            }
        }
    }

    /// This playback's clock and options over `session` (a successor of this one's session,
    /// joined): a new coordination channel through `gate`, the same time client and reference
    /// clock, so players on the clock notice nothing.
    ///
    /// - Parameters:
    ///   - session: the successor session, joined.
    ///   - gate: the successor's own gate (made over `session` before its join; a gate decides one
    ///     session's commands only), `nil` where everyone controls.
    public func continuing(in session: GroupSession<Activity>, gate: (any CoordinationGate)?) -> Self {
        Self(
            session: session, channel: GroupSessionCoordinationChannel(session: session, gate: gate, logger: logger),
            timeClient: timeClient, reference: reference, options: options, gate: gate, logger: logger)
    }

    private enum Ended: Error { case session, player }

    /// Whether the session has neither a state nor a queue entry, once this member has what the
    /// group had when it joined (the retained messages, the queue): a session just created, not one
    /// a host came back to.
    ///
    /// - Throws: ``PlaybackCoordinatorError/queueNotReceived`` if the queue did not arrive within 10 s.
    static func sessionIsNew(_ coordinator: PlaybackCoordinator) async throws -> Bool {
        guard await poll({ await coordinator.hasQueue }) else { throw PlaybackCoordinatorError.queueNotReceived }
        let state = await coordinator.state
        let queue = await coordinator.queue
        return state == nil && queue.isEmpty
    }

    /// Polls `condition` every 10 ms for up to 10 s.
    private static func poll(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<1_000 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Prepares and runs in one call: synchronises with the time server, builds the player on the
    /// shared clock, and coordinates it until the session or the player ends.
    ///
    /// ```swift
    /// try await GroupPlayback.coordinate(session: session, timeServer: invite, clock: ContinuousClock(),
    ///                                    player: { HeadlessPlayer(items: [clip], reference: $0, logger: logger) },
    ///                                    localItem: clip.identifier)
    /// ```
    ///
    /// - Parameters:
    ///   - session: the group session.
    ///   - timeServer: where the NTP server answers on UDP (the relay the invite names).
    ///   - clock: the local clock the synced clock, the time client and the player read.
    ///   - options: tuning.
    ///   - logger: where it logs.
    ///   - player: makes the player on the shared reference clock.
    ///   - localItem: the item the player has loaded.
    ///   - canPresent: when given, the player follows the group to any item it accepts.
    ///   - name: the member's display name in events.
    ///   - publishInitialState: publish "paused at 0" first (the member that created the session).
    ///   - onEvent: every event of the coordinator and the player, as they happen.
    ///   - started: called once the coordinator runs.
    public static func coordinate<Player: CoordinatedPlayer>(
        session: GroupSession<Activity>, timeServer: Invite, clock: LocalClock, options: Options = Options(),
        logger: Logger = .current,
        player: (SyncedReferenceTimeSource<LocalClock>) throws -> Player,
        localItem: String?, canPresent: (@Sendable (String) -> Bool)? = nil, name: String? = nil,
        publishInitialState: Bool = false,
        onEvent: @escaping @Sendable (PlaybackEvent) -> Void = { _ in },
        started: @escaping @Sendable (PlaybackCoordinator) async throws -> Void = { _ in }
    ) async throws {
        let playback = try await prepare(session: session, timeServer: timeServer, clock: clock, options: options, logger: logger)
        let made: Player
        do { made = try player(playback.reference) } catch {
            session.leave()
            throw error
        }
        try await playback.run(
            made, localItem: localItem, canPresent: canPresent, name: name, publishInitialState: publishInitialState,
            onEvent: onEvent, started: started)
    }
}

extension GroupPlayback {
    /// Queues `items` (and sets the repeat mode) once this member has the group's queue, and waits
    /// until the channel delivered the entries back, so the initial state that follows plays the
    /// first entry.
    ///
    /// - Throws: ``PlaybackCoordinatorError/queueNotReceived`` if the queue did not arrive, or the
    ///   entries did not come back, within 10 s.
    static func startQueue(_ items: [QueueItem], repeat mode: RepeatMode, on coordinator: PlaybackCoordinator) async throws {
        guard await poll({ await coordinator.hasQueue }) else { throw PlaybackCoordinatorError.queueNotReceived }
        let entries = try await coordinator.makeQueueEntries(items)
        // In edits of at most a snapshot part's entries, each well inside a message's size limit.
        for start in stride(from: 0, to: entries.count, by: QueueSnapshotPart.maximumEntries) {
            let chunk = Array(entries[start..<min(start + QueueSnapshotPart.maximumEntries, entries.count)])
            try await coordinator.editQueue(.add(chunk, at: .end))
        }
        if mode != .off { try await coordinator.editQueue(.repeatMode(mode)) }
        guard await poll({ let queue = await coordinator.queue; return queue.entry(entries[0].id) != nil && queue.repeatMode == mode }) else {
            throw PlaybackCoordinatorError.queueNotReceived
        }
    }
}

extension GroupPlayback where LocalClock == ContinuousClock {
    /// ``prepare(session:timeServer:clock:options:gate:logger:)`` on the real monotonic clock.
    public static func prepare(
        session: GroupSession<Activity>, timeServer: Invite, options: Options = Options(),
        gate: (any CoordinationGate)? = nil, logger: Logger = .current
    ) async throws -> Self {
        try await prepare(session: session, timeServer: timeServer, clock: ContinuousClock(), options: options, gate: gate, logger: logger)
    }
}

/// The session and coordinator a playback runs with now (they change when it moves to a successor).
private final class CurrentPlayback<Activity: GroupActivity>: Sendable {
    private let value: Mutex<(session: GroupSession<Activity>, coordinator: PlaybackCoordinator)>

    init(session: GroupSession<Activity>, coordinator: PlaybackCoordinator) {
        value = Mutex((session, coordinator))
    }

    var session: GroupSession<Activity> { value.withLock { $0.session } }
    var coordinator: PlaybackCoordinator { value.withLock { $0.coordinator } }

    func set(session: GroupSession<Activity>, coordinator: PlaybackCoordinator) {
        value.withLock { $0 = (session, coordinator) }
    }
}

/// Why ``GroupPlayback`` could not start.
public struct GroupPlaybackError: Error, Sendable, CustomStringConvertible {
    public let description: String

    /// The NTP time server (the relay's) did not answer, or not well enough to play.
    public static func timeServerSilent(_ address: String, _ error: any Error) -> Self {
        Self(description: "the relay's time server at UDP \(address) did not answer: \(error)")
    }
}
