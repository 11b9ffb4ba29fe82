import Foundation
import NIOConcurrencyHelpers

/// One coplay player of a running scenario: its process and the benchmark events parsed from its
/// output so far.
///
/// The process's reader thread feeds ``consume(_:)``; the runner reads snapshots from its own task.
/// A member driving mpv also has the mpv process and the benchmark's own sampler of it, whose frames
/// arrive through ``consumeSampled(_:referenceOffset:)``. A browser page's process is
/// `scripts/browser-driver.py`: its `sample` lines go through a ``BrowserFrameEstimator`` (each frame
/// dated by its display time, `expectedDisplayTime`; the media clock measured beside), the page's own events (`play`, `pause`, `suspensionBegan`, the
/// `stopped` the driver makes of the `<video>`'s pause, ...) through the translator as coplay's lines do.
package final class LivePlayer: Sendable {
    private struct State {
        var translator: CoplayStreamTranslator
        var events: [BenchEvent] = []
        var browser: BrowserState?
        /// CLOCK_REALTIME of each `correction` line with `detail: "seek"` (a re-anchoring seek).
        var correctionSeeks: [Double] = []
    }

    /// What a browser page's driver said so far.
    private struct BrowserState {
        /// The relay's reference clock minus CLOCK_REALTIME (s), for the frames' reference times.
        var referenceOffset: Double
        var estimator: BrowserFrameEstimator?
        /// The windows so far.
        var windows: [BrowserFrameEstimator.Window] = []
        /// Samples before the page said its media's frame grid (kept until it does).
        var early: [BrowserFrameEstimator.Sample] = []
        var ready = false
        var error: String?
        var calibration: (offsetMs: Double, rttMs: Double)?
        var hasAudio: Bool?
        var chromium: String?
        var playerOverride: String?
        /// Frames dated by their display time so far.
        var displayedFrames = 0
    }

    /// The fields of a browser driver's lines the benchmark reads (besides the page's events).
    private struct DriverLine: Decodable {
        var type: String
        var frameInterval: Double?
        var firstFrameTime: Double?
        var hasAudio: Bool?
        var offsetMs: Double?
        var rttMs: Double?
        var detail: String?
        var chromium: String?
    }

    /// What a browser page's samples became.
    package struct BrowserSummary: Sendable, Hashable {
        /// `requestVideoFrameCallback` samples received.
        package var samples: Int
        /// Frames dated by their display time (samples of frames shown while playing).
        package var displayedFrames: Int
        /// Samples inside a media-clock window.
        package var usedSamples: Int
        /// Samples of steady playback left out (run starts settling, run ends too short).
        package var droppedSamples: Int
        /// Media-clock windows computed.
        package var windows: Int
        /// The page's display latency: median of display origin minus clock origin (ms).
        package var displayLatencyMs: Double?
        /// Per window, how far display origin minus clock origin was from that median (ms): how loosely
        /// the pictures follow the media clock `currentTime` reports.
        package var displayDecouplingMs: [Double]
        /// Per window, largest minus smallest media-clock origin read (ms).
        package var clockSpreadsMs: [Double]
        /// The page's clock (performance.timeOrigin + now) minus CLOCK_REALTIME, and the round trip it
        /// was measured with (ms).
        package var calibrationOffsetMs: Double?
        package var calibrationRoundTripMs: Double?
        /// Whether the page saw an audio track.
        package var hasAudio: Bool?
        /// Chromium's version, as the driver reported it.
        package var chromium: String?
        /// An experiment's overrides of the page's player.js thresholds / timing (JSON), if any.
        package var playerOverride: String?
    }

    /// The player's name (`p1`, `p2`, ...).
    package let name: String
    /// CLOCK_REALTIME when its process was started.
    package let startRealtime: Double
    private let state: NIOLockedValueBox<State>
    private let processBox = NIOLockedValueBox<ChildProcess?>(nil)
    private let mpvBox = NIOLockedValueBox<(process: ChildProcess, sampler: MPVFrameSampler?)?>(nil)

    /// Creates the record of a player about to start.
    ///
    /// - Parameters:
    ///   - name: the player's name.
    ///   - startRealtime: CLOCK_REALTIME when it is started.
    ///   - drivesMPV: whether it drives an mpv (it is ready once it accepted the session's state and
    ///     its sampler runs, since the mpv adapter prints no `stopped` line for the initial pause).
    ///   - browserReferenceOffset: for a browser page (its process is the browser driver): the relay's
    ///     reference clock minus CLOCK_REALTIME, in seconds; nil for a coplay member.
    package init(name: String, startRealtime: Double, drivesMPV: Bool = false, browserReferenceOffset: Double? = nil) {
        self.name = name
        self.startRealtime = startRealtime
        self.state = NIOLockedValueBox(
            State(
                translator: CoplayStreamTranslator(player: name, clockEvery: 5, readyOnState: drivesMPV),
                browser: browserReferenceOffset.map { BrowserState(referenceOffset: $0) }))
    }

    /// The player's process, once started.
    package var process: ChildProcess? {
        get { processBox.withLockedValue { $0 } }
        set { processBox.withLockedValue { $0 = newValue } }
    }

    /// The mpv this member drives, once started.
    package var mpv: ChildProcess? {
        get { mpvBox.withLockedValue { $0?.process } }
    }

    /// The benchmark's sampler of that mpv, once connected.
    package var sampler: MPVFrameSampler? {
        mpvBox.withLockedValue { $0?.sampler }
    }

    /// Records the mpv process (and, once connected, its sampler).
    package func attach(mpv: ChildProcess, sampler: MPVFrameSampler?) {
        mpvBox.withLockedValue { $0 = (mpv, sampler) }
    }

    /// A frame the sampler saw this member's mpv present; its reference time is its realtime plus
    /// `referenceOffset` (the relay's reference clock minus CLOCK_REALTIME).
    package func consumeSampled(_ frame: FrameTransitionTracker.Transition, referenceOffset: Double) {
        state.withLockedValue { state in
            let events = state.translator.sampledFrame(
                index: frame.index, pts: frame.pts, realtime: frame.realtime, referenceTime: frame.realtime + referenceOffset)
            state.events.append(contentsOf: events)
        }
    }

    /// Moves the frames the sampler saw to the dates ``FrameCadence`` gave them: `record`'s
    /// transitions, each frame event found by its index and its first date.
    package func redateSampled(_ record: MPVFrameSampler.Record) {
        guard record.dated.count == record.transitions.count else { return }
        var moves: [Int: [(from: Double, to: Double)]] = [:]
        for (frame, dated) in zip(record.transitions, record.dated) {
            moves[frame.index, default: []].append((frame.realtime, dated.realtime))
        }
        state.withLockedValue { state in
            for k in state.events.indices where state.events[k].type == "frame" {
                guard let index = state.events[k].index, let move = moves[index]?.first(where: { $0.from == state.events[k].realtime })
                else { continue }
                state.events[k].realtime = move.to
            }
        }
    }

    /// The latest effect of `action` on this player (CLOCK_REALTIME), if any.
    package func lastEffect(_ action: String) -> Double? {
        state.withLockedValue { state in
            state.events.last { $0.type == "effect" && $0.action == action }?.realtime
        }
    }

    /// CLOCK_REALTIME of each re-anchoring seek the player reported (`correction` events with
    /// `detail: "seek"`), in order.
    package var correctionSeeks: [Double] { state.withLockedValue { $0.correctionSeeks } }

    /// Reads one line of the player's standard output.
    package func consume(_ line: String) {
        let correctionSeek = line.contains("\"correction\"") && line.contains("\"seek\"") ? Self.correctionSeekTime(line) : nil
        state.withLockedValue { state in
            if let correctionSeek { state.correctionSeeks.append(correctionSeek) }
            if state.browser != nil, Self.consumeDriverLine(line, state: &state) { return }
            let events = state.translator.consume(line)
            state.events.append(contentsOf: events)
        }
    }

    /// A browser driver's own line (not a page event): true when handled.
    /// The `realtime` of a `correction` event line whose `detail` is `seek`.
    static func correctionSeekTime(_ line: String) -> Double? {
        struct Correction: Decodable {
            var type: String
            var detail: String?
            var realtime: Double?
        }
        guard let event = try? JSONDecoder().decode(Correction.self, from: Data(line.utf8)), event.type == "correction",
            event.detail == "seek"
        else { return nil }
        return event.realtime
    }

    private static func consumeDriverLine(_ line: String, state: inout State) -> Bool {
        guard line.first == "{", let type = Self.type(of: line) else { return false }
        let data = Data(line.utf8)
        switch type {
        case "sample":
            guard let sample = try? JSONDecoder().decode(BrowserFrameEstimator.Sample.self, from: data) else { return true }
            addSample(sample, state: &state)
        case "ready":
            guard let fields = try? JSONDecoder().decode(DriverLine.self, from: data) else { return true }
            state.browser?.hasAudio = fields.hasAudio
            guard let interval = fields.frameInterval, interval > 0 else {
                state.browser?.error = "the page knows no constant frame grid for the media (its frames cannot be indexed)"
                return true
            }
            state.browser?.estimator = BrowserFrameEstimator(
                configuration: .init(frameInterval: interval, firstFrameTime: fields.firstFrameTime ?? 0))
            state.browser?.ready = true
            let early = state.browser?.early ?? []
            state.browser?.early = []
            for sample in early { addSample(sample, state: &state, replay: true) }
        case "calibration":
            if let fields = try? JSONDecoder().decode(DriverLine.self, from: data), let offset = fields.offsetMs {
                state.browser?.calibration = (offset, fields.rttMs ?? .nan)
            }
        case "driver":
            state.browser?.chromium = (try? JSONDecoder().decode(DriverLine.self, from: data))?.chromium
            // An experiment's overrides of the page's player (the driver's `playerOverride` object).
            if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                let override = object["playerOverride"], !(override is NSNull),
                let text = try? JSONSerialization.data(withJSONObject: override, options: [.sortedKeys])
            {
                state.browser?.playerOverride = String(decoding: text, as: UTF8.self)
            }
        case "error":
            state.browser?.error = (try? JSONDecoder().decode(DriverLine.self, from: data))?.detail ?? "the page failed"
        case "status", "element", "console":
            break
        default:
            return false  // the page's own events: coplay's line format
        }
        return true
    }

    /// One frame sample: effects of commands it shows, its frame event (dated by its display time), and
    /// the media-clock window it may close.
    private static func addSample(_ sample: BrowserFrameEstimator.Sample, state: inout State, replay: Bool = false) {
        guard let offset = state.browser?.referenceOffset else { return }
        let realtime = sample.wallMs / 1000
        if !replay, !sample.paused, !sample.seeking, sample.rate > 0 {
            state.events += state.translator.presentation(realtime: realtime, referenceTime: realtime + offset)
        }
        guard state.browser?.estimator != nil else {
            if (state.browser?.early.count ?? 0) < 5000 { state.browser?.early.append(sample) }
            return
        }
        if let frame = state.browser!.estimator!.displayedFrame(sample) {
            state.browser?.displayedFrames += 1
            state.events += state.translator.sampledFrame(
                index: frame.index, pts: frame.pts, realtime: frame.realtime, referenceTime: frame.realtime + offset)
        }
        let windows = state.browser!.estimator!.add(sample)
        state.browser?.windows += windows
    }

    /// The `type` of a JSON line, read cheaply (the driver writes it first).
    private static func type(of line: String) -> String? {
        guard let range = line.range(of: "\"type\":\"") else { return nil }
        let rest = line[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    /// A browser page: closes its last media-clock window (call once, at the end of the measurement).
    package func finishBrowser() {
        state.withLockedValue { state in
            guard state.browser?.estimator != nil else { return }
            let windows = state.browser!.estimator!.finish()
            state.browser?.windows += windows
        }
    }

    /// A browser page's frames dated by its media clock instead (`currentTime`: the clock origin of each
    /// window plus the page's median display latency), for comparison with the frame events, which are
    /// dated by each frame's display time.
    package var mediaClockFrames: [BenchEvent] {
        state.withLockedValue { state in
            let windows = state.browser?.windows ?? []
            guard let latency = BrowserFrameEstimator.displayLatency(of: windows) else { return [] }
            return windows.filter { $0.clockOrigin != nil }.flatMap { $0.frames(latency: latency) }.map { frame in
                BenchEvent.frame(index: frame.index, pts: frame.pts, realtime: frame.realtime, player: name)
            }
        }
    }

    /// Whether this player is a browser page.
    package var isBrowser: Bool { state.withLockedValue { $0.browser != nil } }

    /// A browser page's failure as its driver reported it.
    package var browserError: String? { state.withLockedValue { $0.browser?.error } }

    /// What a browser page's samples became; nil for a coplay member.
    package var browserSummary: BrowserSummary? {
        state.withLockedValue { state in
            guard let browser = state.browser else { return nil }
            let estimator = browser.estimator
            return BrowserSummary(
                samples: (estimator?.samples ?? 0) + browser.early.count, displayedFrames: browser.displayedFrames,
                usedSamples: estimator?.usedSamples ?? 0,
                droppedSamples: estimator?.droppedSamples ?? 0, windows: estimator?.windows ?? 0,
                displayLatencyMs: BrowserFrameEstimator.displayLatency(of: browser.windows).map { $0 * 1000 },
                displayDecouplingMs: BrowserFrameEstimator.displayLatency(of: browser.windows).map { latency in
                    browser.windows.compactMap { window in window.clockOrigin.map { (window.displayOrigin - $0 - latency) * 1000 } }
                } ?? [],
                clockSpreadsMs: browser.windows.compactMap(\.clockSpreadMs), calibrationOffsetMs: browser.calibration?.offsetMs,
                calibrationRoundTripMs: browser.calibration?.rttMs, hasAudio: browser.hasAudio, chromium: browser.chromium,
                playerOverride: browser.playerOverride)
        }
    }

    /// The events so far.
    package var events: [BenchEvent] { state.withLockedValue { $0.events } }
    /// Frame lines so far.
    package var frames: Int { state.withLockedValue { $0.translator.frames } }
    /// Whether the player has applied the session's state (and, with mpv, its sampler runs).
    package var isReady: Bool {
        if let browser = state.withLockedValue({ $0.browser }) { return browser.ready }
        let translated = state.withLockedValue { $0.translator.isReady }
        guard translated else { return false }
        guard let mpv = mpvBox.withLockedValue({ $0 }) else { return true }
        return mpv.sampler?.isReady ?? false
    }
    /// The session's item identifier, once the player printed it.
    package var item: String? { state.withLockedValue { $0.translator.item } }
    /// CLOCK_REALTIME of its first presented frame.
    package var firstFrameRealtime: Double? { state.withLockedValue { $0.translator.firstFrameRealtime } }
    /// CLOCK_REALTIME of its latest presented frame.
    package var lastFrameRealtime: Double? { state.withLockedValue { $0.translator.lastFrameRealtime } }
}
