import Glibc
import Synchronization

/// When a probe must stop: its deadline or its task's cancellation, polled by libavformat's interrupt
/// callback on the probing thread.
///
/// `Sendable` without `@unchecked`: the limit is immutable and the cancellation flag is atomic. The C
/// callback receives an unretained pointer; `FormatProbe.run` keeps the instance alive meanwhile.
final class ProbeInterrupt: Sendable {
    private let limit: UInt64
    private let cancelled = Atomic<Bool>(false)
    /// The timeout in seconds (for messages).
    let seconds: Double

    init(after duration: Duration) {
        let (whole, overflow) = duration.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let nanos = overflow ? Int64.max / 2 : max(0, whole) + duration.components.attoseconds / 1_000_000_000
        self.seconds = Double(nanos) / 1e9
        self.limit = ProbeInterrupt.now() &+ UInt64(max(0, nanos))
    }

    /// Asks the probe to stop at libavformat's next check.
    func cancel() { cancelled.store(true, ordering: .relaxed) }

    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
    var isExpired: Bool { ProbeInterrupt.now() >= limit }
    var shouldStop: Bool { isCancelled || isExpired }

    /// The error for a stop: cancelled wins over timed out.
    func error(path: String) -> MediaProbeError {
        isCancelled ? .cancelled(path: path) : .timedOut(path: path, seconds: seconds)
    }

    private static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
