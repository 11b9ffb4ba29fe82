/// An exact rational number, as libavutil's `AVRational`: a time base, a frame rate, an aspect ratio.
///
/// Values are kept exactly as libavformat reports them (not reduced), so `description` prints what
/// `ffprobe` prints: `"24000/1001"`, `"1/90000"`, and `"0/0"` for "unknown".
///
/// ```swift
/// let rate = Rational(30000, 1001)
/// print(rate, rate.doubleValue)   // 30000/1001 29.97002997002997
/// ```
public struct Rational: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The numerator.
    public var numerator: Int64
    /// The denominator; `0` marks an unknown or undefined value (as `0/0` in FFmpeg).
    public var denominator: Int64

    /// Creates `numerator/denominator`, kept as given (not reduced).
    ///
    /// - Parameters:
    ///   - numerator: The numerator.
    ///   - denominator: The denominator; `0` means "unknown".
    public init(_ numerator: Int64, _ denominator: Int64) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// `0/0`, FFmpeg's "unknown".
    public static let unknown = Rational(0, 0)

    /// Whether the value is defined and non-zero (both terms non-zero).
    public var isValid: Bool { numerator != 0 && denominator != 0 }

    /// The value as a `Double`, or `nil` when the denominator is zero.
    public var doubleValue: Double? {
        denominator == 0 ? nil : Double(numerator) / Double(denominator)
    }

    /// The reciprocal (`d/n`), e.g. a frame duration from a frame rate.
    public var reciprocal: Rational { Rational(denominator, numerator) }

    /// The same value in lowest terms with a positive denominator (`0/0` stays `0/0`).
    public var reduced: Rational {
        guard denominator != 0 else { return self }
        var a = numerator.magnitude, b = denominator.magnitude
        while b != 0 { (a, b) = (b, a % b) }
        guard a != 0, let g = Int64(exactly: a) else { return self }
        let (n, d) = (numerator / g, denominator / g)
        guard denominator < 0 else { return Rational(n, d) }
        guard n != .min, d != .min else { return self }
        return Rational(-n, -d)
    }

    /// `numerator/denominator`, as ffprobe prints it.
    public var description: String { "\(numerator)/\(denominator)" }

    /// Parses `"n/d"` (ffprobe's form). Returns `nil` for anything else.
    ///
    /// - Parameter string: Text such as `"24000/1001"`.
    public init?(_ string: some StringProtocol) {
        let parts = string.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let n = Int64(parts[0]), let d = Int64(parts[1]) else { return nil }
        self.init(n, d)
    }
}
