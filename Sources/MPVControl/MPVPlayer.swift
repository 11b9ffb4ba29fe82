import Logging
import PlaybackCoordinator

/// Drives an mpv over its JSON IPC as a coordinated player: the coordinator's commands become exact
/// seeks, unpauses at the scheduled instant, `speed` trims and pauses snapped to the group's frame,
/// and the person's own actions in mpv (the pause key, seeks, speed keys) become group commands.
///
/// Give it a connection to an mpv (one it started with ``MPVProcess``, or one a person runs with
/// `--input-ipc-server=PATH`) and the items it may play, then hand it to `GroupPlayback`:
///
/// ```swift
/// try await MPVProcess.run(arguments: MPVProcess.headlessArguments) { mpv in
///     let player = MPVPlayer(connection: mpv, items: [.init(timeline: clip, path: "clip.mp4")],
///                            reference: playback.reference, logger: logger)
///     try await playback.run(player, localItem: clip.identifier)
/// }
/// ```
///
/// **Timing.** Before a play instant the player is paused exactly at the item time; it unpauses a
/// learned latency ahead of the instant (busy-waiting the last 2 ms on the reference clock). While
/// playing it watches `time-pos` change from frame to frame (sampling just before and after each
/// predicted change, ``FrameClock``), and corrects the error: inside ``Configuration/deadband``
/// nothing, up to ``Configuration/seekThreshold`` a `speed` trim that removes the error over
/// ``Configuration/trimWindow``, beyond it a re-anchoring seek (at most
/// ``Configuration/maximumReanchors`` in ``Configuration/reanchorWindow``; beyond, a trim). On a
/// file with audio it reads `audio-pts` instead, the audio clock mpv times the video by
/// (``AudioClock``): a start through a real audio server can stand still for a while after its first
/// 100 ms, and the audio clock shows that at once, where `time-pos` shows no frame change at all.
/// At a pause instant it pauses, then seeks exactly to the group's item time, so every player stops
/// on the same frame.
///
/// **The person's actions.** mpv's `pause`, `speed` and `seek` notifications that the adapter did
/// not cause itself (it remembers what it just set) become `pause`/`play`, rate changes and seeks
/// proposed to the group with this member as originator.
///
/// **Ending.** When mpv quits (the person closed it, or it crashed), ``run(coordinator:)`` returns
/// and the member leaves the session; the others carry on.
public actor MPVPlayer: CoordinatedPlayer {
    /// A media item mpv can play: its timeline (identifier and frame times) and its file.
    public struct Item: Sendable, Hashable {
        public var timeline: MediaTimeline
        public var path: String

        public init(timeline: MediaTimeline, path: String) {
            self.timeline = timeline
            self.path = path
        }
    }

    /// Tuning; the defaults and why are in docs/mpv.md.
    public struct Configuration: Sendable, Hashable {
        /// Errors smaller than this are left alone (seconds of item time).
        public var deadband: Double = 0.0004
        /// A `speed` trim removes the measured error over about this long (seconds).
        public var trimWindow: Double = 0.5
        /// The largest trim, as a fraction of the rate.
        public var maximumTrim: Double = 0.05
        /// Errors larger than this are corrected by a seek (seconds): about a frame, since a start
        /// that came a whole frame late (seen with audio tracks) is better re-anchored at once than
        /// trimmed away over a second.
        public var seekThreshold: Double = 0.03
        /// An entry opened ahead of its instant whose start then comes at most this late (the work
        /// after the load) starts at once, trimmed, instead of being restarted (seconds).
        public var lateOpenStart: Double = 0.012
        /// How often the error is looked at and the trim updated (seconds).
        public var correctionInterval: Double = 0.1
        /// How long before its instant a motion is prepared (seek, speed) (seconds).
        public var prepareHorizon: Double = 0.08
        /// When a motion must be (re)started late, the player restarts this far ahead (seconds).
        public var restartDelay: Double = 0.15
        /// What an exact seek is expected to cost at a speed mpv has not sought at yet, on a file with
        /// audio (seconds): 1x seeks say little about it (see `seekDurations`).
        public var unseenSpeedSeek: Double = 0.25
        /// A restart whose seek ends more than this after the start it planned is planned again once,
        /// with the seek's cost known (seconds).
        public var restartOverrun: Double = 0.004
        /// The first guess of the time from `pause=no` to the position moving (seconds); learned.
        public var unpauseLatency: Double = 0.0
        /// Sampling turns dense this long before a predicted frame change, and stays dense until
        /// twice as long after it (seconds).
        public var denseWindow: Double = 0.0015
        /// The sampling interval around a predicted frame change (seconds).
        public var denseSampling: Double = 0.0002
        /// The sampling interval when no frame change is predicted (seconds).
        public var fallbackSampling: Double = 0.002
        /// How far mpv's audio clock, and the picture with it, steps back per unit of speed changed
        /// while playing on a file with audio, until the next seek (seconds). Measured with mpv 0.35,
        /// `--ao=null` and mpv's default buffers, 28 Nov 2026: `audio-pts` and the frames both 19.6-19.8
        /// ms late after 1 → 1.05 and early after 1 → 0.95, for as long as the speed was held (an
        /// earlier 0.19 s was half of it). The adapter adds it to `audio-delay` with each such change.
        public var audioBuffer: Double = 0.396
        /// The sampling interval of `audio-pts` while a file with audio plays (seconds).
        public var audioSampling: Double = 0.01
        /// `audio-pts` samples taken sooner than this after an unpause are not used (seconds): while
        /// the output starts, mpv may still report the paused position's audio.
        public var audioSettle: Double = 0.03
        /// A start on a file with a picture and sound whose first errors say the sound began more than
        /// this late, and less than ``soundStartLimit``, has its picture put right with `audio-delay`
        /// while the sound catches up, instead of a re-anchoring (seconds; see ``MPVPlayer``
        /// `shiftPicture(by:)`). Smaller errors, and early ones, are left to the trim: shifting every
        /// start off by 2 ms or more, early ones too, measured worse (`coplay bench --scenario
        /// mpv-plain-av`, p99 4.5-4.9 ms against 2.7-4.0 ms at 1x, docs/mpv.md).
        public var soundStartError: Double = 0.008
        /// A start this near the beginning of a file (item seconds), on a file with a picture and sound,
        /// opens or seeks with the sound's lag that the last such start measured taken off
        /// `audio-delay` ahead (``MPVPlayer`` `preShift(at:)`): mpv begins the sound of every start
        /// there late by the same amount, and the picture with it (`scripts/mpv-file-start-lag.py`:
        /// picture 35-37 ms, `audio-pts` 29-31 ms late at every start from 0 with AAC, `--ao=null`
        /// and PulseAudio alike; with `audio-delay` -0.03 set before the seek or load, the picture
        /// 0.7-1.4 ms). Without it the picture was put right only at the shift a third of a second later.
        public var fileStartWindow: Double = 0.05
        /// The lag a member expects at a file's beginning before it has measured one (seconds; nil:
        /// none): mpv 0.35's with AAC or PCM, so that a member's first such start (a late joiner's
        /// first entry change) is in step too. A start that shows another lag puts it right while
        /// playing and is not shifted ahead again until one is measured.
        public var expectedFileStartLag: Double? = 0.03
        /// Larger errors at a start are re-anchored (a stall through an audio server) (seconds).
        public var soundStartLimit: Double = 0.08
        /// The error must be the same within this at two looks a ``correctionInterval`` apart: one
        /// that grows is a stall, re-anchored as before (seconds).
        public var soundStartSteadiness: Double = 0.003
        /// At most this many re-anchoring seeks in ``reanchorWindow``; beyond, errors are trimmed.
        /// A start through a real audio server can stall once more (see ``AudioClock``): a second
        /// re-anchoring is allowed, but never a loop.
        public var maximumReanchors: Int = 3
        /// The window of ``maximumReanchors`` (seconds).
        public var reanchorWindow: Double = 20
        /// Which notices of the group mpv shows on its screen (``notify(_:)``): `--notices`.
        public var notices: PlaybackNotices.Level = .all

        public init() {}
    }

    /// After a rate change on a video-only file, every player is off the group's timeline by the same
    /// planned amount (see `changeRate`), removed by a trim over a whole number of frames. The trim is
    /// open loop: all players run the same speeds over the same frames, so they stay together while
    /// it lasts (closed-loop trims taken at slightly different instants had put them 4-9 ms apart),
    /// and the controller takes over when it ends.
    private struct RatePlan {
        /// The group's rate once the catch-up is done.
        var rate: Double
        /// When the command that ends the trim goes out: the middle of the last trimmed frame.
        var endCommandAt: ReferenceTime
        /// The planned error at the start (item seconds): an error up to this much more than the
        /// seek threshold is no reason to re-anchor while the plan runs.
        var size: Double
    }

    /// What the adapter knows of mpv's state.
    private struct Known {
        var paused: Bool?
        var speed: Double = 1
        /// Values of `pause` the adapter set, with when, whose notification has not arrived yet. mpv
        /// sends none for a value that does not change and coalesces quick changes, so values are
        /// matched (not counted) and forgotten after ``echoWindow``.
        var ownPauses: [(value: Bool, at: ContinuousClock.Instant)] = []
        /// Speeds the adapter set recently, likewise.
        var ownSpeeds: [(value: Double, at: ContinuousClock.Instant)] = []
        /// Whether a seek or load of the adapter's is under way (until its `playback-restart`):
        /// `seek` events meanwhile are its own (mpv coalesces those too).
        var ownSeekActive = false
        /// `playback-restart` events seen (a seek or a load completed).
        var restarts = 0
        /// `file-loaded` events seen.
        var loads = 0
        /// The last load failure, if any.
        var loadError: String?
        /// A seek the person started: its restart ends it.
        var userSeekPending = false
        /// Observed properties whose first notification (the value when observing began) arrived.
        var initialized: Set<String> = []
        /// When the adapter's own loads were started whose `start-file` has not arrived yet: a
        /// `start-file` beyond them is the person's (a playlist key not rebound, the on-screen
        /// controller, a script), forgotten after ``echoWindow``.
        var ownLoads: [ContinuousClock.Instant] = []
    }

    /// How long an own change's notification is waited for. mpv sends it within 0.3 ms, but the
    /// adapter may handle it much later on a busy machine: at a load average of 12, 0.5 s was not
    /// enough and the adapter's own pause came back as the person's (three pause commands for one
    /// key). Only real changes are recorded and they are matched by value, so a longer wait can
    /// swallow nothing but a change to the value the adapter has just set.
    private static let echoWindow = Duration.seconds(2)

    private let connection: MPVConnection
    private let items: [String: Item]
    /// Each item's file, absolute and standardized once (``MPVOpen``'s normalization), for mpv's playlist.
    private let normalizedPaths: [String: String]
    private let firstItem: String?
    private let reference: any ReferenceTimeSource
    private let configuration: Configuration
    private let logger: Logger
    private let realtime: @Sendable () -> Double
    private let eventContinuation: AsyncStream<PlaybackEvent>.Continuation
    /// The group's events to show as notices (``notify(_:)``), in order.
    private let noticeEvents: AsyncStream<PlaybackEvent>
    private let noticeContinuation: AsyncStream<PlaybackEvent>.Continuation
    /// The words of the notices, and what mpv's screen shows of them.
    private var notices = PlaybackNotices()
    private var noticeBoard = MPVNoticeBoard()
    /// Where the notices' text is readable over IPC (`user-data/coplay/notices`, or on mpv before
    /// 0.36 the `coplay-notices` key of `shared-script-properties`), once known.
    private var noticeProperty: String?

    private var schedule = CommandSchedule()
    private var known = Known()
    private var loadedItem: String?
    private var applied: CommandSchedule.Motion?
    private var playing = false
    private var frameClock = FrameClock()
    /// On a file with audio, the error from `audio-pts` (``AudioClock``); samples before
    /// ``audioValidFrom`` are ignored.
    private var audioClock = AudioClock()
    private var audioValidFrom: ReferenceTime?
    /// When the controller's last re-anchoring seeks were (``Configuration/maximumReanchors``).
    private var reanchors: [ReferenceTime] = []
    private var trim = 1.0
    private var lastCorrection: ReferenceTime?
    /// When the speed last changed: the controller judges only frame changes after it (plus a frame,
    /// since mpv applies a speed from the next frame change), so it never reacts twice to one error.
    private var speedChangedAt: ReferenceTime?
    /// When the last fine error estimate was had.
    private var lastFineAt: ReferenceTime?
    /// A rate change's open-loop catch-up (video-only files), while it runs.
    private var ratePlan: RatePlan?
    /// Whether the loaded item plays an audio track: mpv then times video by the audio clock.
    private var hasAudio = false
    /// Whether it shows a moving picture (not an audio file, not cover art).
    private var hasPicture = true
    private var unpauseLatency: Double
    /// The unpause latencies the last starts called for (seconds), newest last: ``unpauseLatency`` is their median.
    private var impliedLatencies: [Double] = []
    private var learnLatency = false
    /// Whether the first fine error after the last start is still to come (``shiftPicture(by:)``).
    private var judgeStart = false
    /// The sound's lag at the first look after a start, while it is judged (seconds).
    private var firstLate: Double?
    /// mpv's `audio-delay` as the person set it (read at each load): the picture runs that far ahead of
    /// the sound clock (item seconds).
    private var audioDelay = 0.0
    /// What the adapter added to `audio-delay` to put the picture on the group's timeline after a start
    /// whose sound began late (item seconds), until the next seek or load (``dropStartShift()``).
    private var startShift = 0.0
    /// The speed mpv's sound was buffered at: the speed of the last seek or load. A speed changed
    /// since steps the sound clock back by ``Configuration/audioBuffer`` per unit (``compensation``).
    private var bufferedSpeed = 1.0
    /// The `audio-delay` the adapter last set, if any.
    private var delaySet: Double?
    /// How far mpv's sound clock runs behind the sound because of a speed changed while playing
    /// (item seconds): `audio-pts` reads that much less, and the picture, which follows it, would
    /// show that much late without the same amount added to `audio-delay` (``applyDelay()``).
    private var compensation: Double { hasAudio ? configuration.audioBuffer * (known.speed - bufferedSpeed) : 0 }
    /// The sound's lag the last start at a file's beginning measured (``Configuration/fileStartWindow``),
    /// if it had one: the next such start takes it off `audio-delay` ahead (`preShift(at:)`).
    private var fileStartLag: Double?
    /// ``startShift`` was set ahead of a start that has not begun yet (the file opened, or the seek
    /// ran, with it in force).
    private var preShiftPending = false
    /// The frame the next start begins on (``prepareStart(at:rate:neededBy:)``).
    private var startFrame = Double.infinity
    /// The start under way began at a file's beginning: its first looks measure the sound's lag there.
    private var judgingFileStart = false
    /// A shift was taken back without a seek or load after it: the next seek is not skipped.
    private var soundResync = false
    /// How long mpv's last exact seeks took (command to `playback-restart`, seconds), newest last, by
    /// the speed mpv ran at (``seekKey(_:)``): on a file with audio a seek at a speed other than 1
    /// costs two to three times one at 1x, because the audio goes through the tempo filter (a
    /// 25 fps 160x90 clip with AAC, `--ao=null`: 130-200 ms at 0.5 and 115-195 ms at 1.25 against
    /// 40-65 ms at 1, 28 Nov 2026).
    private var seekDurations: [Int: [Double]] = [:]
    /// What the next exact seek at `speed` may cost (seconds): the longest of the last eight at that
    /// speed. At a speed not seen yet on a file with audio, at least ``Configuration/unseenSpeedSeek``.
    private func expectedSeek(at speed: Double) -> Double {
        let key = seekKey(speed)
        if let longest = seekDurations[key]?.max() { return longest }
        let known = seekDurations[seekKey(1)]?.max() ?? 0
        return key == seekKey(1) ? known : max(known, configuration.unseenSpeedSeek)
    }
    /// Which list of ``seekDurations`` a seek at `speed` belongs to: the speed in hundredths on a file
    /// with audio (a trim of a few per cent counts as the group's rate), one list on a video-only file.
    private func seekKey(_ speed: Double) -> Int { hasAudio ? Int((speed * 100).rounded()) : 100 }
    /// How long before its instant `motion` is prepared: the configured horizon, or the expected seek
    /// at its speed and a margin when seeks cost more (at most half a second).
    private func prepareHorizon(for motion: CommandSchedule.Motion?) -> Double {
        let speed = motion.map { $0.rate > 0 ? $0.rate : known.speed } ?? known.speed
        return max(configuration.prepareHorizon, min(0.5, expectedSeek(at: speed) + 0.02))
    }
    /// The coordinator, while ``run(coordinator:)`` runs (for readiness reports).
    private var coordinator: PlaybackCoordinator?
    /// How long mpv's last loads ahead of an entry change took (seconds), newest last: from the
    /// instant the load was planned for (when the adapter got to it late, that lateness counts) to
    /// `playback-restart`.
    private var loadDurations: [Double] = []
    /// How long before the instant of an entry change the next entry is opened (seconds): the
    /// longest of the last eight loads plus 8 ms (50 ms before any was measured; at most 0.3 s).
    /// Its first frame then replaces the last frame of the entry before a little before it is due
    /// (paused on it until the instant); a load that completes after the instant is restarted where
    /// the group is, skipping the entry's first frames (docs/mpv.md). The member reports it as its
    /// preroll, so that a next / previous / jump leaves it that long (``PlaybackCoordinator/setPreroll(_:)``).
    var loadLead: Double {
        guard let longest = loadDurations.max() else { return 0.05 }
        return min(0.3, longest + 0.008)
    }
    /// The motion whose entry ``loadAhead(_:plannedAt:coordinator:)`` opened before its instant (nil once started,
    /// or when the load completed after the instant).
    private var openedAhead: CommandSchedule.Motion?
    /// The motion whose entry the loop waited to open ahead (``loadAhead(_:plannedAt:coordinator:)``).
    private var awaitedLoad: CommandSchedule.Motion?
    /// The group's queue as mpv's playlist shows it (nil: coplay has not touched the playlist), and
    /// the queue entry at each of mpv's playlist indices (nil: a file that is none of the group's).
    private var shownPlaylist: MPVPlaylist?
    private var shownEntries: [String?] = []
    /// The group's queue ``shownPlaylist`` was made from: an unchanged queue is not looked at again.
    private var shownQueue: PlayQueue?
    /// When the group's queue and entry were last looked at (``followGroup(_:)``).
    private var nextGroupLook = ContinuousClock.now
    /// The group entry (or item, outside a queue) this member has no copy of, while the group plays it.
    private var missing: String?
    /// Until when the control loop leaves mpv's file alone after the person changed it in mpv: the
    /// group's answer to the person's jump is on its way.
    private var personChoseFile: (item: String?, until: ContinuousClock.Instant)?

    /// The participant named in events.
    public nonisolated let participant: PlaybackParticipantID?
    /// Stops, corrections and the person's own actions.
    public nonisolated let events: AsyncStream<PlaybackEvent>

    /// Creates an adapter.
    ///
    /// - Parameters:
    ///   - connection: the IPC connection to mpv, stamped with the reference clock's seconds
    ///     (``MPVConnection/connect(path:stamp:group:)`` with `{ reference.now()?.seconds ?? .nan }`).
    ///   - items: the media it can play (the first is loaded).
    ///   - reference: the shared reference clock.
    ///   - participant: the name in events.
    ///   - configuration: tuning.
    ///   - realtime: the `CLOCK_REALTIME` reading used to stamp events.
    ///   - logger: where it logs.
    public init(
        connection: MPVConnection, items: [Item], reference: any ReferenceTimeSource, participant: PlaybackParticipantID? = nil,
        configuration: Configuration = .init(), realtime: @escaping @Sendable () -> Double = Realtime.now,
        logger: Logger
    ) {
        self.connection = connection
        self.items = Dictionary(items.map { ($0.timeline.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        self.normalizedPaths = self.items.mapValues { MPVOpen.normalized($0.path, in: nil) }
        self.firstItem = items.first?.timeline.identifier
        self.reference = reference
        self.participant = participant
        self.configuration = configuration
        self.unpauseLatency = configuration.unpauseLatency
        self.fileStartLag = configuration.expectedFileStartLag
        self.realtime = realtime
        self.logger = logger
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4096))
        (noticeEvents, noticeContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
        notices.level = configuration.notices
    }

    /// Opens `item` paused on `mpv` and checks that mpv can play it: call it before joining, so
    /// that a file mpv cannot open is a clear error rather than a member that never plays.
    ///
    /// An mpv a person runs may already show the file, or hold it in its playlist (``MPVOpen``): then
    /// that entry is used, with an exact seek where it stands (it settles any setting just changed,
    /// such as the tempo filter ``MPVAttachment`` adds); otherwise the file is added to the playlist.
    ///
    /// - Throws: ``MPVError/cannotPlay(_:_:)`` with mpv's reason; ``MPVError/ipc(_:)``.
    public static func preload(_ item: Item, on mpv: MPVConnection, timeout: Duration = .seconds(30)) async throws {
        try await mpv.set("pause", true)
        let events = mpv.events()
        let action = try await openAction(for: item.path, on: mpv)
        if action == .alreadyOpen {
            // mpv names the file (`path`) as soon as it starts opening it; it can seek once it has a
            // position (an mpv started a moment before coplay may still be opening it).
            let deadline = ContinuousClock.now + timeout
            var position = try await mpv.number("time-pos")
            while position == nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                position = try await mpv.number("time-pos")
            }
            guard let position else { throw MPVError.cannotPlay(item.path, "mpv did not open it within \(timeout)") }
            try await mpv.run(["seek", position, "absolute+exact"])
        } else {
            try await open(item.path, action, on: mpv)
        }
        let outcome = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for await event in events {
                    if event.name == "playback-restart" { return nil }
                    if event.name == "end-file", event.reason == "error" { return event.fileError ?? "unknown error" }
                }
                throw MPVError.quit("mpv exited while opening \(item.path)")
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return "mpv did not open it within \(timeout)"
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
        if let outcome { throw MPVError.cannotPlay(item.path, outcome) }
        guard let video = try await mpv.number("video-params/w"), video > 0 else {
            throw MPVError.cannotPlay(item.path, "mpv found no video in it (started with --vid=no or --no-video?)")
        }
    }

    /// How to open `path` in `mpv` (``MPVOpen``), from its playlist, path and working directory.
    static func openAction(for path: String, on mpv: MPVConnection) async throws -> MPVOpen {
        let playlist = MPVOpen.entries(try await mpv.get("playlist").data)
        let loaded = try await mpv.get("path").succeeded
        let directory = try await mpv.get("working-directory").data.string
        return MPVOpen.decide(item: path, playlist: playlist, loaded: loaded, workingDirectory: directory)
    }

    /// Starts opening `path` as `action` says (completion: `playback-restart`, or `end-file` with an error).
    static func open(_ path: String, _ action: MPVOpen, on mpv: MPVConnection) async throws {
        let absolute = MPVOpen.normalized(path, in: nil)
        switch action {
        case .alreadyOpen: break
        case .playEntry(let index): try await mpv.run(["playlist-play-index", index])
        case .replace: try await mpv.run(["loadfile", absolute, "replace"])
        case .append(let index):
            try await mpv.run(["loadfile", absolute, "append"])
            try await mpv.run(["playlist-play-index", index])
        }
    }

    /// The group's rate without the adapter's trim (what mpv's `speed` should be when the member
    /// leaves), once there is a group state.
    public func groupRate() async -> Double? {
        await coordinator?.state?.intendedRate
    }

    public func handle(_ command: PlaybackCommand) async {
        schedule.insert(command)
    }

    /// The coordinator of the session playback moved to (a host removed someone): the person's keys
    /// and the readiness reports go to it from now on; mpv plays on.
    public func follow(_ coordinator: PlaybackCoordinator) {
        self.coordinator = coordinator
        notices.local = coordinator.participant
    }

    /// Loads the first item paused, then follows the coordinator's commands and the person's actions
    /// until cancelled or until mpv quits (then it returns, and the member leaves).
    public func run(coordinator: PlaybackCoordinator) async throws {
        defer {
            eventContinuation.finish()
            noticeContinuation.finish()
        }
        self.coordinator = coordinator
        // A member with several files opens the next entry's file ahead of an entry change: the
        // group's commands leave it the time that takes (refined from every load, loadAhead).
        if items.count > 1 { await coordinator.setPreroll(.secondsRounded(loadLead)) }
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                let events = connection.events()
                group.addTask { try await self.followEvents(coordinator, events) }
                group.addTask { await self.showNotices(coordinator) }
                group.addTask { await self.expireNotices() }
                try await connection.observe("pause", id: 1)
                try await connection.observe("speed", id: 2)
                // A stream that runs dry (network media) is a stall: the group waits for it.
                try await connection.observe("paused-for-cache", id: 3)
                // Own changes are told apart from the person's by their values: know the current ones first.
                try await waitFor(timeout: 10) { known.initialized.isSuperset(of: ["pause", "speed"]) }
                try await setPause(true)
                if let firstItem { try await load(firstItem, coordinator: coordinator) }
                group.addTask { try await self.control(coordinator) }
                try await group.next()
                group.cancelAll()
            }
        } catch let error as MPVError where error.isQuit {
            logger.notice("mpv quit; leaving the session", metadata: ["detail": "\(error)"])
        }
    }

    // MARK: Events: completions and the person's actions

    private func followEvents(_ first: PlaybackCoordinator, _ events: AsyncStream<MPVEvent>) async throws {
        for await event in events {
            let coordinator = self.coordinator ?? first  // a successor session's (follow(_:))
            switch event.name {
            case "property-change":
                await propertyChanged(event, coordinator: coordinator)
            case "seek":
                if !known.ownSeekActive { known.userSeekPending = true }
            case "playback-restart":
                known.restarts += 1
                known.ownSeekActive = false
                if known.userSeekPending {
                    known.userSeekPending = false
                    await userSeeked(coordinator)
                }
            case "file-loaded":
                known.loads += 1
            case "start-file":
                let recent = ContinuousClock.now - Self.echoWindow
                known.ownLoads.removeAll { $0 < recent }
                if known.ownLoads.isEmpty {
                    await personChangedFile(event.playlistEntryID, coordinator: coordinator)
                } else {
                    known.ownLoads.removeFirst()
                }
            case "end-file":
                if event.reason == "error" { known.loadError = event.fileError ?? "unknown error" }
                if event.reason == "quit" { throw MPVError.quit("the person quit mpv") }
            case "shutdown":
                throw MPVError.quit("mpv shut down")
            case "client-message" where event.args == MPVAttachment.frameStepMessage:
                await frameStep(coordinator)
            case "client-message" where event.args == MPVAttachment.nextMessage:
                await queueKey(next: true, coordinator)
            case "client-message" where event.args == MPVAttachment.previousMessage:
                await queueKey(next: false, coordinator)
            default:
                break
            }
        }
        throw MPVError.quit("the IPC connection closed")
    }

    private func propertyChanged(_ event: MPVEvent, coordinator: PlaybackCoordinator) async {
        guard let property = event.property else { return }
        guard known.initialized.contains(property) else {
            // The first notification is the value when observing began: not an action.
            known.initialized.insert(property)
            if property == "pause", let paused = event.data.bool { known.paused = paused }
            if property == "speed", let speed = event.data.number { known.speed = speed }
            return
        }
        switch property {
        case "paused-for-cache":
            coordinator.reportReadiness(event.data.bool == true ? .starved : .ready)
        case "pause":
            guard let paused = event.data.bool else { return }
            known.paused = paused
            let recent = ContinuousClock.now - Self.echoWindow
            known.ownPauses.removeAll { $0.at < recent }
            if let index = known.ownPauses.firstIndex(where: { $0.value == paused }) {
                known.ownPauses.removeSubrange(...index)
                return
            }
            // mpv pauses by itself at the end of the file (keep-open): the group's timeline ends
            // there too, on the shared clock, by nobody's command.
            if paused, (try? await connection.get("eof-reached"))?.data.bool == true {
                playing = false
                return
            }
            // The person paused or resumed in mpv: that is a group command.
            playing = !paused
            applied = nil
            emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, detail: paused ? "user pause" : "user play"))
            do { if paused { try await coordinator.pause() } else { try await coordinator.play() } } catch {
                logger.info("could not propose the person's pause/play", metadata: ["error": "\(error)"])
                await putBackIfRefused(error, coordinator: coordinator)
            }
        case "speed":
            guard let speed = event.data.number else { return }
            known.speed = speed
            let recent = ContinuousClock.now - Self.echoWindow
            known.ownSpeeds.removeAll { $0.at < recent }
            if let index = known.ownSpeeds.firstIndex(where: { abs($0.value - speed) < Self.speedTolerance }) {
                known.ownSpeeds.removeSubrange(...index)
                return
            }
            // While the group is paused a rate change would start it: the speed keys act only on playback.
            guard let state = await coordinator.state, state.rate > 0 else { return }
            emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, rate: speed, detail: "user speed"))
            do { try await coordinator.coordinateRateChange(to: speed) } catch {
                logger.info("could not propose the person's speed", metadata: ["error": "\(error)"])
                if await putBackIfRefused(error, coordinator: coordinator) { _ = try? await setSpeed(state.rate) }
            }
        default:
            break
        }
    }

    /// The frame-step key (rebound by ``MPVAttachment``): a group step, see ``FrameStep``.
    private func frameStep(_ coordinator: PlaybackCoordinator) async {
        let state = await coordinator.state
        let action = FrameStep.action(
            groupRate: state?.rate, itemTime: await coordinator.currentItemTime, timeline: state.flatMap { items[$0.item]?.timeline })
        do {
            switch action {
            case .seek(let itemTime):
                emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, itemTime: itemTime, detail: "user frame step"))
                try await coordinator.coordinateSeek(to: itemTime)
            case .pause:
                emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, detail: "user frame step"))
                try await coordinator.pause()
            case .ignored:
                break
            }
        } catch {
            logger.info("could not propose the person's frame step", metadata: ["error": "\(error)"])
            await putBackIfRefused(error, coordinator: coordinator)
        }
    }

    /// mpv's playlist keys (rebound by ``MPVAttachment``): the group's next or previous entry. The
    /// person's mpv changes nothing by itself; the group's command moves it with everyone.
    private func queueKey(next: Bool, _ coordinator: PlaybackCoordinator) async {
        emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, detail: next ? "user next" : "user previous"))
        do {
            if next { try await coordinator.coordinateNext() } else { try await coordinator.coordinatePrevious() }
        } catch {
            logger.info("could not propose the person's \(next ? "next" : "previous")", metadata: ["error": "\(error)"])
            if await !putBackIfRefused(error, coordinator: coordinator) { await showText("coplay: \(error)", seconds: 4) }
        }
    }

    /// mpv started a file the adapter did not ask for (the person chose an entry of mpv's playlist
    /// by a means coplay did not rebind: the on-screen controller, a script, `playlist-next` over IPC):
    /// a group jump to that entry when it is one of the group's. mpv is paused meanwhile, and the
    /// control loop leaves its file alone until the group answers (or 2 s pass, and it goes back
    /// to the group's entry).
    private func personChangedFile(_ playlistEntryID: Int?, coordinator: PlaybackCoordinator) async {
        loadedItem = nil
        applied = nil
        playing = false
        try? await setPause(true)
        var entry: String?
        if let playlistEntryID, let playlist = try? await connection.get("playlist").data.array,
            let index = playlist.firstIndex(where: { $0["id"]?.number == Double(playlistEntryID) }), shownEntries.indices.contains(index)
        {
            entry = shownEntries[index]
        }
        let queue = await coordinator.queue
        guard let entry, let queued = queue.entry(entry), let position = queue.position(of: entry) else {
            personChoseFile = nil
            await showText("coplay: that file is not in the group's queue; back to the group's entry", seconds: 4)
            return
        }
        personChoseFile = (queued.item, ContinuousClock.now + .seconds(2))
        emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, detail: "user jump", entry: entry))
        do { try await coordinator.coordinateJump(toPosition: position) } catch {
            personChoseFile = nil
            logger.info("could not propose the person's choice of entry", metadata: ["error": "\(error)"])
            if await !putBackIfRefused(error, coordinator: coordinator) { await showText("coplay: \(error)", seconds: 4) }
        }
    }

    // MARK: Notices

    /// Shows a notice of the group's `event` on mpv's screen ("alice paused at 12:34"), as
    /// `PlaybackNotices` words it at ``Configuration/notices``: feed it every event of the
    /// coordinator, in order (`GroupPlayback`'s `onEvent`). The last few notices stay a few seconds
    /// each, in an `osd-overlay` of their own; their text is also readable over IPC, in
    /// `user-data/coplay/notices` (mpv 0.36 and later) or the `coplay-notices` key of
    /// `shared-script-properties` (earlier mpv).
    public nonisolated func notify(_ event: PlaybackEvent) {
        guard event.type != .frame else { return }
        noticeContinuation.yield(event)
    }

    private func showNotices(_ first: PlaybackCoordinator) async {
        notices.local = first.participant
        for await event in noticeEvents {
            let coordinator = self.coordinator ?? first
            if [.next, .previous, .jump, .itemChanged].contains(event.type) {
                for entry in await coordinator.queue.entries { notices.titles[entry.id] = entry.title }
            }
            for (identifier, item) in items where notices.titles[identifier] == nil {
                notices.titles[identifier] = item.path.split(separator: "/").last.map(String.init) ?? item.path
            }
            guard let text = notices.notice(for: event) else { continue }
            noticeBoard.add(text, now: Self.uptime())
            await drawNotices()
        }
    }

    private func expireNotices() async {
        while !Task.isCancelled {
            if noticeBoard.expire(now: Self.uptime()) { await drawNotices() }
            let wait = noticeBoard.nextExpiry.map { max(0.01, $0 - Self.uptime()) } ?? 0.25
            try? await Task.sleep(for: .secondsRounded(min(wait, 0.25)))
        }
    }

    /// Seconds on the continuous clock (since the first reading), for the notice board.
    private static func uptime() -> Double {
        let elapsed = epoch.duration(to: .now).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
    }

    private static let epoch = ContinuousClock.now

    /// Draws the notice board (or removes it) and writes its text where scripts and tests read it.
    private func drawNotices() async {
        let ass = noticeBoard.ass
        var overlay: [String: any Sendable] = ["name": "osd-overlay", "id": 7, "format": ass.isEmpty ? "none" : "ass-events", "data": ass]
        if !ass.isEmpty {
            overlay["res_x"] = 0
            overlay["res_y"] = 720
            overlay["z"] = 10
        }
        _ = try? await connection.command(named: overlay)
        let text = noticeBoard.text
        if noticeProperty != "shared-script-properties",
            (try? await connection.command(["set_property", "user-data/coplay/notices", text]))?.succeeded == true
        {
            noticeProperty = "user-data/coplay/notices"
            return
        }
        noticeProperty = "shared-script-properties"
        // mpv 0.35: a map shared by scripts (the on-screen controller keeps its keys in it).
        var shared: [String: String] = [:]
        if case .object(let current)? = try? await connection.get("shared-script-properties").data {
            for (key, value) in current { if let string = value.string { shared[key] = string } }
        }
        shared["coplay-notices"] = text
        _ = try? await connection.command(["set_property", "shared-script-properties", shared])
    }

    /// Shows `text` on mpv's screen for `seconds` (errors ignored: a message is no reason to stop).
    private func showText(_ text: String, seconds: Double) async {
        _ = try? await connection.run(["show-text", text, Int(seconds * 1000)])
    }

    private func userSeeked(_ coordinator: PlaybackCoordinator) async {
        guard let position = try? await connection.number("time-pos") else { return }
        applied = nil
        emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, itemTime: position, detail: "user seek"))
        do { try await coordinator.coordinateSeek(to: position) } catch {
            logger.info("could not propose the person's seek", metadata: ["error": "\(error)"])
            await putBackIfRefused(error, coordinator: coordinator)
        }
    }

    /// After a command of the person's that the group refused because this member does not
    /// control the session (a viewer where only hosts control,
    /// ``PlaybackCoordinatorError/onlyHostsControl``): mpv goes back to the group's position and
    /// pause (the control loop applies the group's motion again) and its screen says why, on the
    /// notice board. Whether it was that refusal.
    @discardableResult
    private func putBackIfRefused(_ error: any Error, coordinator: PlaybackCoordinator) async -> Bool {
        guard let refusal = error as? PlaybackCoordinatorError, refusal == .onlyHostsControl else { return false }
        playing = (await coordinator.state?.rate ?? 0) > 0
        applied = nil
        emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, detail: "put back: \(refusal)"))
        noticeBoard.add(refusal.description, now: Self.uptime())
        await drawNotices()
        return true
    }

    // MARK: Control: follow the schedule

    private func control(_ first: PlaybackCoordinator) async throws {
        while !Task.isCancelled {
            let coordinator = self.coordinator ?? first  // a successor session's (follow(_:))
            guard let now = reference.now() else {
                try await Task.sleep(for: .milliseconds(10))
                continue
            }
            schedule.prune(before: now - .seconds(5))
            var current = schedule.motion(at: now)
            var next = schedule.next(after: now)
            if let upcoming = next, upcoming == applied {
                // Carried out ahead of its instant (a start unpauses up to a frame early, on the frame
                // before the group's item time; a rate change goes out mid-frame): it is the motion in
                // force, not one to carry out again. Doing it again had paused mpv at the instant and
                // restarted it with an exact seek after nearly every start.
                current = upcoming
                next = schedule.next(after: upcoming.referenceTime)
            }
            // The queue and the entry: mpv's playlist, a missing entry (never close to a motion's instant).
            if next.map({ ($0.referenceTime - now).secondsValue > 0.3 }) ?? true { try await followGroup(coordinator) }
            if let chosen = personChoseFile {
                // The person picked a file in mpv: leave it alone until the group's answer names it.
                if ContinuousClock.now < chosen.until, (next ?? current)?.item != chosen.item {
                    try await Task.sleep(for: .milliseconds(10))
                    continue
                }
                personChoseFile = nil
            }
            if let current, let next, current.item == loadedItem, next.item != loadedItem, applied == current {
                // Another entry at the next instant (the end of this one, or a next/previous/jump):
                // this one stays on screen, and the next is opened just before the instant.
                let loadAt = next.referenceTime - .secondsRounded(loadLead)
                if now < loadAt {
                    awaitedLoad = next
                    if current.rate > 0, playing {
                        try await track(current, before: loadAt)
                    } else {
                        try await Task.sleep(for: .secondsRounded(min(0.02, max(0.001, (loadAt - now).secondsValue))))
                    }
                    continue
                }
                // Planned for loadAt only if the loop waited for it (a command that came with less lead
                // than the load takes is not the loop's lateness).
                try await loadAhead(next, plannedAt: awaitedLoad == next ? loadAt : nil, coordinator: coordinator)
                awaitedLoad = nil
                continue
            }
            if let wanted = Self.itemToOpen(
                current: current, next: next, now: now, playable: { items[$0] != nil },
                startCost: 2 * loadLead + configuration.restartDelay + Self.openMargin), wanted != loadedItem
            {
                try await load(wanted, coordinator: coordinator)
                applied = nil
                continue
            }
            if let next, (next.referenceTime - now).secondsValue <= prepareHorizon(for: next) {
                try await transition(to: next, from: current)
                continue
            }
            if let current, applied != current, !playing, openedAhead == current, let now = reference.now(),
                (now - current.referenceTime).secondsValue * current.rate < configuration.lateOpenStart
            {
                // The next entry opened, paused on its first frame, just before its instant, and reading
                // the opened file took it a few ms past: start it now, and the controller trims those
                // ms away. A restart would skip the entry's first 0.16 s or more behind a hold.
                openedAhead = nil
                try await transition(to: current, from: nil)
                continue
            }
            if let current, applied != current, current.item == loadedItem {
                // (Never on another file: with the next entry opened ahead of its instant, the one in
                // force is skipped, and mpv holds the next one's first frame until then.)
                try await restart(current)
                continue
            }
            if let current, current.rate > 0, playing {
                try await track(current, before: next.map { $0.referenceTime - .secondsRounded(prepareHorizon(for: $0)) })
                continue
            }
            var pause = 0.02
            if let next { pause = min(pause, max(0.001, (next.referenceTime - now).secondsValue - prepareHorizon(for: next))) }
            try await Task.sleep(for: .secondsRounded(pause))
        }
    }

    /// What a late start of the motion in force needs on top of opening the next entry ahead of it
    /// (``itemToOpen(current:next:now:playable:startCost:)``) (seconds).
    package static let openMargin = 0.1

    /// The item mpv should have open now, while the motion in force (`current`) is not carried out:
    /// `current`'s, unless the next motion plays another item so soon that opening `current`'s file,
    /// starting it late and opening the next one ahead (`startCost`, seconds) do not fit before it;
    /// then the next one's, held paused on its first frame until its instant. The next one's too when
    /// this member has no copy of `current`'s item (`playable`), or when nothing is in force yet.
    ///
    /// Both can be new at once: a member that was cut off from the relay across an entry's end
    /// (reconnecting, or stopped) learns at once that the group moved to the next entry a while
    /// ago and moves on from it shortly. Opening the later of the two and then starting the one in
    /// force had started the wrong file, at the position of the one in force (found by an
    /// exploratory run: a relay restarted across an entry's end, mpv members; mpv showed entry 1
    /// from 2.27 s while the group played entry 3 there, for 0.4 s).
    package static func itemToOpen(
        current: CommandSchedule.Motion?, next: CommandSchedule.Motion?, now: ReferenceTime,
        playable: (String) -> Bool, startCost: Double
    ) -> String? {
        guard let current else { return next?.item }
        guard let next, next.item != current.item else { return current.item }
        guard playable(current.item) else { return next.item }
        return (next.referenceTime - now).secondsValue > startCost ? current.item : next.item
    }

    /// Looks at the group's queue and entry (at most every 250 ms): mpv's playlist shows the group's
    /// queue (``MPVPlaylist``), and an entry this member has no copy of is said on mpv's screen (the
    /// coordinator reports it, as a `missingEntry` event and a `coordinatedPlaybackNotPossible`
    /// suspension, and sends the player nothing for it; the player holds its last frame meanwhile
    /// and follows again from the next entry it has).
    private func followGroup(_ coordinator: PlaybackCoordinator) async throws {
        let clock = ContinuousClock.now
        guard clock >= nextGroupLook else { return }
        nextGroupLook = clock + .milliseconds(250)
        let state = await coordinator.state
        let queue = await coordinator.queue
        let hasQueue = await coordinator.hasQueue

        // A missing entry.
        if let state, items[state.item] == nil {
            let key = state.entry ?? state.item
            if missing != key {
                missing = key
                let title = state.entry.flatMap { queue.entry($0)?.title }
                let position = state.entry.flatMap { queue.position(of: $0) }
                let named = title.map { "“\($0)”" } ?? "an item"
                let place = position.map { " (entry \($0) of \(queue.entries.count))" } ?? ""
                await showText("coplay: the group plays \(named)\(place), which you have no copy of.\nYou rejoin at the next entry you have.", seconds: 24 * 3600)
            }
        } else if missing != nil {
            missing = nil
            await showText("", seconds: 0)
        }

        // mpv's playlist: the group's queue, when there is one.
        guard hasQueue, !queue.isEmpty, queue != shownQueue || shownPlaylist == nil else { return }
        let wanted = MPVPlaylist(queue: queue, normalizedPaths: normalizedPaths)
        guard wanted != shownPlaylist else {
            shownQueue = queue
            return
        }
        let directory = try await connection.get("working-directory").data.string
        let current = try await connection.get("path").data.string.map { MPVOpen.normalized($0, in: directory) }
        let playlist = MPVOpen.entries(try await connection.get("playlist").data)
        if !wanted.isShown(by: playlist, workingDirectory: directory) {
            for step in wanted.steps(current: current, playing: state?.entry) {
                _ = try await connection.run(step)
            }
        }
        shownPlaylist = wanted
        shownEntries = wanted.shown(current: current)
        shownQueue = queue
    }

    /// Carries out `next` at its instant, from whatever the player does now.
    private func transition(to next: CommandSchedule.Motion, from current: CommandSchedule.Motion?) async throws {
        ratePlan = nil
        if next.rate > 0 {
            if playing, let current, applied == current, current.rate > 0, current.isContinued(by: next), !hasAudio {
                try await changeRate(from: current, to: next)
                return
            }
            if playing, next.itemTime < 1e-6, current.map({ $0.item == next.item }) ?? false {
                // The same entry again from its start (repeat one, the same file queued twice, a
                // previous): play on until just before the instant, then show the first frame
                // paused and start it at the instant.
                let frame = framePTS(next.item, at: next.itemTime)
                let start = next.referenceTime - .secondsRounded((next.itemTime - frame) / next.rate)
                try await wait(until: start - .secondsRounded(max(0.005, expectedSeek(at: next.rate) + 0.004)))
                try await setPause(true)
                playing = false
                try await prepareStart(at: frame, rate: next.rate, neededBy: start)
                try await startOrRestart(next, at: start)
                return
            }
            if playing {
                // A jump while playing: play on until the instant, then restart at the new time.
                try await wait(until: next.referenceTime)
                try await setPause(true)
                playing = false
                try await restart(next)
                return
            }
            // mpv shows the first frame at or after a seek target: seek to the frame on screen at the
            // motion's item time, and start when the group's timeline reaches that frame.
            let frame = framePTS(next.item, at: next.itemTime)
            let start = next.referenceTime - .secondsRounded((next.itemTime - frame) / next.rate)
            try await prepareStart(at: frame, rate: next.rate, neededBy: start)
            try await startOrRestart(next, at: start)
        } else {
            var stoppedAt: Double?
            if playing {
                try await wait(until: next.referenceTime)
                try await setPause(true)
                stoppedAt = realtime()
                playing = false
            }
            // Drop the trim before the snap, so that the next start at the group's rate finds mpv's speed
            // already in place and needs no seek of its own (on a file with audio, a speed changed
            // while paused needs one after it; see `prepareStart`).
            let speedChanged = trim != 1 ? try await untrim() : false
            // Snap to the group's frame (the person who paused in mpv moves on to it too). Paused by
            // us while playing, mpv is part-way through the frame it shows even when `time-pos` is the
            // group's frame: its clock keeps the elapsed part, so the next start would show the
            // following frame that much early (measured: every play after a pause and every resume
            // after a suspension 13-20 ms ahead at 25 fps, trimmed away over about a second, each
            // player differently). An exact seek onto the same frame starts its clock afresh.
            try await seekIfNeeded(to: framePTS(next.item, at: next.itemTime), force: stoppedAt != nil || (speedChanged && hasAudio))
            emitStopped(next, at: stoppedAt ?? realtime())
            applied = next
            // Stay in this branch no longer than the instant: the loop then finds it applied.
            try await wait(until: next.referenceTime)
        }
    }

    /// Unpauses at `start`, the instant `motion` reaches the frame mpv shows; when a seek or load made
    /// the player late by less than the seek threshold, at once (the controller trims the rest away),
    /// and by more, a restart.
    private func startOrRestart(_ motion: CommandSchedule.Motion, at start: ReferenceTime) async throws {
        if let now = reference.now(), now > start {
            guard (now - start).secondsValue * motion.rate < configuration.seekThreshold else {
                try await restart(motion)
                return
            }
        }
        try await unpause(at: start)
        applied = motion
    }

    /// Opens the entry that `next` plays, paused on its first frame, just before `next`'s instant:
    /// the entry before stays on screen until then (``loadLead``).
    private func loadAhead(_ next: CommandSchedule.Motion, plannedAt: ReferenceTime?, coordinator: PlaybackCoordinator) async throws {
        guard let item = items[next.item] else {
            loadedItem = next.item
            return
        }
        // Which line of mpv's playlist to play is decided while the entry before still plays: the
        // pause and the load go out back to back, so that its last frame is held no longer than
        // the load takes. The load's duration, which the lead learns, counts from here.
        let started = ContinuousClock.now
        let plan = try await openPlan(of: item, coordinator: coordinator)
        if playing {
            try await setPause(true)
            playing = false
        }
        frameClock.reset()
        audioClock.reset()
        // mpv begins the new file's sound by the delay in force when it opens it (one set between the
        // open and the start took a third of its effect): a start at the beginning gets it now, judged
        // by the file before (a picture and sound) until this one is read.
        try await putBackDelay(preShift: preShift(at: next.itemTime))
        let loads = known.loads
        let restarts = known.restarts
        known.loadError = nil
        known.ownSeekActive = true
        guard try await open(plan, item: item) else {
            known.ownSeekActive = false
            try await waitForPosition()
            loadedItem = next.item
            await readOpenedFile()
            applied = nil
            return
        }
        var late = false
        try await waitFor(timeout: 30) {
            if known.loads > loads && known.restarts > restarts || known.loadError != nil { return true }
            if !late, let now = reference.now(), now >= next.referenceTime {
                late = true
                coordinator.reportReadiness(.loading)
            }
            return false
        }
        if late { coordinator.reportReadiness(.ready) }
        if let error = known.loadError { throw MPVError.cannotPlay(item.path, error) }
        soundResync = false  // a file opened afresh starts its sound on time
        // From the instant planned: a loop that got to the load late (it was sampling or correcting
        // the entry before) made loads in time by their own measure complete after the instant.
        let sincePlanned = plannedAt.flatMap { planned in reference.now().map { ($0 - planned).secondsValue } } ?? 0
        loadDurations.append(max((ContinuousClock.now - started).secondsValue, sincePlanned))
        if loadDurations.count > 8 { loadDurations.removeFirst(loadDurations.count - 8) }
        await coordinator.setPreroll(.secondsRounded(loadLead))
        loadedItem = next.item
        await readOpenedFile()
        applied = nil
        openedAhead = late ? nil : next
    }

    /// How to open an item's file (``openPlan(of:coordinator:)``).
    private enum OpenPlan: Equatable {
        /// mpv has it open already.
        case alreadyOpen
        /// Its line of mpv's playlist, which shows the group's queue.
        case playIndex(Int)
        /// As ``MPVOpen`` decided from mpv's whole playlist.
        case open(MPVOpen)
    }

    /// Decides how to open `item`'s file: its line of mpv's playlist when the playlist shows the
    /// group's queue (the entry the group plays, else the first with the file), else as ``MPVOpen``
    /// decides. With the group's queue shown, only mpv's `path` is read: reading and matching mpv's
    /// whole playlist (a 1,000-entry queue) took 0.8-4.7 s in a debug build under load, and held the
    /// entry before paused on its last frame that long (`coplay bench --scenario queue`, docs/mpv.md).
    private func openPlan(of item: Item, coordinator: PlaybackCoordinator) async throws -> OpenPlan {
        if let shown = shownPlaylist,
            let index = shown.playIndex(of: item.timeline.identifier, preferring: await coordinator.state?.entry, in: shownEntries)
        {
            let path = try await connection.get("path").data.string
            // A relative name (a person's own file) is resolved against mpv's directory below.
            if path == nil || path!.hasPrefix("/") || path!.contains("://") {
                return path.map { MPVOpen.normalized($0, in: nil) } == normalizedPaths[item.timeline.identifier]
                    ? .alreadyOpen : .playIndex(index)
            }
        }
        let action = try await Self.openAction(for: item.path, on: connection)
        return action == .alreadyOpen ? .alreadyOpen : .open(action)
    }

    /// Starts opening `item`'s file as `plan` says.
    /// - Returns: whether a load started (false: mpv has the file open already).
    private func open(_ plan: OpenPlan, item: Item) async throws -> Bool {
        switch plan {
        case .alreadyOpen:
            return false
        case .playIndex(let index):
            known.ownLoads.append(ContinuousClock.now)
            try await connection.run(["playlist-play-index", index])
        case .open(let action):
            known.ownLoads.append(ContinuousClock.now)
            try await Self.open(item.path, action, on: connection)
        }
        return true
    }

    /// A rate change without a jump in item time.
    ///
    /// mpv applies a new `speed` from the next frame change on: the frame due next still comes at its
    /// old-speed time (measured: a change to 0.5 made every later frame 8-35 ms early, by the rest of
    /// the frame in progress). So the command goes out mid-frame, where it surely lands on the change
    /// ending the frame in progress at the group's instant (`boundary`); from there the player is
    /// ahead by (old - new rate) x (boundary - instant), the same for every player. The command sets
    /// the new rate times the trim of ``RateCatchUp``, which removes exactly that over the fewest whole
    /// frames the trim limit allows, and ``RatePlan`` ends the trim mid-way through the last of them.
    private func changeRate(from current: CommandSchedule.Motion, to next: CommandSchedule.Motion) async throws {
        ratePlan = nil
        guard let timeline = items[next.item]?.timeline, let frame = timeline.frame(displayedAt: next.itemTime),
            frame + 1 < timeline.frameCount
        else {
            try await wait(until: next.referenceTime)
            try await setSpeed(next.rate)
            applied = next
            return
        }
        let start = timeline.presentationTime(ofFrame: frame)
        let end = timeline.presentationTime(ofFrame: frame + 1)
        let running = current.rate * trim
        let boundary = next.referenceTime + .secondsRounded((end - next.itemTime) / running)
        let frameStart = next.referenceTime - .secondsRounded((next.itemTime - start) / running)
        try await wait(until: frameStart + (boundary - frameStart) / 2)
        let ahead = (current.rate - next.rate) * (boundary - next.referenceTime).secondsValue
        let plan = RateCatchUp.plan(timeline: timeline, changeInFrame: frame, ahead: ahead, maximumTrim: configuration.maximumTrim)
        frameClock.reset()
        audioClock.reset()
        applied = next
        lastCorrection = reference.now()
        guard let plan else {
            // No error to remove, or too few frames left: the controller takes it from here.
            trim = min(1 + configuration.maximumTrim, max(1 - configuration.maximumTrim, 1 - ahead / configuration.trimWindow / next.rate))
            try await setSpeed(next.rate * trim)
            return
        }
        trim = plan.trim
        try await setSpeed(next.rate * trim)
        let speed = next.rate * trim
        let lastStart = timeline.presentationTime(ofFrame: frame + plan.frames)
        let lastEnd = timeline.presentationTime(ofFrame: frame + 1 + plan.frames)
        let endCommandAt = boundary + .secondsRounded(((lastStart - end) + (lastEnd - lastStart) / 2) / speed)
        ratePlan = RatePlan(rate: next.rate, endCommandAt: endCommandAt, size: abs(ahead))
    }

    /// Ends a rate change's catch-up when its time has come (see ``RatePlan``); whether it did.
    private func finishRatePlan(now: ReferenceTime) async throws -> Bool {
        guard let plan = ratePlan, now >= plan.endCommandAt - .milliseconds(3) else { return false }
        try await wait(until: plan.endCommandAt)
        ratePlan = nil
        trim = 1
        try await setSpeed(plan.rate)
        lastCorrection = reference.now()
        return true
    }

    /// Starts `motion`, already in force, a little in the future (a late command, a re-anchoring).
    private func restart(_ motion: CommandSchedule.Motion) async throws {
        ratePlan = nil
        guard let now = reference.now() else { return }
        if motion.rate == 0 {
            if playing {
                try await setPause(true)
                playing = false
            }
            let speedChanged = trim != 1 ? try await untrim() : false
            try await seekIfNeeded(to: framePTS(motion.item, at: motion.itemTime), force: speedChanged && hasAudio)
            emitStopped(motion, at: realtime())
            applied = motion
            return
        }
        if playing {
            try await setPause(true)
            playing = false
        }
        var planned = now
        for attempt in 1...2 {
            // The start is the first frame change of the group's timeline at least the hold away (at
            // 0.25x a frame of 25 fps lasts 160 ms: the frame on screen at the hold's end began up to
            // that much before it, and its start would leave the seek that much less time).
            let earliest = planned + .secondsRounded(max(configuration.restartDelay, 1.25 * expectedSeek(at: motion.rate) + 0.03))
            let target = motion.itemTime(at: earliest)
            let frame = framePTS(motion.item, atOrAfter: target)
            try await prepareStart(at: frame, rate: motion.rate)
            let start = earliest + .secondsRounded((frame - target) / motion.rate)
            // A seek that outlasted the hold (the first at a new speed on a file with audio, a seek
            // slowed by load) would start the player that much late, to be re-anchored by the
            // controller half a second later: a second hold. Planned again at once instead, with the
            // seek's cost now known (measured: rate changes to 0.5 on plain mpv with audio landed
            // 100-170 ms late and were all re-anchored, 28 Nov 2026).
            if attempt == 1, let after = reference.now(), (after - start).secondsValue > configuration.restartOverrun {
                planned = after
                continue
            }
            try await unpause(at: start)
            break
        }
        applied = motion
    }

    /// Sets mpv's speed to the group's rate without the trim; whether it changed.
    private func untrim() async throws -> Bool {
        let rate = known.speed / trim
        trim = 1
        return try await setSpeed(rate)
    }

    /// Sets the speed for a start from `frame` (paused), then seeks there.
    ///
    /// The order matters on files with audio: mpv times video by its audio clock, and a speed changed
    /// while paused shifts the next start by about (1 - s) x 0.2 s (measured with `--ao=null`: +99 ms
    /// at 0.5, -203 ms at 1.5; also after a trim of a few per cent, a few ms) unless an exact seek
    /// follows it. So the speed is set first, and a changed speed forces the seek even onto the frame
    /// already shown; starts then land within 0.4 ms of the frame (docs/mpv.md).
    ///
    /// - Parameter neededBy: the start the group expects of this player, if any (see ``seekIfNeeded(to:force:neededBy:)``).
    private func prepareStart(at frame: Double, rate: Double, neededBy: ReferenceTime? = nil) async throws {
        trim = 1
        startFrame = frame
        let changed = try await setSpeed(rate)
        try await seekIfNeeded(to: frame, force: changed && hasAudio, neededBy: neededBy)
    }

    /// Unpauses so that the position starts moving at `instant`.
    private func unpause(at instant: ReferenceTime) async throws {
        ratePlan = nil
        openedAhead = nil
        // The command is handed to the connection's event loop 10 ms ahead and leaves from there at the
        // instant (MPVConnection's timed send, on its real-time event loop), so neither this task's
        // wake-up nor the hop to that thread is on the clock.
        let sendAt = instant - .secondsRounded(unpauseLatency)
        try await wait(until: sendAt - .milliseconds(10))
        try await setPause(false, at: sendAt)
        playing = true
        frameClock.reset()
        audioClock.reset()
        audioValidFrom = reference.now().map { $0 + .secondsRounded(configuration.audioSettle) }
        learnLatency = true
        judgeStart = hasAudio && hasPicture
        judgingFileStart = judgeStart && startFrame < configuration.fileStartWindow
        preShiftPending = false
        firstLate = nil
        lastCorrection = reference.now()
    }

    /// Puts the picture on the group's timeline after a start whose sound began `late` seconds (item
    /// time) late, without a re-anchoring.
    ///
    /// mpv begins the sound late after some starts, and the picture follows the sound: measured (mpv
    /// 0.35, `--ao=null`, 25 fps clips, 28 Nov 2026) 31-45 ms late for every start in the first
    /// 0.05 s of a file with AAC or PCM, and from 0.1-0.3 s of one with Opus; 0.5-4 ms elsewhere.
    /// No option changed it (`audio-buffer`, `ao-null-buffer`, `audio-stream-silence`,
    /// `initial-audio-sync=no` moves it to other positions). `audio-pts` shows it the moment the
    /// sound plays, as a steady lag, and the picture stays that late for good. A re-anchoring fixes
    /// both, but holds the picture still for 150 ms or more, a hold every member sees at the first
    /// play of every entry. Instead the lag is added to `audio-delay`: mpv then shows the picture
    /// that much ahead of its sound clock, on the group's timeline at once (within a few ms, within
    /// 1 ms after about half a second). The sound then catches up: the controller trims the speed by
    /// the sound's lag (at most 5 %, so 35 ms take about 0.7 s) and takes off the shift what the
    /// sound has caught up at each look (`correct`), so that the picture stays where it is. A seek
    /// or a load while a shift is left takes it back (``dropStartShift()``).
    private func shiftPicture(by late: Double) async throws {
        startShift += late
        try await applyDelay()
        audioClock.reset()
        frameClock.reset()
        emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, errorMs: -late * 1000, detail: "audio-delay"))
    }

    /// Takes back the `audio-delay` that ``shiftPicture(by:)`` added. The sound is still late until a
    /// seek or a load: the next seek is not skipped (``soundResync``).
    private func dropStartShift() async throws {
        guard startShift != 0 else { return }
        startShift = 0
        soundResync = true
        try await applyDelay()
    }

    /// Puts the person's `audio-delay` back before another file opens (read again after it opens),
    /// plus `preShift` for a start at the file's beginning (`preShift(at:)`).
    private func putBackDelay(preShift: Double? = nil) async throws {
        startShift = preShift ?? 0
        preShiftPending = preShift != nil
        let wanted = audioDelay + startShift
        let current = delaySet ?? audioDelay
        delaySet = preShift == nil ? nil : wanted
        if abs(current - wanted) >= 0.0002 { try await connection.set("audio-delay", wanted) }
    }

    /// The shift a start at `itemTime` gets ahead: on a file with a picture and sound, at its
    /// beginning (``Configuration/fileStartWindow``), minus the lag the last start there measured;
    /// else nil. Set before the start's seek or load, a delay moves where mpv begins the sound against
    /// the picture: taken off, it begins the picture on time (the opposite sign of
    /// ``shiftPicture(by:)``'s, which moves a picture already playing).
    private func preShift(at itemTime: Double) -> Double? {
        guard hasAudio, hasPicture, itemTime < configuration.fileStartWindow, let lag = fileStartLag else { return nil }
        return -lag
    }

    /// Sets mpv's `audio-delay` to the person's, plus the picture's shift after a late start, plus
    /// the compensation for a speed changed while playing; only on a file with a picture and sound
    /// (the picture follows the sound clock and this delay), and only when it changes.
    private func applyDelay() async throws {
        guard hasAudio, hasPicture else { return }
        let wanted = audioDelay + startShift + compensation
        if let set = delaySet, abs(set - wanted) < 0.0002 { return }
        if delaySet == nil, abs(wanted - audioDelay) < 0.0002 { return }
        delaySet = wanted
        try await connection.set("audio-delay", wanted)
    }

    /// One step of tracking: one position sample, and a correction when due.
    ///
    /// - Parameter deadline: wake no later than this (the next motion's preparation).
    private func track(_ motion: CommandSchedule.Motion, before deadline: ReferenceTime?) async throws {
        guard let item = items[motion.item] else { return }
        if hasAudio {
            try await trackAudio(motion, item: item, before: deadline)
            return
        }
        let reply = try await connection.get("time-pos")
        if let position = reply.data.number, reply.succeeded {
            frameClock.record(position: position, at: ReferenceTime(seconds: reply.midpoint))
        }
        guard let now = reference.now() else { return }
        if try await finishRatePlan(now: now) { return }
        if let last = lastCorrection, (now - last).secondsValue >= configuration.correctionInterval {
            lastCorrection = now
            try await correct(motion, item: item)
            if !playing { return }
        }
        // Sleep until shortly before the predicted change of frame, then sample densely until it is
        // seen (or clearly missed), so that a late wake-up only costs a few extra samples.
        let error = frameClock.error(for: motion) ?? 0
        var pause = configuration.fallbackSampling
        if let shown = frameClock.lastPosition, let index = item.timeline.frame(displayedAt: shown + 1e-6),
            index + 1 < item.timeline.frameCount
        {
            let nextPTS = item.timeline.presentationTime(ofFrame: index + 1)
            // From the last change seen, at the speed mpv runs now (the group's rate times the trim);
            // before any change, from the group's timeline and the error estimate.
            let predicted: ReferenceTime
            if let change = frameClock.changes.last, change.position == shown {
                predicted = change.instant + .secondsRounded((nextPTS - shown) / (motion.rate * trim))
            } else {
                predicted = motion.referenceTime + .secondsRounded((nextPTS - error - motion.itemTime) / motion.rate)
            }
            let untilDense = (predicted - now).secondsValue - configuration.denseWindow
            if untilDense > 0 {
                pause = min(untilDense, configuration.correctionInterval)
            } else if (now - predicted).secondsValue < 2 * configuration.denseWindow {
                pause = configuration.denseSampling
            }
        }
        if let deadline { pause = min(pause, max(0, (deadline - now).secondsValue)) }
        if let plan = ratePlan { pause = min(pause, max(0, (plan.endCommandAt - now).secondsValue - 0.002)) }
        // A plain sleep: samples are stamped when taken, so a late wake costs nothing but a wider
        // bracket, and busy-waiting here would hold a core per player.
        try await Task.sleep(for: .secondsRounded(pause))
    }

    /// One step of tracking on a file with audio: one `audio-pts` sample (``AudioClock``), and a
    /// correction when due. The audio clock moves smoothly, so no frame change needs predicting.
    private func trackAudio(_ motion: CommandSchedule.Motion, item: Item, before deadline: ReferenceTime?) async throws {
        let reply = try await connection.get("audio-pts")
        if reply.succeeded, let position = reply.data.number {
            let instant = ReferenceTime(seconds: reply.midpoint)
            if audioValidFrom.map({ instant >= $0 }) ?? true {
                audioClock.record(position: position, at: instant, roundTrip: reply.received - reply.sent)
            }
        }
        guard let now = reference.now() else { return }
        if let last = lastCorrection, (now - last).secondsValue >= configuration.correctionInterval {
            lastCorrection = now
            try await correct(motion, item: item)
            if !playing { return }
        }
        var pause = configuration.audioSampling
        if let deadline { pause = min(pause, max(0, (deadline - now).secondsValue)) }
        try await Task.sleep(for: .secondsRounded(pause))
    }

    /// Looks at the error and trims the speed, or seeks.
    private func correct(_ motion: CommandSchedule.Motion, item: Item) async throws {
        let frameInterval = item.timeline.duration / Double(max(1, item.timeline.frameCount))
        let settled = speedChangedAt.map { $0 + .secondsRounded(frameInterval / motion.rate) }
        // With audio, mpv's sound clock steps back by (speed change) x its buffer while a trim lasts
        // (``compensation``, added to `audio-delay` so that the picture does not step with it): that
        // step is not an error to correct. The picture runs ahead of the sound clock by mpv's
        // `audio-delay`: the person's, the compensation, and what ``shiftPicture(by:)`` added while the
        // sound catches up. `sound` is the error of the sound, `fine` the picture's.
        let sound = (hasAudio ? audioClock.error(for: motion, since: settled) : frameClock.error(for: motion, since: settled))
            .map { $0 + (hasAudio ? audioDelay + compensation : 0) }
        let fine = sound.map { $0 + (hasAudio ? startShift : 0) }
        let now = reference.now()
        if fine != nil { lastFineAt = now }
        guard let error = fine ?? frameClock.coarseError(for: motion, frameInterval: frameInterval) else { return }
        if learnLatency, let fine {
            // The first fine error after an unpause says how late the position started moving: the
            // latency that would have made this start exact is the one used minus the error. An error
            // of a whole frame is a start mpv placed a frame off (seen with audio tracks), not a latency
            // to learn: learning it made the next start a frame off the other way. The latency is the
            // median of the last seven such latencies: on a busy machine one start in ten or so comes
            // 3-10 ms late on mpv's side, and following each of those (half of every error, the rule
            // before) made the next start early by as much (`coplay bench --scenario queue`, 28 Nov).
            learnLatency = false
            if abs(fine) < frameInterval / 4 {
                let implied = min(0.05, max(-0.02, unpauseLatency - fine / motion.rate))
                impliedLatencies = Array((impliedLatencies + [implied]).suffix(7))
                let sorted = impliedLatencies.sorted()
                unpauseLatency = sorted[sorted.count / 2]
            }
        }
        if judgeStart, let fine {
            // The first fine errors of a start: sound that began late, by the same amount at two looks
            // (not a stall through an audio server, whose lag grows), moves the picture, not a restart.
            let late = -fine
            if late > configuration.soundStartError, late < configuration.soundStartLimit, ratePlan == nil {
                if let first = firstLate, abs(late - first) < configuration.soundStartSteadiness {
                    judgeStart = false
                    firstLate = nil
                    if judgingFileStart {
                        // Not shifted ahead: the next start at a beginning takes this lag off. Shifted and
                        // still late: the lag is kept (a start through an audio server can stall once more,
                        // ``AudioClock``), the rest put right while playing.
                        judgingFileStart = false
                        if startShift == 0 { fileStartLag = late }
                    }
                    try await shiftPicture(by: late)
                    return
                }
                if firstLate == nil {
                    firstLate = late
                    return  // looked at again at the next correction
                }
            }
            judgeStart = false
            firstLate = nil
            if judgingFileStart {
                // Not late: a start not shifted ahead had no lag at this beginning; one shifted ahead by
                // more than the lag that came (its picture early) is moved back by its error while
                // playing, not re-anchored on it. A shifted start on time keeps the lag.
                judgingFileStart = false
                if startShift >= 0 || fine >= configuration.soundStartError { fileStartLag = nil }
                if startShift < 0, fine >= configuration.soundStartError {
                    try await shiftPicture(by: -fine)
                    return
                }
            }
        }
        if startShift > 0, let sound {
            // The trim below brings the sound to the timeline; the shift shrinks with what is left of
            // the sound's error, so the picture stays on the timeline meanwhile. (A shift made ahead of
            // a start at a file's beginning is negative and stays until the next seek or load: the
            // picture is on time, and the sound clock reads the shift, not a sound to catch up.)
            let left = min(startShift, max(0, -sound))
            if abs(left - startShift) > 0.0005 || left == 0 {
                startShift = left < 0.0005 ? 0 : left
                try await applyDelay()
            }
        }
        // A coarse error (no tight bracket yet) is only trusted beyond a whole frame more.
        let threshold = configuration.seekThreshold + (fine == nil ? frameInterval : 0) + (ratePlan?.size ?? 0)
        if abs(error) > threshold, let now, reanchorAllowed(at: now) {
            reanchors.append(now)
            emit(PlaybackEvent(type: .correction, realtime: realtime(), player: participant, errorMs: error * 1000, detail: "seek"))
            try await restart(motion)
            return
        }
        // A rate change's catch-up runs open loop to its end.
        if ratePlan != nil { return }
        guard fine != nil else {
            // No tight measurement for a second: run at the group's rate rather than keep a trim blindly.
            if trim != 1, let now, (lastFineAt.map { (now - $0).secondsValue > 1 } ?? true) {
                trim = 1
                try await setSpeed(motion.rate)
            }
            return
        }
        // While the picture is shifted, the trim works on the sound's lag (the shift follows it).
        let trimmed = startShift > 0 ? sound ?? error : error
        let wanted: Double
        if abs(trimmed) <= configuration.deadband {
            wanted = 1
        } else {
            let raw = 1 - trimmed / configuration.trimWindow / motion.rate
            wanted = min(1 + configuration.maximumTrim, max(1 - configuration.maximumTrim, raw))
        }
        if abs(wanted - trim) > 1e-6 {
            trim = wanted
            try await setSpeed(motion.rate * trim)
            emit(PlaybackEvent(
                type: .correction, realtime: realtime(), player: participant, rate: motion.rate * trim, errorMs: trimmed * 1000,
                detail: "speed"))
        }
    }

    /// Whether a re-anchoring seek may be made now: fewer than ``Configuration/maximumReanchors`` in
    /// the last ``Configuration/reanchorWindow``. Beyond that the error is trimmed: a seek that keeps
    /// landing off (a start that stalls again) must not become a loop.
    private func reanchorAllowed(at now: ReferenceTime) -> Bool {
        reanchors.removeAll { (now - $0).secondsValue > configuration.reanchorWindow }
        return reanchors.count < configuration.maximumReanchors
    }

    // MARK: mpv operations

    private func load(_ identifier: String, coordinator: PlaybackCoordinator) async throws {
        guard let item = items[identifier] else {
            loadedItem = identifier  // Not playable here: the coordinator does not send its commands.
            return
        }
        playing = false
        frameClock.reset()
        audioClock.reset()
        try await setPause(true)
        try await putBackDelay()
        let loads = known.loads
        let restarts = known.restarts
        known.loadError = nil
        known.ownSeekActive = true
        guard try await open(try await openPlan(of: item, coordinator: coordinator), item: item) else {
            // Already open (``preload(_:on:timeout:)``, the person's own mpv, or a file the person
            // chose in mpv, which may still be opening).
            known.ownSeekActive = false
            try await waitForPosition()
            loadedItem = identifier
            await readOpenedFile()
            return
        }
        coordinator.reportReadiness(.loading)
        try await waitFor(timeout: 30) { known.loads > loads && known.restarts > restarts || known.loadError != nil }
        if let error = known.loadError { throw MPVError.cannotPlay(item.path, error) }
        soundResync = false  // a file opened afresh starts its sound on time
        loadedItem = identifier
        await readOpenedFile()
        coordinator.reportReadiness(.ready)
    }

    /// Waits until mpv has a position in the open file (it may still be opening it).
    private func waitForPosition() async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? await connection.number("time-pos")) == nil {
            guard ContinuousClock.now < deadline else { throw MPVError.ipc("mpv had no position in its file within 10 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Whether mpv plays an audio track for the loaded file.
    private func audioPlays() async -> Bool {
        guard let reply = try? await connection.get("current-tracks/audio/id") else { return false }
        return reply.succeeded && reply.data.number != nil
    }

    /// What the adapter needs to know of a file mpv has just opened: whether it plays sound and shows
    /// a picture, and the person's `audio-delay` (nothing of the adapter's is in it: ``putBackDelay()``
    /// ran before the load); its sound is buffered at the present speed.
    private func readOpenedFile() async {
        hasAudio = await audioPlays()
        hasPicture = await picturePlays()
        let delay = (try? await connection.number("audio-delay")).flatMap { $0 } ?? 0
        bufferedSpeed = known.speed
        // A shift set ahead of the open is the adapter's, not the person's.
        audioDelay = delay - startShift
        delaySet = startShift != 0 ? delay : nil
        if startShift != 0, !(hasAudio && hasPicture) {
            // No picture following a sound here: nothing to shift.
            startShift = 0
            preShiftPending = false
            delaySet = nil
            try? await connection.set("audio-delay", audioDelay)
        }
    }

    /// Whether the loaded file shows a moving picture (a video track that is not cover art).
    private func picturePlays() async -> Bool {
        guard let reply = try? await connection.get("current-tracks/video/albumart") else { return false }
        return reply.succeeded && reply.data.bool == false
    }

    /// Seeks exactly to `itemTime` unless mpv is paused there already (or `force`).
    ///
    /// An exact seek decodes from the keyframe before its target, so it costs from a few ms to
    /// hundreds (on files with audio and long keyframe intervals, and longer at speeds other than 1,
    /// where that audio goes through the tempo filter too; docs/mpv.md). The player reports itself not
    /// ready only when the seek is still running at `neededBy`, the instant the group expects it to
    /// play: a seek done in time makes nobody wait. The adapter's own seeks (a pause's or a wait's snap
    /// to the group's frame, a re-anchoring, a restart at a new speed) pass no instant; their restarts
    /// are placed after the seeks' measured cost (``expectedSeek(at:)``). Reporting every seek had made each
    /// slow one a group suspension, whose own snap seeks began the next.
    private func seekIfNeeded(to itemTime: Double, force: Bool = false, neededBy: ReferenceTime? = nil) async throws {
        var force = force
        let predicted = preShift(at: itemTime)
        if preShiftPending, !playing, let predicted, abs(predicted - startShift) < 0.0002 {
            // The file opened, or the last seek ran, with this start's shift in force: nothing to undo.
        } else {
            // A shift of the picture ends with the seek that restarts the sound on time; a start at the
            // file's beginning gets its shift ahead, in force before the seek (so the seek is made).
            try await dropStartShift()
            preShiftPending = false
            if let predicted {
                startShift = predicted
                preShiftPending = true
                force = true
            }
        }
        if !force, !soundResync, !playing, let position = try? await connection.number("time-pos"), abs(position - itemTime) < 1e-6 { return }
        let restarts = known.restarts
        known.ownSeekActive = true
        // The seek buffers the sound afresh at the present speed, and syncs it by the `audio-delay` in
        // force as it starts: the delay without a compensation goes out first.
        bufferedSpeed = known.speed
        try await applyDelay()
        let started = ContinuousClock.now
        try await connection.run(["seek", max(0, itemTime), "absolute+exact"])
        soundResync = false
        var late = false
        try await waitFor(timeout: 10) {
            if known.restarts > restarts { return true }
            if !late, let neededBy, let now = reference.now(), now >= neededBy {
                late = true
                coordinator?.reportReadiness(.seeking)
            }
            return false
        }
        if late { coordinator?.reportReadiness(.ready) }
        recordSeek((ContinuousClock.now - started).secondsValue)
        frameClock.reset()
        audioClock.reset()
    }

    /// Remembers how long an exact seek at mpv's present speed took (``expectedSeek(at:)``).
    private func recordSeek(_ seconds: Double) {
        let key = seekKey(known.speed)
        var durations = seekDurations[key] ?? []
        durations.append(seconds)
        if durations.count > 8 { durations.removeFirst(durations.count - 8) }
        seekDurations[key] = durations
    }

    /// Sets mpv's `pause`; with `instant`, the command leaves at that reference instant
    /// (``MPVConnection/command(_:at:)``).
    private func setPause(_ paused: Bool, at instant: ReferenceTime? = nil) async throws {
        if known.paused != paused { known.ownPauses.append((paused, ContinuousClock.now)) }
        known.paused = paused
        guard let instant else {
            try await connection.set("pause", paused)
            return
        }
        let reply = try await connection.command(["set_property", "pause", paused], at: instant.seconds)
        guard reply.succeeded else { throw MPVError.commandFailed("set_property pause \(paused)", reply.error) }
    }

    /// mpv reports `speed` rounded to 6 decimals (it is told 1.0030292140000001 and says 1.003029), so
    /// the adapter sets speeds on that grid and matches its own within a tolerance: a trim mistaken for
    /// the person's speed key would be proposed to the whole group as a rate change.
    static let speedTolerance = 2e-6

    /// Sets mpv's `speed` (on its 6-decimal grid); whether it changed.
    @discardableResult
    private func setSpeed(_ requested: Double) async throws -> Bool {
        let speed = (requested * 1e6).rounded() / 1e6
        guard abs(speed - known.speed) >= Self.speedTolerance else { return false }
        speedChangedAt = reference.now()
        known.ownSpeeds.append((speed, ContinuousClock.now))
        if known.ownSpeeds.count > 64 { known.ownSpeeds.removeFirst(known.ownSpeeds.count - 64) }
        known.speed = speed
        try await connection.set("speed", speed)
        // Changed while playing, the speed steps the sound clock (``compensation``); changed while
        // paused, it is followed by a seek (``prepareStart(at:rate:neededBy:)``), which buffers afresh.
        if playing { try await applyDelay() }
        return true
    }

    /// Waits until `instant` on the reference clock: sleeps until 2 ms before, then busy-waits.
    private func wait(until instant: ReferenceTime) async throws {
        guard var now = reference.now() else { return }
        let spin = Duration.milliseconds(2)
        if instant - now > spin { try await Task.sleep(for: (instant - now) - spin) }
        while let reading = reference.now(), reading < instant {
            now = reading
            try Task.checkCancellation()
        }
    }

    /// Polls `condition` every millisecond (the event task updates what it reads) until it holds.
    private func waitFor(timeout: Double, _ condition: () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .secondsRounded(timeout)
        while !condition() {
            guard clock.now < deadline else { throw MPVError.ipc("mpv did not answer within \(timeout) s") }
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// The presentation time of the frame on screen at `itemTime` of `item` (mpv's exact seeks land on
    /// the first frame at or after their target, so coplay seeks to frame times).
    private func framePTS(_ item: String, at itemTime: Double) -> Double {
        guard let timeline = items[item]?.timeline, let frame = timeline.frame(displayedAt: itemTime) else { return itemTime }
        return timeline.presentationTime(ofFrame: frame)
    }

    /// The presentation time of the first frame of `item` at or after `itemTime` (the last frame's
    /// past the end).
    private func framePTS(_ item: String, atOrAfter itemTime: Double) -> Double {
        guard let timeline = items[item]?.timeline, let index = timeline.frame(displayedAt: itemTime) else { return itemTime }
        let shown = timeline.presentationTime(ofFrame: index)
        guard shown < itemTime - 1e-9, index + 1 < timeline.frameCount else { return shown }
        return timeline.presentationTime(ofFrame: index + 1)
    }

    /// The `stopped` event of a pause or wait (its frame index is the group's frame at its item time).
    private func emitStopped(_ motion: CommandSchedule.Motion, at stamp: Double) {
        emit(PlaybackEvent(
            type: .stopped, realtime: stamp, player: participant, item: motion.item, itemTime: motion.itemTime,
            referenceTime: motion.referenceTime.seconds, index: items[motion.item]?.timeline.frame(displayedAt: motion.itemTime),
            detail: motion.waiting ? "waiting" : "paused"))
    }

    private func emit(_ event: PlaybackEvent) {
        eventContinuation.yield(event)
    }
}
