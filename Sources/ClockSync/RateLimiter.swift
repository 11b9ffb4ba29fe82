/// Per-client token buckets (sans-IO): how the time server decides whether to answer a request.
///
/// Each client (keyed by IP address) has a bucket of ``Configuration/burst`` tokens that refills at
/// ``Configuration/rate`` tokens per second; each answered request costs one token. The table of
/// clients is bounded (``Configuration/maximumClients``): idle clients are forgotten first.
///
/// ```swift
/// var limiter = RateLimiter<String>(configuration: .init(burst: 4, rate: 1))
/// let ok = limiter.allow("192.0.2.1", now: 0)
/// ```
public struct RateLimiter<Key: Hashable & Sendable>: Sendable {
    /// The limits.
    public struct Configuration: Sendable, Hashable {
        /// The bucket size: how many requests a client may send back to back.
        public var burst: Double
        /// The sustained rate, in requests per second.
        public var rate: Double
        /// The most clients tracked at once.
        public var maximumClients: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - burst: The bucket size.
        ///   - rate: The refill rate in requests per second.
        ///   - maximumClients: The most clients tracked at once.
        public init(burst: Double, rate: Double, maximumClients: Int = 65_536) {
            self.burst = burst
            self.rate = rate
            self.maximumClients = maximumClients
        }
    }

    /// What to do with a request.
    public enum Decision: Sendable, Hashable {
        /// Answer it.
        case allow
        /// Over the limit: answer with a RATE kiss-o'-death.
        case kiss
        /// Over the limit, and a kiss-o'-death was sent recently: drop it silently.
        case drop
    }

    private struct Bucket: Sendable {
        var tokens: Double
        var updated: Double
        var lastKiss: Double
    }

    /// The limits in use.
    public let configuration: Configuration
    private var buckets: [Key: Bucket] = [:]

    /// Creates a limiter with empty history.
    ///
    /// - Parameter configuration: The limits.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The number of clients currently tracked.
    public var trackedClients: Int { buckets.count }

    /// Whether `key` may be answered at time `now`.
    ///
    /// - Parameters:
    ///   - key: The client's identity.
    ///   - now: The current time in seconds on any monotonic scale.
    public mutating func allow(_ key: Key, now: Double) -> Bool {
        decide(key, now: now) == .allow
    }

    /// Decides what to do with a request from `key` at time `now`, spending a token when allowed.
    /// Kiss-o'-death answers are themselves limited to one per second per client.
    ///
    /// - Parameters:
    ///   - key: The client's identity.
    ///   - now: The current time in seconds on any monotonic scale.
    public mutating func decide(_ key: Key, now: Double) -> Decision {
        var bucket = buckets[key] ?? Bucket(tokens: configuration.burst, updated: now, lastKiss: -.infinity)
        bucket.tokens = min(configuration.burst, bucket.tokens + max(0, now - bucket.updated) * configuration.rate)
        bucket.updated = now
        let decision: Decision
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            decision = .allow
        } else if now - bucket.lastKiss >= 1 {
            bucket.lastKiss = now
            decision = .kiss
        } else {
            decision = .drop
        }
        if buckets[key] == nil, buckets.count >= configuration.maximumClients {
            evict(now: now)
        }
        buckets[key] = bucket
        return decision
    }

    /// Forgets clients whose buckets are full again; if none are, forgets the longest-idle half.
    private mutating func evict(now: Double) {
        let refill = configuration.rate > 0 ? configuration.burst / configuration.rate : .infinity
        buckets = buckets.filter { now - $0.value.updated < refill }
        if buckets.count >= configuration.maximumClients {
            let keep = buckets.sorted { $0.value.updated > $1.value.updated }.prefix(configuration.maximumClients / 2)
            buckets = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
