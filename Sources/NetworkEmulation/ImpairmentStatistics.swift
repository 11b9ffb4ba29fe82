/// What an ``ImpairmentProxy`` has forwarded so far.
package struct ImpairmentStatistics: Sendable, Hashable, Codable {
    /// UDP client-to-target counters.
    package var udpUpstream = LinkCounters()
    /// UDP target-to-client counters.
    package var udpDownstream = LinkCounters()
    /// TCP client-to-target counters (all connections).
    package var tcpUpstream = LinkCounters()
    /// TCP target-to-client counters (all connections).
    package var tcpDownstream = LinkCounters()
    /// TCP connections accepted.
    package var tcpConnections = 0
    /// UDP clients seen.
    package var udpClients = 0
    /// UDP datagrams dropped because ``ImpairmentConfiguration/maxUDPClients`` was reached.
    package var udpRejected = 0

    /// Creates zero statistics.
    package init() {}
}
