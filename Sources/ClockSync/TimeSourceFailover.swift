/// When a ``TimeClient`` with several time servers gives up on the one it polls and moves to the
/// next (sans-IO: it sees only the outcome of each poll).
///
/// The servers are the nodes of one relay service, in the order of the invite; the client starts
/// with the first and cycles through the list (after the last comes the first again), as the relay
/// connection does. It moves on when the current server has left
/// ``Configuration/maximumUnanswered`` polls in a row unanswered while polling regularly, or
/// ``Configuration/maximumUnansweredAtStart`` requests in a row during an initial burst. After an
/// unanswered poll the next one goes within ``Configuration/retryInterval``, so a dead server is
/// noticed within a few seconds whatever the poll interval had grown to (about 2.75 s after the
/// first unanswered poll with the defaults and a 500 ms timeout). An answer of any kind (a sample,
/// good or not, or a RATE kiss-o'-death) resets the count. With a single server it never moves and
/// never hurries a poll.
///
/// Moving on does not touch the ``SyncedClock``: the client starts a new filter for the new server,
/// and the clock slews from its current mapping to the new server's estimate (or steps, above its
/// ``SyncedClock/Configuration/stepThreshold``), so reference time stays continuous.
///
/// ```swift
/// var failover = TimeSourceFailover(sourceCount: 3)
/// switch failover.record(.timeout) {
/// case .keep: break                      // poll on schedule
/// case .retrySoon(let wait): _ = wait    // poll again within `wait`
/// case .moveOn(let index): _ = index     // poll server `index` from now on
/// }
/// ```
public struct TimeSourceFailover: Sendable, Hashable {
    /// When to give up on a server.
    public struct Configuration: Sendable, Hashable {
        /// Unanswered polls in a row, while polling regularly, after which the client moves on.
        public var maximumUnanswered: Int = 4
        /// The longest wait before the next poll after an unanswered one (a poll scheduled sooner
        /// stays where it is).
        public var retryInterval: Duration = .milliseconds(250)
        /// Unanswered requests in a row, during an initial burst, after which the client tries the
        /// next server: with the playback burst's 8 requests in flight and a 500 ms timeout, a dead
        /// first node costs about 0.65 s.
        public var maximumUnansweredAtStart: Int = 8

        /// Creates the default configuration.
        public init() {}
    }

    /// What the client does next.
    public enum Decision: Sendable, Hashable {
        /// Poll the same server on schedule.
        case keep
        /// Poll the same server again, within this wait at most.
        case retrySoon(Duration)
        /// Poll the server at this index from now on (with a new filter and a new burst).
        case moveOn(to: Int)
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// How many servers there are.
    public let sourceCount: Int
    /// The index of the server polled now.
    public private(set) var current = 0
    /// Unanswered polls in a row from the current server.
    public private(set) var unansweredInARow = 0

    /// Creates a policy that starts with the first of `sourceCount` servers.
    ///
    /// - Parameters:
    ///   - sourceCount: How many servers the client may use (at least 1).
    ///   - configuration: When to give up on one.
    public init(sourceCount: Int, configuration: Configuration = .init()) {
        self.sourceCount = max(1, sourceCount)
        self.configuration = configuration
    }

    /// Records the outcome of a regular poll (``TimeClient/run()``).
    ///
    /// - Parameter outcome: What the poll produced; ``PollScheduler/Outcome/timeout`` is an unanswered
    ///   poll (no answer in time, an invalid answer, or a transport error).
    /// - Returns: What to do next.
    public mutating func record(_ outcome: PollScheduler.Outcome) -> Decision {
        record(outcome, limit: configuration.maximumUnanswered, retry: true)
    }

    /// Records the outcome of one request of an initial burst
    /// (``TimeClient/converge(target:minimumSamples:maximumSamples:interval:maximumInFlight:)``,
    /// ``TimeClient/measure(samples:interval:)``).
    ///
    /// - Parameter outcome: What the request produced.
    /// - Returns: ``Decision/moveOn(to:)`` once ``Configuration/maximumUnansweredAtStart`` requests in a
    ///   row went unanswered (and there is another server), else ``Decision/keep``.
    public mutating func recordDuringBurst(_ outcome: PollScheduler.Outcome) -> Decision {
        record(outcome, limit: configuration.maximumUnansweredAtStart, retry: false)
    }

    /// Moves to the next server at once (the current one refused service, or could not be reached
    /// at all), and returns its index (the same server when there is only one).
    public mutating func moveOn() -> Int {
        current = (current + 1) % sourceCount
        unansweredInARow = 0
        return current
    }

    private mutating func record(_ outcome: PollScheduler.Outcome, limit: Int, retry: Bool) -> Decision {
        guard outcome == .timeout else {
            unansweredInARow = 0
            return .keep
        }
        guard sourceCount > 1 else { return .keep }
        unansweredInARow += 1
        if unansweredInARow >= max(1, limit) { return .moveOn(to: moveOn()) }
        return retry ? .retrySoon(configuration.retryInterval) : .keep
    }
}
