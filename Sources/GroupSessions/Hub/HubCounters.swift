/// Running totals a `SessionHub` keeps for metrics.
public struct HubCounters: Hashable, Sendable {
    /// Frames received from clients.
    public var framesReceived: UInt64 = 0
    /// Data frames forwarded (once per recipient).
    public var framesForwarded: UInt64 = 0
    /// Payload bytes forwarded (once per recipient).
    public var bytesForwarded: UInt64 = 0
    /// Frames refused (each answered with an error frame).
    public var framesRefused: UInt64 = 0
    /// Unreliable frames dropped for slow recipients (counted by the shell).
    public var framesDropped: UInt64 = 0
    /// Data frames a resuming sender sent again that were already stamped (dropped quietly).
    public var duplicatesDropped: UInt64 = 0
    /// Members resumed after a lost connection.
    public var resumes: UInt64 = 0
    /// Connections closed because nothing arrived on them for ``HubLimits/idleTimeout``.
    public var idleConnectionsClosed: UInt64 = 0
    /// Retained frames dropped to make room for a new key (``FrameFlags/evictable``).
    public var retainedEvicted: UInt64 = 0

    /// All zero.
    public init() {}

    /// Adds another hub's totals (a relay runs one hub per session).
    public static func += (lhs: inout HubCounters, rhs: HubCounters) {
        lhs.framesReceived += rhs.framesReceived
        lhs.framesForwarded += rhs.framesForwarded
        lhs.bytesForwarded += rhs.bytesForwarded
        lhs.framesRefused += rhs.framesRefused
        lhs.framesDropped += rhs.framesDropped
        lhs.duplicatesDropped += rhs.duplicatesDropped
        lhs.resumes += rhs.resumes
        lhs.idleConnectionsClosed += rhs.idleConnectionsClosed
        lhs.retainedEvicted += rhs.retainedEvicted
    }
}
