/// One reading of a media player's playback position, taken over its IPC channel.
///
/// The request is written at `sent` and the reply read at `received` (both CLOCK_REALTIME seconds);
/// the position is attributed to the midpoint, so its timing error is at most half the round trip
/// (``uncertainty``), assuming the player answers from a position it computes when it handles the request.
public struct PositionSample: Sendable, Hashable, Codable {
    /// The player.
    public var player: String
    /// When the request was written (CLOCK_REALTIME seconds).
    public var sent: Double
    /// When the reply was read (CLOCK_REALTIME seconds).
    public var received: Double
    /// The playback position in seconds (`audio-pts`, or `time-pos` when there is none), if available.
    public var position: Double?
    /// Whether the player was paused, if known.
    public var paused: Bool?

    /// Creates a sample.
    public init(player: String, sent: Double, received: Double, position: Double?, paused: Bool?) {
        self.player = player
        self.sent = sent
        self.received = received
        self.position = position
        self.paused = paused
    }

    /// The instant the position is attributed to: the midpoint of request and reply.
    public var realtime: Double { (sent + received) / 2 }

    /// Half the round trip: the bound on the attribution error, in seconds.
    public var uncertainty: Double { (received - sent) / 2 }
}
