/// How far a running scenario has got: what the progress line on standard error shows.
///
/// ```swift
/// ScenarioProgress(scenario: "quiet", elapsed: 12, total: 60, frames: 812, p99SkewMs: 0.42).line
/// // "bench quiet: 12/60 s, 812 frames, p99 skew 0.420 ms"
/// ```
package struct ScenarioProgress: Sendable, Hashable {
    /// The scenario's name.
    package var scenario: String
    /// Seconds since the action script started (0 while setting up).
    package var elapsed: Double
    /// The script's duration in seconds.
    package var total: Double
    /// Frames presented so far, over all players.
    package var frames: Int
    /// The p99 inter-player skew of the recent frames, once there are shared frames.
    package var p99SkewMs: Double?
    /// What the runner is doing, when it is not simply playing (`starting the relay`, ...).
    package var stage: String?

    /// Creates a progress report.
    package init(
        scenario: String, elapsed: Double, total: Double, frames: Int, p99SkewMs: Double? = nil, stage: String? = nil
    ) {
        self.scenario = scenario
        self.elapsed = elapsed
        self.total = total
        self.frames = frames
        self.p99SkewMs = p99SkewMs
        self.stage = stage
    }

    /// The one-line rendering.
    package var line: String {
        var text = "bench \(scenario): \(Int(elapsed.rounded(.down)))/\(Int(total.rounded())) s, \(frames) frames"
        if let p99SkewMs { text += ", p99 skew " + BenchReport.ms(p99SkewMs) + " ms" }
        if let stage { text += " (\(stage))" }
        return text
    }
}
