import BenchmarkSupport

/// Per second, where each member's pictures sit against a reference member's: the browser scenario's
/// headline figure (docs/benchmarks.md, "Browser pages").
///
/// A browser shows a frame on a tick of its 60 Hz frame clock, so a 25 fps clip's frames appear 0, 3.3,
/// 6.7, 10 or 13.3 ms after their instant in a 2-3-2-3-2 tick cadence even when the page is perfectly in
/// step, and a member that presents every frame on its instant (the headless `coplay join`) cannot be
/// matched frame by frame. What a page controls, and what a viewer judges a page by, is where that
/// cadence sits: its **display origin**, the least lag of its pictures. Per second (``Configuration/binSeconds``
/// of the series' time), for each member, the low percentile (``Configuration/percentile``, the 10th,
/// nearest rank) of its presentation time minus the reference member's, over the frames every member
/// presented in that second (the analysis' shared presentations, so seeks, rate changes and pauses need
/// nothing special); the reference's own is 0. The second's **spread** is the latest minus the earliest
/// of those origins, the reference's included; the **pages' spread** the same over the pages alone.
/// A second with fewer than ``Configuration/minimumFrames`` shared frames is left out.
///
/// At 30 fps on 60 Hz (every frame two ticks) the per-frame lag is constant and the origin is every
/// frame's offset; at 25 fps the 10th percentile of a second's 25 frames is the third smallest lag, and
/// five frames a second have the least one.
///
/// ```swift
/// let spread = DisplaySpread(series: analysis.series, reference: "p1", pages: ["b1", "b2"])
/// print(spread?.spread.p99Ms ?? .nan)
/// ```
package struct DisplaySpread: Codable, Sendable, Hashable {
    /// Knobs.
    package struct Configuration: Sendable, Hashable {
        /// The length of a bin (seconds).
        package var binSeconds: Double
        /// The percentile of a member's lag behind the reference taken as its origin in a bin.
        package var percentile: Double
        /// Bins with fewer shared frames are left out.
        package var minimumFrames: Int
        /// Pages whose origins differ by at least this much (ms) in a second are counted "a tick
        /// apart" (``tickApartSeconds``): 90 % of a 60 Hz tick by default, above every 3.3 ms lattice
        /// step below a tick.
        package var tickApartMs: Double

        /// Creates a configuration (defaults: 1 s bins, the 10th percentile, 5 frames, 15 ms).
        package init(binSeconds: Double = 1, percentile: Double = 0.1, minimumFrames: Int = 5, tickApartMs: Double = 15) {
            self.binSeconds = binSeconds
            self.percentile = percentile
            self.minimumFrames = max(1, minimumFrames)
            self.tickApartMs = tickApartMs
        }
    }

    /// One member's origins against the reference over the seconds (ms; positive: its pictures later).
    package struct Offsets: Codable, Sendable, Hashable {
        /// Seconds measured.
        package var count: Int
        package var minMs: Double
        package var p1Ms: Double
        package var p50Ms: Double
        package var p99Ms: Double
        package var maxMs: Double

        init?(_ values: [Double]) {
            let sorted = values.sorted()
            guard let first = sorted.first, let last = sorted.last, let p1 = Statistics.percentileOfSorted(sorted, 0.01),
                let p50 = Statistics.percentileOfSorted(sorted, 0.5), let p99 = Statistics.percentileOfSorted(sorted, 0.99)
            else { return nil }
            count = sorted.count
            minMs = first
            p1Ms = p1
            p50Ms = p50
            p99Ms = p99
            maxMs = last
        }
    }

    /// One second.
    package struct Second: Codable, Sendable, Hashable {
        /// The bin's start (seconds since the series' first frame).
        package var time: Double
        /// Shared frames in it.
        package var frames: Int
        /// Each member's origin against the reference (ms).
        package var originsMs: [String: Double]
        /// Latest minus earliest origin, every member (ms).
        package var spreadMs: Double
        /// Latest minus earliest origin, the pages alone (ms); nil with fewer than two pages.
        package var pagesSpreadMs: Double?
    }

    /// The reference member (its pictures on their instants: the headless member).
    package var reference: String
    /// The pages.
    package var pages: [String]
    /// Per-second spread over every member: count (seconds), p50, p99, max (ms).
    package var spread: ScenarioResult.Latency
    /// Per-second spread over the pages alone, with two pages or more.
    package var pagesSpread: ScenarioResult.Latency?
    /// Seconds in which two pages' origins were at least ``Configuration/tickApartMs`` apart.
    package var tickApartSeconds: Int
    /// Each page's origin against the reference over the seconds.
    package var offsets: [String: Offsets]
    /// The seconds, in time order.
    package var seconds: [Second]

    /// The figures of `series`, or nil when no second had enough shared frames or `reference` is not
    /// one of its players.
    package init?(series: SkewSeries, reference: String, pages: [String], configuration: Configuration = Configuration()) {
        guard series.players.contains(reference) else { return nil }
        let members = series.players
        var bins: [Int: [SkewSeries.Point]] = [:]
        for point in series.points {
            bins[Int((point.time / configuration.binSeconds).rounded(.down)), default: []].append(point)
        }
        var seconds: [Second] = []
        for (bin, points) in bins.sorted(by: { $0.key < $1.key }) where points.count >= configuration.minimumFrames {
            var origins: [String: Double] = [:]
            for member in members {
                let lags = points.compactMap { point -> Double? in
                    guard let mine = point.deviationMs[member], let theirs = point.deviationMs[reference] else { return nil }
                    return mine - theirs
                }.sorted()
                if let origin = Statistics.percentileOfSorted(lags, configuration.percentile) { origins[member] = origin }
            }
            guard origins.count == members.count else { continue }
            let all = Array(origins.values)
            let pageOrigins = pages.compactMap { origins[$0] }
            seconds.append(
                Second(
                    time: Double(bin) * configuration.binSeconds, frames: points.count, originsMs: origins,
                    spreadMs: all.max()! - all.min()!,
                    pagesSpreadMs: pageOrigins.count >= 2 ? pageOrigins.max()! - pageOrigins.min()! : nil))
        }
        guard let spread = ScenarioResult.Latency(milliseconds: seconds.map(\.spreadMs)) else { return nil }
        self.reference = reference
        self.pages = pages
        self.spread = spread
        self.pagesSpread = ScenarioResult.Latency(milliseconds: seconds.compactMap(\.pagesSpreadMs))
        self.tickApartSeconds = seconds.filter { ($0.pagesSpreadMs ?? 0) >= configuration.tickApartMs }.count
        self.offsets = Dictionary(
            uniqueKeysWithValues: pages.compactMap { page in Offsets(seconds.compactMap { $0.originsMs[page] }).map { (page, $0) } })
        self.seconds = seconds
    }
}
