/// Inter-player skew over time, one point per frame presented by every player: what the SVG plots.
package struct SkewSeries: Sendable, Hashable {
    /// One frame presentation shared by every player.
    package struct Point: Sendable, Hashable {
        /// Seconds since the scenario's first frame event (earliest presentation of this frame).
        package var time: Double
        /// The frame index.
        package var index: Int
        /// max - min presentation time over players, in milliseconds.
        package var skewMs: Double
        /// Each player's presentation time minus the players' mean, in milliseconds.
        package var deviationMs: [String: Double]
    }

    /// The players, in a stable order.
    package var players: [String]
    /// The points in time order.
    package var points: [Point]

    /// Creates a series.
    package init(players: [String], points: [Point]) {
        self.players = players
        self.points = points
    }
}
