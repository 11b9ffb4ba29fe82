/// Identifies one participant of coordinated playback (a stable, printable id chosen by the channel).
///
/// Named apart from GroupSessions' `ParticipantID` (the relay's 64-bit member id): a file that
/// imports both modules names each without qualification. Over a group session the coordinator's id
/// is the session id in 16 hex digits (``GroupSessionCoordinationChannel/participant(_:)``); in tests
/// and in-memory groups any text. It is an id, never a display name: names travel separately (see
/// ``CoordinatedPlaybackParticipant/name``).
///
/// ```swift
/// let me: PlaybackParticipantID = "alice"
/// ```
public struct PlaybackParticipantID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The participant's identifier text.
    public var rawValue: String

    /// Creates an identifier.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static func < (lhs: PlaybackParticipantID, rhs: PlaybackParticipantID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
