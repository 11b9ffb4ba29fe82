#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#else
import Darwin
#endif

/// CLOCK_REALTIME, the benchmark's ground truth: time namespaces shift only the monotonic and boot
/// clocks, so every process on the machine reads the same realtime.
package enum RealtimeClock {
    /// CLOCK_REALTIME now, in seconds.
    package static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
