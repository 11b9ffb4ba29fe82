import PlaybackCoordinator

/// The coordinator's participant id, named apart from GroupSessions' `ParticipantID` (the module
/// `PlaybackCoordinator` also holds an actor of that name, so it cannot qualify the type).
typealias PlaybackParticipantID = ParticipantID
