import Foundation
import MPVControl
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The benchmark's own view of one mpv: an independent IPC connection (CLOCK_REALTIME stamps) that
/// samples `time-pos` adaptively and reports each frame presentation as it happens.
///
/// The ground truth of the mpv scenarios and of the Syncplay baseline: it does not ask the player
/// adapter anything. ``FrameTransitionTracker`` decides what a sample means and when to take the next
/// one; this class does the I/O: it connects beside whoever else drives mpv (mpv serves several
/// clients on one socket), reads the media's frame rate from mpv (`container-fps`), observes `pause`
/// and `speed` and `playback-restart` (they move the predictions), and samples on a timer of its
/// event loop (sub-millisecond waits; an event wakes it early).
///
/// ```swift
/// let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
/// let sampler = try await MPVFrameSampler.start(socket: "/tmp/p1.sock", player: "p1", group: group) { frame in
///     print(frame.index, frame.realtime, frame.bracket)
/// }
/// try await sampler.screenshot(to: "/tmp/p1.png")
/// let record = await sampler.stop()
/// ```
package final class MPVFrameSampler: Sendable {
    /// A change of mpv's `pause` property, stamped when its notification was read.
    package struct PauseChange: Sendable, Hashable {
        package var realtime: Double
        package var paused: Bool
    }

    /// Everything the sampler saw.
    package struct Record: Sendable {
        /// The player's name.
        package var player: String
        /// The media's frame rate as mpv reported it (nil if it never loaded a file): the first file's.
        package var frameRate: Double?
        /// Each `file-loaded` mpv reported once the sampler ran (a playlist or queue moving on; the
        /// first file may be among them), when the sampler read it (CLOCK_REALTIME), with that file's
        /// frame rate; the tracker follows it.
        package var fileChanges: [(realtime: Double, frameRate: Double)] = []
        /// Frame presentations, in order.
        package var transitions: [FrameTransitionTracker.Transition] = []
        /// Position jumps (seeks, steps back, and another file's first position after `time-pos` was
        /// unavailable while it loaded, or after mpv's `start-file`, even at the same position), in order.
        package var jumps: [FrameTransitionTracker.Jump] = []
        /// `pause` changes, in order (the first is the value when the sampler connected).
        package var pauses: [PauseChange] = []
        /// `speed` notifications (CLOCK_REALTIME when read, speed), in order.
        package var speeds: [(realtime: Double, speed: Double)] = []
        /// `time-pos` requests sent.
        package var samples = 0
        /// Request-to-reply round trips (seconds), every sample's.
        package var roundTrips: [Double] = []
        /// How late each sample's request was written after the instant the tracker asked for
        /// (seconds): the sampler's own scheduling delay.
        package var lateness: [Double] = []
        /// Predicted frame changes that did not come within their dense window.
        package var missedPredictions = 0
        /// CLOCK_REALTIME when sampling started and stopped.
        package var started: Double?
        package var stopped: Double?
        /// Why sampling ended early, if it did (mpv quit).
        package var ended: String?

        /// The transitions' bracket widths, seconds.
        package var brackets: [Double] { transitions.map(\.bracket) }
        /// The transitions re-dated from their neighbours (``FrameCadence``), in the same order; filled
        /// when sampling stops.
        package var dated: [FrameCadence.Dated] = []

        /// Everything seen, one JSON object per line in time order (`frame` with `index`, `pts`,
        /// `before`, `after`, and once stopped `dated`, `datingMs` (``FrameCadence``); `jump` with `from`, `to`; `pause` with `paused`; all with `realtime`),
        /// for looking into a run.
        package func jsonLines() -> Data {
            var lines: [(Double, String)] = transitions.enumerated().map { k, frame in
                (frame.realtime, String(
                    format: "{\"type\":\"frame\",\"realtime\":%.6f,\"index\":%d,\"pts\":%.6f,\"before\":%.6f,\"after\":%.6f,\"bracketMs\":%.3f%@}",
                    frame.realtime, frame.index, frame.pts, frame.before, frame.after, frame.bracket * 1000,
                    (k < dated.count ? String(format: ",\"dated\":%.6f,\"datingMs\":%.3f", dated[k].realtime, dated[k].uncertainty * 1000) : "")
                        + (frame.predicted.map { String(format: ",\"predictedMs\":%.3f", ($0 - frame.realtime) * 1000) } ?? "")
                        + (frame.roundTrips.map { String(format: ",\"roundTripsMs\":[%.3f,%.3f]", $0.before * 1000, $0.after * 1000) } ?? "")))
            }
            lines += jumps.map { jump in
                (jump.realtime, String(
                    format: "{\"type\":\"jump\",\"realtime\":%.6f,\"from\":%.6f,\"to\":%.6f%@}", jump.realtime, jump.from, jump.to,
                    jump.newFile ? ",\"newFile\":true" : ""))
            }
            lines += speeds.map { change in
                (change.realtime, String(format: "{\"type\":\"speed\",\"realtime\":%.6f,\"speed\":%.6f}", change.realtime, change.speed))
            }
            lines += pauses.map { change in
                (change.realtime, String(format: "{\"type\":\"pause\",\"realtime\":%.6f,\"paused\":%@}", change.realtime, change.paused ? "true" : "false"))
            }
            let text = lines.sorted { $0.0 < $1.0 }.map(\.1).joined(separator: "\n")
            return Data((text.isEmpty ? "" : text + "\n").utf8)
        }
    }

    private struct State {
        var record: Record
        var tracker: FrameTransitionTracker?
        var paused: Bool?
        var speed = 1.0
        /// mpv loaded another file: read its frame rate before the next sample.
        var fileLoaded = false
    }

    /// The player's name.
    package let player: String
    /// The sampler's own connection to mpv (also usable for commands such as screenshots).
    package let connection: MPVConnection
    private let state: NIOLockedValueBox<State>
    private let waker: Waker
    private let tasks = NIOLockedValueBox<[Task<Void, Never>]>([])
    private let configuration: FrameTransitionTracker.Configuration
    /// The event loop group the sampler made for itself (nil when the caller gave one).
    private let ownGroup: MultiThreadedEventLoopGroup?

    /// The mpv command line (after the executable) of a player the benchmark starts: coplay's
    /// options (`MPVProcess.baseArguments`), no window or sound, its IPC on `socket`.
    package static func mpvArguments(socket: String) -> [String] {
        MPVProcess.baseArguments + MPVProcess.headlessArguments + ["--input-ipc-server=\(socket)"]
    }

    private init(
        player: String, connection: MPVConnection, loop: any EventLoop, configuration: FrameTransitionTracker.Configuration,
        ownGroup: MultiThreadedEventLoopGroup?
    ) {
        self.player = player
        self.connection = connection
        self.configuration = configuration
        self.ownGroup = ownGroup
        self.state = NIOLockedValueBox(State(record: Record(player: player)))
        self.waker = Waker(loop: loop)
    }

    /// Connects to mpv's socket (waiting up to `timeout` seconds for it to appear while `alive` holds)
    /// and starts sampling once mpv has a file loaded.
    ///
    /// - Parameters:
    ///   - socket: mpv's `--input-ipc-server` path.
    ///   - player: the name in the record.
    ///   - configuration: sampling knobs; its `frameRate` is replaced by mpv's `container-fps`.
    ///   - group: the event loop group of the connection and the sampling timer; nil makes one thread
    ///     of the sampler's own (either way, a group of its own keeps the stamps off busy loops).
    ///   - timeout: seconds to wait for the socket.
    ///   - alive: whether the mpv is still running (a dead mpv ends the wait at once).
    ///   - onFrame: called with each presentation as it is detected (on a pool thread).
    /// - Throws: ``BenchError`` when mpv's socket does not answer in time.
    package static func start(
        socket: String, player: String, configuration: FrameTransitionTracker.Configuration = .init(frameRate: 25),
        group: (any EventLoopGroup)? = nil, timeout: Double = 30, alive: @escaping @Sendable () -> Bool = { true },
        onFrame: @escaping @Sendable (FrameTransitionTracker.Transition) -> Void = { _ in }
    ) async throws -> MPVFrameSampler {
        let ownGroup = group == nil ? MultiThreadedEventLoopGroup(numberOfThreads: 1) : nil
        let loops: any EventLoopGroup = group ?? ownGroup!
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        var connection: MPVConnection?
        do {
            while connection == nil {
                if FileManager.default.fileExists(atPath: socket) {
                    connection = try? await MPVConnection.connect(path: socket, stamp: RealtimeClock.now, group: loops)
                }
                if connection != nil { break }
                guard alive() else { throw BenchError.scenarioFailed("mpv of \(player) exited before opening its IPC socket") }
                guard ContinuousClock.now < deadline else { throw BenchError.timeout("mpv of \(player) to open \(socket)") }
                try await Task.sleep(for: .milliseconds(20))
            }
        } catch {
            try? await ownGroup?.shutdownGracefully()
            throw error
        }
        let sampler = MPVFrameSampler(
            player: player, connection: connection!, loop: loops.next(), configuration: configuration, ownGroup: ownGroup)
        do {
            try await sampler.begin(onFrame: onFrame)
        } catch {
            await sampler.stop()
            throw error
        }
        return sampler
    }

    /// Whether sampling runs (mpv reported the media's frame rate).
    package var isReady: Bool { state.withLockedValue { $0.tracker != nil } }

    /// The media's frame rate, once known.
    package var frameRate: Double? { state.withLockedValue { $0.record.frameRate } }

    /// The frame presentations so far.
    package var transitions: [FrameTransitionTracker.Transition] { state.withLockedValue { $0.record.transitions } }

    private func begin(onFrame: @escaping @Sendable (FrameTransitionTracker.Transition) -> Void) async throws {
        let events = connection.events()
        let eventTask = Task { [self] in
            for await event in events { handle(event) }
        }
        tasks.withLockedValue { $0.append(eventTask) }
        try await connection.observe("pause", id: 9101)
        try await connection.observe("speed", id: 9102)
        let sampling = Task { [self] in
            do {
                try await waitForFrameRate()
                try await sample(onFrame: onFrame)
            } catch {
                // Stopping closes the connection under a request in flight: not an early end.
                if !Task.isCancelled, !(error is CancellationError) {
                    state.withLockedValue { $0.record.ended = "\(error)" }
                }
            }
        }
        tasks.withLockedValue { $0.append(sampling) }
    }

    private func handle(_ event: MPVEvent) {
        let changed: Bool = state.withLockedValue { state in
            switch (event.name, event.property) {
            case ("property-change", "pause"):
                guard let paused = event.data.bool else { return false }
                if state.paused != paused { state.record.pauses.append(PauseChange(realtime: event.received, paused: paused)) }
                state.paused = paused
                state.tracker?.pauseChanged(paused, at: event.received)
                return true
            case ("property-change", "speed"):
                guard let speed = event.data.number else { return false }
                state.speed = speed
                state.record.speeds.append((event.received, speed))
                state.tracker?.speedChanged(speed, at: event.received)
                return true
            case ("playback-restart", _):
                state.tracker?.restarted(at: event.received)
                return true
            case ("start-file", _):
                if case .jump(let jump)? = state.tracker?.fileStarted(at: event.received) {
                    // Read after the reply that already showed the file's first position.
                    let at = state.record.jumps.lastIndex { $0.realtime <= jump.realtime }.map { $0 + 1 } ?? 0
                    state.record.jumps.insert(jump, at: at)
                }
                return true
            case ("file-loaded", _):
                state.fileLoaded = true
                return true
            default:
                return false
            }
        }
        if changed { waker.wake() }
    }

    /// Polls `container-fps` (then `estimated-vf-fps`) until mpv has loaded a file that has one.
    private func waitForFrameRate() async throws {
        while !Task.isCancelled {
            var rate = try await connection.number("container-fps")
            if rate == nil || !(rate! > 0) { rate = try await connection.number("estimated-vf-fps") }
            if let rate, rate > 0, rate.isFinite {
                state.withLockedValue { state in
                    var tracker = FrameTransitionTracker(configuration: {
                        var configuration = self.configuration
                        configuration.frameRate = rate
                        return configuration
                    }())
                    if let paused = state.paused { tracker.pauseChanged(paused, at: RealtimeClock.now()) }
                    tracker.speedChanged(state.speed, at: RealtimeClock.now())
                    state.tracker = tracker
                    state.record.frameRate = rate
                    state.record.started = RealtimeClock.now()
                }
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw CancellationError()
    }

    /// mpv loaded another file: the tracker follows its frame rate (`container-fps`). The same
    /// tracker goes on, so that the new file's first position is measured against the last one of
    /// the file before (a change of file at the same position is still seen: ``FrameTransitionTracker``).
    private func followFileChange() async throws {
        state.withLockedValue { $0.fileLoaded = false }
        var rate = try await connection.number("container-fps")
        if rate == nil || !(rate! > 0) { rate = try await connection.number("estimated-vf-fps") }
        guard let rate, rate > 0, rate.isFinite else { return }
        let now = RealtimeClock.now()
        state.withLockedValue { state in
            state.tracker?.frameRateChanged(rate)
            state.tracker?.restarted(at: now)
            state.record.fileChanges.append((now, rate))
        }
    }

    private func sample(onFrame: @Sendable (FrameTransitionTracker.Transition) -> Void) async throws {
        var planned: Double?
        while !Task.isCancelled {
            if state.withLockedValue({ $0.fileLoaded }) { try await followFileChange() }
            let reply = try await connection.get("time-pos")
            let position = reply.succeeded ? reply.data.number : nil
            let (change, next) = state.withLockedValue { state -> (FrameTransitionTracker.Change?, Double) in
                state.record.samples += 1
                state.record.roundTrips.append(reply.received - reply.sent)
                if let planned { state.record.lateness.append(max(0, reply.sent - planned)) }
                let change = state.tracker!.record(position: position, sent: reply.sent, received: reply.received)
                switch change {
                case .frame(let transition)?: state.record.transitions.append(transition)
                case .jump(let jump)?: state.record.jumps.append(jump)
                case nil: break
                }
                state.record.missedPredictions = state.tracker!.missedPredictions
                return (change, state.tracker!.nextSample(after: RealtimeClock.now()))
            }
            if case .frame(let transition)? = change { onFrame(transition) }
            planned = next
            // The timer and the hop back to this task take about 50 µs.
            let delay = next - RealtimeClock.now() - 0.000_05
            if delay > 0 { await waker.sleep(seconds: delay) }
        }
    }

    /// Asks mpv to write the video frame on screen (without OSD or subtitles) to `path` (PNG).
    package func screenshot(to path: String) async throws {
        try await connection.run(["screenshot-to-file", path, "video"])
    }

    /// Stops sampling and closes the connection; returns everything seen. Safe to call twice.
    @discardableResult
    package func stop() async -> Record {
        let running = tasks.withLockedValue { tasks in
            defer { tasks.removeAll() }
            return tasks
        }
        for task in running { task.cancel() }
        waker.wake()
        await connection.close()
        for task in running { await task.value }
        if !running.isEmpty { try? await ownGroup?.shutdownGracefully() }
        return state.withLockedValue { state in
            if state.record.stopped == nil {
                state.record.stopped = RealtimeClock.now()
                state.record.dated = FrameCadence.redate(state.record)
            }
            return state.record
        }
    }
}

/// A sleep on an event loop's timer (timerfd: sub-millisecond waits) that ``wake()`` ends early.
final class Waker: Sendable {
    private struct State {
        var generation = 0
        var sleeper: CheckedContinuation<Void, Never>?
        var pendingWake = false
    }

    private let loop: any EventLoop
    private let state = NIOLockedValueBox(State())

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// Sleeps `seconds`, or until ``wake()``; a wake that came while not sleeping ends the next sleep at once.
    func sleep(seconds: Double) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let generation: Int? = state.withLockedValue { state in
                if state.pendingWake {
                    state.pendingWake = false
                    return nil
                }
                state.generation += 1
                state.sleeper = continuation
                return state.generation
            }
            guard let generation else {
                continuation.resume()
                return
            }
            loop.scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) { [self] in
                let sleeper: CheckedContinuation<Void, Never>? = state.withLockedValue { state in
                    guard state.generation == generation, let sleeper = state.sleeper else { return nil }
                    state.sleeper = nil
                    return sleeper
                }
                sleeper?.resume()
            }
        }
    }

    /// Ends the current sleep now (or the next one, if none is under way).
    func wake() {
        let sleeper: CheckedContinuation<Void, Never>? = state.withLockedValue { state in
            guard let sleeper = state.sleeper else {
                state.pendingWake = true
                return nil
            }
            state.sleeper = nil
            return sleeper
        }
        sleeper?.resume()
    }
}
