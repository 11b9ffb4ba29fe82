#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging
import Synchronization

/// A dedicated OS thread that wakes at presentation instants of the reference clock.
///
/// The thread does only *waiting and emitting*; what to present and when is decided by the
/// `step` closure (the ``HeadlessPlayer`` passes its sans-IO ``HeadlessPlayerCore``). Each turn
/// it reads the reference clock, calls `step(now, realtime)` with the `CLOCK_REALTIME` reading of
/// that same instant, and waits for the instant `step` returns:
///
/// 1. far instants: an absolute `clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME)` of at most
///    ``Configuration/maximumSleep``, then a new turn (so a new command is noticed);
/// 2. near instants: an absolute sleep to ``Configuration/spinWindow`` before the instant, then
///    a busy-wait on the reference clock for the rest.
///
/// `CLOCK_BOOTTIME` is the clock Swift's `ContinuousClock` reads on Linux (and the one a
/// `SyncedClock<ContinuousClock>` maps to the reference); a time namespace shifts it for the
/// whole process, and `clock_nanosleep` with `TIMER_ABSTIME` honours that shift. The deadline is
/// computed from a reference reading taken between two `CLOCK_BOOTTIME` readings, so the only
/// error is the reference clock's rate against `CLOCK_BOOTTIME` (drift and slew, below 1000 ppm)
/// times the sleep (at most ``Configuration/maximumSleep``): microseconds, absorbed by the spin.
///
/// On start the thread asks for `SCHED_FIFO` (``Configuration/realtimePriority``) and a 1 ns
/// timer slack (through `/proc/thread-self/timerslack_ns`, since `prctl` is variadic and Swift
/// cannot call it); either can fail (no privilege), which is logged at debug and otherwise ignored.
///
/// ```swift
/// let thread = PresentationThread(name: "present", reference: source, logger: logger) { now, realtime in
///     core.withLock { $0.advance(to: now) ... ; return $0.nextWake }
/// }
/// thread.start { print("stopped") }
/// // ...
/// thread.stop()
/// ```
public final class PresentationThread: Sendable {
    /// How the thread waits.
    public struct Configuration: Hashable, Sendable {
        /// Busy-wait this long before each instant (zero: sleep only).
        public var spinWindow: Duration = .microseconds(300)
        /// The longest single sleep (a new command is noticed at the latest after this).
        public var maximumSleep: Duration = .milliseconds(5)
        /// The `SCHED_FIFO` priority to ask for (1...99), or `nil` to keep the normal policy.
        public var realtimePriority: Int32? = 10
        /// The timer slack to ask for, in nanoseconds (the Linux default is 50 µs), or `nil`.
        public var timerSlackNanoseconds: Int? = 1

        /// The defaults: 300 µs spin, 5 ms maximum sleep, `SCHED_FIFO` 10, 1 ns timer slack.
        public init() {}

        /// Creates a configuration.
        public init(spinWindow: Duration, maximumSleep: Duration = .milliseconds(5), realtimePriority: Int32? = 10, timerSlackNanoseconds: Int? = 1) {
            self.spinWindow = spinWindow
            self.maximumSleep = maximumSleep
            self.realtimePriority = realtimePriority
            self.timerSlackNanoseconds = timerSlackNanoseconds
        }
    }

    /// What the thread obtained from the system when it started.
    public struct Setup: Hashable, Sendable {
        /// Whether `SCHED_FIFO` was granted.
        public var realtime: Bool
        /// Whether the timer slack was set.
        public var timerSlack: Bool
    }

    /// The per-turn work: given the reference time now and `CLOCK_REALTIME` seconds read at the same
    /// instant, present what is due and return the next instant to wake at (`nil`: nothing planned).
    public typealias Step = @Sendable (_ now: ReferenceTime, _ realtime: Double) -> ReferenceTime?

    private let name: String
    private let configuration: Configuration
    private let reference: any ReferenceTimeSource
    private let step: Step
    private let logger: Logger
    private let stopped = Atomic<Bool>(false)
    private let started = Atomic<Bool>(false)
    private let setupResult = Mutex<Setup?>(nil)

    /// Creates a thread (not yet started).
    ///
    /// - Parameters:
    ///   - name: the thread's name (at most 15 bytes are kept by Linux).
    ///   - configuration: how it waits.
    ///   - reference: the clock the instants are on.
    ///   - logger: where it logs (debug only).
    ///   - step: the per-turn work, called only on this thread.
    public init(
        name: String, configuration: Configuration = .init(), reference: any ReferenceTimeSource,
        logger: Logger, step: @escaping Step
    ) {
        self.name = name
        self.configuration = configuration
        self.reference = reference
        self.step = step
        self.logger = logger
    }

