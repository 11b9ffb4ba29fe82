/// A token bucket (sans-IO): at most ``capacity`` tokens, refilled continuously at ``rate`` tokens
/// per second; every allowed event spends one token.
///
/// The one rate limiter of coplay: the relay's per-connection frame limit (`SessionHub`), a
/// member's own send limit that mirrors it (`SessionEngine`) and the time server's per-client
/// limit (ClockSync's `RateLimiter`) are all this bucket. It reads no clock: the caller passes
/// `now`, a `Duration` since any fixed origin on a monotonic clock, so tests drive it with
/// made-up times. A bucket starts full; time that goes backwards adds nothing.
///
/// ```swift
/// var bucket = TokenBucket(capacity: 4, rate: 2, now: .zero)   // burst 4, then 2 per second
/// for _ in 0..<4 { _ = bucket.take(now: .zero) }              // true four times
/// bucket.take(now: .zero)                                      // false: empty
/// bucket.take(now: .milliseconds(500))                         // true: one token refilled
/// ```
package struct TokenBucket: Sendable, Hashable {
    /// The most tokens it holds: how many events may pass back to back.
    package private(set) var capacity: Double
    /// Tokens added per second.
    package private(set) var rate: Double
    /// Tokens available at ``updated``.
    package private(set) var tokens: Double
    /// When ``tokens`` was last brought up to date.
    package private(set) var updated: Duration

    /// Creates a full bucket.
    ///
    /// - Parameters:
    ///   - capacity: The burst size (at least 0).
    ///   - rate: The refill rate in tokens per second (at least 0).
    ///   - now: The current time on the caller's monotonic scale.
    package init(capacity: Double, rate: Double, now: Duration) {
        self.capacity = max(0, capacity)
        self.rate = max(0, rate)
        self.tokens = self.capacity
        self.updated = now
    }

    /// Whether a token is available (as of the last refill).
    package var hasToken: Bool { tokens >= 1 }

    /// Whether the bucket would be full again at `now` (nothing spent in the meantime): its client
    /// can be forgotten without changing any later decision.
    package func isFull(at now: Duration) -> Bool {
        var copy = self
        copy.refill(now: now)
        return copy.tokens >= capacity
    }

    /// Adds the tokens earned since ``updated``, up to ``capacity``.
    package mutating func refill(now: Duration) {
        guard now > updated else { return }
        let elapsed = now - updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        tokens = min(capacity, tokens + seconds * rate)
        updated = now
    }

    /// Refills, then spends one token if there is one.
    ///
    /// - Returns: Whether the event may pass.
    package mutating func take(now: Duration) -> Bool {
        refill(now: now)
        guard hasToken else { return false }
        tokens -= 1
        return true
    }

    /// Spends one token that ``hasToken`` said was there (for callers that check, do fallible work,
    /// and only then commit).
    package mutating func spend() {
        tokens = max(0, tokens - 1)
    }

    /// New limits; the tokens held are kept, but never above the new capacity.
    package mutating func setLimits(capacity: Double, rate: Double) {
        self.capacity = max(0, capacity)
        self.rate = max(0, rate)
        tokens = min(tokens, self.capacity)
    }
}
