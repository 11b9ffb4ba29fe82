/// The 64-bit identifier of one participant in a session.
///
/// Each member picks a random identifier when it joins; the relay refuses a second live
/// connection with the same identifier in the same session, and stamps the identifier of the
/// connection on every frame it forwards, so a member cannot speak as another one.
/// Zero is reserved for the relay itself.
public struct ParticipantID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The raw identifier.
    public var rawValue: UInt64

    /// The relay's own identifier, used as the sender of frames the relay originates.
    public static let relay = ParticipantID(rawValue: 0)

    /// Wraps a raw identifier.
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A fresh random, non-zero identifier.
    public static func random() -> ParticipantID {
        var rng = SystemRandomNumberGenerator()
        while true {
            let value: UInt64 = rng.next()
            if value != 0 { return ParticipantID(rawValue: value) }
        }
    }

    public static func < (lhs: ParticipantID, rhs: ParticipantID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Sixteen hexadecimal digits.
    public var description: String {
        let s = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}
