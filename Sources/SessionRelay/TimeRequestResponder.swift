import ClockSync
import GroupSessions
import NIOCore
import Synchronization

/// Answers ``FrameType/timeRequest`` frames on the event loop, so members that cannot send UDP
/// (browsers) can run NTP-style exchanges with the relay over their connection.
///
/// It sits right after the frame decoder, in front of the hub: the receive time `t2` is the first
/// thing taken when a request arrives and the transmit time `t3` the last before the reply is
/// written, so the relay's own queueing never counts as network delay. Time frames never reach the
/// hub: they are not stamped, stored or replayed, and they are allowed before `hello`. Requests
/// are rate-limited per remote address with the UDP time server's limiter; over the limit they
/// are dropped, as NTP drops them. A truncated request is dropped too.
final class TimeRequestResponder: ChannelInboundHandler, Sendable {
    typealias InboundIn = Frame
    typealias InboundOut = Frame
    typealias OutboundOut = Frame

    private let timescale: LocalTimescale<ContinuousClock>
    private let limiter: TimeRequestLimiter

    /// - Parameters:
    ///   - timescale: the relay's NTP timescale (shared with its UDP time server).
    ///   - limiter: the relay-wide per-address limiter.
    init(timescale: LocalTimescale<ContinuousClock>, limiter: TimeRequestLimiter) {
        self.timescale = timescale
        self.limiter = limiter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard frame.type == .timeRequest else {
            context.fireChannelRead(data)
            return
        }
        let received = timescale.now()
        let address = context.channel.remoteAddress?.ipAddress ?? "?"
        // One time origin for every connection sharing the limiter: the timescale's anchor.
        let elapsed = timescale.anchorInstant.duration(to: .now)
        let now = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard limiter.allow(address, now: now),
            let request = try? TimeExchangePayload(decoding: frame.payload, reply: false)
        else { return }
        // t3 is taken last, just before the write.
        let reply = TimeExchangePayload(
            clientTransmit: request.clientTransmit, relayReceive: received.rawValue, relayTransmit: timescale.now().rawValue)
        context.writeAndFlush(
            wrapOutboundOut(Frame(type: .timeReply, session: frame.session, sender: ParticipantID(rawValue: 0), payload: reply.encoded())),
            promise: nil)
    }
}

/// The relay-wide per-address limit on in-band time requests (the UDP time server's limits:
/// bursts of 256, 64 a second per address).
final class TimeRequestLimiter: Sendable {
    private let limiter = Mutex(RateLimiter<String>(configuration: .init(burst: 256, rate: 64)))

    /// Whether a request from `address` at `now` (seconds on one origin) is answered.
    func allow(_ address: String, now: Double) -> Bool {
        limiter.withLock { $0.allow(address, now: now) }
    }
}
