import NIOCore

/// A client's identity for rate limiting: its IP address (the port is ignored, as in chrony and
/// ntpd, so a client cannot dodge the limit by changing ports).
public struct ClientKey: Sendable, Hashable, CustomStringConvertible {
    private let high: UInt64
    private let low: UInt64

    /// Creates a key from 128 bits (IPv4 addresses use the low 32 bits and a marker).
    ///
    /// - Parameters:
    ///   - high: The upper 64 bits.
    ///   - low: The lower 64 bits.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// The key of a socket address: its IP address, or a shared key for other address kinds.
    ///
    /// - Parameter address: The sender's address.
    public init(_ address: SocketAddress?) {
        switch address {
        case .v4(let v4):
            self.init(high: 0, low: 0xFFFF_0000_0000 | UInt64(UInt32(bigEndian: v4.address.sin_addr.s_addr)))
        case .v6(let v6):
            var bytes = v6.address.sin6_addr
            let (h, l) = withUnsafeBytes(of: &bytes) { raw in
                (raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                 raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            self.init(high: h, low: l)
        default:
            self.init(high: .max, low: .max)
        }
    }

    public var description: String { "ClientKey(\(String(high, radix: 16)):\(String(low, radix: 16)))" }
}
