/// A member of a group session.
public struct Participant: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// The participant's identifier, unique within the session.
    public let id: ParticipantID

    /// Wraps an identifier.
    public init(id: ParticipantID) { self.id = id }

    public var description: String { "Participant(\(id))" }
}
