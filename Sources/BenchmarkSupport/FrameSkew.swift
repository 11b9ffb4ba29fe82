import PlaybackCoordinator

/// Inter-player skew computed from frame events: for every frame index that more than one player
/// presented, the spread of their `realtime` stamps.
///
/// Only each player's first presentation of an index (per item) counts, so a seek backwards does
/// not pair unrelated presentations.
///
/// ```swift
/// let skew = FrameSkew(events: allFrameEvents)
/// print(skew.percentile(0.99) * 1e3, "ms p99")
/// ```
package struct FrameSkew: Hashable, Sendable {
    /// Per-frame spreads in seconds, ordered by item and index.
    package private(set) var spreads: [Double] = []
    /// How many frames were presented by every player seen.
    package private(set) var completeFrames = 0
    /// Number of players seen.
    package private(set) var players = 0

    /// Computes the skew of `events` (non-frame events are ignored).
    package init(events: [PlaybackEvent]) {
        struct Key: Hashable { var item: String; var index: Int }
        var firsts: [Key: [PlaybackParticipantID: Double]] = [:]
        var seen = Set<PlaybackParticipantID>()
        for event in events where event.type == .frame {
            guard let index = event.index, let player = event.player else { continue }
            seen.insert(player)
            let key = Key(item: event.item ?? "", index: index)
            if firsts[key, default: [:]][player] == nil { firsts[key, default: [:]][player] = event.realtime }
        }
        players = seen.count
        let keys = firsts.keys.sorted { ($0.item, $0.index) < ($1.item, $1.index) }
        for key in keys {
            guard let byPlayer = firsts[key], byPlayer.count > 1 else { continue }
            spreads.append(byPlayer.values.max()! - byPlayer.values.min()!)
            if byPlayer.count == players { completeFrames += 1 }
        }
    }

    /// The `fraction` percentile (0...1) of the spreads in seconds (``Statistics``' nearest rank), or 0 when empty.
    package func percentile(_ fraction: Double) -> Double {
        Statistics.percentile(spreads, fraction) ?? 0
    }

    /// The share of frames whose spread is at most `bound` seconds.
    package func share(within bound: Double) -> Double {
        spreads.isEmpty ? 0 : Double(spreads.filter { $0 <= bound }.count) / Double(spreads.count)
    }
}
