/// Turns sampled player positions into the benchmark's event-stream model, so the same
/// ``ScenarioAnalysis`` measures players that cannot report their frames (Syncplay + mpv).
///
/// **Frames.** Between two consecutive samples of one player that are both playing, no more than
/// ``maxGap`` apart, and whose position advanced at a plausible rate (``rateRange``, which excludes
/// seeks and stalls), the position is interpolated linearly; frame N is "presented" when the position
/// crosses N / frameRate. Its timing error is the samples' attribution error (half an IPC round trip)
/// plus the interpolation error, which is zero while the player runs at a steady rate.
///
/// **Effects.** For each command, the first sample of each player at or after the command that shows
/// its effect (play: not paused; pause: paused; seek: position within ``seekTolerance`` of the target)
/// dates the effect at the midpoint between that sample and the one before it: an error of at most
/// half a sampling interval.
///
/// ```swift
/// let streams = SampledPlayback(frameRate: 25).streams(samples: samples, commands: commands, players: ["a", "b"])
/// ```
public struct SampledPlayback: Sendable {
    /// The media's frame rate (frames per second).
    public var frameRate: Double
    /// The longest interval between two samples that is still interpolated (seconds).
    public var maxGap: Double
    /// The playback rates accepted as steady playing (position seconds per realtime second).
    public var rateRange: ClosedRange<Double>
    /// How close to its target a position must be to count as a seek's effect (seconds).
    public var seekTolerance: Double

    /// Creates a converter.
    ///
    /// - Parameters:
    ///   - frameRate: frames per second of the media.
    ///   - maxGap: seconds; default 0.5.
    ///   - rateRange: default 0.5...2.
    ///   - seekTolerance: seconds; default 0.5.
    public init(frameRate: Double, maxGap: Double = 0.5, rateRange: ClosedRange<Double> = 0.5...2, seekTolerance: Double = 0.5) {
        self.frameRate = frameRate
        self.maxGap = maxGap
        self.rateRange = rateRange
        self.seekTolerance = seekTolerance
    }

    /// One stream per player, in `players` order: synthesized frame events, the commands the player
    /// originated, and the effects observed on it.
    ///
    /// - Parameters:
    ///   - samples: every player's samples, any order.
    ///   - commands: `command` events (their `player` is the originator).
    ///   - players: the players' names.
    public func streams(samples: [PositionSample], commands: [BenchEvent], players: [String]) -> [PlayerEventStream] {
        players.map { player in
            let own = samples.filter { $0.player == player }.sorted { $0.realtime < $1.realtime }
            var events = frames(own, player: player)
            events += commands.filter { $0.player == player }
            events += effects(own, commands: commands, player: player)
            events.sort { $0.realtime < $1.realtime }
            return PlayerEventStream(player: player, events: events)
        }
    }

    /// Frame crossings synthesized from one player's samples (sorted by time).
    func frames(_ samples: [PositionSample], player: String) -> [BenchEvent] {
        var events: [BenchEvent] = []
        for (s0, s1) in zip(samples, samples.dropFirst()) {
            guard s0.paused == false, s1.paused == false, let p0 = s0.position, let p1 = s1.position else { continue }
            let dt = s1.realtime - s0.realtime
            guard dt > 0, dt <= maxGap, p1 > p0 else { continue }
            let rate = (p1 - p0) / dt
            guard rateRange.contains(rate) else { continue }
            // Frames whose start lies in (p0, p1].
            var index = Int((p0 * frameRate).rounded(.down)) + 1
            while Double(index) / frameRate <= p1 {
                let pts = Double(index) / frameRate
                if pts > p0 {
                    events.append(.frame(index: index, pts: pts, realtime: s0.realtime + (pts - p0) / rate, player: player))
                }
                index += 1
            }
        }
        return events
    }

    /// Effects of `commands` observed in one player's samples (sorted by time).
    func effects(_ samples: [PositionSample], commands: [BenchEvent], player: String) -> [BenchEvent] {
        let ordered = commands.filter { $0.type == "command" }.sorted { $0.realtime < $1.realtime }
        var events: [BenchEvent] = []
        for (number, command) in ordered.enumerated() {
            guard let action = command.action else { continue }
            let end = number + 1 < ordered.count ? ordered[number + 1].realtime : Double.infinity
            var previous: PositionSample?
            for sample in samples where sample.realtime < end {
                defer { previous = sample }
                guard sample.realtime >= command.realtime else { continue }
                let shows: Bool
                switch action {
                case "play": shows = sample.paused == false
                case "pause": shows = sample.paused == true
                case "seek":
                    if let position = sample.position, let target = command.target {
                        shows = abs(position - target) <= seekTolerance
                    } else {
                        shows = false
                    }
                default: shows = false
                }
                guard shows else { continue }
                let before = max(previous?.realtime ?? command.realtime, command.realtime)
                events.append(.effect(action, id: command.id, realtime: (before + sample.realtime) / 2, player: player))
                break
            }
        }
        return events
    }
}
