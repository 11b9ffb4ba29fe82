import Foundation

/// An exact media timestamp or duration: an integer count of `timeBase` ticks.
///
/// libavformat gives container times in microseconds (`AV_TIME_BASE`) and stream times in the stream's
/// own time base; `MediaTime` keeps both exact and converts to seconds on demand.
///
/// ```swift
/// let start = MediaTime(value: 129_600, timeBase: Rational(1, 90_000))
/// start.seconds           // 1.44
/// ```
public struct MediaTime: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The number of ticks.
    public var value: Int64
    /// The length of one tick in seconds.
    public var timeBase: Rational

    /// Creates a time of `value` ticks of `timeBase` seconds.
    ///
    /// - Parameters:
    ///   - value: The tick count.
    ///   - timeBase: Seconds per tick.
    public init(value: Int64, timeBase: Rational) {
        self.value = value
        self.timeBase = timeBase
    }

    /// A time in microseconds (`AV_TIME_BASE` units), as `AVFormatContext` reports durations.
    ///
    /// - Parameter microseconds: The number of microseconds.
    public init(microseconds: Int64) {
        self.init(value: microseconds, timeBase: Rational(1, 1_000_000))
    }

    /// The time in seconds (0 when the time base is undefined), correctly rounded where the exact
    /// product `value * numerator` fits in a `Double` mantissa (so 283 x 1/1000 is 0.283).
    public var seconds: Double {
        guard timeBase.denominator != 0 else { return 0 }
        let (product, overflow) = value.multipliedReportingOverflow(by: timeBase.numerator)
        if !overflow, product.magnitude < (1 << 53) {
            return Double(product) / Double(timeBase.denominator)
        }
        return Double(value) * (Double(timeBase.numerator) / Double(timeBase.denominator))
    }

    /// Seconds computed exactly as ffprobe computes them (`ts * av_q2d(tb)`), so printed values agree
    /// with ffprobe's to the last digit.
    var ffprobeSeconds: Double {
        guard timeBase.denominator != 0 else { return 0 }
        return Double(value) * (Double(timeBase.numerator) / Double(timeBase.denominator))
    }

    /// Seconds with six decimals, as ffprobe prints times (`"3.000000"`).
    public var ffprobeString: String { Self.ffprobeString(ffprobeSeconds) }

    /// `"<seconds> s (<value> x <timeBase>)"`.
    public var description: String { "\(ffprobeString) s (\(value) x \(timeBase))" }

    /// Formats seconds with six decimals like C's `"%f"`, which ffprobe uses for times.
    static func ffprobeString(_ seconds: Double) -> String {
        String(format: "%f", seconds)
    }
}
