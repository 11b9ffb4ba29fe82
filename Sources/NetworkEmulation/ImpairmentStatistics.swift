/// What an ``ImpairmentProxy`` has forwarded so far.
public struct ImpairmentStatistics: Sendable, Hashable, Codable {
    /// UDP client-to-target counters.
    public var udpUpstream = LinkCounters()
    /// UDP target-to-client counters.
    public var udpDownstream = LinkCounters()
    /// TCP client-to-target counters (all connections).
    public var tcpUpstream = LinkCounters()
    /// TCP target-to-client counters (all connections).
    public var tcpDownstream = LinkCounters()
    /// TCP connections accepted.
    public var tcpConnections = 0
    /// UDP clients seen.
    public var udpClients = 0
    /// UDP datagrams dropped because ``ImpairmentConfiguration/maxUDPClients`` was reached.
    public var udpRejected = 0

    /// Creates zero statistics.
    public init() {}
}
