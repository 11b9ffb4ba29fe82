import Synchronization

/// Waits used when one session hands its members a successor (see
/// `GroupActivityCenter+Successor.swift`).
extension SessionEngine {
    /// Sends one reliable message to every member and returns the relay's stamp once it is acked.
    ///
    /// - Throws: ``GroupSessionError`` if sending fails, the session is invalidated or `timeout`
    ///   passes before the ack.
    @discardableResult
    func sendAcknowledged(name: String, body: [UInt8], timeout: Duration) async throws -> UInt64 {
        let sent = Mutex<UInt64?>(nil)
        let now = uptime
        return try await firstSignal(timeout: timeout, "the relay to acknowledge \(name)") { shell, id in
            let (senderSequence, actions) = try shell.machine.send(
                name: name, body: body, recipients: [], retainName: nil, unreliable: false, now: now)
            shell.ackCallbacks[senderSequence] = { [signal = shell.signals[id]] stamp, _ in signal?.fire(stamp) }
            sent.withLock { $0 = senderSequence }
            return actions
        } disarm: { shell in
            if let senderSequence = sent.withLock({ $0 }) { shell.ackCallbacks[senderSequence] = nil }
        }
    }
}
