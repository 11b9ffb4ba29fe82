import Foundation
import NIOConcurrencyHelpers

/// One coplay player of a running scenario: its process and the benchmark events parsed from its
/// output so far.
///
/// The process's reader thread feeds ``consume(_:)``; the runner reads snapshots from its own task.
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

    /// Creates the record of a player about to start.
    public init(name: String, startRealtime: Double) {
        self.name = name
        self.startRealtime = startRealtime
        self.state = NIOLockedValueBox(State(translator: CoplayStreamTranslator(player: name, clockEvery: 5)))
    }

    /// The player's process, once started.
    public var process: ChildProcess? {
        get { processBox.withLockedValue { $0 } }
        set { processBox.withLockedValue { $0 = newValue } }
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
    /// Whether the player has applied the session's state.
    public var isReady: Bool { state.withLockedValue { $0.translator.isReady } }
    /// The session's item identifier, once the player printed it.
    public var item: String? { state.withLockedValue { $0.translator.item } }
    /// CLOCK_REALTIME of its first presented frame.
    public var firstFrameRealtime: Double? { state.withLockedValue { $0.translator.firstFrameRealtime } }
    /// CLOCK_REALTIME of its latest presented frame.
    public var lastFrameRealtime: Double? { state.withLockedValue { $0.translator.lastFrameRealtime } }
}
