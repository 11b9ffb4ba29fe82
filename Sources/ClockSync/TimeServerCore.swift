/// The time server's logic without I/O: given a datagram and the time it arrived, what to send back.
///
/// ``TimeServer`` wraps it in a SwiftNIO UDP channel. The core answers a valid mode-3 request with a
/// mode-4 response (RFC 5905, RFC 4330 section 6): version copied from the request, origin = the
/// request's transmit timestamp, receive = the arrival time, poll copied, and this server's leap,
/// stratum, precision, root delay/dispersion and reference ID. The transmit timestamp is left for the
/// caller to fill in as late as possible. Requests over the per-client rate limit get a RATE
/// kiss-o'-death (at most one per second per client, the rest are dropped). Anything else (short or
/// malformed datagrams, other modes) is dropped without an answer.
///
/// ```swift
/// var core = TimeServerCore(configuration: .init())
/// switch core.handle(datagram: bytes, from: client, receivedAt: t2, now: seconds) {
/// case .respond(var response):
///     response.transmitTimestamp = referenceNow()
///     send(response.encoded())
/// case .drop:
///     break
/// }
/// ```
public struct TimeServerCore: Sendable {
    /// What the server says about itself, and its limits.
    public struct Configuration: Sendable, Hashable {
        /// The stratum announced (1: a primary reference).
        public var stratum: UInt8 = 1
        /// The reference ID announced (a 4-character code at stratum 1).
        public var referenceID: KissCode = KissCode("LOCL")
        /// The precision exponent announced (log2 seconds).
        public var precision: Int8 = -20
        /// The root delay announced, in seconds.
        public var rootDelay: Double = 0
        /// The root dispersion announced, in seconds.
        public var rootDispersion: Double = 0.000_01
        /// The per-client rate limit, or `nil` to answer everything.
        ///
        /// The default (a burst of 32, then 8 per second) lets chrony's `iburst` and coplay's own
        /// query bursts through untouched while stopping floods.
        public var rateLimit: RateLimiter<ClientKey>.Configuration? = .init(burst: 32, rate: 8)

        /// Creates the default configuration.
        public init() {}
    }

    /// What to do with a datagram.
    public enum Action: Sendable, Hashable {
        /// Send this packet back to the client (after setting its transmit timestamp).
        case respond(NTPPacket)
        /// Send nothing.
        case drop(DropReason)
    }

    /// Why a datagram got no answer.
    public enum DropReason: Sendable, Hashable {
        /// It did not decode or is not a valid client request.
        case invalid
        /// The client is over its rate limit and was already sent a kiss-o'-death recently.
        case rateLimited
    }

    /// The configuration in use.
    public let configuration: Configuration
    private var limiter: RateLimiter<ClientKey>?

    /// Creates a server core.
    ///
    /// - Parameter configuration: What to announce and how to limit.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        self.limiter = configuration.rateLimit.map { RateLimiter(configuration: $0) }
    }

    /// Decides the answer to one datagram.
    ///
    /// - Parameters:
    ///   - datagram: The received bytes.
    ///   - client: Who sent it (for rate limiting).
    ///   - receivedAt: The server's reference time when the datagram arrived (T2).
    ///   - now: Monotonic seconds, for the rate limiter.
    public mutating func handle(
        datagram: some Collection<UInt8>,
        from client: ClientKey,
        receivedAt: NTPTimestamp,
        now: Double
    ) -> Action {
        guard let request = try? NTPPacket(bytes: datagram), (try? request.validateRequest()) != nil else {
            return .drop(.invalid)
        }
        var response = NTPPacket(
            leap: .noWarning,
            version: request.version,
            mode: .server,
            stratum: configuration.stratum,
            poll: request.poll,
            precision: configuration.precision,
            rootDelay: NTPShortFormat(seconds: configuration.rootDelay),
            rootDispersion: NTPShortFormat(seconds: configuration.rootDispersion),
            referenceID: configuration.referenceID.rawValue,
            referenceTimestamp: NTPTimestamp(seconds: receivedAt.seconds, fraction: 0),
            originTimestamp: request.transmitTimestamp,
            receiveTimestamp: receivedAt,
            transmitTimestamp: .zero
        )
        switch limiter?.decide(client, now: now) ?? .allow {
        case .allow:
            return .respond(response)
        case .kiss:
            // RFC 5905 section 7.4: stratum 0, the code in the reference ID, leap "unsynchronized";
            // the timestamps still answer the request so the client can match it.
            response.stratum = 0
            response.leap = .unsynchronized
            response.referenceID = KissCode.rate.rawValue
            response.referenceTimestamp = .zero
            return .respond(response)
        case .drop:
            return .drop(.rateLimited)
        }
    }
}
