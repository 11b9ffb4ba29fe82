import GroupSessions

/// A snapshot of a relay's counters, rendered as Prometheus text by ``prometheusText``.
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

    /// The Prometheus text exposition format (version 0.0.4).
    public var prometheusText: String {
        var lines: [String] = []
        func metric(_ name: String, _ type: String, _ help: String, _ value: some BinaryInteger) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(type)")
            lines.append("\(name) \(value)")
        }
        metric("coplay_relay_connections", "gauge", "Open connections.", connections)
        metric("coplay_relay_sessions", "gauge", "Live sessions.", sessions)
        metric("coplay_relay_participants", "gauge", "Joined participants over all sessions.", participants)
        metric("coplay_relay_frames_received_total", "counter", "Frames received from clients.", counters.framesReceived)
        metric("coplay_relay_frames_forwarded_total", "counter", "Data frames forwarded, once per recipient.", counters.framesForwarded)
        metric("coplay_relay_bytes_forwarded_total", "counter", "Data payload bytes forwarded, once per recipient.", counters.bytesForwarded)
        metric("coplay_relay_frames_refused_total", "counter", "Frames refused with an error frame.", counters.framesRefused)
        metric("coplay_relay_frames_dropped_total", "counter", "Unreliable frames dropped for slow recipients.", counters.framesDropped)
        metric("coplay_relay_slow_consumers_total", "counter", "Connections closed for not reading.", slowConsumers)
        metric("coplay_relay_idle_connections_closed_total", "counter", "Connections closed after sending nothing for the idle timeout.",
               counters.idleConnectionsClosed)
        return lines.joined(separator: "\n") + "\n"
    }
}
