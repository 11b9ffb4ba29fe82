/// The built-in decoder's sans-IO core: which frame to present when, on the reference clock.
///
/// It keeps the commanded timeline (from ``PlaybackCommand``s) and its own *presentation clock*,
/// the mapping the decoder actually follows. Ideally they are equal; ``Imperfections`` make them
/// differ the way a real decoder does (a start latency, a clock that drifts), and a
/// ``SyncController`` corrects the difference at every presented frame. The shell asks
/// ``nextWake`` when to wake next and calls ``advance(to:)`` then; each presented frame comes out
/// as a ``PlayerOutput/frame(index:pts:scheduled:item:)``.
///
/// ```swift
/// var core = HeadlessPlayerCore(items: [clip])
/// core.apply(command, now: now)
/// while let wake = core.nextWake {
///     sleep(until: wake)
///     for output in core.advance(to: wake) { print(output) }
/// }
/// ```
public struct HeadlessPlayerCore: Sendable {
    /// How the simulated decoder deviates from the ideal.
    public struct Imperfections: Hashable, Sendable {
        /// Time from a play command's instant (from a stop) to the first frame actually moving.
        public var startLatency: Duration = .zero
        /// The decoder clock's rate error, in parts per million (positive: runs fast).
        public var driftPPM: Double = 0

        /// No imperfections.
        public init() {}

        /// Creates imperfections.
        public init(startLatency: Duration, driftPPM: Double) {
            self.startLatency = startLatency
            self.driftPPM = driftPPM
        }
    }

    /// What the core did.
    public enum PlayerOutput: Hashable, Sendable {
        /// Frame `index` (at `pts` seconds of `item`) was presented, due at `scheduled`.
        case frame(index: Int, pts: Double, scheduled: ReferenceTime, item: String)
        /// Playback stopped (pause or wait) with `index` on screen at item time `itemTime`.
        case stopped(index: Int?, itemTime: Double, at: ReferenceTime, item: String, waiting: Bool)
        /// The sync controller corrected the decoder (`kind` is `trim`, `endTrim` or `seek`).
        case correction(kind: String, errorMs: Double, at: ReferenceTime)
        /// A command for an item the player does not have was ignored (and completed).
        case ignored(PlaybackCommand)
    }

    private struct Anchor: Hashable, Sendable {
        var reference: ReferenceTime
        var itemTime: Double
        var rate: Double
        func itemTime(at t: ReferenceTime) -> Double { itemTime + rate * (t - reference).secondsValue }
    }

    /// The media the player can present, by identifier.
    public private(set) var items: [String: MediaTimeline]
    /// The item loaded now.
    public private(set) var current: MediaTimeline?
    /// The imperfections simulated.
    public var imperfections: Imperfections
    /// The sync controller.
    public private(set) var controller: SyncController

    /// How late a frame may still be presented when a command activates after its instant.
    static let lateTolerance: Duration = .milliseconds(1)

    private var pending: [PlaybackCommand] = []
    private var commanded: Anchor?
    private var presentation: Anchor?
    private var nextFrame: Int?
    private var commandedWaiting = false
    /// The last frame presented.
    public private(set) var lastFrame: Int?

