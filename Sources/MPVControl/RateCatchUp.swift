import PlaybackCoordinator

/// How a player catches up with the group after a rate change on a video-only file.
///
/// mpv applies a new `speed` from the next frame change on, so a rate change that the group makes
/// at an instant inside frame `k` takes effect on mpv only when frame `k + 1` appears; until then the
/// old rate ran on, and the player is `ahead` of the group's timeline by (old - new rate) x (the
/// rest of frame `k`), the same on every player. The catch-up removes exactly that by running the
/// new rate times a trim `t` over the fewest whole frames `k + 1 ..< k + 1 + frames` that the trim
/// limit allows: over frames spanning `D` seconds of item time, the player moves `D` while the group
/// moves `D / t`, so it gains `D (1 - 1/t)` and `t = 1 / (1 + ahead / D)`.
///
/// Sans-IO and pure: ``MPVPlayer`` times the commands (the trim mid-way through frame `k`, the
/// group's rate mid-way through the last trimmed frame, so each lands on the intended change).
public struct RateCatchUp: Sendable, Hashable {
    /// The trim: mpv runs at the new rate times this while catching up.
    public var trim: Double
    /// How many frames, from the first after the change, run trimmed.
    public var frames: Int

    /// The catch-up after a change inside frame `frame` of `timeline`, with the player `ahead`
    /// seconds of item time ahead of the group when frame `frame + 1` appears (negative: behind),
    /// or `nil` when there is nothing to remove or too few frames are left.
    ///
    /// - Parameters:
    ///   - timeline: the item's frames.
    ///   - frame: the frame inside which the rate changed.
    ///   - ahead: how far ahead of the group the player is, in seconds of item time, when frame
    ///     `frame + 1` appears (negative: behind).
    ///   - maximumTrim: the largest |t - 1| allowed.
    ///   - maximumFrames: the longest catch-up considered.
    public static func plan(
        timeline: MediaTimeline, changeInFrame frame: Int, ahead: Double, maximumTrim: Double, maximumFrames: Int = 1000
    ) -> RateCatchUp? {
        guard abs(ahead) > 1e-6, maximumTrim > 0, frame >= 0, frame + 1 < timeline.frameCount else { return nil }
        let first = timeline.presentationTime(ofFrame: frame + 1)
        var frames = 1
        while frame + 1 + frames < timeline.frameCount, frames <= maximumFrames {
            let span = timeline.presentationTime(ofFrame: frame + 1 + frames) - first
            if span > 0 {
                let trim = 1 / (1 + ahead / span)
                if trim > 0, abs(trim - 1) <= maximumTrim { return RateCatchUp(trim: trim, frames: frames) }
            }
            frames += 1
        }
        return nil
    }

    /// The item time the player gains on the group over the catch-up (equal to `-ahead`).
    public func gain(timeline: MediaTimeline, changeInFrame frame: Int) -> Double {
        let span = timeline.presentationTime(ofFrame: frame + 1 + frames) - timeline.presentationTime(ofFrame: frame + 1)
        return span * (1 - 1 / trim)
    }
}
