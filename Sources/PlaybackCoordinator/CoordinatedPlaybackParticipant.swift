/// Another member of coordinated playback as the local coordinator knows it: its id, its announced
/// name, and why it is suspended, if it is.
///
/// Like `AVCoordinatedPlaybackParticipant`. Every member builds the same list from the channel's
/// ordered messages (joins, leaves, suspension notices), except for the moment a message is in
/// flight. Read it from ``PlaybackCoordinator/otherParticipants``; the `joined`, `left`,
/// `suspensionBegan` and `suspensionEnded` events on ``PlaybackCoordinator/events`` say when it
/// changes.
///
/// ```swift
/// for participant in await coordinator.otherParticipants where participant.isSuspended {
///     print("\(participant.label) is \(participant.suspensionReasons)")   // "ben is [buffering]"
/// }
/// ```
public struct CoordinatedPlaybackParticipant: Hashable, Sendable, Identifiable {
    /// One open suspension of a participant.
    public struct Suspension: Hashable, Sendable {
        /// The suspension's identifier (as in the `suspension` key of its events).
        public var id: String
        /// Why the participant suspended.
        public var reason: SuspensionReason

        /// Creates a suspension record.
        public init(id: String, reason: SuspensionReason) {
            self.id = id
            self.reason = reason
        }
    }

    /// The participant's id on the channel (never its display name).
    public var id: PlaybackParticipantID
    /// The display name it announced, once its first presence report arrived.
    public var name: String?
    /// Its suspensions whose begin the channel delivered and whose end it did not, in the order they
    /// began.
    public var suspensions: [Suspension]

    /// Creates a participant.
    ///
    /// - Parameters:
    ///   - id: its channel id.
    ///   - name: its announced display name, if known.
    ///   - suspensions: its open suspensions, oldest first.
    public init(id: PlaybackParticipantID, name: String? = nil, suspensions: [Suspension] = []) {
        self.id = id
        self.name = name
        self.suspensions = suspensions
    }

    /// Why it is suspended (empty when it takes part in coordinated playback).
    public var suspensionReasons: [SuspensionReason] { suspensions.map(\.reason) }

    /// Whether it has a suspension open.
    public var isSuspended: Bool { !suspensions.isEmpty }

    /// How to name it for people: its name when known, its id otherwise.
    public var label: String { name ?? id.rawValue }
}
