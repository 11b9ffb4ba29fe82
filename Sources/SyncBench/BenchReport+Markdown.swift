import Foundation

extension BenchReport {
    /// The Markdown report: a header, a warning when a scenario failed, one table row per scenario,
    /// the run's notes, and a pointer to the plot.
    package func markdownReport() -> String {
        var lines: [String] = ["# coplay timing accuracy", ""]
        if !isComplete {
            let failed = entries.filter { !$0.result.succeeded }.map(\.result.name)
            lines.append("**INCOMPLETE RUN: \(failed.count) scenario(s) failed (\(failed.joined(separator: ", "))).**")
            lines.append("")
        }
        lines.append(
            "| scenario | implementation | players | p50 skew (ms) | p99 skew (ms) | max skew (ms) | within 1 ms | within ½ frame | command→effect p50 / max (ms) | clock-offset error p50 / max (ms) | relay restart | frames |"
        )
        lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
        for entry in entries {
            let r = entry.result
            let implementation = Self.implementationLabel(r.implementation, mediaPlayer: r.mediaPlayer)
            guard r.succeeded else {
                lines.append(
                    "| \(r.name) | \(implementation) | \(r.players) | FAILED: \(Self.escape(r.error ?? "unknown error")) | | | | | | | | |")
                continue
            }
            let latency = r.commandLatency.map { "\(Self.ms($0.p50Ms)) / \(Self.ms($0.maxMs))" } ?? "–"
            let clock = r.clockOffsetError.map { "\(Self.ms($0.p50Ms)) / \(Self.ms($0.maxMs))" } ?? "–"
            lines.append(
                "| \(r.name) | \(implementation) | \(r.players) | \(Self.ms(r.p50SkewMs)) | \(Self.ms(r.p99SkewMs)) | \(Self.ms(r.maxSkewMs)) | \(Self.share(r.within1msShare)) | \(Self.share(r.withinHalfFrameShare)) | \(latency) | \(clock) | \(Self.restartLabel(r.relayRestart)) | \(r.frames ?? 0) |"
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
            if let method = r.method {
                switch method {
                case "transitions":
                    var text = "frames from mpv's time-pos transitions seen by the benchmark's sampler"
                    if let sampler = r.sampler, let bracket = sampler.bracket {
                        text += " (bracket p50 \(Self.ms(bracket.p50Ms)) / p99 \(Self.ms(bracket.p99Ms)) / max \(Self.ms(bracket.maxMs)) ms"
                        text += ", \(sampler.widerThan1ms) of \(bracket.count) wider than 1 ms"
                        if let dating = sampler.datingError {
                            text += "; re-dated from neighbouring frames (FrameCadence): dating error p50 \(Self.ms(dating.p50Ms)) / p99 \(Self.ms(dating.p99Ms)) / max \(Self.ms(dating.maxMs)) ms"
                        }
                        if let roundTrip = sampler.roundTrip {
                            text += "; IPC round trip p50 \(Self.ms(roundTrip.p50Ms)) / p99 \(Self.ms(roundTrip.p99Ms)) ms"
                        }
                        if let lateness = sampler.lateness {
                            text += "; sampler wake-up lateness p50 \(Self.ms(lateness.p50Ms)) / p99 \(Self.ms(lateness.p99Ms)) ms"
                        }
                        if let rate = sampler.samplesPerSecond { text += String(format: "; %.0f samples/s per player", rate) }
                        text += ")"
                    }
                    parts.append(text)
                case "display":
                    var text = "the headless member's frame events; each page frame dated by its display time"
                        + " (performance.timeOrigin + expectedDisplayTime: when Chromium shows it, on its 60 Hz frame clock)"
                    if let browser = r.browser {
                        text += ", \(browser.displayedFrames) of \(browser.samples) samples"
                        if let spread = browser.displaySpread {
                            text += "; DISPLAY ORIGINS per second (10th percentile of each member's frames minus \(spread.reference)'s):"
                                + " spread p50 \(Self.ms(spread.spread.p50Ms)) / p99 \(Self.ms(spread.spread.p99Ms))"
                                + " / max \(Self.ms(spread.spread.maxMs)) ms over \(spread.spread.count) s"
                            if let pages = spread.pagesSpread {
                                text += ", pages alone p50 \(Self.ms(pages.p50Ms)) / p99 \(Self.ms(pages.p99Ms)) / max \(Self.ms(pages.maxMs)) ms"
                            }
                            text += ", \(spread.tickApartSeconds) s with two pages a 60 Hz tick apart"
                            text += "; pages minus \(spread.reference) p50 "
                                + spread.pages.compactMap { page in spread.offsets[page].map { "\(page) \(Self.ms($0.p50Ms))" } }
                                .joined(separator: ", ") + " ms"
                        }
                        if let pages = browser.pagesOnly {
                            text += "; per frame between the pages alone p50 \(Self.ms(pages.p50Ms)) / p99 \(Self.ms(pages.p99Ms))"
                                + " / max \(Self.ms(pages.maxMs)) ms over \(pages.frames) frames"
                        }
                        if let clock = browser.mediaClock {
                            text += "; NOT what is seen, by MEDIA CLOCK (currentTime per window, plus each page's median display latency: "
                                + browser.displayLatencyMs.keys.sorted().map { "\($0) \(Self.ms(browser.displayLatencyMs[$0]))" }
                                .joined(separator: ", ")
                                + " ms): p50 \(Self.ms(clock.p50Ms)) / p99 \(Self.ms(clock.p99Ms)) / max \(Self.ms(clock.maxMs)) ms"
                            if let pages = browser.mediaClockPagesOnly {
                                text += ", pages alone p50 \(Self.ms(pages.p50Ms)) / p99 \(Self.ms(pages.p99Ms)) / max \(Self.ms(pages.maxMs)) ms"
                            }
                        }
                        if let decoupling = browser.displayDecoupling {
                            text += "; pictures vs media clock (|display − clock origin − latency| per window) p50 \(Self.ms(decoupling.p50Ms))"
                                + " / p99 \(Self.ms(decoupling.p99Ms)) / max \(Self.ms(decoupling.maxMs)) ms"
                        }
                        if let calibration = browser.calibrationMaxMs {
                            text += "; page clock vs CLOCK_REALTIME within \(Self.ms(calibration)) ms"
                        }
                        if let audio = browser.hasAudio { text += audio ? "; media with audio" : "; video-only media" }
                    }
                    parts.append(text)
                case "queue":
                    parts.append("QUEUE: the skew columns are the spread of the next entry's first frame over every member at each transition (frames = transitions)")
                    if let queue = r.queue { parts += queue.summaryLines }
                default: parts.append("frames from the players' frame events")
                }
            }
            if let pauseFrames = r.pauseFrames {
                parts.append(pauseFrames.summary + (pauseFrames.checks.isEmpty ? "" : " (" + pauseFrames.checks.joined(separator: "; ") + ")"))
            }
            if let trend = r.skewTrendMsPerMinute {
                parts.append(
                    String(format: "skew trend %+.4f ms/min (p99 first third %@ ms, last third %@ ms)", trend,
                           Self.ms(r.firstThirdP99SkewMs), Self.ms(r.lastThirdP99SkewMs)))
            }
            if let suspensions = r.suspensions {
                var text = "\(suspensions.count) suspension(s): players stopped within \(Self.ms(suspensions.stopSpreadMs)) ms"
                    + " and resumed within \(Self.ms(suspensions.resumeSpreadMs)) ms of each other"
                if let held = suspensions.held {
                    text += String(format: ", presenting nothing for %.3f s (p50)", held.p50Ms / 1000)
                }
                if suspensions.unresumed > 0 { text += ", \(suspensions.unresumed) stop(s) never resumed" }
                parts.append(text)
            }
            if let seeks = r.correctionSeeks, let perMinute = r.correctionSeeksPerMinute {
                parts.append(
                    String(format: "%d re-anchoring seeks (%.1f per player-minute: ", seeks.values.reduce(0, +), perMinute)
                        + seeks.keys.sorted().map { "\($0) \(seeks[$0]!)" }.joined(separator: ", ") + ")")
            }
            if let late = r.lateJoinSeconds { parts.append(String(format: "late joiner presenting after %.2f s", late)) }
            if let restart = r.relayRestart { parts.append("relay restart: \(restart)") }
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

    /// `resumed`, `NOT resumed` (details under the table) or `–` (no restart in the script).
    static func restartLabel(_ outcome: String?) -> String {
        guard let outcome else { return "–" }
        return outcome == "resumed" ? "resumed" : "NOT resumed"
    }

    static func implementationLabel(_ implementation: String?, mediaPlayer: String? = nil) -> String {
        switch implementation {
        case "coplay": mediaPlayer == "mpv" || mediaPlayer == "headless + mpv" ? "coplay + mpv" : mediaPlayer == "browser" ? "coplay + Chromium" : "coplay"
        case "syncplay": "Syncplay"
        case let other?: other
        case nil: "–"
        }
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
