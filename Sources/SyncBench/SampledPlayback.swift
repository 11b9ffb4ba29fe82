/// Turns what the mpv samplers saw of players that cannot report their frames (Syncplay + mpv) into
/// the benchmark's event-stream model, so the same ``ScenarioAnalysis`` measures them.
///
/// **Frames.** Each frame presentation the sampler dated (``FrameTransitionTracker``: a change of
/// `time-pos`, bracketed by two samples) is a frame event at the bracket's midpoint.
///
/// **Effects.** For each command, the first observation on each player, at or after the command and
/// before the next one, that shows its effect: play, `pause` turning false; pause, `pause` turning true
/// (each dated when mpv's notification was read); seek, the first position jump or frame within
/// ``seekTolerance`` of the target (dated at its bracket's midpoint).
///
/// ```swift
/// let streams = SampledPlayback().streams(records: records, commands: commands)
/// ```
package struct SampledPlayback: Sendable {
    /// How close to its target a position must be to count as a seek's effect (seconds).
    package var seekTolerance: Double

    /// Creates a converter.
    ///
    /// - Parameter seekTolerance: seconds; default 0.5.
    package init(seekTolerance: Double = 0.5) {
        self.seekTolerance = seekTolerance
    }

    /// One stream per record, in order: frame events, the commands the player originated, and the
    /// effects observed on it.
    ///
    /// - Parameters:
    ///   - records: one sampler record per player.
    ///   - commands: `command` events (their `player` is the originator).
    package func streams(records: [MPVFrameSampler.Record], commands: [BenchEvent]) -> [PlayerEventStream] {
        records.map { record in
            // Each frame at the date its neighbours allow (FrameCadence), when the record has them.
            let dated = record.dated.count == record.transitions.count ? record.dated.map(\.realtime) : record.transitions.map(\.realtime)
            var events = zip(record.transitions, dated).map { frame, realtime in
                BenchEvent.frame(index: frame.index, pts: frame.pts, realtime: realtime, player: record.player)
            }
            events += commands.filter { $0.player == record.player }
            events += effects(record, commands: commands)
            events.sort { $0.realtime < $1.realtime }
            return PlayerEventStream(player: record.player, events: events)
        }
    }

    /// Effects of `commands` observed on one player.
    func effects(_ record: MPVFrameSampler.Record, commands: [BenchEvent]) -> [BenchEvent] {
        let ordered = commands.filter { $0.type == "command" }.sorted { $0.realtime < $1.realtime }
        let positions = (record.jumps.map { ($0.realtime, $0.to) } + record.transitions.map { ($0.realtime, $0.pts) })
            .sorted { $0.0 < $1.0 }
        var events: [BenchEvent] = []
        for (number, command) in ordered.enumerated() {
            guard let action = command.action else { continue }
            let end = number + 1 < ordered.count ? ordered[number + 1].realtime : Double.infinity
            let window = command.realtime..<end
            var at: Double?
            switch action {
            case "play", "pause":
                at = record.pauses.first { window.contains($0.realtime) && $0.paused == (action == "pause") }?.realtime
            case "seek":
                if let target = command.target {
                    at = positions.first { window.contains($0.0) && abs($0.1 - target) <= seekTolerance }?.0
                }
            default:
                break
            }
            if let at { events.append(.effect(action, id: command.id, realtime: at, player: record.player)) }
        }
        return events
    }
}
