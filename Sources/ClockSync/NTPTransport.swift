/// One request/response exchange as seen by the client: the response and the two local timestamps.
public struct NTPExchange: Sendable, Hashable {
    /// The server's response (not yet validated).
    public var response: NTPPacket
    /// T1: local time just before the request was sent.
    public var sent: NTPTimestamp
    /// T4: local time as soon as the response arrived.
    public var received: NTPTimestamp

    /// Creates an exchange record.
    ///
    /// - Parameters:
    ///   - response: The server's response.
    ///   - sent: T1, on the local timescale.
    ///   - received: T4, on the local timescale.
    public init(response: NTPPacket, sent: NTPTimestamp, received: NTPTimestamp) {
        self.response = response
        self.sent = sent
        self.received = received
    }

    /// The offset/delay sample of this exchange.
    public var sample: NTPSample {
        NTPSample(t1: sent, t2: response.receiveTimestamp, t3: response.transmitTimestamp, t4: received)
    }
}

/// How a ``TimeClient`` reaches its server: send one request, wait for the matching response.
///
/// ``UDPTimeTransport`` is the real one; tests can provide a simulated network. Implementations stamp
/// T1 as late and T4 as early as they can, on the local timescale they were created with.
public protocol NTPTransport: Sendable {
    /// Sends `request` and waits for the response whose origin timestamp equals the request's
    /// transmit timestamp.
    ///
    /// - Parameters:
    ///   - request: The request to send; its transmit timestamp identifies the exchange.
    ///   - timeout: How long to wait for the response.
    /// - Returns: The exchange, or `nil` if no matching response arrived in time.
    func exchange(_ request: NTPPacket, timeout: Duration) async throws -> NTPExchange?
}
