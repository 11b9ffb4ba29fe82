/// The presentation time of every frame of one video stream, in presentation order.
///
/// Built from packet timestamps (no decoding) when a probe runs with
/// ``MediaProbe/Options/scanPackets``, so variable-frame-rate media is frame-accurate. Frames that
/// the container hides (for example those before an MP4 edit list's start, flagged "discard") are
/// left out; duplicate timestamps count once. Constant-rate media is also summarised as a ``grid``.
///
/// Times are in seconds on the media's own timeline (as ffprobe's `pts_time`): the first frame of a
/// file with a non-zero start time is at ``startTime``, not at 0. Subtract ``startTime`` to get an
/// item time that starts at zero.
///
/// ```swift
/// let timeline = try await MediaProbe.shared.probe(url, options: .init(scanPackets: true))
///     .primaryVideoStream!.timeline!
/// let index = timeline.frameIndex(at: 1.0)!      // the frame on screen at t = 1 s
/// let shownAt = timeline.frameTime(index)        // when that frame appears
/// ```
public struct VideoFrameTimeline: Sendable, Hashable, Codable {
    /// The stream time base the timestamps count in.
    public let timeBase: Rational
    /// Presentation timestamps in `timeBase` ticks, strictly increasing.
    public let timestamps: [Int64]
    /// The end of the last frame (its timestamp plus its duration) in `timeBase` ticks.
    public let endTimestamp: Int64
    /// Presentation times in seconds, strictly increasing; `frameTimes[i]` is frame `i`'s time.
    public let frameTimes: [Double]
    /// The constant-rate summary, when every frame lasts the same number of ticks.
    public let grid: FrameGrid?

    /// A constant-rate timeline: `count` frames, `frameDuration` ticks apart, starting at `start`.
    public struct FrameGrid: Sendable, Hashable, Codable {
        /// The first frame's timestamp in ticks.
        public let start: Int64
        /// Ticks between consecutive frames.
        public let frameDuration: Int64
        /// The number of frames.
        public let count: Int
        /// The time base of `start` and `frameDuration`.
        public let timeBase: Rational

        /// Creates a grid.
        ///
        /// - Parameters:
        ///   - start: The first frame's timestamp in ticks.
        ///   - frameDuration: Ticks between frames (positive).
        ///   - count: The number of frames.
        ///   - timeBase: Seconds per tick.
        public init(start: Int64, frameDuration: Int64, count: Int, timeBase: Rational) {
            self.start = start
            self.frameDuration = frameDuration
            self.count = count
            self.timeBase = timeBase
        }

        /// Frames per second, exact and reduced (e.g. `24000/1001`).
        /// `0/0` if the product overflows.
        public var frameRate: Rational {
            let (ticks, overflow) = frameDuration.multipliedReportingOverflow(by: timeBase.numerator)
            return overflow ? .unknown : Rational(timeBase.denominator, ticks).reduced
        }
    }

    /// Builds a timeline from frame timestamps in any order.
    ///
    /// - Parameters:
    ///   - timeBase: The time base of `timestamps` (must have a non-zero denominator).
    ///   - timestamps: Presentation timestamps in ticks, in any order; duplicates are dropped.
    ///   - endTimestamp: Where the last frame ends; `nil` uses the last frame interval (or 0 length
    ///     for a single frame). Values before the last frame are ignored.
    public init(timeBase: Rational, timestamps: some Sequence<Int64>, endTimestamp: Int64? = nil) {
        var sorted = Array(timestamps)
        sorted.sort()
        var unique: [Int64] = []
        unique.reserveCapacity(sorted.count)
        for t in sorted where unique.last != t { unique.append(t) }

        self.timeBase = timeBase
        self.timestamps = unique
        // Damaged files can carry timestamps at the ends of Int64: every difference is overflow-checked.
        func gap(_ i: Int) -> Int64? {
            let (difference, overflow) = unique[i].subtractingReportingOverflow(unique[i - 1])
            return overflow ? nil : difference
        }
        let last = unique.last ?? 0
        let lastInterval = unique.count >= 2 ? gap(unique.count - 1) ?? 0 : 0
        let (guessedEnd, endOverflow) = last.addingReportingOverflow(lastInterval)
        self.endTimestamp = max(endTimestamp ?? (endOverflow ? last : guessedEnd), last)
        self.frameTimes = unique.map { MediaTime(value: $0, timeBase: timeBase).seconds }

        var grid: FrameGrid?
        if unique.count >= 2, let step = gap(1) {
            var constant = true
            for i in 2..<unique.count where gap(i) != step {
                constant = false
                break
            }
            if constant { grid = FrameGrid(start: unique[0], frameDuration: step, count: unique.count, timeBase: timeBase) }
        }
        self.grid = grid
    }

    /// Builds the timeline of a constant-rate stream from its grid.
    ///
    /// - Parameter grid: Start, interval and frame count.
    public init(grid: FrameGrid) {
        let stamps = (0..<max(0, grid.count)).map { grid.start &+ Int64($0) &* grid.frameDuration }
        self.init(timeBase: grid.timeBase, timestamps: stamps, endTimestamp: stamps.last.map { $0 &+ grid.frameDuration })
    }

    /// The number of frames.
    public var count: Int { timestamps.count }

    /// The first frame's time in seconds (0 for an empty timeline).
    public var startTime: Double { frameTimes.first ?? 0 }

    /// When the last frame ends, in seconds.
    public var endTime: Double { MediaTime(value: endTimestamp, timeBase: timeBase).seconds }

    /// From the first frame's start to the last frame's end, in seconds.
    public var duration: Double { endTime - startTime }

    /// Whether every frame lasts the same time.
    public var isConstantRate: Bool { grid != nil }

    /// The presentation time of frame `index` in seconds.
    ///
    /// - Parameter index: A frame index in `0..<count`.
    public func frameTime(_ index: Int) -> Double {
        precondition(frameTimes.indices.contains(index), "frame index \(index) outside 0..<\(count)")
        return frameTimes[index]
    }

    /// The frame on screen at `seconds`: the last frame whose time is at or before it.
    ///
    /// Returns `nil` before the first frame or for an empty timeline; after the end it returns the
    /// last frame (it stays on screen). `frameIndex(at: frameTime(i)) == i` for every frame.
    ///
    /// - Parameter seconds: A time on the media's timeline (same origin as ``frameTimes``).
    public func frameIndex(at seconds: Double) -> Int? {
        guard let first = frameTimes.first, seconds >= first else { return nil }
        // Binary search for the first time > seconds.
        var low = 0, high = frameTimes.count
        while low < high {
            let mid = (low + high) / 2
            if frameTimes[mid] <= seconds { low = mid + 1 } else { high = mid }
        }
        return low - 1
    }
}
