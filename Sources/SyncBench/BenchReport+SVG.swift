import Foundation

extension BenchReport {
    /// The skew plot: one panel per scenario, one line per player showing its deviation from the
    /// players' mean presentation time (ms) against time since the scenario's first frame (s).
    ///
    /// Hand-written SVG 1.1 with no scripts or external resources. Long series are reduced to at most
    /// ``maxPlotBuckets`` time buckets, keeping each bucket's lowest and highest value per player so
    /// excursions stay visible.
    package func skewPlotSVG() -> String {
        let width = 960.0
        let panelHeight = 280.0
        let margin = (left: 70.0, right: 150.0, top: 36.0, bottom: 40.0)
        let height = max(1, Double(entries.count)) * panelHeight
        var svg = """
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(Int(width))" height="\(Int(height))" \
            viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="white"/>

            """
        for (panel, entry) in entries.enumerated() {
            let top = Double(panel) * panelHeight
            let plot = (
                x: margin.left, y: top + margin.top, w: width - margin.left - margin.right,
                h: panelHeight - margin.top - margin.bottom
            )
            let r = entry.result
            var title = "\(Self.xml(r.name)): deviation from the players' mean (ms)"
            if r.succeeded, let p99 = r.p99SkewMs { title += " — p99 skew \(Self.ms(p99)) ms" }
            svg += "<text x=\"\(plot.x)\" y=\"\(top + 20)\" font-size=\"14\" font-weight=\"bold\">\(title)</text>\n"
            guard r.succeeded, let series = entry.series, !series.points.isEmpty else {
                let message = r.succeeded ? "no frame presented by every player" : "FAILED: \(r.error ?? "unknown error")"
                svg += "<text x=\"\(plot.x)\" y=\"\(plot.y + plot.h / 2)\" fill=\"#b00\">\(Self.xml(message))</text>\n"
                continue
            }
            let tMax = max(series.points.last!.time, 1e-3)
            let peak = series.points.flatMap { $0.deviationMs.values }.map { abs($0) }.max() ?? 0
            let yMax = Self.niceCeiling(max(peak, 0.01))
            func px(_ t: Double) -> Double { plot.x + t / tMax * plot.w }
            func py(_ v: Double) -> Double { plot.y + plot.h / 2 - v / yMax * plot.h / 2 }

            // Frame and grid.
            svg += "<rect x=\"\(plot.x)\" y=\"\(plot.y)\" width=\"\(plot.w)\" height=\"\(plot.h)\" fill=\"none\" stroke=\"#888\"/>\n"
            for step in -2...2 {
                let v = yMax * Double(step) / 2
                let y = Self.f(py(v))
                svg += "<line x1=\"\(plot.x)\" y1=\"\(y)\" x2=\"\(plot.x + plot.w)\" y2=\"\(y)\" stroke=\"#ddd\"/>\n"
                svg += "<text x=\"\(plot.x - 6)\" y=\"\(y)\" text-anchor=\"end\" dominant-baseline=\"middle\">\(Self.ms(v))</text>\n"
            }
            for step in 0...5 {
                let t = tMax * Double(step) / 5
                let x = Self.f(px(t))
                svg += "<text x=\"\(x)\" y=\"\(plot.y + plot.h + 16)\" text-anchor=\"middle\">\(String(format: "%.0f", t))</text>\n"
            }
            svg += "<text x=\"\(plot.x + plot.w / 2)\" y=\"\(plot.y + plot.h + 32)\" text-anchor=\"middle\">time (s)</text>\n"

            // One polyline per player and stretch of presented frames: a pause, a seek or a stall, where
            // nothing was presented, breaks the line instead of being drawn across as if it were drift.
            for (number, player) in series.players.enumerated() {
                let color = Self.palette[number % Self.palette.count]
                let reduced = Self.reduce(series.points, player: player, buckets: Self.maxPlotBuckets, tMax: tMax)
                for stretch in Self.stretches(reduced, gap: Self.lineBreakGap) {
                    let coordinates = stretch.map { "\(Self.f(px($0.time))),\(Self.f(py($0.value)))" }
                    if coordinates.count == 1, let only = stretch.first {
                        svg += "<circle cx=\"\(Self.f(px(only.time)))\" cy=\"\(Self.f(py(only.value)))\" r=\"1\" fill=\"\(color)\"/>\n"
                    } else {
                        svg += "<polyline fill=\"none\" stroke=\"\(color)\" stroke-width=\"1\" points=\"\(coordinates.joined(separator: " "))\"/>\n"
                    }
                }
                let legendY = plot.y + 14 + Double(number) * 16
                svg += "<line x1=\"\(plot.x + plot.w + 12)\" y1=\"\(legendY)\" x2=\"\(plot.x + plot.w + 32)\" y2=\"\(legendY)\" stroke=\"\(color)\" stroke-width=\"2\"/>\n"
                svg += "<text x=\"\(plot.x + plot.w + 38)\" y=\"\(legendY)\" dominant-baseline=\"middle\">\(Self.xml(player))</text>\n"
            }
        }
        svg += "</svg>\n"
        return svg
    }

    /// At most this many time buckets per player line.
    package static var maxPlotBuckets: Int { 800 }

    /// Seconds without a sample that break a player's line (frames come every 17-42 ms while playing).
    package static var lineBreakGap: Double { 0.5 }

    /// `points` (in time order) cut wherever two neighbours are more than `gap` seconds apart.
    static func stretches(_ points: [(time: Double, value: Double)], gap: Double) -> [[(time: Double, value: Double)]] {
        var result: [[(time: Double, value: Double)]] = []
        for point in points {
            if let last = result.last?.last, point.time - last.time <= gap {
                result[result.count - 1].append(point)
            } else {
                result.append([point])
            }
        }
        return result
    }

    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"]

    /// Per bucket, the lowest and highest deviation of `player`, in time order.
    static func reduce(_ points: [SkewSeries.Point], player: String, buckets: Int, tMax: Double)
        -> [(time: Double, value: Double)]
    {
        let values = points.compactMap { point in point.deviationMs[player].map { (time: point.time, value: $0) } }
        guard values.count > 2 * buckets else { return values }
        var reduced: [(time: Double, value: Double)] = []
        func bucket(_ time: Double) -> Int { min(Int(time / tMax * Double(buckets)), buckets - 1) }
        var start = 0
        while start < values.count {
            let current = bucket(values[start].time)
            var end = start
            while end < values.count && bucket(values[end].time) == current { end += 1 }
            let slice = values[start..<end]
            let low = slice.min { $0.value < $1.value }!
            let high = slice.max { $0.value < $1.value }!
            reduced.append(contentsOf: low.time <= high.time ? [low, high] : [high, low])
            start = end
        }
        return reduced
    }

    /// The smallest of 1, 2, 5 times a power of ten that is at least `value`.
    static func niceCeiling(_ value: Double) -> Double {
        let magnitude = pow(10, (log10(value)).rounded(.down))
        for factor in [1.0, 2, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }

    static func f(_ value: Double) -> String { String(format: "%.2f", value) }

    static func xml(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