    /// What the system granted, once the thread has started.
    public var setup: Setup? { setupResult.withLock { $0 } }

    /// Starts the thread; `onExit` runs on it after ``stop()`` (or at once if already stopped).
    /// A second call does nothing.
    public func start(onExit: @escaping @Sendable () -> Void) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let box = Unmanaged.passRetained(ThreadBody { [self] in
            self.body()
            onExit()
        })
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque())
        if result != 0 {
            box.release()
            logger.info("could not start the presentation thread", metadata: ["errno": "\(result)"])
            onExit()
            return
        }
        pthread_detach(thread)
    }

    /// Asks the thread to stop; it does within one ``Configuration/maximumSleep``.
    public func stop() { stopped.store(true, ordering: .releasing) }

    /// Runs an async body with the thread running, stopping it when the body ends or the task is
    /// cancelled, and returns once the thread has exited.
    public func run() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                start { continuation.resume() }
            }
        } onCancel: {
            stop()
        }
    }

    private var isStopped: Bool { stopped.load(ordering: .acquiring) }

    private func body() {
        let granted = Self.prepareCurrentThread(name: name, configuration: configuration)
        setupResult.withLock { $0 = granted }
        logger.debug(
            "presentation thread started",
            metadata: ["sched_fifo": "\(granted.realtime)", "timerslack": "\(granted.timerSlack)"])
        let spin = configuration.spinWindow
        var idleTurns = 0
        while !isStopped {
            let before = Self.bootTime()
            guard let now = reference.now() else {
                Self.sleep(until: before + configuration.maximumSleep)
                continue
            }
            let after = Self.bootTime()
            let stamp = Realtime.now()
            let boot = before + (after - before) / 2
            guard let wake = step(now, stamp) else {
                Self.sleep(until: boot + configuration.maximumSleep)
                continue
            }
            let remaining = wake - now
            if remaining <= .zero {
                // `step` presents everything due at `now`, so this is not expected; never spin on it.
                idleTurns += 1
                if idleTurns > 100 { Self.sleep(until: boot + configuration.maximumSleep) }
                continue
            }
            idleTurns = 0
            if remaining > configuration.maximumSleep + spin {
                Self.sleep(until: boot + configuration.maximumSleep)
                continue
            }
            if remaining > spin { Self.sleep(until: boot + (remaining - spin)) }
            // The final approach: read the reference clock until it reaches the instant. The spin
            // is bounded by `spin` plus the clock's rate error, or ends at once after an oversleep.
            let limit = Self.bootTime() + spin + .milliseconds(1)
            while !isStopped, let current = reference.now(), current < wake, Self.bootTime() < limit {}
        }
        logger.debug("presentation thread stopped")
    }

    // MARK: System calls

    /// `CLOCK_BOOTTIME` now (what `ContinuousClock` reads on Linux).
    static func bootTime() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
    }

    /// Sleeps until `deadline` on `CLOCK_BOOTTIME` (absolute, so an interrupted sleep resumes
    /// towards the same instant).
    static func sleep(until deadline: Duration) {
        let (seconds, attoseconds) = deadline.components
        var spec = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        while clock_nanosleep(CLOCK_BOOTTIME, TIMER_ABSTIME, &spec, nil) == EINTR {}
    }

    /// Names the calling thread, asks for `SCHED_FIFO` and a small timer slack (what this thread does
    /// on start; another thread that must wake on time, such as the mpv adapter's IPC event loop, can
    /// ask for the same).
    public static func prepareCurrentThread(name: String, configuration: Configuration) -> Setup {
        _ = writeProcFile("/proc/thread-self/comm", String(decoding: name.utf8.prefix(15), as: UTF8.self))
        var realtime = false
        if let priority = configuration.realtimePriority {
            var parameters = sched_param()
            parameters.sched_priority = max(1, min(priority, 99))
            realtime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
        }
        var slack = false
        if let nanoseconds = configuration.timerSlackNanoseconds {
            slack = writeProcFile("/proc/thread-self/timerslack_ns", "\(max(1, nanoseconds))")
        }
        return Setup(realtime: realtime, timerSlack: slack)
    }

    /// Writes `text` to a `/proc` file of the calling thread; `false` if that is not allowed.
    private static func writeProcFile(_ path: String, _ text: String) -> Bool {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count
    }
}

/// The closure a new thread runs (boxed to cross `pthread_create`'s `void *`).
private final class ThreadBody: Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
