#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A 64-bit NTP timestamp: unsigned 32-bit seconds and 32-bit fraction since the NTP era epoch.
///
/// NTP time wraps every 2^32 seconds (about 136 years), so two timestamps are compared only by their
/// first-order difference: the wrapping subtraction of the raw 64-bit values read as a signed number
/// (RFC 5905 section 6). That difference is correct across an era boundary as long as the two times are
/// within 68 years of each other. For that reason `NTPTimestamp` is deliberately not `Comparable`.
///
/// ```swift
/// let t1 = NTPTimestamp(unixSeconds: 1_800_000_000.25)
/// let t2 = t1.advanced(bySeconds: 0.5)
/// print(t2.seconds(since: t1))   // 0.5
/// ```
public struct NTPTimestamp: Sendable, Hashable, CustomStringConvertible {
    /// The raw 32.32 fixed-point value as it appears on the wire.
    public var rawValue: UInt64

    /// Seconds between the NTP epoch (1900-01-01) and the Unix epoch (1970-01-01).
    public static let unixEpochOffset: UInt64 = 2_208_988_800

    /// The all-zero timestamp, which NTP uses to mean "unknown" or "not set".
    public static let zero = NTPTimestamp(rawValue: 0)

    /// Creates a timestamp from its raw 32.32 fixed-point value.
    ///
    /// - Parameter rawValue: Seconds in the upper 32 bits, the binary fraction in the lower 32 bits.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Creates a timestamp from its seconds and fraction halves.
    ///
    /// - Parameters:
    ///   - seconds: Whole seconds in the NTP era.
    ///   - fraction: The fraction of a second in units of 2^-32 s.
    public init(seconds: UInt32, fraction: UInt32) {
        self.rawValue = UInt64(seconds) << 32 | UInt64(fraction)
    }

    /// Creates the timestamp of a Unix time given in seconds (era-wrapped).
    ///
    /// - Parameter unixSeconds: Seconds since 1970-01-01 UTC; may carry a fraction.
    public init(unixSeconds: Double) {
        let whole = unixSeconds.rounded(.down)
        let fraction = UInt64(((unixSeconds - whole) * 4_294_967_296.0).rounded(.down))
        let seconds = UInt64(truncatingIfNeeded: Int64(whole)) &+ Self.unixEpochOffset
        self.rawValue = (seconds << 32) &+ min(fraction, 0xFFFF_FFFF)
    }

    /// Creates the timestamp of a Unix time given as seconds and nanoseconds.
    ///
    /// - Parameters:
    ///   - unixSeconds: Whole seconds since 1970-01-01 UTC.
    ///   - nanoseconds: Nanoseconds within the second, `0..<1_000_000_000`.
    public init(unixSeconds: Int64, nanoseconds: Int64) {
        let seconds = UInt64(truncatingIfNeeded: unixSeconds) &+ Self.unixEpochOffset
        let fraction = (UInt64(nanoseconds) << 32) / 1_000_000_000
        self.rawValue = (seconds << 32) &+ fraction
    }

    /// The current UTC time of the system's real-time clock.
    ///
    /// This clock may be stepped by the administrator or a time daemon; ClockSync reads it only once,
    /// to anchor a monotonic timescale (see ``LocalTimescale``).
    public static func systemNow() -> NTPTimestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return NTPTimestamp(unixSeconds: Int64(ts.tv_sec), nanoseconds: Int64(ts.tv_nsec))
    }

    /// Whole seconds in the NTP era (the upper 32 bits).
    public var seconds: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 32) }

    /// The fraction of a second in units of 2^-32 s (the lower 32 bits).
    public var fraction: UInt32 { UInt32(truncatingIfNeeded: rawValue) }

    /// Whether this is the all-zero "unknown" timestamp.
    public var isZero: Bool { rawValue == 0 }

    /// Seconds since the Unix epoch, assuming the current era (era 0, which ends in 2036, is mapped onto
    /// 1968...2104 by treating seconds below 2^31 as era 1, as RFC 4330 section 3 suggests).
    public var unixSeconds: Double {
        var seconds = Double(self.seconds) - Double(Self.unixEpochOffset)
        if self.seconds & 0x8000_0000 == 0 { seconds += 4_294_967_296.0 }
        return seconds + Double(fraction) / 4_294_967_296.0
    }

    /// The signed first-order difference `self - other` in raw 2^-32 s units (era-safe).
    ///
    /// - Parameter other: The earlier timestamp (within 68 years).
    public func rawDifference(from other: NTPTimestamp) -> Int64 {
        Int64(bitPattern: rawValue &- other.rawValue)
    }

    /// The signed time `self - other` in seconds, computed era-safely from the 64-bit difference.
    ///
    /// - Parameter other: The timestamp to subtract (within 68 years of `self`).
    public func seconds(since other: NTPTimestamp) -> Double {
        Double(rawDifference(from: other)) / 4_294_967_296.0
    }

    /// The signed time `self - other` as a `Duration`, exact to the nanosecond.
    ///
    /// - Parameter other: The timestamp to subtract (within 68 years of `self`).
    public func duration(since other: NTPTimestamp) -> Duration {
        let raw = rawDifference(from: other)
        let whole = raw >> 32                         // floor division by 2^32
        let fraction = UInt64(raw & 0xFFFF_FFFF)
        // fraction * 10^18 / 2^32, computed on the 128-bit product.
        let product = fraction.multipliedFullWidth(by: 1_000_000_000_000_000_000)
        let attoseconds = product.high << 32 | product.low >> 32
        return Duration(secondsComponent: whole, attosecondsComponent: Int64(attoseconds))
    }

    /// This timestamp moved by `seconds` (may be negative), wrapping at the era boundary.
    ///
    /// - Parameter seconds: The signed shift in seconds.
    public func advanced(bySeconds seconds: Double) -> NTPTimestamp {
        let raw = Int64((seconds * 4_294_967_296.0).rounded())
        return NTPTimestamp(rawValue: rawValue &+ UInt64(bitPattern: raw))
    }

    /// This timestamp moved by `duration` (may be negative), wrapping at the era boundary.
    ///
    /// - Parameter duration: The signed shift.
    public func advanced(by duration: Duration) -> NTPTimestamp {
        NTPTimestamp(rawValue: rawValue &+ UInt64(bitPattern: Self.raw(of: duration)))
    }

    /// The 32.32 fixed-point value of a (signed) duration, truncated toward negative infinity.
    static func raw(of duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        // attoseconds in [-1e18, 1e18]; scale to 2^-32 units: attoseconds * 2^32 / 1e18.
        let fraction = (Double(attoseconds) * 4_294_967_296.0 / 1e18).rounded(.down)
        return (seconds << 32) &+ Int64(fraction)
    }

    public var description: String {
        let unix = unixSeconds
        return "NTPTimestamp(\(seconds).\(String(fraction, radix: 16)) = unix \(unix))"
    }
}
