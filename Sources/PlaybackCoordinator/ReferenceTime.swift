/// An instant on the group's shared reference clock, in whole nanoseconds.
///
/// The reference clock is the relay's NTP-disciplined timescale; every participant maps its own
/// monotonic clock onto it through a ``ReferenceTimeSource``. Nanoseconds in an `Int64` keep
/// sub-microsecond precision for about 292 years from whatever epoch the source uses, which a
/// `Double` of seconds since 1900 would not (its step there is about half a microsecond).
///
/// ```swift
/// let start = ReferenceTime(seconds: 12.5)
/// let later = start + .milliseconds(40)
/// print(later - start)          // 0.04 seconds
/// ```
public struct ReferenceTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// Nanoseconds since the reference source's epoch.
    public var nanoseconds: Int64

    /// Creates an instant from nanoseconds since the reference epoch.
    public init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    /// Creates an instant from (possibly fractional) seconds since the reference epoch, rounded to
    /// the nearest nanosecond.
    public init(seconds: Double) {
        self.nanoseconds = Int64((seconds * 1e9).rounded())
    }

    /// Seconds since the reference epoch.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public var description: String { "ref(\(seconds)s)" }

    public static func < (lhs: ReferenceTime, rhs: ReferenceTime) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }

    /// The instant `rhs` after `lhs`.
    public static func + (lhs: ReferenceTime, rhs: Duration) -> ReferenceTime {
        ReferenceTime(nanoseconds: lhs.nanoseconds + rhs.nanosecondsValue)
    }

    /// The instant `rhs` before `lhs`.
    public static func - (lhs: ReferenceTime, rhs: Duration) -> ReferenceTime {
        ReferenceTime(nanoseconds: lhs.nanoseconds - rhs.nanosecondsValue)
    }

    /// The signed duration from `rhs` to `lhs`.
    public static func - (lhs: ReferenceTime, rhs: ReferenceTime) -> Duration {
        .nanoseconds(lhs.nanoseconds - rhs.nanoseconds)
    }

    public init(from decoder: any Decoder) throws {
        self.nanoseconds = try decoder.singleValueContainer().decode(Int64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(nanoseconds)
    }
}

extension Duration {
    /// The duration in whole nanoseconds (truncated), saturating at the `Int64` range.
    public var nanosecondsValue: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled &+ attoseconds / 1_000_000_000
    }

    /// The duration in (fractional) seconds.
    public var secondsValue: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in (fractional) milliseconds.
    public var millisecondsValue: Double { secondsValue * 1e3 }

    /// A duration of `seconds` (fractional) seconds, rounded to the nearest nanosecond.
    public static func secondsRounded(_ seconds: Double) -> Duration {
        .nanoseconds(Int64((seconds * 1e9).rounded()))
    }
}
