import NIOCore

/// The 128-bit identifier of one group session, as carried in every frame header.
///
/// A session identifier is public: it names the session in invites and frames, and the relay
/// uses it to route. It carries no secret. Its text form is 32 lowercase hexadecimal digits.
///
/// ```swift
/// let id = SessionID.random()
/// let same = SessionID(hex: id.description)   // == id
/// ```
public struct SessionID: Hashable, Sendable, CustomStringConvertible {
    /// The first eight bytes, big-endian.
    public var high: UInt64
    /// The last eight bytes, big-endian.
    public var low: UInt64

    /// Creates an identifier from its two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh random identifier from the system's secure generator.
    public static func random() -> SessionID {
        var rng = SystemRandomNumberGenerator()
        return SessionID(high: rng.next(), low: rng.next())
    }

    /// Parses 32 hexadecimal digits (either case); `nil` for anything else.
    public init?(hex: some StringProtocol) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 32 else { return nil }
        guard let high = UInt64(String(decoding: utf8[0..<16], as: UTF8.self), radix: 16),
            let low = UInt64(String(decoding: utf8[16..<32], as: UTF8.self), radix: 16),
            utf8.allSatisfy({ $0.isHexDigit })
        else { return nil }
        self.init(high: high, low: low)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeInteger(high)
        buffer.writeInteger(low)
        return Array(buffer.readableBytesView)
    }

    /// 32 lowercase hexadecimal digits.
    public var description: String {
        let h = String(high, radix: 16)
        let l = String(low, radix: 16)
        return String(repeating: "0", count: 16 - h.count) + h + String(repeating: "0", count: 16 - l.count) + l
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }
}
