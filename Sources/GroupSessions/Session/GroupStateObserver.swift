import Logging
import Synchronization

/// Tells whether group sessions are possible right now: a relay is reachable.
///
/// ```swift
/// let observer = GroupStateObserver(transport: RelayTransport(host: "127.0.0.1", port: 7000), logger: logger)
/// if await observer.refresh() { /* offer "watch together" */ }
/// ```
public final class GroupStateObserver: Sendable {
    private let transport: any SessionTransport
    private let logger: Logger
    private let eligible = Mutex(false)

    /// Creates an observer of the relay behind `transport`.
    public init(transport: any SessionTransport, logger: Logger) {
        self.transport = transport
        self.logger = logger
    }

    /// The result of the last ``refresh(timeout:)``: `true` while the relay answered.
    public var isEligibleForGroupSession: Bool { eligible.withLock { $0 } }

    /// Probes the relay (connect, ping, pong) and updates ``isEligibleForGroupSession``.
    ///
    /// - Parameter timeout: How long to wait for the relay.
    /// - Returns: Whether the relay answered.
    @discardableResult
    public func refresh(timeout: Duration = .seconds(5)) async -> Bool {
        let reachable = await probe(timeout: timeout)
        eligible.withLock { $0 = reachable }
        return reachable
    }

    /// Probes every `interval` and yields ``isEligibleForGroupSession`` whenever it changes
    /// (the first value at once). Ends when the consuming task is cancelled.
    public func updates(every interval: Duration = .seconds(5)) -> AsyncStream<Bool> {
        // Pulled by the consumer: each `next()` probes (after `interval`, but for the first) until
        // the answer changes, in the consuming task, so no task outlives it.
        let last = Mutex<(value: Bool?, probed: Bool)>((nil, false))
        return AsyncStream { [self] in
            while !Task.isCancelled {
                if last.withLock({ $0.probed }) {
                    do { try await Task.sleep(for: interval) } catch { return nil }
                }
                let now = await refresh()
                let changed = last.withLock { last in
                    defer { last = (now, true) }
                    return last.value != now
                }
                if changed { return now }
            }
            return nil
        }
    }

    private func probe(timeout: Duration) async -> Bool {
        do {
            return try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask { [transport, logger] in
                    let connection = try await transport.connect(logger: logger)
                    defer { connection.close() }
                    try connection.send(Frame(type: .ping, session: SessionID(high: 0, low: 0), sender: .relay, sequence: 1))
                    for try await frame in connection.inbound where frame.type == .pong { return true }
                    return false
                }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return false
                }
                defer { group.cancelAll() }
                return try await group.next() ?? false
            }
        } catch {
            return false
        }
    }
}
