import Foundation

/// Turns one `coplay join --frames` JSON Lines stream (docs/events.md) into benchmark events, line by
/// line: a sans-IO state machine the runner feeds as the player prints.
///
/// - `frame` lines become frame events (`index`, `pts`, `realtime`).
/// - Every frame also yields a clock event: the player's own view of the reference clock when it
///   released the frame (`referenceTime + errorMs`) minus the frame's CLOCK_REALTIME stamp. The runner
///   knows the relay's true reference-minus-realtime offset, so the difference is the player's
///   clock-offset error.
/// - Effects: an accepted command (`play`, `pause`, `seek`, `rate`, `item` lines, with their anchor
///   `referenceTime` and `rate`) takes effect at the first `frame` scheduled at or after the anchor when
///   the new rate is non-zero, or at the first `stopped` line after it when the rate is zero.
/// - Suspensions the group waits for: a `suspensionBegan` line with `waits: true` takes effect (action
///   `suspension`) at the first `stopped` line with `detail: "waiting"` at or after its `referenceTime`:
///   the instant the player stopped presenting. Its `suspensionEnded` line (whose `referenceTime` is the
///   end of the wait) takes effect (action `resume`) at the first frame scheduled at or after it: the
///   instant the player presented again. A suspension the group does not wait for has neither.
/// - A player that prints no frames (`coplay join --mpv-socket`) gets its frames from the benchmark's own
///   sampler through ``sampledFrame(index:pts:realtime:referenceTime:)``: the same bookkeeping and
///   effects, but no clock event (the frame's reference time is the runner's, not the player's view).
///
/// ```swift
/// var translator = CoplayStreamTranslator(player: "p1")
/// let events = translator.consume(line) // zero or more BenchEvents
/// ```
package struct CoplayStreamTranslator: Sendable {
    /// The fields of a coplay event line the benchmark reads.
    struct Line: Decodable {
        var type: String
        var realtime: Double?
        var item: String?
        var index: Int?
        var pts: Double?
        var referenceTime: Double?
        var errorMs: Double?
        var rate: Double?
        var detail: String?
        var waits: Bool?
    }

    private struct Pending {
        /// What makes the effect happen.
        enum Trigger {
            /// The first frame scheduled at or after the anchor.
            case frame
            /// The first `stopped` line (any detail).
            case stop
            /// The first `stopped` line with detail `waiting`, for an instant at or after the anchor.
            case waitingStop
        }

        var action: String
        var anchor: Double
        var trigger: Trigger
    }

    /// The player's name, stamped on every event.
    package let player: String
    /// Emit a clock event for every `clockEvery`-th frame.
    package let clockEvery: Int
    /// Whether an accepted state line (`play`, `pause`, ...) already counts as ready (a player that
    /// prints no `stopped` line for the initial state, such as the mpv adapter).
    package let readyOnState: Bool
    /// The session's item identifier, once a line named it.
    package private(set) var item: String?
    /// Whether the player has applied a state (printed a `stopped` or `frame` line).
    package private(set) var isReady = false
    /// Frame lines seen.
    package private(set) var frames = 0
    /// CLOCK_REALTIME of the first frame line.
    package private(set) var firstFrameRealtime: Double?
    /// CLOCK_REALTIME of the latest frame line.
    package private(set) var lastFrameRealtime: Double?
    /// Lines that were not JSON objects (log noise on stdout), counted and ignored.
    package private(set) var unreadableLines = 0
    private var pending: [Pending] = []
    private let decoder = JSONDecoder()

    /// Creates a translator for the player called `player`.
    ///
    /// - Parameters:
    ///   - player: the name stamped on the events.
    ///   - clockEvery: how often a frame also yields a clock event (every frame by default).
    ///   - readyOnState: whether an accepted state line makes the player ready (default: only a
    ///     `stopped` or `frame` line does).
    package init(player: String, clockEvery: Int = 1, readyOnState: Bool = false) {
        self.player = player
        self.clockEvery = max(1, clockEvery)
        self.readyOnState = readyOnState
    }

    /// Reads one line of the player's standard output.
    ///
    /// - Returns: the benchmark events the line yields (often none).
    package mutating func consume(_ text: some StringProtocol) -> [BenchEvent] {
        guard text.first == "{", let line = try? decoder.decode(Line.self, from: Data(text.utf8)),
            let realtime = line.realtime
        else {
            if !text.allSatisfy(\.isWhitespace) { unreadableLines += 1 }
            return []
        }
        if let item = line.item { self.item = item }
        var events: [BenchEvent] = []
        switch line.type {
        case "play", "pause", "seek", "rate", "item":
            if readyOnState { isReady = true }
            if let anchor = line.referenceTime {
                pending.append(Pending(action: line.type, anchor: anchor, trigger: (line.rate ?? 1) > 0 ? .frame : .stop))
            }
        case "suspensionBegan":
            if let anchor = line.referenceTime, line.waits == true {
                pending.append(Pending(action: "suspension", anchor: anchor, trigger: .waitingStop))
            }
        case "suspensionEnded":
            // `waits` says whether the group waited for it; only then did the players stop.
            if let anchor = line.referenceTime, line.waits == true {
                pending.append(Pending(action: "resume", anchor: anchor, trigger: .frame))
            }
        case "frame":
            guard let index = line.index, let pts = line.pts else { break }
            events += frame(index: index, pts: pts, realtime: realtime, referenceTime: line.referenceTime)
            if let scheduled = line.referenceTime, frames % clockEvery == 0 {
                let view = scheduled + (line.errorMs ?? 0) / 1000
                events.append(.clock(offset: view - realtime, realtime: realtime, player: player))
            }
        case "stopped":
            isReady = true
            let waiting = line.detail == "waiting"
            let at = line.referenceTime ?? .infinity
            events += takeEffects(realtime: realtime) { pending in
                switch pending.trigger {
                case .frame: false
                case .stop: true
                case .waitingStop: waiting && at >= pending.anchor - 0.000_5
                }
            }
        default:
            break
        }
        return events
    }

    /// A frame the benchmark saw the player present (its own sampler of mpv), at `realtime`, with
    /// `referenceTime` = `realtime` plus the relay's reference-minus-realtime offset as the runner
    /// measured it.
    ///
    /// - Returns: the frame event and any effects it completes (never a clock event).
    package mutating func sampledFrame(index: Int, pts: Double, realtime: Double, referenceTime: Double) -> [BenchEvent] {
        frame(index: index, pts: pts, realtime: realtime, referenceTime: referenceTime)
    }

    /// A presentation seen on a player whose frame events come later (a browser page, whose frames are
    /// dated once their window's media-clock origin is known): completes the effects of commands
    /// anchored at or before `referenceTime` (the presentation's realtime plus the relay's offset),
    /// without a frame event and without counting a frame.
    ///
    /// - Returns: the effects it completes.
    package mutating func presentation(realtime: Double, referenceTime: Double) -> [BenchEvent] {
        takeEffects(realtime: realtime) { $0.trigger == .frame && referenceTime >= $0.anchor - 0.000_5 }
    }

    private mutating func frame(index: Int, pts: Double, realtime: Double, referenceTime: Double?) -> [BenchEvent] {
        isReady = true
        frames += 1
        if firstFrameRealtime == nil { firstFrameRealtime = realtime }
        lastFrameRealtime = max(lastFrameRealtime ?? realtime, realtime)
        var events: [BenchEvent] = [.frame(index: index, pts: pts, realtime: realtime, player: player)]
        if let scheduled = referenceTime {
            events += takeEffects(realtime: realtime) { $0.trigger == .frame && scheduled >= $0.anchor - 0.000_5 }
        }
        return events
    }

    private mutating func takeEffects(realtime: Double, where matches: (Pending) -> Bool) -> [BenchEvent] {
        var effects: [BenchEvent] = []
        pending.removeAll { command in
            guard matches(command) else { return false }
            effects.append(.effect(command.action, realtime: realtime, player: player))
            return true
        }
        return effects
    }
}
