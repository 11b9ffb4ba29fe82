/// What a relay persists about one session so it can resume it after a restart.
///
/// Everything in a snapshot is opaque to the relay or sealed by the members: the join token's
/// hash (never the token), sequence numbers, participant ids and sealed data frames. A
/// `SessionHub` produces snapshots (`SessionHub.snapshot(of:)`, and metadata-only ones in
/// ``SessionStoreEvent/updated(_:)``) and is rebuilt from them
/// (`SessionHub.restore(_:now:)`).
///
/// ```swift
/// if let snapshot = hub.snapshot(of: id) { try store.compact(snapshot) }
/// ```
public struct SessionSnapshot: Sendable {
    /// The session.
    public var session: SessionID
    /// SHA-256 of the session's join token.
    public var tokenHash: [UInt8]
    /// The last sequence number stamped.
    public var sequence: UInt64
    /// Stamps at or below this one are no longer in ``log``.
    public var logFloor: UInt64
    /// Participants that have joined (connected or away), in join order.
    public var joined: [ParticipantID]
    /// Per sender, the highest sender sequence the relay stamped (duplicates at or below it are dropped).
    public var senderHigh: [ParticipantID: UInt64]
    /// The latest retained data frame per key (empty in metadata-only snapshots).
    public var retained: [Frame]
    /// The resume log, oldest first (empty in metadata-only snapshots).
    public var log: [Frame]

    /// Creates a snapshot.
    public init(
        session: SessionID, tokenHash: [UInt8], sequence: UInt64, logFloor: UInt64, joined: [ParticipantID],
        senderHigh: [ParticipantID: UInt64], retained: [Frame] = [], log: [Frame] = []
    ) {
        self.session = session
        self.tokenHash = tokenHash
        self.sequence = sequence
        self.logFloor = logFloor
        self.joined = joined
        self.senderHigh = senderHigh
        self.retained = retained
        self.log = log
    }
}
