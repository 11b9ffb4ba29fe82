import GroupSessions

/// A snapshot of a relay's counters (``RelayServer/metrics``); `RelayInstruments` turns them into
/// swift-metrics for whichever backend is configured.
public struct RelayMetrics: Hashable, Sendable {
    /// Open connections.
    public var connections: Int
    /// Live sessions.
    public var sessions: Int
    /// Joined participants over all sessions.
    public var participants: Int
    /// Totals since start.
    public var counters: HubCounters
    /// Connections closed as slow consumers.
    public var slowConsumers: UInt64
    /// Error frames sent, by code.
    public var errorsSent: [RelayErrorCode: UInt64] = [:]
}
