import Foundation
import Logging
import MPVControl
import NIOConcurrencyHelpers
import NIOPosix

/// Runs the `queue` scenario for real: a relay, a host whose queue cycles through short clips of
/// different frame rates (1,000 entries by default, repeat all), headless and mpv members started the
/// ordinary way, and a script of transitions through `coplay control` one-shots: entries ending,
/// repeat-all wrap-arounds (a jump to the last entry, which then ends), next, previous, jump, with
/// shuffle on and off. Then a late joiner of that long queue. ``QueueTransitions`` measures it.
///
/// What runs, all on 127.0.0.1:
/// 1. ffmpeg makes the clips (testsrc2, 160x90, H.264, ``Configuration/clipSeconds`` each) at 25, 30,
///    24, 50 and 29.97 fps, unless they exist.
/// 2. `coplay serve`, and `coplay time query` for the relay's reference minus CLOCK_REALTIME.
/// 3. `coplay host CLIPS... --repeat all --relay ...` (its own headless player, not measured; its
///    `itemChanged` events are the group's transitions).
/// 4. Headless members: `coplay join INVITE CLIP --item CLIP... --frames` (each in its own time
///    namespace when `unshare --time` works). mpv members: an mpv the runner starts (coplay's options,
///    `--vo=null --ao=null`) and samples itself (``MPVFrameSampler``), driven by `coplay join INVITE
///    CLIP --item CLIP... --mpv-socket SOCK`.
/// 5. `coplay control INVITE play`, then the transitions (``plan``) until there are
///    ``Configuration/transitions`` of them.
/// 6. A late headless joiner: from its start to its queue, its first frame and its first frame in
///    step with another member's.
///
/// ```swift
/// let runner = QueueScenarioRunner(configuration: .init(coplay: coplay, workDirectory: work, mediaDirectory: media), logger: logger)
/// let run = try await runner.run { print($0.line) }
/// print(run.figures.summaryLines.joined(separator: "\n"))
/// ```
package struct QueueScenarioRunner: Sendable {
    /// What to run.
    package struct Configuration: Sendable {
        package var coplay: String
        /// Logs, sockets and the relay's data go here.
        package var workDirectory: URL
        /// The clips are made (or found) here.
        package var mediaDirectory: URL
        /// Measured headless and mpv members.
        package var headless: Int
        package var mpv: Int
        /// Transitions to measure.
        package var transitions: Int
        /// Entries in the host's queue (the clips in turn).
        package var queueEntries: Int
        /// Seconds of each clip.
        package var clipSeconds: Int
        /// Whether a late joiner follows the transitions.
        package var lateJoiner: Bool
        /// Whether to give each `coplay join` its own time namespace (when `unshare --time` works).
        package var timeNamespaces: Bool
        /// The longest wait for a process to come up, in seconds.
        package var startupTimeout: Double

        package init(
            coplay: String, workDirectory: URL, mediaDirectory: URL, headless: Int = 3, mpv: Int = 3, transitions: Int = 50,
            queueEntries: Int = 1_000, clipSeconds: Int = 3, lateJoiner: Bool = true, timeNamespaces: Bool = true,
            startupTimeout: Double = 120
        ) {
            self.coplay = coplay
            self.workDirectory = workDirectory
            self.mediaDirectory = mediaDirectory
            self.headless = headless
            self.mpv = mpv
            self.transitions = transitions
            self.queueEntries = queueEntries
            self.clipSeconds = clipSeconds
            self.lateJoiner = lateJoiner
            self.timeNamespaces = timeNamespaces
            self.startupTimeout = startupTimeout
        }
    }

    /// The clips' frame rates, as ffmpeg takes them, and their file names.
    package static let clipRates: [(rate: String, name: String)] = [
        ("25", "queue-25.mp4"), ("30", "queue-30.mp4"), ("24", "queue-24.mp4"), ("50", "queue-50.mp4"),
        ("30000/1001", "queue-29.97.mp4"),
    ]

    /// One step of the script.
    package enum Step: Sendable, Hashable {
        /// Wait for the playing entry to end.
        case end
        /// The relay SIGKILLed a second before the playing entry's end and restarted on its port
        /// (same data directory) 1.5 s later, then wait for the end: the members are cut off across
        /// the transition and move on by the one they computed (docs/protocol.md, `advance`).
        case endAcrossRelayRestart
        /// `coplay control INVITE next`.
        case next
        case previous
        /// `jump N`; nil is the last position.
        case jump(Int?)
        /// `shuffle on|off` (no transition by itself).
        case shuffle(Bool)

        /// How the progress line names it.
        package var name: String {
            switch self {
            case .end: "wait for the end"
            case .endAcrossRelayRestart: "the relay restarted across the end"
            case .next: "next"
            case .previous: "previous"
            case .jump(let position): "jump \(position.map(String.init) ?? "to the last")"
            case .shuffle(let on): "shuffle \(on ? "on" : "off")"
            }
        }

        var controlArguments: [String]? {
            switch self {
            case .end, .endAcrossRelayRestart: nil
            case .next: ["next"]
            case .previous: ["previous"]
            case .jump(let position): ["jump", position.map(String.init) ?? "LAST"]
            case .shuffle(let on): ["shuffle", on ? "on" : "off"]
            }
        }
    }

    /// The script's cycle, repeated until enough transitions were seen: ends, next, previous, jumps,
    /// wrap-arounds (a jump to the last entry, which then ends) unshuffled and shuffled, and an end
    /// the members are cut off across (the relay restarted), followed by an end that puts the script
    /// back on an entry's first second.
    package static let plan: [Step] = [
        .end, .next, .end, .previous, .jump(5), .end, .jump(nil), .end, .endAcrossRelayRestart, .end, .shuffle(true), .end, .next, .jump(nil), .end,
        .previous, .jump(3), .shuffle(false), .end, .next,
    ]

    /// What a run produced.
    package struct Run: Sendable {
        package var figures: QueueTransitions
        package var notes: [String]
    }

    package let configuration: Configuration
    private let logger: Logger

    package init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    /// What the benchmark reads from a member's JSON Lines.
    struct Line: Decodable {
        var type: String
        var realtime: Double?
        var item: String?
        var index: Int?
        var pts: Double?
        var referenceTime: Double?
        var entry: String?
        var reason: String?
        var detail: String?
    }

    /// One member's (or the host's) events so far.
    final class Member: Sendable {
        struct State {
            var frames: [QueueTransitions.Frame] = []
            var itemChanges: [(line: Line, realtime: Double)] = []
            var ready = false
            var queueReceived: Double?
        }

        let name: String
        let startRealtime: Double
        let state = NIOLockedValueBox(State())
        let process = NIOLockedValueBox<ChildProcess?>(nil)
        let mpv = NIOLockedValueBox<(process: ChildProcess, sampler: MPVFrameSampler?)?>(nil)
        private let decoder = JSONDecoder()

        init(name: String, startRealtime: Double) {
            self.name = name
            self.startRealtime = startRealtime
        }

        func consume(_ text: String) {
            guard text.first == "{", let line = try? decoder.decode(Line.self, from: Data(text.utf8)), let realtime = line.realtime else { return }
            state.withLockedValue { state in
                switch line.type {
                case "frame":
                    if let item = line.item, let index = line.index, let pts = line.pts, let reference = line.referenceTime {
                        state.frames.append(.init(realtime: realtime, referenceTime: reference, item: item, index: index, pts: pts))
                    }
                    state.ready = true
                case "itemChanged":
                    state.itemChanges.append((line, realtime))
                case "queueChanged":
                    if line.detail == "received", state.queueReceived == nil { state.queueReceived = realtime }
                case "stopped", "pause", "play", "seek", "rate", "item":
                    state.ready = true
                default:
                    break
                }
            }
        }

        var isReady: Bool {
            guard state.withLockedValue({ $0.ready }) else { return false }
            guard let mpv = mpv.withLockedValue({ $0 }) else { return true }
            return mpv.sampler?.isReady ?? false
        }

        var isRunning: Bool {
            (process.withLockedValue { $0 }?.isRunning ?? false) && (mpv.withLockedValue { $0 }?.process.isRunning ?? true)
        }

        var exitDescription: String {
            if let mpv = mpv.withLockedValue({ $0 }), !mpv.process.isRunning { return mpv.process.exitDescription }
            return process.withLockedValue { $0 }?.exitDescription ?? name
        }
    }

    /// Runs the scenario; every child is stopped when it returns, throws or is cancelled.
    package func run(progress: @escaping @Sendable (ScenarioProgress) -> Void = { _ in }) async throws -> Run {
        guard FileManager.default.isExecutableFile(atPath: configuration.coplay) else {
            throw BenchError.scenarioFailed("coplay executable \(configuration.coplay) not found")
        }
        guard configuration.headless + configuration.mpv >= 2 else { throw BenchError.scenarioFailed("needs at least two members") }
        try FileManager.default.createDirectory(at: configuration.workDirectory, withIntermediateDirectories: true)
        let session = CoplayScenarioRunner.Session()
        do {
            let run = try await run(session: session, progress: progress)
            await session.stopAll()
            return run
        } catch {
            for record in await session.stopSamplers() {
                try? record.jsonLines().write(to: configuration.workDirectory.appendingPathComponent("\(record.player)-sampler.jsonl"))
            }
            await session.stopAll()
            throw error
        }
    }

    private func log(_ name: String) -> URL { configuration.workDirectory.appendingPathComponent("\(name).log") }

    private func run(session: CoplayScenarioRunner.Session, progress: @escaping @Sendable (ScenarioProgress) -> Void) async throws -> Run {
        let coplay = configuration.coplay
        let target = configuration.transitions
        let began = ContinuousClock.now
        func report(_ stage: String, transitions: Int = 0, frames: Int = 0) {
            let elapsed = Double((ContinuousClock.now - began).components.seconds)
            progress(ScenarioProgress(scenario: "queue", elapsed: elapsed, total: elapsed, frames: frames, stage: stage))
        }
        var notes: [String] = []

        // 1. The clips.
        var clips: [String] = []
        for (rate, name) in Self.clipRates {
            report("making \(name)")
            let url = configuration.mediaDirectory.appendingPathComponent(name)
            try await CoplayScenarioRunner.makeMedia(at: url, seconds: configuration.clipSeconds, frameRate: rate)
            clips.append(url.path)
        }
        let namespaces = configuration.timeNamespaces ? await CoplayScenarioRunner.canUnshareTime() : false
        if configuration.timeNamespaces && !namespaces {
            notes.append("unshare --time is not available here: the members share the machine's monotonic clock")
        }
        var mpvExecutable = ""
        let socketDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-queue-\(UUID().uuidString.prefix(8))")
        if configuration.mpv > 0 {
            guard let path = try? MPVProcess.findExecutable() else { throw BenchError.missingTool("mpv") }
            mpvExecutable = path
            let version = (try? await CoplayScenarioRunner.output(of: path, ["--version"], log: log("mpv-version"))) ?? ""
            if let line = version.split(separator: "\n").first {
                notes.append("mpv members drive \(line.components(separatedBy: " Copyright").first ?? String(line)) (\(path))")
            }
            try FileManager.default.createDirectory(at: socketDirectory, withIntermediateDirectories: true)
            session.removeAtEnd(socketDirectory)
        }

        // 2. The relay and its clock.
        report("starting the relay")
        let port = CoplayScenarioRunner.Port()
        let relayData = configuration.workDirectory.appendingPathComponent("relay-data").path
        var relay = try CoplayScenarioRunner.startRelay(
            coplay: coplay, listen: "127.0.0.1:0", dataDirectory: relayData, port: port, session: session, log: log("relay"))
        guard let relayPort = await port.wait(timeout: configuration.startupTimeout, while: relay) else {
            throw BenchError.scenarioFailed("the relay did not start: \(relay.exitDescription)")
        }
        let offsetBefore = try? await relayOffset(port: relayPort)

        // 3. The host, its queue the clips in turn.
        report("starting the host (a queue of \(configuration.queueEntries) entries)")
        let entries = (0..<configuration.queueEntries).map { clips[$0 % clips.count] }
        let host = Member(name: "host", startRealtime: RealtimeClock.now())
        let inviteBox = NIOLockedValueBox<String?>(nil)
        let inviteReady = CoplayScenarioRunner.Port()
        let hostProcess = try ChildProcess(
            name: "host", executable: coplay,
            arguments: ["host"] + entries + [
                "--repeat", "all", "--relay", "127.0.0.1:\(relayPort)", "--name", "host", "--events", "jsonl", "--log-level", "warning",
            ],
            log: log("host")
        ) { [host] line in
            if line.hasPrefix("coplay://") {
                inviteBox.withLockedValue { if $0 == nil { $0 = line } }
                inviteReady.set(1)
            }
            host.consume(line)
        }
        session.add(hostProcess)
        host.process.withLockedValue { $0 = hostProcess }
        guard await inviteReady.wait(timeout: configuration.startupTimeout, while: hostProcess) != nil,
            let invite = inviteBox.withLockedValue({ $0 })
        else {
            throw BenchError.scenarioFailed("the host did not print an invite: \(hostProcess.exitDescription)")
        }

        // 4. The members.
        func startMember(_ name: String, mpv: Bool, number: Int) async throws -> Member {
            let member = Member(name: name, startRealtime: RealtimeClock.now())
            // The session's item, then the other clips as items the member can switch to.
            var arguments = ["join", invite, clips[0]] + clips.dropFirst().flatMap { ["--item", $0] }
                + ["--name", name, "--events", "jsonl", "--log-level", "warning"]
            if mpv {
                let socket = socketDirectory.appendingPathComponent("\(name).sock").path
                let process = try ChildProcess(
                    name: "\(name)'s mpv", executable: mpvExecutable, arguments: MPVFrameSampler.mpvArguments(socket: socket),
                    log: log("\(name)-mpv"))
                session.add(process)
                member.mpv.withLockedValue { $0 = (process, nil) }
                let sampler = try await MPVFrameSampler.start(
                    socket: socket, player: name, group: session.samplerLoops, timeout: configuration.startupTimeout,
                    alive: { process.isRunning })
                session.add(sampler)
                member.mpv.withLockedValue { $0 = (process, sampler) }
                arguments += ["--mpv-socket", socket]
            } else {
                arguments.append("--frames")
            }
            var executable = coplay
            if namespaces {
                let offset = "\(BenchScenario.clockOffset(ofPlayer: number))"
                arguments = ["--fork", "--kill-child=SIGTERM", "--time", "--monotonic", offset, "--boottime", offset, coplay] + arguments
                executable = "/usr/bin/unshare"
            }
            let process = try ChildProcess(name: name, executable: executable, arguments: arguments, log: log(name)) { [member] line in
                member.consume(line)
            }
            session.add(process)
            member.process.withLockedValue { $0 = process }
            return member
        }
        var members: [Member] = []
        for k in 0..<configuration.headless {
            report("starting headless member h\(k + 1)")
            members.append(try await startMember("h\(k + 1)", mpv: false, number: k))
        }
        for k in 0..<configuration.mpv {
            report("starting mpv member m\(k + 1)")
            members.append(try await startMember("m\(k + 1)", mpv: true, number: configuration.headless + k))
        }
        let readyDeadline = ContinuousClock.now + .seconds(configuration.startupTimeout)
        while !members.allSatisfy(\.isReady) {
            try Task.checkCancellation()
            for member in members + [host] where !member.isRunning {
                throw BenchError.scenarioFailed("\(member.exitDescription) before the script started")
            }
            guard ContinuousClock.now < readyDeadline else {
                throw BenchError.timeout("members \(members.filter { !$0.isReady }.map(\.name).joined(separator: ", ")) to apply the session's state")
            }
            try await Task.sleep(for: .milliseconds(50))
        }

        // 5. The script.
        func checkAlive(_ moment: String) throws {
            for member in members + [host] where !member.isRunning {
                throw BenchError.scenarioFailed("\(member.exitDescription) \(moment)")
            }
            if !relay.isRunning { throw BenchError.scenarioFailed("\(relay.exitDescription) \(moment)") }
        }
        var controls = 0
        func control(_ arguments: [String]) async throws {
            controls += 1
            let child = try ChildProcess(
                name: "control \(arguments.joined(separator: " "))", executable: coplay,
                arguments: ["control", invite] + arguments + ["--log-level", "warning"],
                log: log("control-\(controls)-\(arguments.joined(separator: "-"))"))
            session.add(child)
            guard await child.wait(timeout: 60) == 0 else {
                await child.stop()
                throw BenchError.scenarioFailed("`coplay control \(arguments.joined(separator: " "))` failed: \(child.exitDescription)")
            }
        }
        /// The host's transitions so far (its `itemChanged` events after the first play).
        func changes() -> [(line: Line, realtime: Double)] { host.state.withLockedValue { $0.itemChanges } }
        func frames() -> Int { members.reduce(0) { $0 + $1.state.withLockedValue { $0.frames.count } } + members.reduce(0) { $0 + ($1.mpv.withLockedValue { $0 }?.sampler?.transitions.count ?? 0) } }
        let before = changes().count
        try await control(["play"])
        let scriptStart = RealtimeClock.now()
        /// Transitions caused by `jump LAST` (their index among the changes), and the shuffle's periods.
        var jumpsToLast = Set<Int>()
        var shuffled: [(from: Double, to: Double)] = []
        var shuffleOn: Double?
        var step = 0
        var relayRestarts = 0
        while changes().count - before < target {
            try Task.checkCancellation()
            try checkAlive("during the transitions")
            let planned = Self.plan[step % Self.plan.count]
            step += 1
            let seen = changes().count
            report("transition \(seen - before + 1)/\(target): \(planned.name)", frames: frames())
            switch planned {
            case .endAcrossRelayRestart:
                // The entry began at the last transition's anchor; every clip lasts clipSeconds.
                guard let offset = offsetBefore, let anchor = changes().last?.line.referenceTime else { continue }
                let end = anchor - offset + Double(configuration.clipSeconds)
                let killAt = end - 1
                guard killAt > RealtimeClock.now() + 0.05 else { continue }
                try await Task.sleep(for: .seconds(killAt - RealtimeClock.now()))
                try checkAlive("before a relay restart")
                relay.signal(SIGKILL)
                _ = await relay.wait(timeout: 10)
                relayRestarts += 1
                try await Task.sleep(for: .seconds(1.5))
                let restarted = CoplayScenarioRunner.Port()
                relay = try CoplayScenarioRunner.startRelay(
                    coplay: coplay, listen: "127.0.0.1:\(relayPort)", dataDirectory: relayData, port: restarted, session: session,
                    log: log("relay-\(relayRestarts + 1)"))
                guard await restarted.wait(timeout: configuration.startupTimeout, while: relay) != nil else {
                    throw BenchError.scenarioFailed("the relay did not restart on port \(relayPort): \(relay.exitDescription)")
                }
                fallthrough
            case .end:
                let deadline = ContinuousClock.now + .seconds(Double(configuration.clipSeconds) + 10)
                while changes().count == seen {
                    guard ContinuousClock.now < deadline else { throw BenchError.timeout("the playing entry to end") }
                    try checkAlive("waiting for an entry's end")
                    try await Task.sleep(for: .milliseconds(20))
                }
            case .shuffle(let on):
                try await control(planned.controlArguments!)
                if on { shuffleOn = RealtimeClock.now() } else if let from = shuffleOn {
                    shuffled.append((from, RealtimeClock.now()))
                    shuffleOn = nil
                }
            case .next, .previous, .jump:
                var arguments = planned.controlArguments!
                if arguments.last == "LAST" { arguments[arguments.count - 1] = "\(configuration.queueEntries)" }
                try await control(arguments)
                let reason = arguments[0]
                let deadline = ContinuousClock.now + .seconds(10)
                while !changes()[seen...].contains(where: { $0.line.reason == reason }) {
                    guard ContinuousClock.now < deadline else { throw BenchError.timeout("the group's \(reason) transition") }
                    try await Task.sleep(for: .milliseconds(20))
                }
                if case .jump(.none) = planned, let at = changes()[seen...].firstIndex(where: { $0.line.reason == "jump" }) {
                    jumpsToLast.insert(at)
                }
            }
        }
        if let from = shuffleOn { shuffled.append((from, .infinity)) }
        if relayRestarts > 0 {
            notes.append("the relay was SIGKILLed a second before an entry's end and restarted on its port 1.5 s later \(relayRestarts) time(s): the members were cut off across those transitions")
        }
        // Let the last transition's first frames come.
        try await Task.sleep(for: .seconds(1.5))
        let measuredChanges = Array(changes()[before...])

        // 6. The late joiner.
        var lateJoiner: QueueTransitions.LateJoiner?
        if configuration.lateJoiner {
            report("late joiner of the \(configuration.queueEntries)-entry queue", frames: frames())
            let late = try await startMember("late", mpv: false, number: configuration.headless + configuration.mpv)
            let deadline = ContinuousClock.now + .seconds(30)
            var inStep: (frame: QueueTransitions.Frame, offset: Double)?
            while inStep == nil || late.state.withLockedValue({ $0.queueReceived }) == nil, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
                if inStep != nil { continue }
                let mine = late.state.withLockedValue { $0.frames }
                let others = members.filter { !$0.isMPVMember }.flatMap { $0.state.withLockedValue { $0.frames } }
                for frame in mine {
                    let interval = Self.frameInterval(of: frame.item, in: mine) ?? 0.04
                    if let match = others.first(where: { $0.item == frame.item && $0.index == frame.index && abs($0.realtime - frame.realtime) < interval / 2 }) {
                        inStep = (frame, frame.realtime - match.realtime)
                        break
                    }
                }
            }
            let state = late.state.withLockedValue { $0 }
            let first = state.frames.first
            // The group's entry at the joiner's first frame: the last transition anchored at or before it.
            let groupItem = first.flatMap { frame in
                changes().last { ($0.line.referenceTime ?? .infinity) <= frame.referenceTime + 0.000_5 }?.line.item
            }
            lateJoiner = QueueTransitions.LateJoiner(
                entries: configuration.queueEntries, queueSeconds: state.queueReceived.map { $0 - late.startRealtime },
                firstFrameSeconds: first.map { $0.realtime - late.startRealtime },
                inStepSeconds: inStep.map { $0.frame.realtime - late.startRealtime }, inStepOffsetMs: inStep.map { $0.offset * 1000 },
                rightEntry: first != nil && first?.item == groupItem)
            if inStep == nil { notes.append("the late joiner presented no frame in step with another member's within 30 s") }
        }

        // The outcome.
        let offsetAfter = try? await relayOffset(port: relayPort)
        let offsets = [offsetBefore, offsetAfter].compactMap { $0 }
        guard !offsets.isEmpty else { throw BenchError.scenarioFailed("the relay's time server did not answer the runner") }
        if offsets.count == 2 {
            notes.append(String(format: "relay reference minus CLOCK_REALTIME moved %.3f ms during the run", (offsets[1] - offsets[0]) * 1000))
        }
        let relayOffset = offsets.reduce(0, +) / Double(offsets.count)
        let records = await session.stopSamplers()
        for record in records {
            try? record.jsonLines().write(to: configuration.workDirectory.appendingPathComponent("\(record.player)-sampler.jsonl"))
        }
        var group: [QueueTransitions.GroupTransition] = []
        for (k, change) in measuredChanges.enumerated() {
            guard let reference = change.line.referenceTime, let item = change.line.item else { continue }
            let reason = change.line.reason ?? "?"
            var label = reason
            if reason == "end", k > 0, jumpsToLast.contains(before + k - 1) { label = "end (wrap-around)" }
            if reason == "jump", jumpsToLast.contains(before + k) { label = "jump (to the last)" }
            if shuffled.contains(where: { change.realtime >= $0.from && change.realtime < $0.to }) { label += " (shuffled)" }
            group.append(.init(referenceTime: reference, item: item, entry: change.line.entry, reason: reason, label: label))
        }
        let headless = Dictionary(uniqueKeysWithValues: members.filter { !$0.isMPVMember }.map { ($0.name, $0.state.withLockedValue { $0.frames }) })
        let mpv = Dictionary(uniqueKeysWithValues: records.map { ($0.player, $0) })
        var figures = QueueTransitions.analyze(transitions: group, headless: headless, mpv: mpv, relayOffset: relayOffset)
        figures.queueEntries = configuration.queueEntries
        figures.lateJoiner = lateJoiner
        notes.append(
            String(format: "%d transitions in %.0f s; ", group.count, RealtimeClock.now() - scriptStart)
                + "clips of \(configuration.clipSeconds) s at \(Self.clipRates.map { $0.rate == "30000/1001" ? "29.97" : $0.rate }.joined(separator: ", ")) fps (testsrc2 160x90 H.264); "
                + (namespaces ? "each `coplay join` in its own time namespace; " : "")
                + "the host plays too (headless, not measured); transitions driven by `coplay control` one-shots")
        return Run(figures: figures, notes: notes)
    }

    /// The median pts step of `item`'s frames.
    static func frameInterval(of item: String, in frames: [QueueTransitions.Frame]) -> Double? {
        let pts = frames.filter { $0.item == item }.map(\.pts)
        let steps = zip(pts, pts.dropFirst()).map { $1 - $0 }.filter { $0 > 0 }.sorted()
        return steps.isEmpty ? nil : steps[steps.count / 2]
    }

    /// The relay's reference clock minus CLOCK_REALTIME, from `coplay time query --json` on loopback.
    private func relayOffset(port: Int) async throws -> Double {
        try await CoplayScenarioRunner.relayOffset(port: port, coplay: configuration.coplay, log: log("time-query"))
    }
}

extension QueueScenarioRunner.Member {
    var isMPVMember: Bool { mpv.withLockedValue { $0 } != nil }
}
