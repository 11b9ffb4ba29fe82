/// What one link direction did.
package struct LinkCounters: Sendable, Hashable, Codable {
    /// Packets (datagrams or chunks) scheduled for delivery.
    package var forwarded = 0
    /// Bytes scheduled for delivery.
    package var bytes = 0
    /// Datagrams dropped.
    package var dropped = 0
    /// Stream chunks delayed by the loss penalty.
    package var penalized = 0

    /// Creates zero counters.
    package init() {}

    static func + (a: LinkCounters, b: LinkCounters) -> LinkCounters {
        var sum = a
        sum.forwarded += b.forwarded
        sum.bytes += b.bytes
        sum.dropped += b.dropped
        sum.penalized += b.penalized
        return sum
    }
}
