/// One scenario's row in `summary.json` and in the Markdown report.
///
/// All times are in milliseconds. A scenario that could not run has `status == "failed"`, an `error`,
/// and no figures, so a failed run can never be mistaken for a measured one.
///
/// ```swift
/// let failed = ScenarioResult.failed(name: "syncplay", players: 2, error: "mpv is not installed")
/// ```
public struct ScenarioResult: Codable, Sendable, Hashable {
    /// Latency statistics (milliseconds).
    public struct Latency: Codable, Sendable, Hashable {
        /// How many measurements.
        public var count: Int
        /// Median.
        public var p50Ms: Double
        /// 99th percentile (nearest rank).
        public var p99Ms: Double
        /// Largest.
        public var maxMs: Double

        /// Creates latency statistics from values in milliseconds, or nil for none.
        public init?(milliseconds values: [Double]) {
            let sorted = values.sorted()
            guard let p50 = Statistics.percentileOfSorted(sorted, 0.5),
                let p99 = Statistics.percentileOfSorted(sorted, 0.99), let max = sorted.last
            else { return nil }
            self.count = sorted.count
            self.p50Ms = p50
            self.p99Ms = p99
            self.maxMs = max
        }
    }

    /// What the suspensions the group waited for did to the players, from their effects (CLOCK_REALTIME):
    /// a `suspension` effect where a player stopped presenting, a `resume` effect where it presented again.
    public struct Suspensions: Codable, Sendable, Hashable {
        /// Suspensions the players stopped for (the most any one player stopped for).
        public var count: Int
        /// Stops not followed by a resume in the measured window.
        public var unresumed: Int
        /// How long each player presented nothing: its resume minus its stop, per player and suspension.
        public var held: Latency?
        /// The largest spread of the players' stop instants in one suspension (latest minus earliest),
        /// over suspensions every player stopped for.
        public var stopSpreadMs: Double?
        /// The largest spread of the players' resume instants in one suspension, over suspensions
        /// every player resumed from.
        public var resumeSpreadMs: Double?

        /// Creates the figures.
        public init(count: Int, unresumed: Int, held: Latency?, stopSpreadMs: Double?, resumeSpreadMs: Double?) {
            self.count = count
            self.unresumed = unresumed
            self.held = held
            self.stopSpreadMs = stopSpreadMs
            self.resumeSpreadMs = resumeSpreadMs
        }
    }

    /// The scenario's name (`quiet`, `jitter`, `syncplay`, ...).
    public var name: String
    /// The implementation measured: `coplay` or `syncplay`.
    public var implementation: String?
    /// The network condition between players and relay (`quiet`, `jitter`, ...).
    public var network: String?
    /// The action script, one label per action (`"1.2 play"`, `"30.0 seek 2.0"`, ...).
    public var actions: [String]?
    /// `ok` or `failed`.
    public var status: String
    /// Why the scenario failed.
    public var error: String?
    /// The number of players.
    public var players: Int
    /// Where the frame events come from: `frames` (players report each frame) or `sampled` (synthesized
    /// from sampled positions, see docs/benchmarks.md).
    public var method: String?
    /// The scenario's measured duration in seconds (first to last frame event).
    public var durationSeconds: Double?
    /// Frame presentations shared by every player (the skew population).
    public var frames: Int?
    /// Frame presentations left unpaired (shown by one player but not the others, or beyond the pairing window).
    public var unmatchedFrames: Int?
    /// The media's frame duration in milliseconds (median pts step).
    public var frameDurationMs: Double?
    /// Median inter-player skew.
    public var p50SkewMs: Double?
    /// 99th-percentile inter-player skew (nearest rank).
    public var p99SkewMs: Double?
    /// Largest inter-player skew.
    public var maxSkewMs: Double?
    /// Mean inter-player skew.
    public var meanSkewMs: Double?
    /// Share of frames whose skew is at most 1 ms.
    public var within1msShare: Double?
    /// Share of frames whose skew is at most half a frame duration.
    public var withinHalfFrameShare: Double?
    /// Command-to-effect latency over (command, other player) pairs.
    public var commandLatency: Latency?
    /// (command, other player) pairs with no matching effect before the next command.
    public var missedEffects: Int?
    /// What the suspensions did (when the players stopped and resumed); nil without any.
    public var suspensions: Suspensions?
    /// Absolute clock-offset error of the players' estimates.
    public var clockOffsetError: Latency?
    /// Least-squares slope of the inter-player skew over the measured window, in ms per minute: the
    /// drift check (a skew that grows has a clearly positive slope).
    public var skewTrendMsPerMinute: Double?
    /// p99 skew over the first third of the measured window.
    public var firstThirdP99SkewMs: Double?
    /// p99 skew over the last third of the measured window.
    public var lastThirdP99SkewMs: Double?
    /// Seconds from the late joiner's start to its first presented frame.
    public var lateJoinSeconds: Double?
    /// What the relay restart did to the session: `resumed`, or `lost: …` (players exited or stopped).
    public var relayRestart: String?
    /// Software clock drift given to the players (ppm), when any.
    public var driftPPM: [Double]?

    /// Creates an empty successful row; the analysis fills in the figures.
    public init(name: String, players: Int) {
        self.name = name
        self.status = "ok"
        self.players = players
    }

    /// A row for a scenario that could not run.
    public static func failed(name: String, players: Int, error: String) -> ScenarioResult {
        var result = ScenarioResult(name: name, players: players)
        result.status = "failed"
        result.error = error
        return result
    }

    /// Whether the scenario ran and was measured.
    public var succeeded: Bool { status == "ok" }
}
