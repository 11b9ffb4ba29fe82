/// One step of a coplay scenario's action script: what the runner does, and when.
///
/// Playback commands (`play`, `pause`, `seek`, `rate`, `item`) and the suspension (`suspend SECONDS`)
/// are sent with `coplay control`, like a user would; the others act on the processes (a late joiner
/// starts, the relay is killed and restarted).
///
/// ```swift
/// let seek = ScenarioAction(at: 12, .seek(2))
/// seek.controlArguments(item: nil) // ["seek", "2.0"]
/// ScenarioAction(at: 45.6, .suspension(2)).controlArguments(item: nil) // ["suspend", "2.0"]
/// ```
package struct ScenarioAction: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What to do.
    package enum Kind: Sendable, Hashable, Codable {
        /// Resume playback at rate 1.
        case play
        /// Pause.
        case pause
        /// Seek to an absolute item time in seconds.
        case seek(Double)
        /// Change the playback rate.
        case rate(Double)
        /// Change the item (to the session's own item, at 0 s: players have one media file each).
        case item
        /// Start the scenario's last player now, while the group plays.
        case lateJoin
        /// A member (`coplay control INVITE suspend SECONDS`) holds a buffering suspension for this many
        /// seconds: every player stops at one instant, the group waits, then everyone resumes.
        case suspension(Double)
        /// `kill -9` the relay and restart it on the same port with the same data directory.
        case relayRestart
    }

    /// Seconds after the script starts.
    package var at: Double
    /// The action.
    package var kind: Kind

    /// Creates an action.
    package init(at: Double, _ kind: Kind) {
        self.at = at
        self.kind = kind
    }

    /// The action's name in event streams and reports.
    package var name: String {
        switch kind {
        case .play: "play"
        case .pause: "pause"
        case .seek: "seek"
        case .rate: "rate"
        case .item: "item"
        case .lateJoin: "lateJoin"
        case .suspension: "suspension"
        case .relayRestart: "relayRestart"
        }
    }

    /// The seek target, the rate or the suspension's length, if the action has one.
    package var value: Double? {
        switch kind {
        case let .seek(seconds): seconds
        case let .rate(rate): rate
        case let .suspension(seconds): seconds
        default: nil
        }
    }

    /// The arguments after `coplay control INVITE` for a playback command or a suspension, nil for the
    /// other actions.
    ///
    /// - Parameter item: the session's item identifier (needed by `item`; nil makes `item` unrunnable).
    package func controlArguments(item: String?) -> [String]? {
        switch kind {
        case .play: ["play"]
        case .pause: ["pause"]
        case let .seek(seconds): ["seek", "\(seconds)"]
        case let .rate(rate): ["rate", "\(rate)"]
        case .item: item.map { ["item", $0] }
        case let .suspension(seconds): ["suspend", "\(seconds)"]
        case .lateJoin, .relayRestart: nil
        }
    }

    /// `2.0 s` for a suspension, the plain value for a seek or a rate, nil otherwise.
    package var valueLabel: String? {
        switch kind {
        case let .suspension(seconds): "\(seconds) s"
        default: value.map { "\($0)" }
        }
    }

    /// `  12.0 s  seek 2.0`.
    package var description: String {
        let time = String(format: "%6.1f s", at)
        let label: String
        switch kind {
        case let .seek(seconds): label = "seek \(seconds)"
        case let .rate(rate): label = "rate \(rate)"
        case .item: label = "item (the session's item again, at 0 s)"
        case .lateJoin: label = "late joiner starts"
        case let .suspension(seconds): label = "suspension \(seconds) s (coplay control suspend: the group waits, then resumes)"
        case .relayRestart: label = "relay restart (kill -9, restart on the same port and --data-dir)"
        default: label = name
        }
        return "\(time)  \(label)"
    }
}
