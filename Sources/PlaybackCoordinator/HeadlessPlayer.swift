import Logging

/// The built-in local decoder: presents each frame of its media at the group's instant.
///
/// It is a ``PlaybackControlDelegate``: give it to a ``PlaybackCoordinator`` and call ``run()``.
/// It follows the commanded timeline on the local clock and presents frame after frame of the
/// item's ``MediaTimeline``, publishing one `frame` event per presented frame on ``events``
/// (stamped with `CLOCK_REALTIME` right after the frame instant was reached).
///
/// Timing: it sleeps on `clock` until ``spinWindow`` before the frame instant, then busy-waits
/// on the reference clock for the rest, which on Linux gives wake-ups within a few microseconds
/// where a plain sleep is typically 50-100 µs late (see `coplay bench wakeup`). With a zero spin
/// window it only sleeps, which is what tests on a manual clock want.
///
/// ``HeadlessPlayerCore/Imperfections`` make it behave like a real decoder (a start latency, a
/// drifting clock), so its ``SyncController`` has something to correct.
///
/// ```swift
/// let player = HeadlessPlayer(items: [clip], reference: MonotonicReferenceTimeSource())
/// async let playing: Void = player.run()
/// await player.handle(PlaybackCommand(kind: .play(itemTime: 0, referenceTime: start, rate: 1),
///                                     originator: "me", expectedItemIdentifier: clip.identifier, revision: 1))
/// for await event in player.events where event.type == .frame { print(event.jsonLine) }
/// ```
public actor HeadlessPlayer: PlaybackControlDelegate {
    private var core: HeadlessPlayerCore
    private let reference: any ReferenceTimeSource
    private let clock: any Clock<Duration>
    private let realtime: @Sendable () -> Double
    private let logger: Logger
    private let eventContinuation: AsyncStream<PlaybackEvent>.Continuation
    private let maximumSleep: Duration

    /// The participant named in events.
    public nonisolated let participant: ParticipantID?
    /// How long before a frame instant the player stops sleeping and busy-waits.
    public nonisolated let spinWindow: Duration
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
    ///   - imperfections: simulated decoder imperfections.
    ///   - controller: sync-controller thresholds.
    ///   - realtime: the `CLOCK_REALTIME` reading used to stamp events.
    ///   - logger: where it logs.
    public init(
        participant: ParticipantID? = nil,
        items: [MediaTimeline],
        reference: any ReferenceTimeSource,
        clock: any Clock<Duration> = ContinuousClock(),
        spinWindow: Duration = .milliseconds(2),
        imperfections: HeadlessPlayerCore.Imperfections = .init(),
        controller: SyncController.Configuration = .init(),
        realtime: @escaping @Sendable () -> Double = Realtime.now,
        logger: Logger = Logger(label: "coplay.headless")
    ) {
        self.core = HeadlessPlayerCore(items: items, imperfections: imperfections, controller: controller)
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
    public var lastFrame: Int? { core.lastFrame }

    /// Adds an item the player can present.
    public func add(_ item: MediaTimeline) { core.add(item) }

    public func handle(_ command: PlaybackCommand) async {
        guard let now = reference.now() else {
            logger.info("command dropped: reference clock not synchronized")
            return
        }
        emit(core.apply(command, now: now), presentedAt: now)
    }

    /// Presents frames until cancelled.
    public func run() async {
        while !Task.isCancelled {
            guard let now = reference.now() else {
                if (try? await clock.sleep(for: .milliseconds(10))) == nil { return }
                continue
            }
            emit(core.advance(to: now), presentedAt: now)
            guard let wake = core.nextWake else {
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
                emit(core.advance(to: current), presentedAt: current)
            } else if remaining > .zero {
                if (try? await clock.sleep(for: remaining)) == nil { return }
            }
        }
    }

    private func emit(_ outputs: [HeadlessPlayerCore.PlayerOutput], presentedAt now: ReferenceTime) {
        guard !outputs.isEmpty else { return }
        let stamp = realtime()
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
                    type: .commandIgnored, realtime: stamp, player: participant, originator: command.originator,
                    item: command.expectedItemIdentifier, revision: command.revision, detail: "item not loaded"))
            }
        }
    }
}
