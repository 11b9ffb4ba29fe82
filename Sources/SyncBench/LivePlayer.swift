import Foundation
import NIOConcurrencyHelpers

/// One coplay player of a running scenario: its process and the benchmark events parsed from its
/// output so far.
///
/// The process's reader thread feeds ``consume(_:)``; the runner reads snapshots from its own task.
/// A member driving mpv also has the mpv process and the benchmark's own sampler of it, whose frames
/// arrive through ``consumeSampled(_:referenceOffset:)``.
public final class LivePlayer: Sendable {
    private struct State {
        var translator: CoplayStreamTranslator
        var events: [BenchEvent] = []
    }

    /// The player's name (`p1`, `p2`, ...).
    public let name: String
    /// CLOCK_REALTIME when its process was started.
    public let startRealtime: Double
    private let state: NIOLockedValueBox<State>
    private let processBox = NIOLockedValueBox<ChildProcess?>(nil)
    private let mpvBox = NIOLockedValueBox<(process: ChildProcess, sampler: MPVFrameSampler?)?>(nil)

    /// Creates the record of a player about to start.
    ///
    /// - Parameters:
    ///   - name: the player's name.
    ///   - startRealtime: CLOCK_REALTIME when it is started.
    ///   - drivesMPV: whether it drives an mpv (it is ready once it accepted the session's state and
    ///     its sampler runs, since the mpv adapter prints no `stopped` line for the initial pause).
    public init(name: String, startRealtime: Double, drivesMPV: Bool = false) {
        self.name = name
        self.startRealtime = startRealtime
        self.state = NIOLockedValueBox(
            State(translator: CoplayStreamTranslator(player: name, clockEvery: 5, readyOnState: drivesMPV)))
    }

    /// The player's process, once started.
    public var process: ChildProcess? {
        get { processBox.withLockedValue { $0 } }
        set { processBox.withLockedValue { $0 = newValue } }
    }

    /// The mpv this member drives, once started.
    public var mpv: ChildProcess? {
        get { mpvBox.withLockedValue { $0?.process } }
    }

    /// The benchmark's sampler of that mpv, once connected.
    public var sampler: MPVFrameSampler? {
        mpvBox.withLockedValue { $0?.sampler }
    }

    /// Records the mpv process (and, once connected, its sampler).
    public func attach(mpv: ChildProcess, sampler: MPVFrameSampler?) {
        mpvBox.withLockedValue { $0 = (mpv, sampler) }
    }

    /// A frame the sampler saw this member's mpv present; its reference time is its realtime plus
    /// `referenceOffset` (the relay's reference clock minus CLOCK_REALTIME).
    public func consumeSampled(_ frame: FrameTransitionTracker.Transition, referenceOffset: Double) {
        state.withLockedValue { state in
            let events = state.translator.sampledFrame(
                index: frame.index, pts: frame.pts, realtime: frame.realtime, referenceTime: frame.realtime + referenceOffset)
            state.events.append(contentsOf: events)
        }
    }

    /// The latest effect of `action` on this player (CLOCK_REALTIME), if any.
    public func lastEffect(_ action: String) -> Double? {
        state.withLockedValue { state in
            state.events.last { $0.type == "effect" && $0.action == action }?.realtime
        }
    }

    /// Reads one line of the player's standard output.
    public func consume(_ line: String) {
        state.withLockedValue { state in
            let events = state.translator.consume(line)
            state.events.append(contentsOf: events)
        }
    }

    /// The events so far.
    public var events: [BenchEvent] { state.withLockedValue { $0.events } }
    /// Frame lines so far.
    public var frames: Int { state.withLockedValue { $0.translator.frames } }
    /// Whether the player has applied the session's state (and, with mpv, its sampler runs).
    public var isReady: Bool {
        let translated = state.withLockedValue { $0.translator.isReady }
        guard translated else { return false }
        guard let mpv = mpvBox.withLockedValue({ $0 }) else { return true }
        return mpv.sampler?.isReady ?? false
    }
    /// The session's item identifier, once the player printed it.
    public var item: String? { state.withLockedValue { $0.translator.item } }
    /// CLOCK_REALTIME of its first presented frame.
    public var firstFrameRealtime: Double? { state.withLockedValue { $0.translator.firstFrameRealtime } }
    /// CLOCK_REALTIME of its latest presented frame.
    public var lastFrameRealtime: Double? { state.withLockedValue { $0.translator.lastFrameRealtime } }
}
