import Foundation

/// A scenario's action script: the timed steps the runner carries out, in order.
///
/// The standard script exercises every kind of action: play, a late joiner, pause, play, seek, two rate
/// changes, an item change, a suspension (`coplay control suspend`) and, last, a relay restart (`kill -9`,
/// then a restart on the same data directory), after which the players must resume; the measured window
/// ends at the restart.
///
/// ```swift
/// let script = ActionScript.standard(duration: 60)
/// print(script) // one line per action
/// ```
package struct ActionScript: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The actions, sorted by time.
    package var actions: [ScenarioAction]
    /// Seconds from the script's start to the end of the scenario.
    package var duration: Double

    /// Creates a script; the actions are sorted by time.
    package init(actions: [ScenarioAction], duration: Double) {
        self.actions = actions.sorted { $0.at < $1.at }
        self.duration = duration
    }

    /// The standard script for a scenario of `duration` seconds.
    ///
    /// Fractions of the duration: play at 2 %, late joiner at 10 %, pause at 25 %, play at 32 %, seek to
    /// 2 s at 42 %, rate 0.5 at 52 %, rate 1 at 60 %, item change at 68 %, suspension at 76 %, relay
    /// restart at 85 % (at most 30 s before the end). Scripts shorter than 20 s keep only play, late
    /// joiner, pause, play, seek and the relay restart.
    ///
    /// The suspension is held for 40 % of the time to the next action (the restart, or the end), at
    /// least 0.5 s and at most 2 s, rounded to 0.1 s: `coplay control suspend` runs in the background
    /// for that long plus its start-up and the confirmations, and should be done before the next action
    /// (2 s in a 60 s script, 0.7 s in a 20 s one).
    ///
    /// - Parameters:
    ///   - duration: seconds (at least 5).
    ///   - lateJoiner: whether a player joins late.
    ///   - relayRestart: whether the relay is restarted near the end.
    ///   - rate: the group's rate: other than 1, a `rate` action sets it 0.5 s after the first play
    ///     (`play` then resumes at it) and the script's return from 0.5 goes back to it.
    package static func standard(duration: Double, lateJoiner: Bool = true, relayRestart: Bool = true, rate: Double = 1) -> ActionScript {
        let d = duration
        var actions: [ScenarioAction] = [ScenarioAction(at: max(0.5, 0.02 * d), .play)]
        if rate != 1 { actions.append(ScenarioAction(at: max(0.5, 0.02 * d) + 0.5, .rate(rate))) }
        if lateJoiner { actions.append(ScenarioAction(at: 0.10 * d, .lateJoin)) }
        actions += [
            ScenarioAction(at: 0.25 * d, .pause),
            ScenarioAction(at: 0.32 * d, .play),
            ScenarioAction(at: 0.42 * d, .seek(2)),
        ]
        if d >= 20 {
            actions += [
                ScenarioAction(at: 0.52 * d, .rate(0.5)),
                ScenarioAction(at: 0.60 * d, .rate(rate)),
                ScenarioAction(at: 0.68 * d, .item),
            ]
            let next = relayRestart ? max(0.85 * d, d - 30) : d
            let hold = (min(2, max(0.5, 0.4 * (next - 0.76 * d))) * 10).rounded() / 10
            actions.append(ScenarioAction(at: 0.76 * d, .suspension(hold)))
        }
        if relayRestart { actions.append(ScenarioAction(at: max(0.85 * d, d - 30), .relayRestart)) }
        return ActionScript(actions: actions, duration: d)
    }

    /// When the measured window ends: at the relay restart, or at the end.
    package var measurementEnd: Double {
        actions.first { $0.kind == .relayRestart }?.at ?? duration
    }

    /// Whether a player joins late.
    package var hasLateJoiner: Bool { actions.contains { $0.kind == .lateJoin } }

    /// The part Syncplay can follow, as its player actions: play, pause and seek (Syncplay has no
    /// shared rate or item command for this set-up, a two-client run has no late joiner, and its
    /// server restart is not measured).
    package var syncplayActions: [PlayerAction] {
        actions.compactMap { action in
            switch action.kind {
            case .play: PlayerAction(at: action.at, .play)
            case .pause: PlayerAction(at: action.at, .pause)
            case let .seek(seconds): PlayerAction(at: action.at, .seek(seconds))
            default: nil
            }
        }
    }

    /// One line per action.
    package var description: String {
        actions.map(\.description).joined(separator: "\n")
    }

    /// The script as short labels, for `summary.json`: `["1.2 play", "6.0 lateJoin", ..., "45.6 suspension 2.0 s"]`.
    package var labels: [String] {
        actions.map { action in
            String(format: "%.1f ", action.at) + action.name + (action.valueLabel.map { " \($0)" } ?? "")
        }
    }
}
