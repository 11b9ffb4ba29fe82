import BenchmarkSupport
import PlaybackCoordinator
import Synchronization

/// Measures how closely players present the same frames, from their frame events alone: frames
/// are matched across players by (index, scheduled reference time), and for each frame every
/// player has presented, the skew is the spread of their CLOCK_REALTIME presentation stamps.
final class FrameSkewTracker: Sendable {
    private struct Key: Hashable {
        var index: Int
        var reference: Int64
    }

    private struct State {
        var pending: [Key: [String: Double]] = [:]
        var skews: [Double] = []
        var offsets: [String: (sum: Double, count: Int)] = [:]
        /// The instants the group moved to the next queue entry at an entry's end (reference
        /// seconds, from `itemChanged` with reason `end`), and the players' first frames there.
        var transitionAnchors: [Double] = []
        var transitionFrames: [Double: [String: Double]] = [:]
        var transitionSpreads: [Double] = []
    }

    /// A snapshot of the measurements so far.
    struct Summary {
        var frames: Int
        var p50: Double
        var p99: Double
        var max: Double
        /// Per player: mean presentation time minus the group's mean, in milliseconds.
        var offsets: [(player: String, milliseconds: Double)]
        /// Per transition at an entry's end that every player showed: the spread of the players'
        /// first frames of the next entry, in milliseconds.
        var transitions: [Double] = []
    }

    let players: Int
    private let state = Mutex(State())

    init(players: Int) { self.players = players }

    func record(_ event: PlaybackEvent) {
        if event.type == .itemChanged, event.reason == "end", let anchor = event.referenceTime {
            state.withLock { state in
                // Every player reports it: once per instant.
                if !state.transitionAnchors.contains(where: { abs($0 - anchor) < 1e-6 }) { state.transitionAnchors.append(anchor) }
            }
            return
        }
        guard event.type == .frame, let index = event.index, let reference = event.referenceTime,
              let player = event.player?.rawValue else { return }
        let key = Key(index: index, reference: Self.key(reference))
        state.withLock { state in
            // The next entry's first frame: frame 0, at (or its first pts after) a transition's anchor.
            if index == 0, let anchor = state.transitionAnchors.first(where: { (0..<0.5).contains(reference - $0) }) {
                state.transitionFrames[anchor, default: [:]][player] = event.realtime
                if let firsts = state.transitionFrames[anchor], firsts.count == players {
                    state.transitionFrames[anchor] = nil
                    state.transitionSpreads.append((firsts.values.max()! - firsts.values.min()!) * 1000)
                }
            }
            state.pending[key, default: [:]][player] = event.realtime
            guard let times = state.pending[key], times.count == players else { return }
            state.pending[key] = nil
            let mean = times.values.reduce(0, +) / Double(times.count)
            state.skews.append((times.values.max()! - times.values.min()!) * 1000)
            for (name, time) in times {
                let previous = state.offsets[name] ?? (0, 0)
                state.offsets[name] = (previous.sum + (time - mean) * 1000, previous.count + 1)
            }
        }
    }

    var summary: Summary {
        state.withLock { state in
            let sorted = state.skews.sorted()
            func quantile(_ q: Double) -> Double { Statistics.percentileOfSorted(sorted, q) ?? 0 }
            return Summary(
                frames: sorted.count, p50: quantile(0.5), p99: quantile(0.99), max: sorted.last ?? 0,
                offsets: state.offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value.sum / Double($0.value.count)) },
                transitions: state.transitionSpreads)
        }
    }

    /// A reference instant to 0.1 ms, to match a frame's scheduled instant with a state's anchor.
    private static func key(_ reference: Double) -> Int64 { Int64((reference * 1e4).rounded()) }
}
