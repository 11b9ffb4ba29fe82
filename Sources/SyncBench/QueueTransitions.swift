import Foundation

/// The `queue` scenario's figures: at every transition of the group's queue (an entry's end, a
/// repeat-all wrap-around, next, previous, jump, with shuffle on or off), when each member showed the
/// next entry's first frame, how far apart the members were, and how long each showed nothing new
/// between the entries.
///
/// **The group's instant** of a transition is the `referenceTime` of the `itemChanged` event the
/// members print (the new state's anchor: item time 0 of the next entry), on the relay's reference
/// clock; the runner's measurement of the relay's reference minus CLOCK_REALTIME turns it into the
/// CLOCK_REALTIME every frame is dated in.
///
/// **Headless members** (`coplay join --frames`) date their own frames. A transition's *first frame*
/// on a member is its first frame scheduled at or after the instant (its `referenceTime`, within
/// 50 µs), which must be of the next entry's item; its *gap* is that frame's CLOCK_REALTIME minus
/// the one of the last frame before it (the previous entry's last frame), which must not exceed the
/// previous entry's frame interval + 1 ms.
///
/// **mpv members** are seen from outside through mpv's IPC (``MPVFrameSampler``, which follows each
/// file's frame rate): the *switch* is the sample bracket in which `time-pos` first showed the next
/// entry (the first jump to a position in its first second, usually its start, after `time-pos` was
/// unavailable while the file loaded, or after mpv's `start-file` even at the same position: an entry
/// paused on its first frame replaced by the next entry's first frame); the *start* is where the entry's item time 0 lies by the motion
/// after the last such jump: the first frame change after it (re-dated from the frames after it,
/// ``FrameCadence``) minus its pts (at rate 1). A switch
/// before the instant is a picture of the next entry shown early (the previous entry's last frame not
/// held); a last jump to a position past the first frame is a member that skipped the entry's first
/// frames (*late entries*); the mpv *gap* is the switch minus the previous entry's last frame change.
///
/// ```swift
/// let figures = QueueTransitions.analyze(transitions: group, headless: frames, mpv: records, relayOffset: 0.0123)
/// print(figures.headlessSpread?.p99Ms ?? .nan)
/// ```
package struct QueueTransitions: Codable, Sendable, Hashable {
    package typealias Latency = ScenarioResult.Latency

    /// A transition of the group, as the members' `itemChanged` events give it.
    package struct GroupTransition: Codable, Sendable, Hashable {
        /// The group's instant of the next entry's first frame (reference seconds).
        package var referenceTime: Double
        /// The next entry's item.
        package var item: String
        /// The next entry's id.
        package var entry: String?
        /// Why: `end`, `next`, `previous`, `jump`.
        package var reason: String
        /// What the benchmark calls it: the reason, `end (wrap-around)` at the end of the last entry,
        /// with ` (shuffled)` while shuffle is on.
        package var label: String

        package init(referenceTime: Double, item: String, entry: String?, reason: String, label: String? = nil) {
            self.referenceTime = referenceTime
            self.item = item
            self.entry = entry
            self.reason = reason
            self.label = label ?? reason
        }
    }

    /// A frame a headless member presented.
    package struct Frame: Codable, Sendable, Hashable {
        /// CLOCK_REALTIME when presented.
        package var realtime: Double
        /// The instant it was scheduled for (reference seconds).
        package var referenceTime: Double
        package var item: String
        package var index: Int
        package var pts: Double

        package init(realtime: Double, referenceTime: Double, item: String, index: Int, pts: Double) {
            self.realtime = realtime
            self.referenceTime = referenceTime
            self.item = item
            self.index = index
            self.pts = pts
        }
    }

    /// One transition's measurements (milliseconds; offsets are member minus the group's instant).
    package struct Transition: Codable, Sendable, Hashable {
        package var number: Int
        package var label: String
        package var item: String
        /// Headless members: first frame minus the group's instant.
        package var headlessOffsetMs: [String: Double] = [:]
        /// Headless members: first frame minus the previous entry's last frame.
        package var headlessGapMs: [String: Double] = [:]
        /// The previous entry's frame interval (the gap's limit is this + 1 ms).
        package var previousFrameIntervalMs: Double?
        /// mpv members: the switch (``QueueTransitions``) minus the group's instant.
        package var mpvSwitchMs: [String: Double] = [:]
        /// mpv members: the first frame's start by the motion minus the group's instant.
        package var mpvStartMs: [String: Double] = [:]
        /// mpv members: the switch minus the previous entry's last frame change.
        package var mpvGapMs: [String: Double] = [:]
        /// mpv members whose switch showed a position past the entry's first frame: that position (ms).
        package var mpvEnteredAtMs: [String: Double] = [:]
        /// Members where no first frame of the next entry was found, or another item's frame came first.
        package var missing: [String] = []

        /// Largest minus smallest first-frame instant over the headless members.
        package var headlessSpreadMs: Double? { Self.spread(headlessOffsetMs.values) }
        /// Largest minus smallest start over the mpv members.
        package var mpvSpreadMs: Double? { Self.spread(mpvStartMs.values) }
        /// Largest minus smallest switch over the mpv members.
        package var mpvSwitchSpreadMs: Double? { Self.spread(mpvSwitchMs.values) }
        /// Over every member (headless first frames and mpv starts).
        package var allSpreadMs: Double? { Self.spread(Array(headlessOffsetMs.values) + Array(mpvStartMs.values)) }

        static func spread(_ values: some Collection<Double>) -> Double? {
            guard values.count >= 2, let low = values.min(), let high = values.max() else { return nil }
            return high - low
        }
    }

    /// A late joiner of the session (its queue the long one): how long from its start to what.
    package struct LateJoiner: Codable, Sendable, Hashable {
        /// Entries in the queue it received.
        package var entries: Int
        /// Seconds from starting `coplay join` to its `queueChanged` (`received`) event.
        package var queueSeconds: Double?
        /// Seconds from starting it to its first frame.
        package var firstFrameSeconds: Double?
        /// Seconds from starting it to its first frame that another member presented within half a
        /// frame interval (the same item and index): in step.
        package var inStepSeconds: Double?
        /// That frame minus the other member's (ms).
        package var inStepOffsetMs: Double?
        /// Whether its first frame was of the entry the group played.
        package var rightEntry: Bool

        package init(entries: Int, queueSeconds: Double?, firstFrameSeconds: Double?, inStepSeconds: Double?, inStepOffsetMs: Double?, rightEntry: Bool) {
            self.entries = entries
            self.queueSeconds = queueSeconds
            self.firstFrameSeconds = firstFrameSeconds
            self.inStepSeconds = inStepSeconds
            self.inStepOffsetMs = inStepOffsetMs
            self.rightEntry = rightEntry
        }
    }

    /// Every transition.
    package var transitions: [Transition]
    /// The members measured.
    package var headlessMembers: [String]
    package var mpvMembers: [String]
    /// Entries in the group's queue.
    package var queueEntries: Int?
    /// Transitions per label.
    package var labels: [String: Int]
    /// Spread of the first frame per transition: headless members, mpv members (starts), mpv
    /// switches, everyone.
    package var headlessSpread: Latency?
    package var mpvSpread: Latency?
    package var mpvSwitchSpread: Latency?
    package var allSpread: Latency?
    /// |first frame - group's instant| of every headless member and transition.
    package var headlessOffset: Latency?
    /// Every headless gap (ms), and how many exceeded the previous entry's frame interval + 1 ms.
    package var headlessGap: Latency?
    package var headlessGapsOverLimit: Int
    /// Every headless gap minus the previous entry's frame interval (ms): 0 is a seamless transition.
    package var headlessGapExcess: Latency?
    /// mpv: gaps, |switch - instant|, switches more than 1 ms before the instant (the next entry
    /// shown early), |start - instant|.
    package var mpvGap: Latency?
    package var mpvSwitchOffset: Latency?
    package var mpvEarlySwitches: Int
    package var mpvStartOffset: Latency?
    /// mpv member-transitions that began past the entry's first frame (``Transition/mpvEnteredAtMs``).
    package var mpvLateEntries: Int
    /// Member-transitions without a first frame of the next entry.
    package var missing: Int
    /// The late joiner, if the run had one.
    package var lateJoiner: LateJoiner?

    /// Measures every transition.
    ///
    /// - Parameters:
    ///   - transitions: the group's transitions, in order.
    ///   - headless: each headless member's frames, by name.
    ///   - mpv: each mpv member's sampler record, by name.
    ///   - relayOffset: the relay's reference clock minus CLOCK_REALTIME (seconds).
    ///   - frameIntervals: each item's frame interval (seconds), for the gap limit; else from its frames.
    package static func analyze(
        transitions group: [GroupTransition], headless: [String: [Frame]], mpv: [String: MPVFrameSampler.Record],
        relayOffset: Double, frameIntervals: [String: Double] = [:]
    ) -> QueueTransitions {
        let headlessFrames = headless.mapValues { $0.sorted { $0.realtime < $1.realtime } }
        var intervals = frameIntervals
        for frames in headlessFrames.values {
            for item in Set(frames.map(\.item)) where intervals[item] == nil {
                let pts = frames.filter { $0.item == item }.map(\.pts)
                let steps = zip(pts, pts.dropFirst()).map { $1 - $0 }.filter { $0 > 0 }.sorted()
                if !steps.isEmpty { intervals[item] = steps[steps.count / 2] }
            }
        }
        // Frame lines carry microseconds: a frame of the previous entry can be due 0.5 ms before a command's instant.
        let margin = 0.000_05
        var rows: [Transition] = []
        for (k, transition) in group.enumerated() {
            let instant = transition.referenceTime
            let instantRealtime = instant - relayOffset
            let previous = k > 0 ? group[k - 1].referenceTime : -Double.infinity
            let next = k + 1 < group.count ? group[k + 1].referenceTime : Double.infinity
            var row = Transition(number: k + 1, label: transition.label, item: transition.item)
            if k > 0 { row.previousFrameIntervalMs = intervals[group[k - 1].item].map { $0 * 1000 } }
            for (name, frames) in headlessFrames {
                guard let at = frames.firstIndex(where: { $0.referenceTime >= instant - margin }),
                    frames[at].referenceTime < min(next - margin, instant + 1), frames[at].item == transition.item
                else {
                    row.missing.append(name)
                    continue
                }
                let first = frames[at]
                row.headlessOffsetMs[name] = (first.realtime + relayOffset - instant) * 1000
                if at > 0 {
                    let last = frames[at - 1]
                    let interval = intervals[last.item] ?? 0
                    // Only when the previous entry was playing up to the instant (not paused before it).
                    if last.referenceTime >= instant - interval - 0.002, last.referenceTime > previous - margin {
                        row.headlessGapMs[name] = (first.realtime - last.realtime) * 1000
                        row.previousFrameIntervalMs = interval * 1000
                    }
                }
            }
            for (name, record) in mpv {
                // The switch: the first jump to the next entry's start between the neighbouring transitions.
                let low = max(instantRealtime - 1.5, previous.isFinite ? (previous - relayOffset + instantRealtime) / 2 : -.infinity)
                let high = min(instantRealtime + 1.5, next.isFinite ? (next - relayOffset + instantRealtime) / 2 : .infinity)
                guard let jump = record.jumps.first(where: { $0.realtime >= low && $0.realtime < high && $0.to < 1 && ($0.to != $0.from || $0.newFile) }) else {
                    row.missing.append(name)
                    continue
                }
                row.mpvSwitchMs[name] = (jump.realtime - instantRealtime) * 1000
                // Where the entry settled: the last jump into its first second (mpv may first show it
                // elsewhere and seek after).
                let settled = record.jumps.last(where: { $0.realtime >= jump.realtime && $0.realtime < high && $0.to < 1 && ($0.to != $0.from || $0.newFile) }) ?? jump
                if settled.to > 0.02 { row.mpvEnteredAtMs[name] = settled.to * 1000 }
                if let at = record.transitions.firstIndex(where: { $0.realtime > settled.realtime }), case let step = record.transitions[at],
                    step.realtime < high + 1, step.pts > settled.to, step.pts - settled.to < 0.25
                {
                    // Dated from its neighbours where the sampler's record has those dates (FrameCadence).
                    let appeared = record.dated.count == record.transitions.count ? record.dated[at].realtime : step.realtime
                    row.mpvStartMs[name] = (appeared - step.pts - instantRealtime) * 1000
                }
                if let last = record.transitions.last(where: { $0.realtime < jump.realtime }), last.realtime > jump.realtime - 1 {
                    row.mpvGapMs[name] = (jump.realtime - last.realtime) * 1000
                }
            }
            row.missing.sort()
            rows.append(row)
        }
        var gapsOver = 0
        var excess: [Double] = []
        for row in rows {
            guard let interval = row.previousFrameIntervalMs else { continue }
            for gap in row.headlessGapMs.values {
                excess.append(gap - interval)
                if gap > interval + 1 { gapsOver += 1 }
            }
        }
        return QueueTransitions(
            transitions: rows, headlessMembers: headless.keys.sorted(), mpvMembers: mpv.keys.sorted(), queueEntries: nil,
            labels: Dictionary(grouping: group, by: \.label).mapValues(\.count),
            headlessSpread: Latency(milliseconds: rows.compactMap(\.headlessSpreadMs)),
            mpvSpread: Latency(milliseconds: rows.compactMap(\.mpvSpreadMs)),
            mpvSwitchSpread: Latency(milliseconds: rows.compactMap(\.mpvSwitchSpreadMs)),
            allSpread: Latency(milliseconds: rows.compactMap(\.allSpreadMs)),
            headlessOffset: Latency(milliseconds: rows.flatMap { $0.headlessOffsetMs.values.map(abs) }),
            headlessGap: Latency(milliseconds: rows.flatMap(\.headlessGapMs.values)),
            headlessGapsOverLimit: gapsOver,
            headlessGapExcess: Latency(milliseconds: excess),
            mpvGap: Latency(milliseconds: rows.flatMap(\.mpvGapMs.values)),
            mpvSwitchOffset: Latency(milliseconds: rows.flatMap { $0.mpvSwitchMs.values.map(abs) }),
            mpvEarlySwitches: rows.reduce(0) { $0 + $1.mpvSwitchMs.values.filter { $0 < -1 }.count },
            mpvStartOffset: Latency(milliseconds: rows.flatMap { $0.mpvStartMs.values.map(abs) }),
            mpvLateEntries: rows.reduce(0) { $0 + $1.mpvEnteredAtMs.count },
            missing: rows.reduce(0) { $0 + $1.missing.count }, lateJoiner: nil)
    }

    /// The Markdown lines under the report's table.
    package var summaryLines: [String] {
        func figures(_ latency: Latency?) -> String {
            guard let latency else { return "–" }
            return "p50 \(BenchReport.ms(latency.p50Ms)) / p99 \(BenchReport.ms(latency.p99Ms)) / max \(BenchReport.ms(latency.maxMs)) ms"
        }
        var lines: [String] = []
        let kinds = labels.keys.sorted().map { "\(labels[$0]!) \($0)" }.joined(separator: ", ")
        lines.append(
            "\(transitions.count) transitions (\(kinds)) over a queue of \(queueEntries.map(String.init) ?? "?") entries; "
                + "\(headlessMembers.count) headless member(s), \(mpvMembers.count) mpv member(s)")
        lines.append(
            "next entry's first frame, spread per transition: headless \(figures(headlessSpread)); "
                + "mpv (start by the motion) \(figures(mpvSpread)); mpv (switch of time-pos) \(figures(mpvSwitchSpread)); "
                + "everyone \(figures(allSpread))")
        lines.append(
            "headless: |first frame - group's instant| \(figures(headlessOffset)); gap from the last frame of one entry to the first of the next "
                + "\(figures(headlessGap)), minus the frame interval \(figures(headlessGapExcess)); "
                + "\(headlessGapsOverLimit) gap(s) over one frame interval + 1 ms")
        if !mpvMembers.isEmpty {
            lines.append(
                "mpv (through its IPC): switch to the next entry minus the previous entry's last frame change \(figures(mpvGap)); "
                    + "|switch - group's instant| \(figures(mpvSwitchOffset)), \(mpvEarlySwitches) switch(es) more than 1 ms early "
                    + "(the next entry shown before its instant), \(mpvLateEntries) switch(es) past the entry's first frame (a member late by that much); "
                    + "|start - group's instant| \(figures(mpvStartOffset))")
        }
        if missing > 0 { lines.append("\(missing) member-transition(s) without the next entry's first frame found") }
        if let late = lateJoiner {
            func seconds(_ value: Double?) -> String { value.map { String(format: "%.3f s", $0) } ?? "never" }
            lines.append(
                "late joiner of the \(late.entries)-entry queue: queue received after \(seconds(late.queueSeconds)), "
                    + "first frame after \(seconds(late.firstFrameSeconds)), first in-step frame after \(seconds(late.inStepSeconds))"
                    + (late.inStepOffsetMs.map { String(format: " (%+.3f ms from another member's)", $0) } ?? "")
                    + (late.rightEntry ? ", on the group's entry" : ", NOT on the group's entry")
                    + " (from starting `coplay join`)")
        }
        return lines
    }
}
