/// The 48-byte NTPv4 packet header of RFC 5905 section 7.3.
///
/// `NTPPacket` is a plain value: ``init(bytes:)`` decodes any byte string (it is total: it either
/// returns a packet or throws ``NTPPacketError``, it never traps), ``encoded()`` produces the 48 wire
/// bytes, and the `validate…` methods in `NTPPacket+Validation.swift` check a decoded packet for the role
/// it plays (a client's request, a server's response, a kiss-o'-death).
///
/// ```swift
/// var request = NTPPacket(mode: .client)
/// request.transmitTimestamp = NTPTimestamp.systemNow()
/// let bytes = request.encoded()            // 48 bytes
/// let decoded = try NTPPacket(bytes: bytes)
/// assert(decoded == request)
/// ```
public struct NTPPacket: Sendable, Hashable {
    /// The size of the NTP header; extension fields and MACs may follow it and are ignored.
    public static let headerSize = 48

    /// The leap indicator (2 bits): a warning of an impending leap second, or "unsynchronized".
    public var leap: LeapIndicator
    /// The protocol version (3 bits); 4 for NTPv4. Decoding keeps any value, validation checks it.
    public var version: UInt8
    /// The association mode (3 bits).
    public var mode: Mode
    /// The stratum: 0 for a kiss-o'-death, 1 for a primary server, 2...15 secondary, 16 unsynchronized.
    public var stratum: UInt8
    /// The poll exponent: log2 of the maximum interval between messages, in seconds.
    public var poll: Int8
    /// The precision exponent: log2 of the precision of the sender's clock, in seconds.
    public var precision: Int8
    /// The total round-trip delay to the reference clock.
    public var rootDelay: NTPShortFormat
    /// The total dispersion to the reference clock.
    public var rootDispersion: NTPShortFormat
    /// The reference identifier: a 4-character code for stratum 0/1, an IPv4 address (or a hash) above.
    public var referenceID: UInt32
    /// When the sender's clock was last set or corrected.
    public var referenceTimestamp: NTPTimestamp
    /// T1: the client's transmit timestamp, copied back by the server.
    public var originTimestamp: NTPTimestamp
    /// T2: when the server received the request.
    public var receiveTimestamp: NTPTimestamp
    /// T3 (in a response) or T1 (in a request): when the packet left its sender.
    public var transmitTimestamp: NTPTimestamp

    /// Creates a packet with every field given (or zero).
    ///
    /// - Parameters:
    ///   - leap: The leap indicator; `.noWarning` by default.
    ///   - version: The protocol version; 4 by default.
    ///   - mode: The association mode.
    ///   - stratum: The stratum; 0 by default (a request).
    ///   - poll: The poll exponent.
    ///   - precision: The precision exponent.
    ///   - rootDelay: The root delay.
    ///   - rootDispersion: The root dispersion.
    ///   - referenceID: The reference identifier.
    ///   - referenceTimestamp: The reference timestamp.
    ///   - originTimestamp: The origin timestamp (T1).
    ///   - receiveTimestamp: The receive timestamp (T2).
    ///   - transmitTimestamp: The transmit timestamp.
    public init(
        leap: LeapIndicator = .noWarning,
        version: UInt8 = 4,
        mode: Mode,
        stratum: UInt8 = 0,
        poll: Int8 = 0,
        precision: Int8 = 0,
        rootDelay: NTPShortFormat = NTPShortFormat(rawValue: 0),
        rootDispersion: NTPShortFormat = NTPShortFormat(rawValue: 0),
        referenceID: UInt32 = 0,
        referenceTimestamp: NTPTimestamp = .zero,
        originTimestamp: NTPTimestamp = .zero,
        receiveTimestamp: NTPTimestamp = .zero,
        transmitTimestamp: NTPTimestamp = .zero
    ) {
        self.leap = leap
        self.version = version & 0x7
        self.mode = mode
        self.stratum = stratum
        self.poll = poll
        self.precision = precision
        self.rootDelay = rootDelay
        self.rootDispersion = rootDispersion
        self.referenceID = referenceID
        self.referenceTimestamp = referenceTimestamp
        self.originTimestamp = originTimestamp
        self.receiveTimestamp = receiveTimestamp
        self.transmitTimestamp = transmitTimestamp
    }

