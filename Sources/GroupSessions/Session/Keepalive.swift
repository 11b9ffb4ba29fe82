/// The client side of connection liveness as a pure state machine: when to `ping` the relay and
/// when to give a silent connection up for dead. No clock of its own: times are passed in as
/// `Duration`s on any monotonic scale, so tests drive it directly.
///
/// The member pings every ``pingInterval`` whatever else is flowing (a member that only
/// receives must still be heard: the relay closes connections it has heard nothing from for
/// its idle timeout). The relay answers each ping with a `pong`, so on a healthy connection
/// something arrives at least every ``pingInterval`` plus a round trip. When nothing at all has
/// arrived for ``livenessTimeout``, the connection is dead: the path stopped delivering while
/// TCP still looks open (a sleeping NAT, a cable pulled upstream).
///
/// ```swift
/// var keepalive = Keepalive(pingInterval: .seconds(5), livenessTimeout: .seconds(15), now: .zero)
/// keepalive.heard(at: .seconds(1))
/// keepalive.poll(now: .seconds(5))   // .ping
/// keepalive.poll(now: .seconds(16))  // .dead(silence: .seconds(15))
/// ```
struct Keepalive: Sendable, Hashable {
    /// What the shell should do now.
    enum Action: Sendable, Hashable {
        /// Nothing until `until` (or until a frame arrives); `nil` waits forever (keepalive off).
        case wait(until: Duration?)
        /// Send a `ping` now (the shell then polls again).
        case ping
        /// Nothing arrived for `silence`: treat the connection as lost.
        case dead(silence: Duration)
    }

    /// Time between pings; zero sends none.
    let pingInterval: Duration
    /// Silence after which the connection is dead; zero never declares it dead.
    let livenessTimeout: Duration
    /// When the last frame arrived (or the connection opened).
    private(set) var lastHeard: Duration
    /// When the last ping was sent (or the connection opened).
    private(set) var lastPing: Duration

    /// Starts watching a connection opened at `now`.
    init(pingInterval: Duration, livenessTimeout: Duration, now: Duration) {
        self.pingInterval = pingInterval
        self.livenessTimeout = livenessTimeout
        lastHeard = now
        lastPing = now
    }

    /// Starts watching a connection opened at `now` with `policy`'s intervals.
    init(policy: ReconnectPolicy, now: Duration) {
        self.init(pingInterval: policy.pingInterval, livenessTimeout: policy.livenessTimeout, now: now)
    }

    /// Whether there is anything to do at all.
    var isEnabled: Bool { pingInterval > .zero || livenessTimeout > .zero }

    /// A frame arrived at `now`.
    mutating func heard(at now: Duration) {
        lastHeard = max(lastHeard, now)
    }

    /// The next step at `now`; a `ping` is recorded as sent.
    mutating func poll(now: Duration) -> Action {
        if livenessTimeout > .zero, now - lastHeard >= livenessTimeout {
            return .dead(silence: now - lastHeard)
        }
        if pingInterval > .zero, now - lastPing >= pingInterval {
            lastPing = now
            return .ping
        }
        let nextPing = pingInterval > .zero ? lastPing + pingInterval : nil
        let deadline = livenessTimeout > .zero ? lastHeard + livenessTimeout : nil
        switch (nextPing, deadline) {
        case (let ping?, let dead?): return .wait(until: min(ping, dead))
        case (let ping?, nil): return .wait(until: ping)
        case (nil, let dead?): return .wait(until: dead)
        case (nil, nil): return .wait(until: nil)
        }
    }
}
