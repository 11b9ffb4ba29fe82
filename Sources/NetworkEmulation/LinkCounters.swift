/// What one link direction did.
public struct LinkCounters: Sendable, Hashable, Codable {
    /// Packets (datagrams or chunks) scheduled for delivery.
    public var forwarded = 0
    /// Bytes scheduled for delivery.
    public var bytes = 0
    /// Datagrams dropped.
    public var dropped = 0
    /// Stream chunks delayed by the loss penalty.
    public var penalized = 0

    /// Creates zero counters.
    public init() {}

    static func + (a: LinkCounters, b: LinkCounters) -> LinkCounters {
        var sum = a
        sum.forwarded += b.forwarded
        sum.bytes += b.bytes
        sum.dropped += b.dropped
        sum.penalized += b.penalized
        return sum
    }
}
