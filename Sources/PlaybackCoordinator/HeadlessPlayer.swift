import Logging
import Synchronization

/// The built-in local decoder: presents each frame of its media at the group's instant.
///
/// It is a ``PlaybackControlDelegate``: give it to a ``PlaybackCoordinator`` and call ``run()``.
/// It follows the commanded timeline on the local clock and presents frame after frame of the
/// item's ``MediaTimeline``, publishing one `frame` event per presented frame on ``events``
/// (stamped with `CLOCK_REALTIME` right after the frame instant was reached).
///
/// Timing, two ways:
/// - with a ``PresentationThread/Configuration`` (`presentationThread:`), ``run()`` starts a
///   dedicated OS thread (`SCHED_FIFO` when allowed) that sleeps with an absolute
///   `clock_nanosleep` until shortly before each frame instant, busy-waits the rest on the
///   reference clock, and stamps `CLOCK_REALTIME` at the instant: the way to present across
///   processes within a millisecond, independent of the Swift concurrency pool;
/// - otherwise it sleeps on the injected `clock` (on the cooperative pool) until ``spinWindow``
///   before the frame instant, then busy-waits on the reference clock; with a zero spin window it
///   only sleeps, which is what tests on a manual clock want.
///
/// ``HeadlessPlayerCore/Imperfections`` make it behave like a real decoder (a start latency, a
/// drifting clock), so its ``SyncController`` has something to correct.
///
/// ```swift
/// let player = HeadlessPlayer(items: [clip], reference: MonotonicReferenceTimeSource(), logger: logger)
/// async let playing: Void = player.run()
/// await player.handle(PlaybackCommand(kind: .play(itemTime: 0, referenceTime: start, rate: 1),
///                                     originator: "me", expectedItemIdentifier: clip.identifier, revision: 1))
/// for await event in player.events where event.type == .frame { print(event.jsonLine) }
/// ```
public actor HeadlessPlayer: PlaybackControlDelegate {
    /// The core, shared by the actor (commands) and the presentation thread (frames).
    private let core: CoreBox
    private let reference: any ReferenceTimeSource
    private let clock: any Clock<Duration>
    private let realtime: @Sendable () -> Double
    private let logger: Logger
    private let eventContinuation: AsyncStream<PlaybackEvent>.Continuation
    private let maximumSleep: Duration

    /// The participant named in events.
    public nonisolated let participant: PlaybackParticipantID?
    /// How long before a frame instant the player stops sleeping and busy-waits (cooperative timing).
    public nonisolated let spinWindow: Duration
    /// The dedicated presentation thread's settings, or `nil` for cooperative timing.
    public nonisolated let presentationThread: PresentationThread.Configuration?
    /// One event per presented frame, plus stops and corrections.
    public nonisolated let events: AsyncStream<PlaybackEvent>

    /// Creates a player.
    ///
    /// - Parameters:
    ///   - participant: the name printed in events.
    ///   - items: the media it can present (the first is loaded).
    ///   - reference: the shared reference clock.
    ///   - clock: the clock it sleeps on.
    ///   - spinWindow: busy-wait this long before each frame instant (zero: sleep only).
    ///   - presentationThread: when given, frames are presented by a dedicated thread with these
    ///     settings (`clock` and `spinWindow` are then unused for frames).
    ///   - imperfections: simulated decoder imperfections.
    ///   - controller: sync-controller thresholds.
    ///   - realtime: the `CLOCK_REALTIME` reading used to stamp events.
    ///   - logger: where it logs.
    public init(
        participant: PlaybackParticipantID? = nil,
        items: [MediaTimeline],
        reference: any ReferenceTimeSource,
        clock: any Clock<Duration> = ContinuousClock(),
        spinWindow: Duration = .milliseconds(2),
        presentationThread: PresentationThread.Configuration? = nil,
        imperfections: HeadlessPlayerCore.Imperfections = .init(),
        controller: SyncController.Configuration = .init(),
        realtime: @escaping @Sendable () -> Double = Realtime.now,
        logger: Logger
    ) {
        self.core = CoreBox(HeadlessPlayerCore(items: items, imperfections: imperfections, controller: controller))
        self.presentationThread = presentationThread
        self.participant = participant
        self.reference = reference
        self.clock = clock
        self.spinWindow = spinWindow
        self.realtime = realtime
        self.logger = logger
        self.maximumSleep = .milliseconds(20)
        (events, eventContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(65536))
    }

    /// The last frame presented.
    public var lastFrame: Int? { core.state.withLock { $0.lastFrame } }

    /// Adds an item the player can present.
    public func add(_ item: MediaTimeline) { core.state.withLock { $0.add(item) } }

    public func handle(_ command: PlaybackCommand) async {
        guard let now = reference.now() else {
            logger.info("command dropped: reference clock not synchronized")
            return
        }
        emit(core.state.withLock { $0.apply(command, now: now) }, presentedAt: now, stamp: realtime())
    }

    /// Presents frames until cancelled.
    public func run() async {
        if let presentationThread {
            let thread = PresentationThread(
                name: "coplay-present", configuration: presentationThread, reference: reference, logger: logger
            ) { [core, weak self] now, stamp in
                let (outputs, wake) = core.state.withLock { core in (core.advance(to: now), core.nextWake) }
                self?.emit(outputs, presentedAt: now, stamp: stamp)
                return wake
            }
            await thread.run()
            return
        }
        while !Task.isCancelled {
            guard let now = reference.now() else {
                if (try? await clock.sleep(for: .milliseconds(10))) == nil { return }
                continue
            }
            let (outputs, next) = core.state.withLock { core in (core.advance(to: now), core.nextWake) }
            emit(outputs, presentedAt: now, stamp: realtime())
            guard let wake = next else {
                // Idle: wait for a command (bounded, so cancellation is noticed).
                if (try? await clock.sleep(for: maximumSleep)) == nil { return }
                continue
            }
            let remaining = wake - now
            if remaining > spinWindow {
                let pause = min(remaining - spinWindow, maximumSleep)
                if (try? await clock.sleep(for: pause)) == nil { return }
                continue
            }
            if spinWindow > .zero {
                var current = now
                while current < wake, let reading = reference.now() { current = reading }
                let stamp = realtime()
                emit(core.state.withLock { $0.advance(to: current) }, presentedAt: current, stamp: stamp)
            } else if remaining > .zero {
                if (try? await clock.sleep(for: remaining)) == nil { return }
            }
        }
    }

    /// Publishes outputs; `stamp` is the `CLOCK_REALTIME` reading taken at `now`.
    private nonisolated func emit(_ outputs: [HeadlessPlayerCore.PlayerOutput], presentedAt now: ReferenceTime, stamp: Double) {
        guard !outputs.isEmpty else { return }
        for output in outputs {
            switch output {
            case .frame(let index, let pts, let scheduled, let item):
                eventContinuation.yield(PlaybackEvent(
                    type: .frame, realtime: stamp, player: participant, item: item, referenceTime: scheduled.seconds,
                    index: index, pts: pts, errorMs: (now - scheduled).millisecondsValue))
            case .stopped(let index, let itemTime, let at, let item, let waiting):
                eventContinuation.yield(PlaybackEvent(
                    type: .stopped, realtime: stamp, player: participant, item: item, itemTime: itemTime,
                    referenceTime: at.seconds, index: index, pts: nil, detail: waiting ? "waiting" : "paused"))
            case .correction(let kind, let errorMs, let at):
                logger.debug("sync correction", metadata: ["kind": "\(kind)", "errorMs": "\(errorMs)"])
                eventContinuation.yield(PlaybackEvent(
                    type: .correction, realtime: stamp, player: participant, referenceTime: at.seconds, errorMs: errorMs, detail: kind))
            case .ignored(let command):
                eventContinuation.yield(PlaybackEvent(
                    type: .commandIgnored, realtime: stamp, player: participant, originator: command.originator, originatorName: command.originatorName,
                    item: command.expectedItemIdentifier, revision: command.revision, detail: "item not loaded"))
            }
        }
    }
}

/// The player's core behind a lock, shared by the actor and the presentation thread.
private final class CoreBox: Sendable {
    let state: Mutex<HeadlessPlayerCore>
    init(_ core: HeadlessPlayerCore) { state = Mutex(core) }
}
