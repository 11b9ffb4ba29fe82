import GroupSessions
import Logging
import NIOCore

/// One member connection of the relay (TCP or WebSocket), handled on the connection's event loop:
/// frames go to the lobby's hub until `hello`, then to the hub of the session the hello names;
/// when the channel closes, the relay forgets the connection.
///
/// Everything but binding a `hello` to its session runs right here, under the hub's lock: no task
/// or stream per connection, so an idle connection costs the relay only its channel, its writer
/// and its hub entries, and a frame reaches its hub without a hop to another thread. Binding may
/// ask a shared store who serves the session, so it runs as the relay's storage work
/// (``RelayStorage``, owned by ``RelayServer/run()``), off the event loop; frames that arrive
/// meanwhile wait, in order, and so does the end of a connection that closes meanwhile.
final class MemberConnection: ChannelInboundHandler {
    typealias InboundIn = Frame

    private let relay: RelayServer
    /// Set once the connection is taken in (`nil` while not active, or when the relay refused it
    /// because it is shutting down).
    private var admission: RelayServer.Admission?
    /// The shard this connection's hello took it to; until then, the lobby.
    private var shard: SessionShard?
    private var binding = false
    /// Frames and a decoding error that arrived while the hello was being bound.
    private var waiting: [Frame] = []
    private var waitingError: FrameDecodingError?
    /// The channel closed while the hello was being bound: the relay forgets it once bound.
    private var closedWhileBinding = false
    /// Nothing more is read (refused, redirected, undecodable, or the shard failed).
    private var finished = false
    private var forgotten = false

    init(relay: RelayServer) {
        self.relay = relay
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    private func start(_ context: ChannelHandlerContext) {
        guard admission == nil, !finished else { return }
        guard let admission = relay.admit(context.channel) else {
            finished = true
            context.close(promise: nil)
            return
        }
        self.admission = admission
        if !admission.admitted { finish() }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !finished, let admission, admission.admitted else { return }
        if binding {
            if frame.type == .ping {
                // The relay is alive while it asks a shared store about the session (which can
                // take seconds on a loaded database): answered as the hub would, so a member's
                // liveness check does not give the connection up meanwhile.
                var pong = frame
                pong.type = .pong
                pong.sender = .relay
                pong.payload = ByteBuffer()
                admission.outbox.enqueue(pong)
                return
            }
            waiting.append(frame)
        } else {
            receive(frame, context: context)
        }
    }

    private func receive(_ frame: Frame, context: ChannelHandlerContext) {
        guard let admission, !finished else { return }
        if let shard {
            guard shard.mayOrder() else { return finish() }
            shard.withHub { hub in (hub.receive(frame, from: admission.id, now: relay.now()), ()) }
        } else if frame.type == .hello {
            if frame.flags.contains(.presenceBatches) { admission.outbox.batchPresence() }
            binding = true
            let relay = relay
            let this = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            relay.storage.schedule(.work {
                let shard = await relay.bind(admission.id, outbox: admission.outbox, hello: frame)
                this.eventLoop.execute {
                    let (handler, context) = this.value
                    handler.bound(to: shard, context: context)
                }
            })
        } else {
            relay.lobby.withHub { hub in (hub.receive(frame, from: admission.id, now: relay.now()), ()) }
        }
    }

    /// The hello's binding is done: `shard` serves the session, or `nil` (refused, redirected: the
    /// error frame is queued).
    private func bound(to shard: SessionShard?, context: ChannelHandlerContext) {
        binding = false
        self.shard = shard
        if shard == nil { finish() }
        let frames = waiting
        waiting = []
        for frame in frames { receive(frame, context: context) }
        if let error = waitingError {
            waitingError = nil
            decodingFailed(error)
        }
        if closedWhileBinding { forget() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? FrameDecodingError else {
            relay.logger.debug("connection failed", metadata: ["connection": tag, "error": "\(error)"])
            return finish()
        }
        if binding {
            waitingError = error
        } else {
            decodingFailed(error)
        }
    }

    private func decodingFailed(_ error: FrameDecodingError) {
        guard let admission, admission.admitted, !finished else { return }
        relay.logger.info(
            "closing a connection that sent undecodable bytes", metadata: ["connection": tag, "error": "\(error)"])
        (shard ?? relay.lobby).withHub { hub in (hub.decodingFailed(error, on: admission.id), ()) }
        finish()
    }

    /// Reads nothing more; what the hub queued last (an error frame) goes out, then the channel closes.
    private func finish() {
        finished = true
        admission?.outbox.close()
    }

    func channelInactive(context: ChannelHandlerContext) {
        finished = true
        if binding {
            closedWhileBinding = true
        } else {
            forget()
        }
        context.fireChannelInactive()
    }

    private func forget() {
        guard let admission, !forgotten else { return }
        forgotten = true
        admission.outbox.close()
        relay.forget(admission, shard: shard)
    }

    private var tag: Logger.MetadataValue { "\(admission?.id ?? 0)" }
}
