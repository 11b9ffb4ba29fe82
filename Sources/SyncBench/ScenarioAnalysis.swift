import BenchmarkSupport

/// Computes a scenario's timing-accuracy figures from the players' event streams.
///
/// Definitions (docs/benchmarks.md has the long form):
/// - **Frame presentations shared by every player.** Frame events are grouped by `index`. Within one
///   index, the tightest cluster holding one presentation per player (smallest latest - earliest) is
///   taken, then the next tightest of what remains, while the cluster spans at most
///   ``Configuration/pairingWindow``. Each cluster is one skew sample; presentations left over (a frame
///   one player showed an extra time, or skipped by another) count as unmatched. Pairing this way
///   (rather than "first presentation of frame N") keeps seeks back and repeated frames apart.
/// - **Skew** of a shared presentation: latest minus earliest `realtime`.
/// - **Deviation** of a player: its `realtime` minus the mean over players (the SVG plots this).
/// - **Command-to-effect latency**: for each `command` event and each player other than its originator,
///   the first `effect` with the same action (and id, when both carry one) at or after the command and
///   before the next command; none is a missed effect.
/// - **Clock-offset error**: `offset - trueOffset` of each `clock` event, the true offset taken from the
///   event or from ``Configuration/trueOffsets``.
/// - **Suspensions**: per player, each `suspension` effect (it stopped presenting) is paired with the
///   first `resume` effect after it and before its next stop (it presented again); the held time is
///   the difference, and the k-th stops (resumes) of all players give that suspension's stop (resume)
///   spread. A suspension's frames need no special pairing: skew is per frame index, and every player
///   holds the same frame and resumes with the same next one.
///
/// ```swift
/// let analysis = ScenarioAnalysis(name: "quiet", streams: streams)
/// print(analysis.result.p99SkewMs ?? .nan)
/// ```
package struct ScenarioAnalysis: Sendable {
    /// Knobs of the analysis.
    package struct Configuration: Sendable, Hashable {
        /// The largest skew that still pairs presentations of one frame (seconds). Larger skews show up
        /// as unmatched frames, never silently as small ones.
        package var pairingWindow: Double
        /// The media's frame duration in seconds; nil derives it from the frame events' pts steps.
        package var frameDuration: Double?
        /// Each player's true clock offset (seconds), for clock events that do not carry one.
        package var trueOffsets: [String: Double]
        /// How the frame events were obtained (`frames` or `sampled`), copied into the result.
        package var method: String

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - pairingWindow: seconds; 5 by default.
        ///   - frameDuration: seconds; nil derives it from the streams.
        ///   - trueOffsets: true clock offsets by player name.
        ///   - method: `frames` (players report frames) or `sampled`.
        package init(
            pairingWindow: Double = 5, frameDuration: Double? = nil, trueOffsets: [String: Double] = [:],
            method: String = "frames"
        ) {
            self.pairingWindow = pairingWindow
            self.frameDuration = frameDuration
            self.trueOffsets = trueOffsets
            self.method = method
        }
    }

    /// The summary row.
    package let result: ScenarioResult
    /// Skew over time, for the plot.
    package let series: SkewSeries

    /// Wraps a row amended after the analysis (extra fields) with its series.
    package init(result: ScenarioResult, series: SkewSeries) {
        self.result = result
        self.series = series
    }

    /// Analyzes one scenario.
    ///
    /// - Parameters:
    ///   - name: the scenario's name.
    ///   - streams: one stream per player; the stream's `player` names the player.
    ///   - configuration: analysis knobs.
    package init(name: String, streams: [PlayerEventStream], configuration: Configuration = Configuration()) {
        let players = streams.map(\.player)
        var result = ScenarioResult(name: name, players: players.count)
        result.method = configuration.method

        // Frame presentations by index.
        var byIndex: [Int: [(player: String, realtime: Double)]] = [:]
        var firstFrame = Double.infinity
        var lastFrame = -Double.infinity
        for stream in streams {
            for event in stream.events where event.type == "frame" {
                guard let index = event.index else { continue }
                byIndex[index, default: []].append((stream.player, event.realtime))
                firstFrame = min(firstFrame, event.realtime)
                lastFrame = max(lastFrame, event.realtime)
            }
        }

        var points: [SkewSeries.Point] = []
        var unmatched = 0
        let pauses = Self.pauses(streams)
        for (index, presentations) in byIndex {
            let (clusters, leftover) = Self.pair(
                presentations, players: players, window: configuration.pairingWindow, pauses: pauses)
            unmatched += leftover
            for cluster in clusters {
                let times = Array(cluster.values)
                let low = times.min()!
                let high = times.max()!
                let mean = times.reduce(0, +) / Double(times.count)
                points.append(
                    SkewSeries.Point(
                        time: low - firstFrame, index: index, skewMs: (high - low) * 1000,
                        deviationMs: cluster.mapValues { ($0 - mean) * 1000 }))
            }
        }
        points.sort { ($0.time, $0.index) < ($1.time, $1.index) }

        if firstFrame.isFinite {
            result.durationSeconds = lastFrame - firstFrame
        }
        result.frames = points.count
        result.unmatchedFrames = unmatched
        let frameDuration = configuration.frameDuration ?? Self.frameDuration(streams)
        result.frameDurationMs = frameDuration.map { $0 * 1000 }

        let skews = points.map(\.skewMs).sorted()
        if !skews.isEmpty {
            result.p50SkewMs = Statistics.percentileOfSorted(skews, 0.5)
            result.p99SkewMs = Statistics.percentileOfSorted(skews, 0.99)
            result.maxSkewMs = skews.last
            result.meanSkewMs = Statistics.mean(skews)
            result.within1msShare = Double(skews.filter { $0 <= 1.0 }.count) / Double(skews.count)
            if let frameDuration {
                let half = frameDuration * 500
                result.withinHalfFrameShare = Double(skews.filter { $0 <= half }.count) / Double(skews.count)
            }
        }

        let (latencies, missed) = Self.commandLatencies(streams)
        result.commandLatency = ScenarioResult.Latency(milliseconds: latencies)
        result.missedEffects = latencies.isEmpty && missed == 0 ? nil : missed
        result.suspensions = Self.suspensions(streams)
        result.clockOffsetError = ScenarioResult.Latency(
            milliseconds: Self.clockErrors(streams, trueOffsets: configuration.trueOffsets))

        self.result = result
        self.series = SkewSeries(players: players, points: points)
    }

    /// Seconds without a presented frame that count as a pause.
    static let minimumPause = 0.5

    /// Stretches in which a player presented nothing for at least `minimum` seconds (pauses,
    /// suspensions, stalls): from its last frame before to its first frame after.
    static func pauses(_ streams: [PlayerEventStream], minimum: Double = minimumPause) -> [(start: Double, end: Double)] {
        var result: [(start: Double, end: Double)] = []
        for stream in streams {
            var previous: Double?
            for event in stream.events where event.type == "frame" {
                if let previous, event.realtime - previous >= minimum { result.append((previous, event.realtime)) }
                previous = event.realtime
            }
        }
        return result
    }

    /// Pairs the presentations of one frame index: repeatedly takes the tightest cluster holding one
    /// presentation per player (the smallest max - min), as long as it spans at most `window` seconds
    /// and no player's pause lies wholly inside it (a frame one player showed before a pause and
    /// another only after the resume is two presentations, not a skew of the pause's length).
    ///
    /// - Returns: the clusters (player to realtime) and the number of presentations left unpaired.
    static func pair(
        _ presentations: [(player: String, realtime: Double)], players: [String], window: Double,
        pauses: [(start: Double, end: Double)] = []
    ) -> ([[String: Double]], Int) {
        guard players.count > 1 else { return ([], presentations.count) }
        var remaining: [String: [Double]] = [:]
        for presentation in presentations { remaining[presentation.player, default: []].append(presentation.realtime) }
        for player in remaining.keys { remaining[player]!.sort() }
        var clusters: [[String: Double]] = []
        while players.allSatisfy({ !(remaining[$0]?.isEmpty ?? true) }) {
            // The tightest cluster's earliest member is some presentation; given it, each other player's
            // best choice is its earliest presentation at or after it.
            var best: (span: Double, members: [String: Int])?
            for anchorPlayer in players {
                for (anchorIndex, anchor) in remaining[anchorPlayer]!.enumerated() {
                    var members = [anchorPlayer: anchorIndex]
                    var latest = anchor
                    var complete = true
                    for player in players where player != anchorPlayer {
                        guard let index = remaining[player]!.firstIndex(where: { $0 >= anchor }) else {
                            complete = false
                            break
                        }
                        members[player] = index
                        latest = max(latest, remaining[player]![index])
                    }
                    if complete, latest - anchor <= window, latest - anchor < (best?.span ?? .infinity),
                        latest - anchor < minimumPause || !pauses.contains(where: { $0.start < latest && $0.end > anchor })
                    {
                        best = (latest - anchor, members)
                    }
                }
            }
            guard let best else { break }
            var cluster: [String: Double] = [:]
            for (player, index) in best.members {
                cluster[player] = remaining[player]!.remove(at: index)
            }
            clusters.append(cluster)
        }
        return (clusters, remaining.values.reduce(0) { $0 + $1.count })
    }

    /// The median pts step between consecutive frame indices, over all players (seconds).
    static func frameDuration(_ streams: [PlayerEventStream]) -> Double? {
        var steps: [Double] = []
        for stream in streams {
            var previous: (index: Int, pts: Double)?
            for event in stream.events where event.type == "frame" {
                guard let index = event.index, let pts = event.pts else { continue }
                if let previous, index == previous.index + 1, pts > previous.pts {
                    steps.append(pts - previous.pts)
                }
                previous = (index, pts)
            }
        }
        return Statistics.median(steps)
    }

    /// Command-to-effect latencies in milliseconds and the number of missed effects.
    static func commandLatencies(_ streams: [PlayerEventStream]) -> ([Double], Int) {
        struct Command: Hashable {
            var action: String
            var realtime: Double
            var id: String?
            var originator: String?
        }
        var commands = Set<Command>()
        for stream in streams {
            for event in stream.events where event.type == "command" {
                guard let action = event.action else { continue }
                commands.insert(Command(action: action, realtime: event.realtime, id: event.id, originator: event.player))
            }
        }
        let ordered = commands.sorted { $0.realtime < $1.realtime }
        var latencies: [Double] = []
        var missed = 0
        for (position, command) in ordered.enumerated() {
            let end = position + 1 < ordered.count ? ordered[position + 1].realtime : Double.infinity
            for stream in streams where stream.player != command.originator {
                let effect = stream.events.filter { event in
                    event.type == "effect" && event.action == command.action && event.realtime >= command.realtime
                        && event.realtime < end && (event.id == nil || command.id == nil || event.id == command.id)
                }.min { $0.realtime < $1.realtime }
                if let effect {
                    latencies.append((effect.realtime - command.realtime) * 1000)
                } else {
                    missed += 1
                }
            }
        }
        return (latencies, missed)
    }

    /// The suspension figures from the `suspension` and `resume` effects, or nil without any stop.
    static func suspensions(_ streams: [PlayerEventStream]) -> ScenarioResult.Suspensions? {
        var perPlayer: [[(stop: Double, resume: Double?)]] = []
        for stream in streams {
            let effects = stream.events.filter { $0.type == "effect" }
            let stops = effects.filter { $0.action == "suspension" }.map(\.realtime).sorted()
            let resumes = effects.filter { $0.action == "resume" }.map(\.realtime).sorted()
            perPlayer.append(stops.enumerated().map { number, stop in
                let next = number + 1 < stops.count ? stops[number + 1] : .infinity
                return (stop, resumes.first { $0 >= stop && $0 < next })
            })
        }
        let count = perPlayer.map(\.count).max() ?? 0
        guard count > 0 else { return nil }
        let pairs = perPlayer.flatMap { $0 }
        var stopSpread: Double?
        var resumeSpread: Double?
        for number in 0..<count where perPlayer.allSatisfy({ $0.count > number }) {
            let stops = perPlayer.map { $0[number].stop }
            stopSpread = max(stopSpread ?? 0, (stops.max()! - stops.min()!) * 1000)
            let resumes = perPlayer.compactMap { $0[number].resume }
            if resumes.count == perPlayer.count {
                resumeSpread = max(resumeSpread ?? 0, (resumes.max()! - resumes.min()!) * 1000)
            }
        }
        return ScenarioResult.Suspensions(
            count: count, unresumed: pairs.filter { $0.resume == nil }.count,
            held: ScenarioResult.Latency(milliseconds: pairs.compactMap { pair in pair.resume.map { ($0 - pair.stop) * 1000 } }),
            stopSpreadMs: stopSpread, resumeSpreadMs: resumeSpread)
    }

    /// Absolute clock-offset errors in milliseconds.
    static func clockErrors(_ streams: [PlayerEventStream], trueOffsets: [String: Double]) -> [Double] {
        var errors: [Double] = []
        for stream in streams {
            for event in stream.events where event.type == "clock" {
                guard let offset = event.offset,
                    let truth = event.trueOffset ?? trueOffsets[stream.player]
                else { continue }
                errors.append(abs(offset - truth) * 1000)
            }
        }
        return errors
    }
}
