import BenchmarkSupport

/// Turns a browser page's `requestVideoFrameCallback` samples into the benchmark's frame events, each
/// frame dated by **when the page shows it**, and measures the page's media clock beside them (a sans-IO
/// state machine: samples in, frames and windows out).
///
/// **Frames: display time.** ``displayedFrame(_:)``: every frame the element presents while playing
/// (not paused, not seeking, at a rate above 0) becomes a frame event at `wallMs`, `performance.timeOrigin
/// + expectedDisplayTime` (when Chromium shows it; CLOCK_REALTIME on the same machine), with index
/// `round((mediaTime − firstFrameTime) / frameInterval)` (the activity's frame grid). That is what an
/// outside observer of the screen measures, and it pairs in ``ScenarioAnalysis`` with a headless coplay
/// player's frame events (the instant it presents the frame) as in every other scenario. Nothing is left
/// out: not the frames right after a start, not a frame a tick late. A headless Chromium shows each frame
/// on a tick of its 60 Hz frame clock, so at 25 fps a page's frames come 0, 3.3, 6.7, 10 or 13.3 ms after
/// the least-lag one in a 2-3-2-3-2 tick cadence, and the per-frame skew against a member that presents
/// every frame on its instant has that cadence in it; ``DisplaySpread`` takes the least lag per second
/// (the page's **display origin**) out of the same frames.
///
/// **Windows: the media clock beside it.** Samples are also cut into windows of steady playback, each
/// with two origins:
///
/// - the **display origin**, a low percentile (``Configuration/percentile``, the 10th) of
///   `expectedDisplayTime − mediaTime / rate` over the window's frames (the least-lag frames);
/// - the **clock origin**, the median of `clockMs − currentTime / rate`: the element's media clock
///   read directly (`video.currentTime` and `performance.now()` side by side in the callback). It is
///   continuous (steady to about 0.05 ms in Chromium 156) but runs a display latency ahead of the
///   pictures, by a different amount after every start.
///
/// ``Window/frames(latency:)`` dates a window's frames by its clock origin plus a page's **display
/// latency** (the median over its windows of `display origin − clock origin`, ``displayLatency(of:)``):
/// the media-clock figure the benchmark reports beside the display-time one, labelled as such. It hides
/// what the pictures do apart from the clock (a page whose pictures sit a tick off while its clock is on
/// time), so it is never the headline.
///
/// **Samples.** `wallMs` is `performance.timeOrigin + expectedDisplayTime` (CLOCK_REALTIME in ms on the
/// same machine), `mediaTime` the frame's media time (s), `clockMs` / `currentTime` the media clock read
/// in the callback, `rate` the element's `playbackRate`, `trim` the page's correction trim (the element
/// runs at the group's rate times the trim, a few percent at most; both are set together, so `rate /
/// trim` is the group's rate at that frame), `paused` / `seeking` the element's state at the callback.
///
/// **Window rules.** Samples are split into runs of steady playback: the element playing (not paused, not
/// seeking) at one group rate with the media time advancing as that rate says (a jump ends the run).
/// Each run's first ``Configuration/settleSeconds`` are left out (the renderer catching up with a start),
/// the rest is cut into windows of at least ``Configuration/windowSeconds`` and
/// ``Configuration/minimumSamples`` samples; a window never spans a seek, a pause or a change of the
/// group's rate, and the samples left at a run's end that are too few for a window are dropped
/// (``droppedSamples``). Origins use the **group's** rate, not the trimmed element rate, so a trim shows
/// as the (real) drift from the group's timeline it is correcting. Without `trim` the element's rate is
/// used.
///
/// ```swift
/// var estimator = BrowserFrameEstimator(configuration: .init(frameInterval: 0.04))
/// let frame = estimator.displayedFrame(sample)          // the display-time frame event, if playing
/// let windows = estimator.add(sample) + estimator.finish()
/// let latency = BrowserFrameEstimator.displayLatency(of: windows)
/// let byMediaClock = windows.flatMap { $0.frames(latency: latency) }
/// ```
package struct BrowserFrameEstimator: Sendable {
    /// One `requestVideoFrameCallback` of the page's `<video>` (the driver's `sample` line).
    package struct Sample: Sendable, Hashable, Codable {
        /// `performance.timeOrigin + expectedDisplayTime`, milliseconds of CLOCK_REALTIME.
        package var wallMs: Double
        /// The frame's media time in seconds.
        package var mediaTime: Double
        /// When the media clock was read (`performance.timeOrigin + performance.now()`, ms), if it was.
        package var clockMs: Double?
        /// The media clock then (`video.currentTime`, s).
        package var currentTime: Double?
        /// The element's `playbackRate` at the callback.
        package var rate: Double
        /// The page's correction trim at the callback (the element runs at the group's rate times
        /// this; nil: no trim known, the element's rate is the group's).
        package var trim: Double?
        /// Whether the element was paused.
        package var paused: Bool
        /// Whether the element was seeking.
        package var seeking: Bool

        /// Creates a sample.
        package init(
            wallMs: Double, mediaTime: Double, clockMs: Double? = nil, currentTime: Double? = nil, rate: Double,
            trim: Double? = nil, paused: Bool = false, seeking: Bool = false
        ) {
            self.wallMs = wallMs
            self.mediaTime = mediaTime
            self.clockMs = clockMs
            self.currentTime = currentTime
            self.rate = rate
            self.trim = trim
            self.paused = paused
            self.seeking = seeking
        }

        /// The rate origins are computed with: the group's (the element's without the trim).
        package var nominalRate: Double {
            if let trim, trim > 0 { return rate / trim }
            return rate
        }
    }

    /// Knobs.
    package struct Configuration: Sendable, Hashable {
        /// Seconds between frames of the media (its frame grid).
        package var frameInterval: Double
        /// The first frame's media time (seconds).
        package var firstFrameTime: Double
        /// A window is closed once it spans at least this long (seconds of wall time)...
        package var windowSeconds: Double
        /// ... and holds at least this many samples (two cycles of 25 fps on a 60 Hz frame clock).
        package var minimumSamples: Int
        /// The percentile of `wall − mediaTime / rate` taken as the window's display origin (nearest rank).
        package var percentile: Double
        /// Samples this long after a run starts are not used (seconds).
        package var settleSeconds: Double
        /// A media time further than this from where the rate says it should be ends the run (seconds).
        package var jumpTolerance: Double

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - frameInterval: seconds between frames.
        ///   - firstFrameTime: the first frame's media time (default 0).
        ///   - windowSeconds: default 0.5.
        ///   - minimumSamples: default 10.
        ///   - percentile: default 0.1.
        ///   - settleSeconds: default 0.3.
        ///   - jumpTolerance: default 0.1.
        package init(
            frameInterval: Double, firstFrameTime: Double = 0, windowSeconds: Double = 0.5, minimumSamples: Int = 10,
            percentile: Double = 0.1, settleSeconds: Double = 0.3, jumpTolerance: Double = 0.1
        ) {
            self.frameInterval = frameInterval
            self.firstFrameTime = firstFrameTime
            self.windowSeconds = windowSeconds
            self.minimumSamples = max(1, minimumSamples)
            self.percentile = percentile
            self.settleSeconds = settleSeconds
            self.jumpTolerance = jumpTolerance
        }
    }

    /// A dated frame.
    package struct Frame: Sendable, Hashable {
        /// The frame's index on the media's grid.
        package var index: Int
        /// Its media time (seconds).
        package var pts: Double
        /// CLOCK_REALTIME seconds: its display time (``BrowserFrameEstimator/displayedFrame(_:)``), or
        /// `origin + pts / rate` (``Window/frames(latency:)``).
        package var realtime: Double
    }

    /// One window of steady playback and its origins.
    package struct Window: Sendable, Hashable {
        /// The group's rate over the window.
        package var rate: Double
        /// The display origin (CLOCK_REALTIME seconds): the low percentile of `wall − mediaTime / rate`.
        package var displayOrigin: Double
        /// The clock origin (CLOCK_REALTIME seconds): the median of `clockMs − currentTime / rate`, when
        /// the samples read the media clock.
        package var clockOrigin: Double?
        /// Largest minus smallest `clockMs − currentTime / rate` of the window (ms): how steady the read
        /// media clock was (trims make it drift).
        package var clockSpreadMs: Double?
        /// The window's frames: (index, media time).
        package var frames: [(index: Int, pts: Double)]

        /// The frames dated by the clock origin plus `latency` (seconds; the display latency), or by the
        /// display origin when `latency` is nil or the window has no clock origin.
        package func frames(latency: Double?) -> [Frame] {
            let origin = latency.flatMap { latency in clockOrigin.map { $0 + latency } } ?? displayOrigin
            return frames.map { Frame(index: $0.index, pts: $0.pts, realtime: origin + $0.pts / rate) }
        }

        package static func == (a: Window, b: Window) -> Bool {
            a.rate == b.rate && a.displayOrigin == b.displayOrigin && a.clockOrigin == b.clockOrigin
                && a.frames.map(\.index) == b.frames.map(\.index)
        }

        package func hash(into hasher: inout Hasher) {
            hasher.combine(rate)
            hasher.combine(displayOrigin)
            hasher.combine(clockOrigin)
        }
    }

    /// A page's display latency (seconds): the median over `windows` of display origin minus clock
    /// origin, or nil when no window read the media clock.
    package static func displayLatency(of windows: [Window]) -> Double? {
        let differences = windows.compactMap { window in window.clockOrigin.map { window.displayOrigin - $0 } }.sorted()
        return Statistics.percentileOfSorted(differences, 0.5)
    }

    /// The configuration.
    package let configuration: Configuration
    /// Samples seen.
    package private(set) var samples = 0
    /// Samples that were part of a window.
    package private(set) var usedSamples = 0
    /// Samples of steady runs left out: the settling start of a run, and run ends too short for a window.
    package private(set) var droppedSamples = 0
    /// Windows closed.
    package private(set) var windows = 0

    private var runStartMs: Double?
    private var runRate: Double = 0
    private var last: Sample?
    private var window: [Sample] = []

    /// Creates an estimator.
    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The frame `sample` shows, dated by its display time (`wallMs`, CLOCK_REALTIME seconds), or nil
    /// when the element was paused or seeking (a picture shown after a paused seek is not playback) or
    /// its rate is 0. Independent of the windows: every playing frame is one.
    package func displayedFrame(_ sample: Sample) -> Frame? {
        guard !sample.paused, !sample.seeking, sample.rate > 0, sample.wallMs.isFinite, sample.mediaTime.isFinite else { return nil }
        return Frame(index: index(of: sample.mediaTime), pts: sample.mediaTime, realtime: sample.wallMs / 1000)
    }

    /// The frame index of media time `mediaTime` on the media's grid.
    private func index(of mediaTime: Double) -> Int {
        Int(((mediaTime - configuration.firstFrameTime) / configuration.frameInterval).rounded())
    }

    /// Adds a sample (in callback order).
    ///
    /// - Returns: the window this sample closed, if it closed one.
    package mutating func add(_ sample: Sample) -> [Window] {
        samples += 1
        var closed: [Window] = []
        let steady = !sample.paused && !sample.seeking && sample.nominalRate > 0 && sample.rate > 0
        if runStartMs != nil, !steady || !continues(sample) {
            closed += endRun()
        }
        defer { last = steady ? sample : nil }
        guard steady else { return closed }
        if runStartMs == nil {
            runStartMs = sample.wallMs
            runRate = sample.nominalRate
        }
        guard let start = runStartMs, sample.wallMs - start >= configuration.settleSeconds * 1000 else {
            droppedSamples += 1
            return closed
        }
        window.append(sample)
        if let first = window.first, window.count >= configuration.minimumSamples,
            sample.wallMs - first.wallMs >= configuration.windowSeconds * 1000
        {
            closed += closeWindow()
        }
        return closed
    }

    /// Ends the current run (the stream ended): its last window if it is long enough.
    package mutating func finish() -> [Window] {
        endRun()
    }

    /// Whether `sample` continues the current run: same group rate, media time where the rate puts it.
    private func continues(_ sample: Sample) -> Bool {
        guard let last else { return false }
        guard abs(sample.nominalRate - runRate) <= 1e-6 * runRate else { return false }
        let elapsed = (sample.wallMs - last.wallMs) / 1000
        guard elapsed >= 0, sample.mediaTime > last.mediaTime else { return false }
        let expected = last.mediaTime + elapsed * runRate
        return abs(sample.mediaTime - expected) <= configuration.jumpTolerance + configuration.frameInterval
    }

    private mutating func endRun() -> [Window] {
        var closed: [Window] = []
        if window.count >= configuration.minimumSamples {
            closed = closeWindow()
        } else {
            droppedSamples += window.count
            window.removeAll()
        }
        runStartMs = nil
        return closed
    }

    private mutating func closeWindow() -> [Window] {
        let samples = window
        window.removeAll()
        guard !samples.isEmpty else { return [] }
        let rate = runRate
        let lags = samples.map { $0.wallMs / 1000 - $0.mediaTime / rate }.sorted()
        guard let displayOrigin = Statistics.percentileOfSorted(lags, configuration.percentile) else { return [] }
        let clocks = samples.compactMap { sample -> Double? in
            guard let clockMs = sample.clockMs, let currentTime = sample.currentTime else { return nil }
            return clockMs / 1000 - currentTime / rate
        }.sorted()
        windows += 1
        usedSamples += samples.count
        return [
            Window(
                rate: rate, displayOrigin: displayOrigin, clockOrigin: Statistics.percentileOfSorted(clocks, 0.5),
                clockSpreadMs: clocks.isEmpty ? nil : (clocks.last! - clocks.first!) * 1000,
                frames: samples.map { sample in (index(of: sample.mediaTime), sample.mediaTime) })
        ]
    }
}