    /// Creates a core.
    ///
    /// - Parameters:
    ///   - items: the media it can present; the first one is loaded.
    ///   - imperfections: simulated decoder imperfections.
    ///   - controller: sync-controller thresholds.
    public init(items: [MediaTimeline], imperfections: Imperfections = .init(), controller: SyncController.Configuration = .init()) {
        self.items = Dictionary(items.map { ($0.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        self.current = items.first
        self.imperfections = imperfections
        self.controller = SyncController(configuration: controller)
    }

    /// Adds (or replaces) an item the player can present.
    public mutating func add(_ item: MediaTimeline) { items[item.identifier] = item }

    /// The position the decoder presents at `t`, or `nil` before any command.
    public func presentedItemTime(at t: ReferenceTime) -> Double? { presentation?.itemTime(at: t) }

    /// The position the commands say at `t`, or `nil` before any command.
    public func expectedItemTime(at t: ReferenceTime) -> Double? { commanded?.itemTime(at: t) }

    /// Takes a command (any time before, at or after its reference instant).
    public mutating func apply(_ command: PlaybackCommand, now: ReferenceTime) -> [PlayerOutput] {
        guard let item = items[command.expectedItemIdentifier] else { return [.ignored(command)] }
        if case .seek = command.kind, pending.contains(where: { $0.referenceTime == command.referenceTime }) {
            // A play or pause for the same instant is already scheduled and carries the position.
            return advance(to: now)
        }
        if let commanded, pending.isEmpty, current?.identifier == item.identifier, commanded.reference == command.referenceTime,
            commanded.itemTime == command.itemTime, commanded.rate == (command.rate ?? commanded.rate)
        {
            return advance(to: now)  // already following exactly this
        }
        // A seek moves the position but not the motion: it replaces only what comes after it; a
        // play or pause replaces what is scheduled at or after its instant (including a seek).
        if case .seek = command.kind {
            pending.removeAll { $0.referenceTime > command.referenceTime }
        } else {
            pending.removeAll { $0.referenceTime >= command.referenceTime }
            // A command that only restates the motion in force (replacing a stale later command)
            // cancels what followed and adds nothing.
            if pending.isEmpty, let commanded, current?.identifier == item.identifier, command.referenceTime >= commanded.reference,
                commanded.rate == (command.rate ?? 0), abs(commanded.itemTime(at: command.referenceTime) - command.itemTime) < 1e-6,
                commandedWaiting == { if case .buffer = command.kind { true } else { false } }()
            {
                return advance(to: now)
            }
        }
        pending.append(command)
        return advance(to: now)
    }

    /// When the shell should wake next: the next frame's instant or the next command's.
    public var nextWake: ReferenceTime? {
        var wake = pending.first?.referenceTime
        if let due = nextFrameDue { wake = min(wake ?? due.1, due.1) }
        return wake
    }

    private var nextFrameDue: (Int, ReferenceTime)? {
        guard let presentation, presentation.rate > 0, let next = nextFrame, let current, next < current.frameCount else { return nil }
        let pts = current.presentationTime(ofFrame: next)
        return (next, presentation.reference + .secondsRounded((pts - presentation.itemTime) / presentation.rate))
    }

    /// Brings the player to `now`: activates due commands and presents the frame due (frames more
    /// than one due are dropped: only the latest due frame is shown, as a real player would).
    public mutating func advance(to now: ReferenceTime) -> [PlayerOutput] {
        var outputs: [PlayerOutput] = []
        while true {
            let commandAt = pending.first?.referenceTime
            let frame = nextFrameDue
            if let commandAt, commandAt <= now, frame.map({ commandAt <= $0.1 }) ?? true {
                outputs += activate(pending.removeFirst(), now: now)
                continue
            }
            guard let (index, due) = frame, due <= now else { break }
            // Drop frames that the following one already supersedes.
            if let current, index + 1 < current.frameCount {
                let following = due + .secondsRounded((current.presentationTime(ofFrame: index + 1) - current.presentationTime(ofFrame: index)) / max(presentation!.rate, 1e-9))
                if following <= now, commandAt.map({ following < $0 }) ?? true {
                    nextFrame = index + 1
                    continue
                }
            }
            outputs += present(index, due: due)
        }
        return outputs
    }

    private mutating func activate(_ command: PlaybackCommand, now: ReferenceTime) -> [PlayerOutput] {
        if current?.identifier != command.expectedItemIdentifier, let item = items[command.expectedItemIdentifier] {
            // The item changes at the command's instant, not when the command arrived.
            current = item
            commanded = nil
            presentation = nil
            nextFrame = nil
        }
        guard let current else { return [] }
        // A seek keeps the commanded motion (playing, paused or waiting) and moves the position.
        let rate = command.rate ?? commanded?.rate ?? 0
        let wasStopped = (presentation?.rate ?? 0) == 0
        let waiting: Bool
        switch command.kind {
        case .buffer: waiting = true
        case .seek: waiting = commandedWaiting
        case .play, .pause: waiting = false
        }
        commandedWaiting = waiting
        commanded = Anchor(reference: command.referenceTime, itemTime: command.itemTime, rate: rate)
        controller.reset()
        if rate > 0 {
            let latency = wasStopped ? imperfections.startLatency : .zero
            let anchor = Anchor(reference: command.referenceTime + latency, itemTime: command.itemTime, rate: rate * (1 + imperfections.driftPPM / 1e6))
            presentation = anchor
            // A frame due at most `lateTolerance` ago is still shown (a wake-up a few
            // nanoseconds or microseconds after the instant must not skip the anchor frame).
            let position = max(command.itemTime, anchor.itemTime(at: now - Self.lateTolerance))
            nextFrame = current.firstFrame(atOrAfter: position)
            return []
        }
        presentation = Anchor(reference: command.referenceTime, itemTime: command.itemTime, rate: 0)
        nextFrame = current.firstFrame(atOrAfter: command.itemTime)
        let shown = current.frame(displayedAt: command.itemTime)
        return [.stopped(index: shown, itemTime: command.itemTime, at: command.referenceTime, item: current.identifier, waiting: waiting)]
    }

    private mutating func present(_ index: Int, due: ReferenceTime) -> [PlayerOutput] {
        guard let current, presentation != nil, let commanded else { return [] }
        let pts = current.presentationTime(ofFrame: index)
        lastFrame = index
        nextFrame = index + 1
        var outputs: [PlayerOutput] = [.frame(index: index, pts: pts, scheduled: due, item: current.identifier)]
        let nominal = commanded.rate
        let errorMs = (pts - commanded.itemTime(at: due)) / max(nominal, 1e-9) * 1e3
        let drift = 1 + imperfections.driftPPM / 1e6
        switch controller.update(errorMilliseconds: errorMs, canTrim: nominal > 0) {
        case .none:
            break
        case .trim(let fraction):
            self.presentation = Anchor(reference: due, itemTime: pts, rate: nominal * (drift + fraction))
            outputs.append(.correction(kind: "trim", errorMs: errorMs, at: due))
        case .endTrim:
            self.presentation = Anchor(reference: due, itemTime: pts, rate: nominal * drift)
            outputs.append(.correction(kind: "endTrim", errorMs: errorMs, at: due))
        case .seek:
            let expected = commanded.itemTime(at: due)
            self.presentation = Anchor(reference: due, itemTime: expected, rate: nominal * drift)
            nextFrame = max(index + 1, current.firstFrame(atOrAfter: expected + 1e-9) ?? current.frameCount)
            outputs.append(.correction(kind: "seek", errorMs: errorMs, at: due))
        }
        return outputs
    }
}