    /// Decodes the NTP header at the start of `bytes`.
    ///
    /// Every byte string of at least 48 bytes decodes to a packet (every bit pattern of the header is
    /// representable); anything after the header (extension fields, a MAC) is ignored. Check the result
    /// with ``validateRequest()`` or ``validateResponse(origin:)`` before trusting it.
    ///
    /// - Parameter bytes: The datagram payload.
    /// - Throws: ``NTPPacketError/truncated(length:)`` when fewer than 48 bytes are given.
    public init(bytes: some Collection<UInt8>) throws(NTPPacketError) {
        guard bytes.count >= Self.headerSize else { throw .truncated(length: bytes.count) }
        // Contiguous bytes (an Array, a ByteBuffer's view, Data) are read in place; anything else is
        // copied once. Reading through the generic collection's own indices would cost an allocation
        // per byte where the call is not specialized.
        if let packet = bytes.withContiguousStorageIfAvailable({ Self(header: UnsafeBufferPointer(rebasing: $0.prefix(Self.headerSize))) }) {
            self = packet
        } else {
            self = Array(bytes.prefix(Self.headerSize)).withUnsafeBufferPointer { Self(header: $0) }
        }
    }

    /// Decodes a header from exactly 48 bytes.
    private init(header b: UnsafeBufferPointer<UInt8>) {
        func u32(_ at: Int) -> UInt32 {
            UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
        }
        func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) << 32 | UInt64(u32(at + 4)) }
        self.leap = LeapIndicator(rawValue: b[0] >> 6)!
        self.version = (b[0] >> 3) & 0x7
        self.mode = Mode(rawValue: b[0] & 0x7)!
        self.stratum = b[1]
        self.poll = Int8(bitPattern: b[2])
        self.precision = Int8(bitPattern: b[3])
        self.rootDelay = NTPShortFormat(rawValue: u32(4))
        self.rootDispersion = NTPShortFormat(rawValue: u32(8))
        self.referenceID = u32(12)
        self.referenceTimestamp = NTPTimestamp(rawValue: u64(16))
        self.originTimestamp = NTPTimestamp(rawValue: u64(24))
        self.receiveTimestamp = NTPTimestamp(rawValue: u64(32))
        self.transmitTimestamp = NTPTimestamp(rawValue: u64(40))
    }

    /// The 48 bytes of this header in network byte order.
    public func encoded() -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.headerSize)
        out.append(leap.rawValue << 6 | (version & 0x7) << 3 | mode.rawValue)
        out.append(stratum)
        out.append(UInt8(bitPattern: poll))
        out.append(UInt8(bitPattern: precision))
        func put(_ v: UInt32) {
            out.append(UInt8(truncatingIfNeeded: v >> 24))
            out.append(UInt8(truncatingIfNeeded: v >> 16))
            out.append(UInt8(truncatingIfNeeded: v >> 8))
            out.append(UInt8(truncatingIfNeeded: v))
        }
        put(rootDelay.rawValue)
        put(rootDispersion.rawValue)
        put(referenceID)
        for t in [referenceTimestamp, originTimestamp, receiveTimestamp, transmitTimestamp] {
            put(UInt32(truncatingIfNeeded: t.rawValue >> 32))
            put(UInt32(truncatingIfNeeded: t.rawValue))
        }
        return out
    }

    /// The kiss code of a kiss-o'-death packet (stratum 0), or `nil` for any other packet.
    public var kissCode: KissCode? {
        stratum == 0 ? KissCode(rawValue: referenceID) : nil
    }
}
