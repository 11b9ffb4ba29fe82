import BenchmarkSupport

/// One scenario's row in `summary.json` and in the Markdown report.
///
/// All times are in milliseconds. A scenario that could not run has `status == "failed"`, an `error`,
/// and no figures, so a failed run can never be mistaken for a measured one.
///
/// ```swift
/// let failed = ScenarioResult.failed(name: "syncplay", players: 2, error: "mpv is not installed")
/// ```
package struct ScenarioResult: Codable, Sendable, Hashable {
    /// Latency statistics (milliseconds).
    package struct Latency: Codable, Sendable, Hashable {
        /// How many measurements.
        package var count: Int
        /// Median.
        package var p50Ms: Double
        /// 99th percentile (nearest rank).
        package var p99Ms: Double
        /// Largest.
        package var maxMs: Double

        /// Creates latency statistics from values in milliseconds, or nil for none.
        package init?(milliseconds values: [Double]) {
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
    package struct Suspensions: Codable, Sendable, Hashable {
        /// Suspensions the players stopped for (the most any one player stopped for).
        package var count: Int
        /// Stops not followed by a resume in the measured window.
        package var unresumed: Int
        /// How long each player presented nothing: its resume minus its stop, per player and suspension.
        package var held: Latency?
        /// The largest spread of the players' stop instants in one suspension (latest minus earliest),
        /// over suspensions every player stopped for.
        package var stopSpreadMs: Double?
        /// The largest spread of the players' resume instants in one suspension, over suspensions
        /// every player resumed from.
        package var resumeSpreadMs: Double?

        /// Creates the figures.
        package init(count: Int, unresumed: Int, held: Latency?, stopSpreadMs: Double?, resumeSpreadMs: Double?) {
            self.count = count
            self.unresumed = unresumed
            self.held = held
            self.stopSpreadMs = stopSpreadMs
            self.resumeSpreadMs = resumeSpreadMs
        }
    }

    /// How precisely the benchmark's own mpv sampler dated the frames it synthesized (milliseconds):
    /// the widths of the brackets around each `time-pos` change (see ``FrameTransitionTracker``).
    package struct Sampler: Codable, Sendable, Hashable {
        /// Bracket widths of the frames (count, p50, p99, max).
        package var bracket: Latency?
        /// Frames whose bracket was wider than 1 ms (after a resume, a seek or a missed prediction).
        package var widerThan1ms: Int
        /// The frames' dating error after re-dating them from their neighbours (``FrameCadence``):
        /// half the interval each change lies in (count, p50, p99, max). The skew is computed from
        /// those dates.
        package var datingError: Latency?
        /// IPC round trips of the samples (count, p50, p99, max).
        package var roundTrip: Latency?
        /// How late the sampler wrote its requests after the instants it planned (count, p50, p99, max):
        /// its own scheduling delay on a busy machine, which widens brackets.
        package var lateness: Latency?
        /// Samples per second and player, on average.
        package var samplesPerSecond: Double?
        /// Predicted frame changes that did not come within their dense window.
        package var missedPredictions: Int

        /// Creates the figures from the samplers' records.
        package init(records: [MPVFrameSampler.Record]) {
            let brackets = records.flatMap(\.brackets).map { $0 * 1000 }
            bracket = Latency(milliseconds: brackets)
            widerThan1ms = brackets.filter { $0 > 1 }.count
            datingError = Latency(milliseconds: records.flatMap(\.dated).map { $0.uncertainty * 1000 })
            roundTrip = Latency(milliseconds: records.flatMap(\.roundTrips).map { $0 * 1000 })
            lateness = Latency(milliseconds: records.flatMap(\.lateness).map { $0 * 1000 })
            let rates = records.compactMap { record -> Double? in
                guard let started = record.started, let stopped = record.stopped, stopped > started else { return nil }
                return Double(record.samples) / (stopped - started)
            }
            samplesPerSecond = rates.isEmpty ? nil : rates.reduce(0, +) / Double(rates.count)
            missedPredictions = records.reduce(0) { $0 + $1.missedPredictions }
        }
    }

    /// How the browser pages of a browser scenario were measured (``BrowserFrameEstimator``): their
    /// `requestVideoFrameCallback` samples (each playing frame dated by its display time), the
    /// per-second display origins (``DisplaySpread``, the headline), the skew among the pages alone, and
    /// the same figures with the pages' frames dated by their media clock (`currentTime`) instead,
    /// labelled as such, for comparison.
    package struct BrowserPages: Codable, Sendable, Hashable {
        /// Skew figures of one population (milliseconds).
        package struct Skew: Codable, Sendable, Hashable {
            /// Shared frame presentations.
            package var frames: Int
            package var p50Ms: Double
            package var p99Ms: Double
            package var maxMs: Double

            /// The figures of an analysis, or nil when it found no shared frames.
            package init?(_ result: ScenarioResult?) {
                guard let result, let frames = result.frames, frames > 0, let p50 = result.p50SkewMs,
                    let p99 = result.p99SkewMs, let max = result.maxSkewMs
                else { return nil }
                self.frames = frames
                self.p50Ms = p50
                self.p99Ms = p99
                self.maxMs = max
            }
        }

        /// The pages' player names.
        package var pages: [String]
        /// Frame samples received from the pages.
        package var samples: Int
        /// Frames dated by their display time (every frame shown while playing).
        package var displayedFrames: Int
        /// Per second, where each member's pictures sit against the headless member's (its display
        /// origin), and the spread of those origins: the figure the browser goal is about.
        package var displaySpread: DisplaySpread?
        /// Samples inside a media-clock window.
        package var usedSamples: Int
        /// Samples of steady playback outside the media-clock windows (a run's first 0.3 s, run ends too
        /// short for a window).
        package var droppedSamples: Int
        /// Media-clock windows computed.
        package var windows: Int
        /// Per window, largest minus smallest media-clock origin read from `currentTime` (ms): the read's
        /// noise, plus the drift of a trim within the window.
        package var clockSpread: Latency?
        /// Each page's display latency (display origin minus clock origin, median over its windows; ms).
        package var displayLatencyMs: [String: Double]
        /// |display origin − clock origin − the page's display latency| per window (ms): how far the
        /// pictures strayed from the media clock `currentTime` reports (after starts and trims).
        package var displayDecoupling: Latency?
        /// Skew among the pages only (the headless member left out), frames dated as in the row (by
        /// their display time).
        package var pagesOnly: Skew?
        /// Every player, with the pages' frames dated by their media clock instead (the clock origin of
        /// each window, median of performance.now() − currentTime / rate, plus the page's display latency).
        package var mediaClock: Skew?
        /// The pages only, dated by their media clock.
        package var mediaClockPagesOnly: Skew?
        /// The largest |page clock − CLOCK_REALTIME| the driver measured (ms; `performance.timeOrigin +
        /// performance.now()` against Python's `time.time()`, least-delay round trip; not applied).
        package var calibrationMaxMs: Double?
        /// Whether the pages saw an audio track in the media.
        package var hasAudio: Bool?
        /// Chromium's version.
        package var chromium: String?

        /// Creates the figures.
        package init(
            pages: [String], samples: Int, displayedFrames: Int, displaySpread: DisplaySpread?, usedSamples: Int,
            droppedSamples: Int, windows: Int, clockSpread: Latency?,
            displayLatencyMs: [String: Double], displayDecoupling: Latency?, pagesOnly: Skew?, mediaClock: Skew?, mediaClockPagesOnly: Skew?,
            calibrationMaxMs: Double?, hasAudio: Bool?, chromium: String?
        ) {
            self.pages = pages
            self.samples = samples
            self.displayedFrames = displayedFrames
            self.displaySpread = displaySpread
            self.usedSamples = usedSamples
            self.droppedSamples = droppedSamples
            self.windows = windows
            self.clockSpread = clockSpread
            self.displayLatencyMs = displayLatencyMs
            self.pagesOnly = pagesOnly
            self.displayDecoupling = displayDecoupling
            self.mediaClock = mediaClock
            self.mediaClockPagesOnly = mediaClockPagesOnly
            self.calibrationMaxMs = calibrationMaxMs
            self.hasAudio = hasAudio
            self.chromium = chromium
        }
    }

    /// The scenario's name (`quiet`, `jitter`, `syncplay`, ...).
    package var name: String
    /// The implementation measured: `coplay` or `syncplay`.
    package var implementation: String?
    /// The network condition between players and relay (`quiet`, `jitter`, ...).
    package var network: String?
    /// The action script, one label per action (`"1.2 play"`, `"30.0 seek 2.0"`, ...).
    package var actions: [String]?
    /// `ok` or `failed`.
    package var status: String
    /// Why the scenario failed.
    package var error: String?
    /// The number of players.
    package var players: Int
    /// The media player the members drive: `headless` (coplay's own), `mpv` or `browser` (a headless
    /// member and Chromium pages).
    package var mediaPlayer: String?
    /// Where the frame events come from: `frames` (players report each frame), `transitions`
    /// (changes of mpv's `time-pos` seen by the benchmark's own sampler) or `display` (browser pages'
    /// frames dated by their display time, `expectedDisplayTime`, beside the headless member's own
    /// frames; docs/benchmarks.md).
    package var method: String?
    /// Browser scenarios: how the pages were measured.
    package var browser: BrowserPages?
    /// The mpv sampler's resolution, when the frames come from it.
    package var sampler: Sampler?
    /// Whether every player showed the same picture at each pause (mpv screenshots), when checked.
    package var pauseFrames: PauseFrames?
    /// The scenario's measured duration in seconds (first to last frame event).
    package var durationSeconds: Double?
    /// Frame presentations shared by every player (the skew population).
    package var frames: Int?
    /// Frame presentations left unpaired (shown by one player but not the others, or beyond the pairing window).
    package var unmatchedFrames: Int?
    /// The media's frame duration in milliseconds (median pts step).
    package var frameDurationMs: Double?
    /// Median inter-player skew.
    package var p50SkewMs: Double?
    /// 99th-percentile inter-player skew (nearest rank).
    package var p99SkewMs: Double?
    /// Largest inter-player skew.
    package var maxSkewMs: Double?
    /// Mean inter-player skew.
    package var meanSkewMs: Double?
    /// Share of frames whose skew is at most 1 ms.
    package var within1msShare: Double?
    /// Share of frames whose skew is at most half a frame duration.
    package var withinHalfFrameShare: Double?
    /// Command-to-effect latency over (command, other player) pairs.
    package var commandLatency: Latency?
    /// (command, other player) pairs with no matching effect before the next command.
    package var missedEffects: Int?
    /// What the suspensions did (when the players stopped and resumed); nil without any.
    package var suspensions: Suspensions?
    /// Absolute clock-offset error of the players' estimates.
    package var clockOffsetError: Latency?
    /// Least-squares slope of the inter-player skew over the measured window, in ms per minute: the
    /// drift check (a skew that grows has a clearly positive slope).
    package var skewTrendMsPerMinute: Double?
    /// p99 skew over the first third of the measured window.
    package var firstThirdP99SkewMs: Double?
    /// p99 skew over the last third of the measured window.
    package var lastThirdP99SkewMs: Double?
    /// Seconds from the late joiner's start to its first presented frame.
    package var lateJoinSeconds: Double?
    /// What the relay restart did to the session: `resumed`, or `lost: …` (players exited or stopped).
    package var relayRestart: String?
    /// Software clock drift given to the players (ppm), when any.
    package var driftPPM: [Double]?
    /// Re-anchoring seeks the players' controllers made in the measured window (`correction` events
    /// with `detail: "seek"`), by player; nil when not counted.
    package var correctionSeeks: [String: Int]?
    /// Those seeks per player and minute of the measured window.
    package var correctionSeeksPerMinute: Double?
    /// The group's rate for the script, when it was not 1 (`coplay bench --rate`).
    package var rate: Double?
    /// mpv scenarios: how the mpvs were started (`configured` with coplay's options, or `plain`) and
    /// their audio output (`null`, `pulse`).
    package var mpvLaunch: String?
    package var audioOutput: String?
    /// The `queue` scenario's transitions (its row's skew columns are the spread of the next entry's
    /// first frame over every member, per transition).
    package var queue: QueueTransitions?

    /// Creates an empty successful row; the analysis fills in the figures.
    package init(name: String, players: Int) {
        self.name = name
        self.status = "ok"
        self.players = players
    }

    /// A row for a scenario that could not run.
    package static func failed(name: String, players: Int, error: String) -> ScenarioResult {
        var result = ScenarioResult(name: name, players: players)
        result.status = "failed"
        result.error = error
        return result
    }

    /// Whether the scenario ran and was measured.
    package var succeeded: Bool { status == "ok" }
}
