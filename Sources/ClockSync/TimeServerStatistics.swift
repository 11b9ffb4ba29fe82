/// Counters of what a ``TimeServer`` did since it started.
public struct TimeServerStatistics: Sendable, Hashable {
    /// Requests answered with a time.
    public var answered: Int
    /// Requests answered with a RATE kiss-o'-death.
    public var kissesSent: Int
    /// Datagrams dropped as invalid (garbage, wrong mode, ...).
    public var invalid: Int
    /// Requests dropped for exceeding the rate limit.
    public var rateLimited: Int
}
