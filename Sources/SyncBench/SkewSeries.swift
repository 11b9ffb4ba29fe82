/// Inter-player skew over time, one point per frame presented by every player: what the SVG plots.
public struct SkewSeries: Sendable, Hashable {
    /// One frame presentation shared by every player.
    public struct Point: Sendable, Hashable {
        /// Seconds since the scenario's first frame event (earliest presentation of this frame).
        public var time: Double
        /// The frame index.
        public var index: Int
        /// max - min presentation time over players, in milliseconds.
        public var skewMs: Double
        /// Each player's presentation time minus the players' mean, in milliseconds.
        public var deviationMs: [String: Double]
    }

    /// The players, in a stable order.
    public var players: [String]
    /// The points in time order.
    public var points: [Point]

    /// Creates a series.
    public init(players: [String], points: [Point]) {
        self.players = players
        self.points = points
    }
}
