/// The frames of one media item: its identifier, its duration and when each frame is presented.
///
/// A plain value with no FFmpeg in it: the command-line tool maps a MediaProbe result onto it, and
/// an app with its own decoder builds one directly. Frames lie either on a constant grid
/// (`start + index * interval`) or at exact, strictly increasing presentation times.
///
/// ```swift
/// let clip = MediaTimeline(identifier: "clip", duration: 10, frameRate: 25)
/// clip.frameCount                  // 250
/// clip.presentationTime(ofFrame: 3) // 0.12
/// clip.firstFrame(atOrAfter: 0.1)  // 3
/// ```
public struct MediaTimeline: Hashable, Sendable, Codable {
    /// How frame presentation times are laid out.
    public enum Frames: Hashable, Sendable, Codable {
        /// `count` frames at `start + index * interval` seconds.
        case grid(start: Double, interval: Double, count: Int)
        /// Exact presentation times in seconds, strictly increasing.
        case exact([Double])
    }

    /// The item identifier shared by the group (for example a content fingerprint or a name).
    public var identifier: String
    /// Duration in seconds.
    public var duration: Double
    /// The frame layout.
    public var frames: Frames

    /// Creates a timeline from an explicit frame layout.
    ///
    /// - Parameters:
    ///   - identifier: the item identifier shared by the group.
    ///   - duration: duration in seconds.
    ///   - frames: the frame layout.
    public init(identifier: String, duration: Double, frames: Frames) {
        self.identifier = identifier
        self.duration = duration
        self.frames = frames
    }

    /// Creates a timeline with frames on a constant grid starting at zero.
    ///
    /// - Parameters:
    ///   - identifier: the item identifier shared by the group.
    ///   - duration: duration in seconds.
    ///   - frameRate: frames per second (must be positive).
    public init(identifier: String, duration: Double, frameRate: Double) {
        precondition(frameRate > 0, "frame rate must be positive")
        let interval = 1 / frameRate
        // Frames start at 0, 1/rate, ... while before the end (1 ns tolerance against rounding).
        let count = max(0, Int((duration * frameRate - 1e-6).rounded(.up)))
        self.init(identifier: identifier, duration: duration, frames: .grid(start: 0, interval: interval, count: count))
    }

    /// The number of frames.
    public var frameCount: Int {
        switch frames {
        case .grid(_, _, let count): count
        case .exact(let times): times.count
        }
    }

    /// The presentation time (seconds) of frame `index`, which must be in `0..<frameCount`.
    public func presentationTime(ofFrame index: Int) -> Double {
        switch frames {
        case .grid(let start, let interval, _): start + Double(index) * interval
        case .exact(let times): times[index]
        }
    }

    /// The first frame whose presentation time is at or after `time` (within 1 ns), or `nil` when
    /// there is none.
    public func firstFrame(atOrAfter time: Double) -> Int? {
        let count = frameCount
        guard count > 0 else { return nil }
        let target = time - 1e-9
        switch frames {
        case .grid(let start, let interval, _):
            let index = max(0, Int(((target - start) / interval).rounded(.up)))
            return index < count ? index : nil
        case .exact(let times):
            var low = 0
            var high = count
            while low < high {
                let mid = (low + high) / 2
                if times[mid] < target { low = mid + 1 } else { high = mid }
            }
            return low < count ? low : nil
        }
    }

    /// The frame on screen at `time`: the last frame whose presentation time is at or before
    /// `time` (within 1 ns), or `nil` before the first frame.
    public func frame(displayedAt time: Double) -> Int? {
        guard let next = firstFrame(atOrAfter: time) else {
            return frameCount > 0 ? frameCount - 1 : nil
        }
        if abs(presentationTime(ofFrame: next) - time) <= 1e-9 { return next }
        return next > 0 ? next - 1 : nil
    }
}
