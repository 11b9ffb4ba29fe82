import BenchmarkSupport
import Foundation
import Logging
import NetworkEmulation

/// Runs a list of scenarios one after the other, coplay and Syncplay alike, into one ``BenchReport``.
///
/// A scenario that cannot run becomes a FAILED row with its reason; the others still run. The report
/// is then incomplete (``BenchReport/isComplete``), which the CLI turns into a non-zero exit.
///
/// ```swift
/// let suite = ScenarioSuite(configuration: .init(scenarios: [try .named("quiet")], coplay: path, output: out), logger: logger)
/// let report = await suite.run { print($0.line) }
/// ```
package struct ScenarioSuite: Sendable {
    /// What to run.
    package struct Configuration: Sendable {
        /// The scenarios, in order (their players and durations already overridden as wanted).
        package var scenarios: [BenchScenario]
        /// The `coplay` executable to spawn.
        package var coplay: String
        /// The media every player opens (coplay's, mpv's and Syncplay's); nil makes a 25 fps test clip
        /// per duration.
        package var media: String?
        /// The output directory (the work directory is `work/` inside it).
        package var output: URL
        /// Whether to restart the relay at the end of each coplay script.
        package var relayRestart: Bool
        /// The impairment proxies' seed.
        package var seed: UInt64
        /// Browser scenarios: `scripts/browser-driver.py` (nil: looked for near the executable).
        package var browserDriver: String?
        /// Browser scenarios: the Chromium executable.
        package var chromium: String

        /// Creates a configuration.
        package init(
            scenarios: [BenchScenario], coplay: String, media: String? = nil, output: URL, relayRestart: Bool = true,
            seed: UInt64 = 1, browserDriver: String? = nil, chromium: String = "/usr/bin/chromium"
        ) {
            self.browserDriver = browserDriver
            self.chromium = chromium
            self.scenarios = scenarios
            self.coplay = coplay
            self.media = media
            self.output = output
            self.relayRestart = relayRestart
            self.seed = seed
        }
    }

    /// The configuration.
    package let configuration: Configuration
    private let logger: Logger

    /// Creates a suite.
    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// The action script of `scenario` under this suite's options.
    package func script(for scenario: BenchScenario) -> ActionScript {
        ActionScript.standard(
            duration: scenario.duration, lateJoiner: scenario.players >= 2,
            relayRestart: configuration.relayRestart, rate: scenario.rate)
    }

    /// Runs every scenario and writes each one's event streams to the output directory.
    ///
    /// - Parameter progress: the progress of the scenario running.
    /// - Returns: the report, one entry per scenario; cancelled scenarios are FAILED rows too.
    package func run(progress: @escaping @Sendable (ScenarioProgress) -> Void) async -> BenchReport {
        var report = BenchReport()
        for scenario in configuration.scenarios {
            if Task.isCancelled {
                report.append(failed(scenario, "not run: the benchmark was interrupted"))
                continue
            }
            do {
                let (analysis, notes) = try await run(scenario, progress: progress)
                report.append(analysis)
                report.notes += notes.map { "\(scenario.name): \($0)" }
            } catch is CancellationError {
                report.append(failed(scenario, "interrupted"))
            } catch {
                logger.info("scenario failed", metadata: ["scenario": "\(scenario.name)", "error": "\(error)"])
                report.append(failed(scenario, "\(error)"))
            }
        }
        return report
    }

    private func failed(_ scenario: BenchScenario, _ reason: String) -> ScenarioResult {
        var result = ScenarioResult.failed(name: scenario.name, players: scenario.players, error: reason)
        result.implementation = scenario.implementation.rawValue
        result.network = scenario.network.name
        result.mediaPlayer = scenario.implementation == .syncplay ? "mpv" : scenario.mediaPlayer.rawValue
        return result
    }

    private func run(
        _ scenario: BenchScenario, progress: @escaping @Sendable (ScenarioProgress) -> Void
    ) async throws -> (ScenarioAnalysis, [String]) {
        let work = configuration.output.appendingPathComponent("work/\(scenario.name)")
        if let queue = scenario.queue { return try await runQueue(scenario, queue, work: work, progress: progress) }
        let script = script(for: scenario)
        let media = try await media(for: scenario, progress: progress)
        switch scenario.implementation {
        case .syncplay:
            let runner = SyncplayBaseline(
                configuration: .init(
                    duration: scenario.duration, players: (0..<scenario.players).map { "s\($0 + 1)" },
                    workDirectory: work, network: scenario.network, seed: configuration.seed,
                    script: script.syncplayActions, media: media),
                logger: logger)
            let started = ContinuousClock.now
            let run = try await runner.run { line in
                let elapsed = Double((ContinuousClock.now - started).components.seconds)
                progress(ScenarioProgress(scenario: scenario.name, elapsed: elapsed, total: scenario.duration, frames: 0, stage: line))
            }
            try write(run.streams, scenario: scenario)
            let analysis = ScenarioAnalysis(
                name: scenario.name, streams: run.streams,
                configuration: .init(frameDuration: 1.0 / run.frameRate, method: "transitions"))
            guard (analysis.result.frames ?? 0) > 0 else {
                throw BenchError.scenarioFailed("the players never played the same frames")
            }
            var result = analysis.result
            decorate(&result, scenario: scenario, script: script, series: analysis.series)
            result.actions = script.syncplayActions.map { String(format: "%.1f ", $0.at) + $0.name }
            result.mediaPlayer = "mpv"
            result.sampler = ScenarioResult.Sampler(records: run.samplerRecords)
            result.pauseFrames = PauseFrames(run.pauseChecks)
            return (
                ScenarioAnalysis(result: result, series: analysis.series),
                [
                    "\(run.syncplayVersion.trimmingCharacters(in: .whitespacesAndNewlines)), "
                        + "\(run.mpvVersion.components(separatedBy: " Copyright").first ?? run.mpvVersion); "
                        + "\(URL(fileURLWithPath: media).lastPathComponent) at \(BenchReport.ms(run.frameRate)) fps; "
                        + "frames from the transition sampler; actions: play, pause, seek only (no rate, item, late joiner or restart)"
                ]
            )
        case .coplay:
            let runner = CoplayScenarioRunner(
                configuration: .init(
                    scenario: scenario, script: script, coplay: configuration.coplay, media: media,
                    workDirectory: work, seed: configuration.seed, browserDriver: configuration.browserDriver,
                    chromium: configuration.chromium),
                logger: logger)
            let run = try await runner.run(progress: progress)
            try write(run.streams, scenario: scenario)
            let truth = run.relayOffset.map { offset in
                Dictionary(uniqueKeysWithValues: run.streams.map { ($0.player, offset) })
            } ?? [:]
            let usesMPV = scenario.mediaPlayer == .mpv
            let usesBrowser = scenario.mediaPlayer == .browser
            let analysis = ScenarioAnalysis(
                name: scenario.name, streams: run.streams,
                configuration: .init(
                    frameDuration: usesMPV ? run.frameRate.map { 1 / $0 } : nil, trueOffsets: truth,
                    method: usesMPV ? "transitions" : usesBrowser ? "display" : "frames"))
            guard (analysis.result.frames ?? 0) > 0 else {
                throw BenchError.scenarioFailed("the players never presented the same frames")
            }
            var result = analysis.result
            decorate(&result, scenario: scenario, script: script, series: analysis.series)
            result.relayRestart = run.relayRestart
            result.lateJoinSeconds = run.lateJoinSeconds
            result.mediaPlayer = scenario.mediaPlayer.rawValue
            var notes = run.notes
            if usesMPV {
                result.sampler = ScenarioResult.Sampler(records: run.samplerRecords)
                result.pauseFrames = PauseFrames(run.pauseChecks)
                result.mpvLaunch = scenario.mpvLaunch.rawValue
                result.audioOutput = scenario.audioOutput.rawValue
            }
            if !run.correctionSeeks.isEmpty, run.measuredSeconds > 0 {
                result.correctionSeeks = run.correctionSeeks
                result.correctionSeeksPerMinute =
                    Double(run.correctionSeeks.values.reduce(0, +)) / Double(run.correctionSeeks.count) / (run.measuredSeconds / 60)
            }
            if scenario.rate != 1 { result.rate = scenario.rate }
            if usesBrowser {
                let (pages, pageNotes) = Self.browserFigures(run: run, series: analysis.series)
                result.browser = pages
                notes += pageNotes
            }
            notes.append(
                "\(scenario.players) players (the last joins late), network \(scenario.network.name), "
                    + (run.timeNamespaces
                        ? (usesMPV ? "each `coplay join` in its own time namespace" : "each in its own time namespace")
                        : "sharing one monotonic clock")
                    + (usesMPV
                        ? ", each driving its own mpv (\(scenario.mpvLaunch == .plain ? "started plain, as README says: " : "coplay's options, ")--vo=null --ao=\(scenario.audioOutput.rawValue)) through --mpv-socket"
                        : "")
                    + (scenario.rate != 1 ? ", the group at rate \(scenario.rate)" : "")
                    + (usesBrowser
                        ? ": \(scenario.players - scenario.browserPages) headless `coplay join`, \(scenario.browserPages) page(s) of the relay's web client, each in its own headless Chromium (scripts/browser-driver.py)"
                        : "")
                    + (scenario.driftPPM.isEmpty ? "" : ", drift \(scenario.driftPPM.map { "\($0)" }.joined(separator: "/")) ppm")
                    + String(format: "; measured from the late joiner's first frame to the relay restart (%.1f s)", run.measuredSeconds))
            return (ScenarioAnalysis(result: result, series: analysis.series), notes)
        }
    }

    /// The `queue` scenario (``QueueScenarioRunner``): its row's skew columns are the spread of the
    /// next entry's first frame over every member, one sample per transition.
    private func runQueue(
        _ scenario: BenchScenario, _ options: BenchScenario.QueueOptions, work: URL,
        progress: @escaping @Sendable (ScenarioProgress) -> Void
    ) async throws -> (ScenarioAnalysis, [String]) {
        let runner = QueueScenarioRunner(
            configuration: .init(
                coplay: configuration.coplay, workDirectory: work, mediaDirectory: configuration.output.appendingPathComponent("work"),
                headless: options.headless, mpv: options.mpv, transitions: options.transitions, queueEntries: options.entries),
            logger: logger)
        let run = try await runner.run(progress: progress)
        let figures = run.figures
        try FileManager.default.createDirectory(at: configuration.output, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(figures).write(to: configuration.output.appendingPathComponent("\(scenario.name)-transitions.json"))
        let spreads = figures.transitions.compactMap(\.allSpreadMs)
        guard !spreads.isEmpty else { throw BenchError.scenarioFailed("no transition was seen by two members") }
        var result = ScenarioResult(name: scenario.name, players: options.headless + options.mpv)
        result.implementation = scenario.implementation.rawValue
        result.network = scenario.network.name
        result.mediaPlayer = options.mpv == 0 ? "headless" : options.headless == 0 ? "mpv" : "headless + mpv"
        result.method = "queue"
        result.frames = spreads.count
        result.p50SkewMs = figures.allSpread?.p50Ms
        result.p99SkewMs = figures.allSpread?.p99Ms
        result.maxSkewMs = figures.allSpread?.maxMs
        result.meanSkewMs = spreads.reduce(0, +) / Double(spreads.count)
        result.within1msShare = Double(spreads.filter { $0 <= 1 }.count) / Double(spreads.count)
        let halfFrames = figures.transitions.compactMap { row in row.allSpreadMs.map { ($0, (row.previousFrameIntervalMs ?? 40) / 2) } }
        result.withinHalfFrameShare = Double(halfFrames.filter { $0.0 <= $0.1 }.count) / Double(max(1, halfFrames.count))
        result.lateJoinSeconds = figures.lateJoiner?.inStepSeconds
        result.actions = QueueScenarioRunner.plan.map(\.name)
        result.queue = figures
        return (ScenarioAnalysis(result: result, series: SkewSeries(players: [], points: [])), run.notes)
    }

    /// The media of `scenario`: the one given, or a generated 25 fps clip of its duration + 30 s
    /// (shared by every scenario of that duration, Syncplay's included; with an audio track for the
    /// scenarios that ask for one).
    private func media(
        for scenario: BenchScenario, progress: @escaping @Sendable (ScenarioProgress) -> Void
    ) async throws -> String {
        if let given = configuration.media { return given }
        let seconds = Int(scenario.duration.rounded(.up)) + 30
        let url = configuration.output.appendingPathComponent("work/media-\(seconds)s\(scenario.audio ? "-audio" : "").mp4")
        progress(ScenarioProgress(scenario: scenario.name, elapsed: 0, total: scenario.duration, frames: 0,
                                  stage: "making a \(seconds) s test clip"))
        try await CoplayScenarioRunner.makeMedia(at: url, seconds: seconds, audio: scenario.audio)
        return url.path
    }

    /// A browser scenario's page figures, and notes (per page: the clock calibration, the samples, and
    /// the offset from the headless member). `series` is the row's analysis (every member, the pages'
    /// frames dated by their display time), whose shared frames give the per-second display origins.
    static func browserFigures(run: CoplayScenarioRunner.Run, series: SkewSeries) -> (ScenarioResult.BrowserPages?, [String]) {
        let names = run.browsers.keys.sorted()
        guard !names.isEmpty else { return (nil, []) }
        let summaries = names.compactMap { run.browsers[$0] }
        var notes: [String] = []
        let pageStreams = run.streams.filter { names.contains($0.player) }
        let headlessStreams = run.streams.filter { !names.contains($0.player) }
        func analysis(_ streams: [PlayerEventStream]) -> ScenarioResult? {
            streams.count >= 2 ? ScenarioAnalysis(name: "pages", streams: streams).result : nil
        }
        // The pages' frames dated by their media clock instead, in the same window as the row.
        let window = run.streams.flatMap { $0.events.map(\.realtime) }
        let (from, to) = (window.min() ?? 0, window.max() ?? 0)
        let clockStreams = names.map { name in
            PlayerEventStream(player: name, events: (run.mediaClockFrames[name] ?? []).filter { $0.realtime >= from && $0.realtime <= to })
        }
        let headless = headlessStreams.first
        let spread = headless.flatMap { DisplaySpread(series: series, reference: $0.player, pages: names) }
        for name in names {
            guard let summary = run.browsers[name] else { continue }
            var text = "\(name): \(summary.displayedFrames) of \(summary.samples) frame samples dated by their display time"
                + " (\(summary.usedSamples) in \(summary.windows) media-clock windows)"
            if let offsets = spread?.offsets[name], let reference = spread?.reference {
                text += String(format: "; display origin minus %@ per second p50 %+.3f ms, min %+.3f, max %+.3f ms (%d s)",
                               reference, offsets.p50Ms, offsets.minMs, offsets.maxMs, offsets.count)
            }
            if let latency = summary.displayLatencyMs { text += String(format: ", display latency %.3f ms", latency) }
            if let offset = summary.calibrationOffsetMs, let rtt = summary.calibrationRoundTripMs {
                text += String(format: "; page clock minus CLOCK_REALTIME %+.3f ms (round trip %.3f ms)", offset, rtt)
            }
            if let headless, let page = run.streams.first(where: { $0.player == name }),
                let offset = Self.offsetMs(of: page, from: headless)
            {
                text += String(format: "; frames minus %@'s per frame p50 %+.3f ms, p1 %+.3f, p99 %+.3f ms (%d frames)",
                               headless.player, offset.p50, offset.p1, offset.p99, offset.count)
            }
            if let override = summary.playerOverride {
                text += "; EXPERIMENT: the page's player.js ran with overrides \(override), not as shipped"
            }
            notes.append(text)
        }
        let calibrations = summaries.compactMap(\.calibrationOffsetMs).map { abs($0) }
        let pages = ScenarioResult.BrowserPages(
            pages: names, samples: summaries.reduce(0) { $0 + $1.samples },
            displayedFrames: summaries.reduce(0) { $0 + $1.displayedFrames }, displaySpread: spread,
            usedSamples: summaries.reduce(0) { $0 + $1.usedSamples },
            droppedSamples: summaries.reduce(0) { $0 + $1.droppedSamples }, windows: summaries.reduce(0) { $0 + $1.windows },
            clockSpread: ScenarioResult.Latency(milliseconds: summaries.flatMap(\.clockSpreadsMs)),
            displayLatencyMs: run.browsers.compactMapValues(\.displayLatencyMs),
            displayDecoupling: ScenarioResult.Latency(milliseconds: summaries.flatMap(\.displayDecouplingMs).map { abs($0) }),
            pagesOnly: .init(analysis(pageStreams)), mediaClock: .init(analysis(headlessStreams + clockStreams)),
            mediaClockPagesOnly: .init(analysis(clockStreams)),
            calibrationMaxMs: calibrations.max(), hasAudio: summaries.compactMap(\.hasAudio).first,
            chromium: summaries.compactMap(\.chromium).first)
        return (pages, notes)
    }

    /// Per frame index both streams presented once, `page − reference` (ms): median, 1st and 99th percentile.
    static func offsetMs(of page: PlayerEventStream, from reference: PlayerEventStream) -> (p50: Double, p1: Double, p99: Double, count: Int)? {
        func once(_ stream: PlayerEventStream) -> [Int: Double] {
            var seen: [Int: [Double]] = [:]
            for event in stream.events where event.type == "frame" {
                if let index = event.index { seen[index, default: []].append(event.realtime) }
            }
            return seen.compactMapValues { $0.count == 1 ? $0[0] : nil }
        }
        let a = once(page)
        let b = once(reference)
        let differences = a.compactMap { index, time in b[index].map { (time - $0) * 1000 } }.sorted()
        guard let p50 = Statistics.percentileOfSorted(differences, 0.5), let p1 = Statistics.percentileOfSorted(differences, 0.01),
            let p99 = Statistics.percentileOfSorted(differences, 0.99)
        else { return nil }
        return (p50, p1, p99, differences.count)
    }

    private func decorate(_ result: inout ScenarioResult, scenario: BenchScenario, script: ActionScript, series: SkewSeries) {
        result.implementation = scenario.implementation.rawValue
        result.network = scenario.network.name
        result.actions = script.labels
        result.driftPPM = scenario.driftPPM.isEmpty ? nil : (0..<scenario.players).map { scenario.drift(ofPlayer: $0) }
        if let trend = series.trend {
            result.skewTrendMsPerMinute = trend.slopeMsPerMinute
            result.firstThirdP99SkewMs = trend.firstThirdP99Ms
            result.lastThirdP99SkewMs = trend.lastThirdP99Ms
        }
    }

    private func write(_ streams: [PlayerEventStream], scenario: BenchScenario) throws {
        try FileManager.default.createDirectory(at: configuration.output, withIntermediateDirectories: true)
        for stream in streams {
            try stream.jsonLines().write(
                to: configuration.output.appendingPathComponent("\(scenario.name)-\(stream.player).jsonl"))
        }
    }
}
