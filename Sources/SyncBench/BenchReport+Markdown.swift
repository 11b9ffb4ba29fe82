import Foundation

extension BenchReport {
    /// The Markdown report: a header, a warning when a scenario failed, one table row per scenario,
    /// the run's notes, and a pointer to the plot.
    public func markdownReport() -> String {
        var lines: [String] = ["# coplay timing accuracy", ""]
        if !isComplete {
            let failed = entries.filter { !$0.result.succeeded }.map(\.result.name)
            lines.append("**INCOMPLETE RUN: \(failed.count) scenario(s) failed (\(failed.joined(separator: ", "))).**")
            lines.append("")
        }
        lines.append(
            "| scenario | players | method | frames | p50 skew (ms) | p99 skew (ms) | max skew (ms) | within 1 ms | within ½ frame | command→effect p50 / max (ms) |"
        )
        lines.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
        for entry in entries {
            let r = entry.result
            guard r.succeeded else {
                lines.append(
                    "| \(r.name) | \(r.players) | FAILED: \(Self.escape(r.error ?? "unknown error")) | | | | | | | |")
                continue
            }
            let latency = r.commandLatency.map { "\(Self.ms($0.p50Ms)) / \(Self.ms($0.maxMs))" } ?? "–"
            lines.append(
                "| \(r.name) | \(r.players) | \(r.method ?? "–") | \(r.frames ?? 0) | \(Self.ms(r.p50SkewMs)) | \(Self.ms(r.p99SkewMs)) | \(Self.ms(r.maxSkewMs)) | \(Self.share(r.within1msShare)) | \(Self.share(r.withinHalfFrameShare)) | \(latency) |"
            )
        }
        lines.append("")
        let extras = entries.filter { $0.result.succeeded }.compactMap { entry -> String? in
            let r = entry.result
            var parts: [String] = []
            if let unmatched = r.unmatchedFrames, unmatched > 0 { parts.append("\(unmatched) unmatched frame presentations") }
            if let missed = r.missedEffects, missed > 0 { parts.append("\(missed) missed command effects") }
            if let clock = r.clockOffsetError {
                parts.append("clock-offset error p50 \(Self.ms(clock.p50Ms)) ms, max \(Self.ms(clock.maxMs)) ms")
            }
            if let duration = r.durationSeconds { parts.append(String(format: "%.1f s measured", duration)) }
            return parts.isEmpty ? nil : "- \(r.name): " + parts.joined(separator: "; ")
        }
        lines.append(contentsOf: extras)
        if !notes.isEmpty {
            if !extras.isEmpty { lines.append("") }
            lines.append(contentsOf: notes.map { "- \($0)" })
        }
        lines.append("")
        lines.append("Skew is, per frame presented by every player, the latest minus the earliest CLOCK_REALTIME")
        lines.append("presentation time; percentiles are nearest-rank. Plot: `skew.svg`. Definitions: docs/benchmarks.md.")
        return lines.joined(separator: "\n") + "\n"
    }

    static func ms(_ value: Double?) -> String {
        guard let value else { return "–" }
        return abs(value) < 10 ? String(format: "%.3f", value) : String(format: "%.1f", value)
    }

    static func share(_ value: Double?) -> String {
        guard let value else { return "–" }
        return String(format: "%.1f%%", value * 100)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }
}
