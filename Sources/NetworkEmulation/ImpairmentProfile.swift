/// The impairments of one direction of a link: delay, jitter, loss and a bandwidth cap.
///
/// All times are seconds. Each packet (UDP datagram, or TCP chunk) gets a one-way delay of
/// `delay + jitter sample`, never below zero, after waiting for the bandwidth cap if there is one.
///
/// **Loss on TCP.** A byte stream cannot lose bytes, so on TCP a "lost" chunk is delivered late instead,
/// by ``streamLossPenalty`` (default: 200 ms, Linux's minimum retransmission timeout, plus one more
/// `delay` for the resent copy to cross the link), and every later chunk waits behind it, as
/// head-of-line blocking does in a real TCP.
///
/// ```swift
/// // 20 ms ± 10 ms uniform jitter, 1 % loss, 1 MB/s.
/// let profile = ImpairmentProfile(delay: 0.020, jitter: 0.010, loss: 0.01, bandwidth: 1_000_000)
/// ```
package struct ImpairmentProfile: Sendable, Hashable, Codable {
    /// Base one-way delay in seconds.
    package var delay: Double
    /// Jitter amount in seconds (its meaning depends on ``distribution``).
    package var jitter: Double
    /// How the delay varies.
    package var distribution: JitterDistribution
    /// Probability in 0...1 that a packet is lost (UDP: dropped; TCP: delayed, see above).
    package var loss: Double
    /// Bandwidth cap in bytes per second; nil for none.
    package var bandwidth: Double?
    /// Extra delay of a "lost" TCP chunk in seconds; nil for `0.2 + delay`.
    package var streamLossPenalty: Double?

    /// Creates a profile.
    ///
    /// - Parameters:
    ///   - delay: base one-way delay, seconds (>= 0).
    ///   - jitter: jitter amount, seconds (>= 0).
    ///   - distribution: the jitter's distribution; uniform by default.
    ///   - loss: loss probability in 0...1.
    ///   - bandwidth: bytes per second, or nil.
    ///   - streamLossPenalty: seconds, or nil for the default.
    package init(
        delay: Double = 0, jitter: Double = 0, distribution: JitterDistribution = .uniform, loss: Double = 0,
        bandwidth: Double? = nil, streamLossPenalty: Double? = nil
    ) {
        self.delay = delay
        self.jitter = jitter
        self.distribution = distribution
        self.loss = loss
        self.bandwidth = bandwidth
        self.streamLossPenalty = streamLossPenalty
    }

    /// No impairment at all.
    package static let none = ImpairmentProfile()

    /// The smallest delay a packet can get from this profile (bandwidth waiting aside), in seconds.
    package var minimumDelay: Double { max(0, delay - distribution.lowerSpread * jitter) }

    /// The extra delay of a "lost" TCP chunk, in seconds.
    package var effectiveStreamLossPenalty: Double { streamLossPenalty ?? (0.2 + delay) }

    /// Checks the values, throwing a ``NetworkEmulationError`` for an impossible one.
    package func validate() throws {
        guard delay >= 0, delay.isFinite else { throw NetworkEmulationError.invalidProfile("delay must be >= 0") }
        guard jitter >= 0, jitter.isFinite else { throw NetworkEmulationError.invalidProfile("jitter must be >= 0") }
        guard (0...1).contains(loss) else { throw NetworkEmulationError.invalidProfile("loss must be within 0...1") }
        if let bandwidth, !(bandwidth > 0) || !bandwidth.isFinite {
            throw NetworkEmulationError.invalidProfile("bandwidth must be > 0")
        }
        if let streamLossPenalty, !(streamLossPenalty >= 0) {
            throw NetworkEmulationError.invalidProfile("streamLossPenalty must be >= 0")
        }
    }
}
