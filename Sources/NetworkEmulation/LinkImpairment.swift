/// The sans-IO core of one direction of an impaired link: given a packet's size and arrival time, it
/// decides whether the packet is dropped and when it is delivered.
///
/// Times are nanoseconds on any monotonic timescale (the proxy uses NIO's uptime clock), so tests
/// drive it with plain numbers. Two modes:
/// - ``Mode/datagram``: each datagram independently; a jittered datagram may overtake an earlier one
///   (as with `tc netem`); lost datagrams are dropped.
/// - ``Mode/stream``: chunks of a byte stream; delivery times never decrease (order preserved), and a
///   lost chunk is delivered late by the profile's stream loss penalty instead of being dropped.
///
/// With a bandwidth cap, a packet first waits for the link to finish sending the packets before it
/// (`size / bandwidth` each), then gets its delay.
///
/// ```swift
/// var link = LinkImpairment(profile: .init(delay: 0.01), mode: .datagram, seed: 1)
/// if case .deliver(let at) = link.schedule(size: 100, arrival: 0) { print(at) } // 10_000_000
/// ```
package struct LinkImpairment: Sendable {
    /// How packets on the link relate to each other.
    package enum Mode: Sendable, Hashable {
        /// Independent datagrams (UDP).
        case datagram
        /// Chunks of one ordered byte stream (TCP).
        case stream
    }

    /// What happens to a packet.
    package enum Decision: Sendable, Hashable {
        /// Deliver at this time (nanoseconds).
        case deliver(at: UInt64)
        /// Drop it (datagram mode only).
        case drop
    }

    /// The impairment profile.
    package let profile: ImpairmentProfile
    /// The mode.
    package let mode: Mode
    private var rng: SeededGenerator
    private var linkFreeAt: UInt64 = 0
    private var lastDelivery: UInt64 = 0
    /// Counters of what the link did so far.
    package private(set) var counters = LinkCounters()

    /// Creates a link direction.
    ///
    /// - Parameters:
    ///   - profile: the impairments.
    ///   - mode: datagram (UDP) or stream (TCP).
    ///   - seed: the random seed; equal seeds and inputs give equal decisions.
    package init(profile: ImpairmentProfile, mode: Mode, seed: UInt64) {
        self.profile = profile
        self.mode = mode
        self.rng = SeededGenerator(seed: seed)
    }

    /// Decides the fate of one packet.
    ///
    /// - Parameters:
    ///   - size: its size in bytes.
    ///   - arrival: when it reached the proxy, nanoseconds.
    package mutating func schedule(size: Int, arrival: UInt64) -> Decision {
        // Draw every random number up front so the random stream does not depend on the outcome.
        let lost = profile.loss > 0 && rng.unit() < profile.loss
        let jitter = profile.distribution.sample(jitter: profile.jitter, using: &rng)

        var departure = arrival
        if let bandwidth = profile.bandwidth {
            let start = max(arrival, linkFreeAt)
            departure = start + UInt64((Double(size) / bandwidth * 1e9).rounded())
            linkFreeAt = departure
        }
        if lost && mode == .datagram {
            counters.dropped += 1
            return .drop
        }
        var delay = max(0, profile.delay + jitter)
        if lost {
            delay += profile.effectiveStreamLossPenalty
            counters.penalized += 1
        }
        var delivery = departure + UInt64((delay * 1e9).rounded())
        if mode == .stream { delivery = max(delivery, lastDelivery) }
        lastDelivery = max(lastDelivery, delivery)
        counters.forwarded += 1
        counters.bytes += size
        return .deliver(at: delivery)
    }

    /// The latest delivery time scheduled so far (nanoseconds), or 0.
    package var latestDelivery: UInt64 { lastDelivery }
}
