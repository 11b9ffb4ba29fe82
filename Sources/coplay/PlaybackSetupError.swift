import GroupSessions

/// Why `coplay host`, `join`, `control` or `demo` could not start or had to stop.
struct PlaybackSetupError: Error, Sendable, CustomStringConvertible {
    private enum Code: Sendable {
        case relayUnreachable
        case relayTransport
        case inviteRefused
        case mediaMismatch
        case noVideoFrames
        case noPlaybackState
        case commandNotConfirmed
        case sessionLost
        case notWaited
        case interrupted
    }

    private let code: Code
    let description: String

    private init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// Nothing answers at the relay's address.
    static func relayUnreachable(_ address: String, _ error: any Error) -> Self {
        Self(.relayUnreachable, "cannot reach the relay at \(address): \(error)")
    }

    /// The relay answered, but not as the invite says it would (TLS or not, its certificate, its key).
    static func relayTransport(_ error: RelayTransportError) -> Self {
        Self(.relayTransport, error.description)
    }

    /// The relay refused the invite: a wrong secret, or a session that no longer exists.
    static func inviteRefused(_ address: String, _ error: any Error) -> Self {
        Self(.inviteRefused, "the relay at \(address) refused this invite (wrong secret, or the session has ended): \(error)")
    }

    /// The local file is not the session's media.
    static func mediaMismatch(file: String, local: String, session: String, title: String) -> Self {
        Self(.mediaMismatch, """
            \(file) is not the session's media: its fingerprint is \(local), the session plays "\(title)" \
            with fingerprint \(session)
            """)
    }

    /// The file has no video frames to present.
    static func noVideoFrames(_ file: String) -> Self {
        Self(.noVideoFrames, "\(file) has no video frames to play")
    }

    /// A control command found no playback state in the session.
    static var noPlaybackState: Self {
        Self(.noPlaybackState, "the session has no playback state yet (is its host running?)")
    }

    /// The relay did not confirm a control command in time.
    static func commandNotConfirmed(_ command: String) -> Self {
        Self(.commandNotConfirmed, "the relay did not confirm '\(command)' in time")
    }

    /// `control suspend`: the group did not wait for the suspension.
    static func notWaited(_ detail: String) -> Self {
        Self(.notWaited, detail)
    }

    /// `control suspend` was stopped by SIGINT/SIGTERM; `detail` says what was done before leaving.
    static func interrupted(_ detail: String) -> Self {
        Self(.interrupted, "interrupted: \(detail)")
    }

    /// The session ended for this member other than by leaving or by someone ending it: the relay
    /// stayed away longer than the reconnect policy allows, or refused to resume.
    static func sessionLost(_ reason: GroupSessionInvalidationReason) -> Self {
        Self(.sessionLost, "the session ended: \(reason)")
    }
}
