/// How a group session notices a dead connection to the relay and reconnects after losing it.
///
/// A connection is lost when TCP reports it (closed, reset) or when it goes silent: the member
/// sends a `ping` every ``pingInterval`` and the relay answers each with a `pong`, so when
/// nothing at all has arrived for ``livenessTimeout`` the path is taken for dead (a sleeping
/// NAT, a cable pulled upstream: TCP itself may take many minutes to notice) and the member
/// reconnects exactly as if the socket had closed. The pings also keep the member alive at the
/// relay, which closes connections it has heard nothing from for its idle timeout (45 s by
/// default, `HubLimits.idleTimeout`): keep ``pingInterval`` well below it.
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
/// policy.pingInterval = .seconds(2)
/// policy.livenessTimeout = .seconds(6)
/// let center = GroupActivityCenter<Movie>(transport: transport, logger: logger, reconnectPolicy: policy)
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
    /// Time between pings to the relay; zero sends none (the relay then drops an idle member
    /// after its idle timeout).
    public var pingInterval: Duration = .seconds(5)
    /// Silence from the relay (no frame at all, pongs included) after which the connection is
    /// treated as lost; zero relies on TCP alone. Make it at least twice ``pingInterval``.
    public var livenessTimeout: Duration = .seconds(15)

    /// The defaults: 100 ms doubling to 2 s, 25% jitter, give up after 30 s; a ping every 5 s,
    /// a connection silent for 15 s is lost.
    public init() {}

    /// A policy that never reconnects (a lost connection, silent ones included, invalidates at once).
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
