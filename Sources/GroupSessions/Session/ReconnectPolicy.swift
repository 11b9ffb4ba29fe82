/// How a group session reconnects to the relay after losing its connection.
///
/// After a loss the member waits ``initialDelay``, then twice as long after every failed
/// attempt up to ``maximumDelay``, each wait shortened or stretched at random by up to
/// ``jitter`` (so members cut off together do not all knock at once). Once ``giveUpAfter`` has
/// passed since the loss without resuming, the session is invalidated with
/// ``GroupSessionInvalidationReason/connectionLost(_:)``.
///
/// ```swift
/// var policy = ReconnectPolicy()
/// policy.giveUpAfter = .seconds(10)
/// let center = GroupActivityCenter<Movie>(transport: transport, reconnectPolicy: policy)
/// ```
public struct ReconnectPolicy: Hashable, Sendable {
    /// The wait before the first attempt.
    public var initialDelay: Duration = .milliseconds(100)
    /// The longest wait between attempts.
    public var maximumDelay: Duration = .seconds(2)
    /// Random spread of each wait, as a fraction of it (0 to 1).
    public var jitter: Double = 0.25
    /// How long after the loss to keep trying; zero never reconnects (a loss invalidates at once).
    public var giveUpAfter: Duration = .seconds(30)

    /// The defaults: 100 ms doubling to 2 s, 25% jitter, give up after 30 s.
    public init() {}

    /// A policy that never reconnects.
    public static var never: ReconnectPolicy {
        var policy = ReconnectPolicy()
        policy.giveUpAfter = .zero
        return policy
    }

    /// The wait before attempt `attempt` (0-based), jitter included.
    ///
    /// - Parameters:
    ///   - attempt: Attempts already made since the loss.
    ///   - random: A value in `0...1` (uniform) choosing where in the jitter band the wait falls.
    public func delay(forAttempt attempt: Int, random: Double = Double.random(in: 0...1)) -> Duration {
        let factor = Double(1 << min(attempt, 20))
        let base = min(initialDelay * factor, maximumDelay)
        let spread = 1 + jitter * (2 * min(max(random, 0), 1) - 1)
        return base * max(spread, 0)
    }
}
