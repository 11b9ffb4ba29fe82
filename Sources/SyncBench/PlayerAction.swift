/// One step of an action script: what to do to the controlling player, and when.
package struct PlayerAction: Sendable, Hashable, Codable {
    /// What to do.
    package enum Kind: Sendable, Hashable, Codable {
        /// Resume playback.
        case play
        /// Pause.
        case pause
        /// Seek to an absolute position in seconds.
        case seek(Double)
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

    /// The action's name in event streams: `play`, `pause` or `seek`.
    package var name: String {
        switch kind {
        case .play: "play"
        case .pause: "pause"
        case .seek: "seek"
        }
    }

    /// The default script for a run of `duration` seconds: play at 1 s, pause at 40 %, play at 50 %,
    /// seek back to 10 s at 65 %, pause at 90 %.
    ///
    /// ```swift
    /// PlayerAction.defaultScript(duration: 30).map(\.name) // play, pause, play, seek, pause
    /// ```
    package static func defaultScript(duration: Double) -> [PlayerAction] {
        [
            PlayerAction(at: 1, .play),
            PlayerAction(at: 0.40 * duration, .pause),
            PlayerAction(at: 0.50 * duration, .play),
            PlayerAction(at: 0.65 * duration, .seek(10)),
            PlayerAction(at: 0.90 * duration, .pause),
        ]
    }
}
