/// The limits a `SessionHub` enforces (`docs/protocol.md`, "Limits").
public struct HubLimits: Hashable, Sendable {
    /// Largest data payload (route + sealed box) forwarded. Default 300 KiB: a 256 KiB message
    /// plus envelope, route and tag.
    public var maximumPayload: Int = 300 * 1024
    /// Sustained data frames per second per connection.
    public var ratePerSecond: Int = 2_000
    /// Data frames a connection may send at once above the sustained rate.
    public var burst: Int = 20_000
    /// Connections the hub holds at once (all sessions).
    public var maximumConnections: Int = 10_000
    /// Members (admitted connections) per session.
    public var maximumMembersPerSession: Int = 2_000
    /// Distinct retained keys per session.
    public var maximumRetainedKeys: Int = 256
    /// Attachment size, journal quota and transfer limits (`JournalLimits`).
    public var journal = JournalLimits()
    /// How long a joined member whose connection dropped stays a member (no `left`) waiting to
    /// resume; zero announces `left` at once.
    public var presenceGrace: Duration = .seconds(15)
    /// How long a connection may send nothing at all (not even a `ping`) before the hub closes
    /// it, as if it had dropped (a joined member then gets its ``presenceGrace``); zero never
    /// closes an idle connection. coplay members ping every 5 s, so only a dead path or a
    /// client that does not ping reaches it.
    public var idleTimeout: Duration = .seconds(45)
    /// Stamped frames a session keeps for resuming members.
    public var resumeLogFrames: Int = 100_000
    /// Payload bytes a session keeps for resuming members.
    public var resumeLogBytes: Int = 64 << 20

    /// The defaults above.
    public init() {}
}
