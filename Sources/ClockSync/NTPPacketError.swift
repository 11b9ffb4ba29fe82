/// Why an NTP packet was rejected: too short to decode, or invalid for its role.
///
/// Errors compare equal when they have the same reason (and the same detail), so tests can write
/// `#expect(throws: NTPPacketError.originMismatch) { ... }`.
public struct NTPPacketError: Error, Sendable, Hashable, CustomStringConvertible {
    private enum Code: Sendable, Hashable {
        case truncated(length: Int)
        case unexpectedMode(NTPPacket.Mode)
        case unsupportedVersion(UInt8)
        case invalidStratum(UInt8)
        case unsynchronized
        case zeroTimestamp(String)
        case originMismatch
        case kissOfDeath(KissCode)
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// Fewer than the 48 header bytes were given.
    ///
    /// - Parameter length: The number of bytes received.
    public static func truncated(length: Int) -> NTPPacketError { .init(.truncated(length: length)) }

    /// The mode does not fit the packet's role (e.g. a request that is not mode 3).
    ///
    /// - Parameter mode: The mode found.
    public static func unexpectedMode(_ mode: NTPPacket.Mode) -> NTPPacketError { .init(.unexpectedMode(mode)) }

    /// The version is outside 1...4.
    ///
    /// - Parameter version: The version found.
    public static func unsupportedVersion(_ version: UInt8) -> NTPPacketError { .init(.unsupportedVersion(version)) }

    /// A response's stratum is above 15 (16 means unsynchronized).
    ///
    /// - Parameter stratum: The stratum found.
    public static func invalidStratum(_ stratum: UInt8) -> NTPPacketError { .init(.invalidStratum(stratum)) }

    /// The server says its clock is unsynchronized (leap indicator 3).
    public static let unsynchronized = NTPPacketError(.unsynchronized)

    /// A timestamp that must be set is zero.
    ///
    /// - Parameter field: The field's name, e.g. `"transmit"`.
    public static func zeroTimestamp(_ field: String) -> NTPPacketError { .init(.zeroTimestamp(field)) }

    /// A response's origin timestamp is not the transmit timestamp of our request (bogus or stale).
    public static let originMismatch = NTPPacketError(.originMismatch)

    /// The server sent a kiss-o'-death.
    ///
    /// - Parameter code: The kiss code (RATE, DENY, RSTR, ...).
    public static func kissOfDeath(_ code: KissCode) -> NTPPacketError { .init(.kissOfDeath(code)) }

    /// The kiss code when this error is a kiss-o'-death, else `nil`.
    public var kissCode: KissCode? {
        if case .kissOfDeath(let code) = code { return code }
        return nil
    }

    public var description: String {
        switch code {
        case .truncated(let length):
            "NTP packet too short: \(length) bytes, need at least \(NTPPacket.headerSize)"
        case .unexpectedMode(let mode):
            "NTP packet has unexpected mode \(mode) (\(mode.rawValue))"
        case .unsupportedVersion(let version):
            "NTP packet has unsupported version \(version) (expected 1...4)"
        case .invalidStratum(let stratum):
            "NTP response has invalid stratum \(stratum) (server unsynchronized)"
        case .unsynchronized:
            "NTP server reports an unsynchronized clock (leap indicator 3)"
        case .zeroTimestamp(let field):
            "NTP packet has a zero \(field) timestamp"
        case .originMismatch:
            "NTP response does not answer our request (origin timestamp mismatch)"
        case .kissOfDeath(let code):
            "NTP server sent kiss-o'-death \(code)"
        }
    }
}
