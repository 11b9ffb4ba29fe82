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
    }

    /// A snapshot of the measurements so far.
    struct Summary {
        var frames: Int
        var p50: Double
        var p99: Double
        var max: Double
        /// Per player: mean presentation time minus the group's mean, in milliseconds.
        var offsets: [(player: String, milliseconds: Double)]
    }

    let players: Int
    private let state = Mutex(State())

    init(players: Int) { self.players = players }

    func record(_ event: PlaybackEvent) {
        guard event.type == .frame, let index = event.index, let reference = event.referenceTime,
              let player = event.player?.rawValue else { return }
        let key = Key(index: index, reference: Int64((reference * 1e4).rounded()))
        state.withLock { state in
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
                offsets: state.offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value.sum / Double($0.value.count)) })
        }
    }
}
