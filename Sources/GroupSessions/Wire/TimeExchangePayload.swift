import NIOCore

/// The payloads of ``FrameType/timeRequest`` and ``FrameType/timeReply``: the four timestamps of
/// an NTP exchange carried over the relay connection (`docs/protocol.md`, "Clock over the relay
/// connection").
///
/// Timestamps are raw 64-bit NTP timestamps (32.32 fixed point, era 0) on the relay's NTP
/// timescale, the one its UDP time server serves. A request carries `t1` (the client's transmit
/// time); the reply echoes it and adds `t2` (relay receive) and `t3` (relay transmit). Parsers
/// ignore trailing bytes, so later versions may append fields.
public struct TimeExchangePayload: Hashable, Sendable {
    /// The client's transmit time, echoed in the reply.
    public var clientTransmit: UInt64
    /// When the relay received the request (replies only).
    public var relayReceive: UInt64?
    /// When the relay sent the reply (replies only).
    public var relayTransmit: UInt64?

    /// A request stamped `clientTransmit`.
    public init(clientTransmit: UInt64) {
        self.clientTransmit = clientTransmit
    }

    /// A reply.
    public init(clientTransmit: UInt64, relayReceive: UInt64, relayTransmit: UInt64) {
        self.clientTransmit = clientTransmit
        self.relayReceive = relayReceive
        self.relayTransmit = relayTransmit
    }

    /// Serializes a request (8 bytes) or a reply (24 bytes).
    public func encoded() -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(clientTransmit)
        if let relayReceive, let relayTransmit {
            buffer.writeInteger(relayReceive)
            buffer.writeInteger(relayTransmit)
        }
        return buffer
    }

    /// Parses a request (`reply: false`) or a reply.
    ///
    /// - Throws: ``PayloadDecodingError`` when the payload is shorter than its timestamps.
    public init(decoding buffer: ByteBuffer, reply: Bool) throws(PayloadDecodingError) {
        var buffer = buffer
        let type: FrameType = reply ? .timeReply : .timeRequest
        guard let t1 = buffer.readInteger(as: UInt64.self) else { throw .truncated(type, "client transmit time") }
        clientTransmit = t1
        guard reply else { return }
        guard let t2 = buffer.readInteger(as: UInt64.self), let t3 = buffer.readInteger(as: UInt64.self) else {
            throw .truncated(type, "relay timestamps")
        }
        relayReceive = t2
        relayTransmit = t3
    }
}
