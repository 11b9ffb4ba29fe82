/// A kiss-o'-death code: the four ASCII characters a server puts in the reference ID of a stratum-0
/// packet to tell a client to change its behaviour (RFC 5905 section 7.4).
///
/// ```swift
/// if let code = response.kissCode, code == .rate { /* poll less often */ }
/// ```
public struct KissCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code as a big-endian 32-bit value (the wire representation).
    public var rawValue: UInt32

    /// Creates a code from its wire value.
    ///
    /// - Parameter rawValue: The 32-bit reference ID of a kiss-o'-death packet.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Creates a code from up to four ASCII characters (padded with NUL bytes).
    ///
    /// - Parameter code: The code, e.g. `"RATE"`.
    public init(_ code: StaticString) {
        var value: UInt32 = 0
        let bytes = UnsafeBufferPointer(start: code.utf8Start, count: code.utf8CodeUnitCount)
        for i in 0..<4 {
            value = value << 8 | UInt32(i < bytes.count ? bytes[i] : 0)
        }
        self.rawValue = value
    }

    /// RATE: the client polls too often; it must reduce its rate.
    public static let rate = KissCode("RATE")
    /// DENY: access denied; the client must stop sending to this server.
    public static let deny = KissCode("DENY")
    /// RSTR: access restricted; the client must stop sending to this server.
    public static let restrict = KissCode("RSTR")

    /// Whether the client must stop sending to the server (DENY or RSTR).
    public var demandsStop: Bool { self == .deny || self == .restrict }

    /// The code as text; non-printable bytes appear as `\xNN`.
    public var description: String {
        var text = ""
        for shift in stride(from: 24, through: 0, by: -8) {
            let byte = UInt8(truncatingIfNeeded: rawValue >> UInt32(shift))
            if byte == 0 { continue }
            if (0x20...0x7E).contains(byte) {
                text.append(Character(Unicode.Scalar(byte)))
            } else {
                text += "\\x" + String(byte, radix: 16)
            }
        }
        return text
    }
}
