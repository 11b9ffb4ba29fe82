/// The 32-bit NTP short format: unsigned 16-bit seconds and 16-bit fraction (RFC 5905 section 6).
///
/// NTP uses it for the root delay and root dispersion fields of a packet.
///
/// ```swift
/// let dispersion = NTPShortFormat(seconds: 0.000_5)
/// print(dispersion.seconds)   // 0.000499725...
/// ```
public struct NTPShortFormat: Sendable, Hashable, CustomStringConvertible {
    /// The raw 16.16 fixed-point value as it appears on the wire.
    public var rawValue: UInt32

    /// Creates a value from its raw 16.16 fixed-point representation.
    ///
    /// - Parameter rawValue: Seconds in the upper 16 bits, the fraction in the lower 16 bits.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Creates a value from seconds, clamped to the representable range `0...65535.99998`.
    ///
    /// - Parameter seconds: A non-negative number of seconds (negative and NaN become zero).
    public init(seconds: Double) {
        guard seconds > 0 else {
            self.rawValue = 0
            return
        }
        let scaled = (seconds * 65_536.0).rounded(.up)
        self.rawValue = scaled >= Double(UInt32.max) ? UInt32.max : UInt32(scaled)
    }

    /// The value in seconds.
    public var seconds: Double { Double(rawValue) / 65_536.0 }

    public var description: String { "\(seconds)s" }
}
