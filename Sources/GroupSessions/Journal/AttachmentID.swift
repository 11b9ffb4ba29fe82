import Foundation
import NIOCore

/// The 128-bit identifier of a journal attachment, chosen at random by its uploader.
///
/// On the wire it is 16 bytes, big-endian. It is public (the relay sees it); what the
/// attachment holds is not.
///
/// ```swift
/// let id = AttachmentID.random()
/// print(id)            // 32 lowercase hex digits
/// ```
public struct AttachmentID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The first 8 bytes.
    public var high: UInt64
    /// The last 8 bytes.
    public var low: UInt64

    /// Wraps two halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A fresh random identifier from the system's secure generator.
    public static func random() -> AttachmentID {
        var rng = SystemRandomNumberGenerator()
        return AttachmentID(high: rng.next(), low: rng.next())
    }

    /// The same bytes as a `UUID`.
    public var uuid: UUID {
        let b = bytes
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// The identifier whose bytes are `uuid`'s.
    public init(uuid: UUID) {
        var buffer = ByteBuffer()
        _ = withUnsafeBytes(of: uuid.uuid) { buffer.writeBytes($0) }
        self.init(high: buffer.readInteger()!, low: buffer.readInteger()!)
    }

    /// Parses 32 hexadecimal digits; `nil` for anything else.
    public init?(hex: some StringProtocol) {
        guard let session = SessionID(hex: hex) else { return nil }
        self.init(high: session.high, low: session.low)
    }

    /// The 16 bytes, big-endian.
    public var bytes: [UInt8] { SessionID(high: high, low: low).bytes }

    /// Appends the 16 bytes to `buffer`.
    func write(to buffer: inout ByteBuffer) {
        buffer.writeInteger(high)
        buffer.writeInteger(low)
    }

    /// Reads 16 bytes from `buffer`.
    static func read(from buffer: inout ByteBuffer) -> AttachmentID? {
        guard let high = buffer.readInteger(as: UInt64.self), let low = buffer.readInteger(as: UInt64.self) else { return nil }
        return AttachmentID(high: high, low: low)
    }

    public static func < (lhs: AttachmentID, rhs: AttachmentID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }

    /// 32 lowercase hexadecimal digits.
    public var description: String { SessionID(high: high, low: low).description }
}
