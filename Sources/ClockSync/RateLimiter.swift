import RateLimiting

/// Per-client token buckets (sans-IO): how the time server decides whether to answer a request.
/// Each client's bucket is the package's one `TokenBucket`; this type adds the table of clients and
/// the kiss-o'-death policy.
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

    private struct Client: Sendable {
        var bucket: TokenBucket
        var lastKiss: Double
    }

    /// The limits in use.
    public let configuration: Configuration
    private var clients: [Key: Client] = [:]

    /// Creates a limiter with empty history.
    ///
    /// - Parameter configuration: The limits.
    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The number of clients currently tracked.
    public var trackedClients: Int { clients.count }

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
        let time = Duration.seconds(now)
        var client = clients[key]
            ?? Client(bucket: TokenBucket(capacity: configuration.burst, rate: configuration.rate, now: time), lastKiss: -.infinity)
        let decision: Decision
        if client.bucket.take(now: time) {
            decision = .allow
        } else if now - client.lastKiss >= 1 {
            client.lastKiss = now
            decision = .kiss
        } else {
            decision = .drop
        }
        if clients[key] == nil, clients.count >= configuration.maximumClients {
            evict(now: time)
        }
        clients[key] = client
        return decision
    }

    /// Forgets clients whose buckets are full again; if none are, forgets the longest-idle half.
    private mutating func evict(now: Duration) {
        clients = clients.filter { !$0.value.bucket.isFull(at: now) }
        if clients.count >= configuration.maximumClients {
            let keep = clients.sorted { $0.value.bucket.updated > $1.value.bucket.updated }.prefix(configuration.maximumClients / 2)
            clients = Dictionary(uniqueKeysWithValues: keep.map { ($0.key, $0.value) })
        }
    }
}
