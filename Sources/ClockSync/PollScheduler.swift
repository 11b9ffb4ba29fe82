/// When a ``TimeClient`` polls next (sans-IO): an initial burst, then an adaptive interval.
///
/// The burst sends ``Configuration/burstCount`` requests ``Configuration/burstInterval`` apart so a
/// first estimate exists within a second or two. After it, the interval starts at
/// ``Configuration/minimumInterval`` and doubles after ``Configuration/stableSamplesToLengthen`` good
/// samples in a row, up to ``Configuration/maximumInterval``; a bad sample (an outlier) or a timeout
/// halves it again. A RATE kiss-o'-death ends the burst and doubles the interval (at least to four
/// times the minimum), so the client backs off as RFC 5905 section 7.4 asks.
///
/// ```swift
/// var scheduler = PollScheduler()
/// var wait = scheduler.start()
/// // ... poll, then:
/// wait = scheduler.next(after: .goodSample)
/// ```
public struct PollScheduler: Sendable, Hashable {
    /// The intervals.
    public struct Configuration: Sendable, Hashable {
        /// Requests in the initial burst.
        public var burstCount: Int = 8
        /// The gap between burst requests.
        public var burstInterval: Duration = .milliseconds(200)
        /// The shortest regular poll interval.
        public var minimumInterval: Duration = .seconds(2)
        /// The longest regular poll interval.
        public var maximumInterval: Duration = .seconds(32)
        /// The longest interval after RATE back-offs.
        public var maximumBackoffInterval: Duration = .seconds(1024)
        /// Good samples in a row before the interval doubles.
        public var stableSamplesToLengthen: Int = 4

        /// Creates the default configuration.
        public init() {}
    }

    /// What happened at the last poll.
    public enum Outcome: Sendable, Hashable {
        /// A sample consistent with the estimate.
        case goodSample
        /// A sample the filter considers an outlier.
        case badSample
        /// No answer in time.
        case timeout
        /// A RATE kiss-o'-death.
        case rateLimited
    }

    /// The configuration in use.
    public let configuration: Configuration
    /// The current regular poll interval.
    public private(set) var interval: Duration
    /// Requests of the burst still to send.
    public private(set) var burstRemaining: Int
    private var goodInARow = 0

    /// Creates a scheduler at the start of its burst.
    ///
    /// - Parameter configuration: The intervals.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        self.interval = configuration.minimumInterval
        self.burstRemaining = max(1, configuration.burstCount)
    }

    /// The wait before the first request (none).
    public func start() -> Duration { .zero }

    /// Records the outcome of a poll and returns the wait before the next one.
    ///
    /// - Parameter outcome: What the last poll produced.
    public mutating func next(after outcome: Outcome) -> Duration {
        if outcome == .rateLimited {
            burstRemaining = 0
            goodInARow = 0
            let doubled = interval * 2
            interval = min(max(doubled, configuration.minimumInterval * 4), configuration.maximumBackoffInterval)
            return interval
        }
        if burstRemaining > 0 { burstRemaining -= 1 }
        if burstRemaining > 0 { return configuration.burstInterval }
        switch outcome {
        case .goodSample:
            goodInARow += 1
            if goodInARow >= configuration.stableSamplesToLengthen {
                goodInARow = 0
                if interval < configuration.maximumInterval {
                    interval = min(interval * 2, configuration.maximumInterval)
                }
            }
        case .badSample, .timeout:
            goodInARow = 0
            interval = max(interval / 2, configuration.minimumInterval)
        case .rateLimited:
            break
        }
        return interval
    }
}
