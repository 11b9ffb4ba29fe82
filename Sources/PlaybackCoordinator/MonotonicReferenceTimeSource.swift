#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A reference-time source that *is* this machine's monotonic clock (`CLOCK_MONOTONIC`).
///
/// Useful when every participant runs in one process or on one machine (the demo, tests, the
/// wake-up benchmark): the reference clock is then shared exactly and the error bound is zero.
/// Across machines use an adapter over ClockSync's `SyncedClock` instead.
///
/// ```swift
/// let source = MonotonicReferenceTimeSource()
/// let t = source.now()!          // seconds since boot, as a ReferenceTime
/// ```
public struct MonotonicReferenceTimeSource: ReferenceTimeSource {
    /// Creates the source.
    public init() {}

    /// The current `CLOCK_MONOTONIC` reading.
    public static func monotonicNow() -> Duration {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
    }

    public func now() -> ReferenceTime? {
        ReferenceTime(nanoseconds: Self.monotonicNow().nanosecondsValue)
    }

    public func referenceTime(atLocal local: Duration) -> ReferenceTime? {
        ReferenceTime(nanoseconds: local.nanosecondsValue)
    }

    public func localTime(atReference reference: ReferenceTime) -> Duration? {
        .nanoseconds(reference.nanoseconds)
    }

    public var errorBound: Duration? { .zero }
}

/// Reads `CLOCK_REALTIME` as seconds since the Unix epoch: the time stamp printed in every event
/// line so outside tools can compare players (time namespaces do not shift it).
public enum Realtime {
    /// `CLOCK_REALTIME` now, in seconds.
    public static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
