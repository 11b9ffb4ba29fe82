import GroupSessions
import NIOCore
import Synchronization

/// Writes relay frames to one member connection on the connection's own event loop.
///
/// A session's fan-out enqueues one frame for each member under the session's lock; the first
/// frame queued for a connection schedules one drain on its event loop, which writes everything
/// queued by then and flushes once. So a 1,000-member fan-out costs 1,000 appends and at most
/// 1,000 event-loop tasks (fewer when frames pile up), not 1,000 Swift task wake-ups.
///
/// A frame queued as *deferrable* (presence about someone else: nobody waits on it to the
/// millisecond) does not schedule its own drain: it waits for the next drain that something
/// urgent schedules, or for the loop's next presence tick (``LoopDrains/presenceDelay``),
/// whichever comes first. In a mass join every member receives a `joined` per joiner; ticking
/// turns those into a few writes per member instead of one `write(2)` per frame, and for a
/// client that reads them (``FrameFlags/presenceBatches``) the presence frames waiting together
/// go out as one `presence` frame (``PresencePayload``): a few frames per member instead of one
/// per joiner, which is what made assembly quadratic in frames.
///
/// Bytes queued and not yet handed to the kernel are counted: above `softLimit` droppable
/// (unreliable) frames are discarded, above `hardLimit` the owner disconnects the slow reader.
/// ``close()`` writes what is queued, then closes the channel.
final class ChannelWriter: Sendable {
    private struct State: ~Copyable {
        var pending: [Frame] = []
        /// Bytes queued or written but not yet reported flushed.
        var queuedBytes = 0
        var closing = false
        var closed = false
        /// A drain task is scheduled on the loop (it takes everything pending).
        var scheduled = false
        /// The writer waits in its loop's presence tick.
        var ticking = false
        /// When the oldest pending frame that is not deferrable was queued.
        var oldest: ContinuousClock.Instant?
        /// The client reads `presence` frames (its `hello` said so).
        var batchesPresence = false
        /// The frame encoder's context on a TCP pipeline, looked up by the first drain (on the
        /// loop; only drains read it): a drain encodes its frames into one buffer and writes it
        /// below the encoder, one pass down the pipeline per drain instead of one per frame. A
        /// WebSocket pipeline has none (a message per frame).
        var encoder: EncoderLookup = .notYet
    }

    private let state = Mutex(State())
    private let channel: any Channel
    let softLimit: Int
    let hardLimit: Int
    private let latency: @Sendable (Duration) -> Void
    private let finished: EventLoopPromise<Void>
    private let drains: LoopDrains.Queue

    fileprivate enum EncoderLookup {
        case notYet
        case none
        case found(ChannelHandlerContext)
    }

    /// - Parameters:
    ///   - latency: told, per drain, how long its oldest frame waited between queueing and the kernel.
    init(channel: any Channel, softLimit: Int, hardLimit: Int, latency: @escaping @Sendable (Duration) -> Void) {
        self.channel = channel
        self.softLimit = softLimit
        self.hardLimit = hardLimit
        self.latency = latency
        finished = channel.eventLoop.makePromise(of: Void.self)
        drains = LoopDrains.queue(for: channel.eventLoop)
        channel.closeFuture.whenComplete { [self] _ in
            state.withLock { $0.closed = true }
            finished.succeed()
        }
    }

    /// How a frame just queued gets to the kernel.
    private enum Schedule { case none, now, tick }

    /// Queues `frame` after everything queued before.
    ///
    /// - Parameters:
    ///   - droppable: The frame may be discarded when the reader is behind (unreliable data).
    ///   - deferrable: The frame may wait for the loop's presence tick (see the type's notes).
    @discardableResult
    func enqueue(_ frame: Frame, droppable: Bool = false, deferrable: Bool = false) -> FrameOutbox.EnqueueResult {
        let (result, schedule) = state.withLock { state -> (FrameOutbox.EnqueueResult, Schedule) in
            guard !state.closing, !state.closed else { return (.closed, .none) }
            if droppable && state.queuedBytes > softLimit { return (.dropped, .none) }
            guard state.queuedBytes <= hardLimit else { return (.overflow, .none) }
            state.queuedBytes += frame.wireLength
            state.pending.append(frame)
            if state.scheduled { return (.queued, .none) }
            if deferrable {
                if state.ticking { return (.queued, .none) }
                state.ticking = true
                return (.queued, .tick)
            }
            state.oldest = .now
            state.scheduled = true
            return (.queued, .now)
        }
        switch schedule {
        case .none: break
        case .now: drains.schedule(self, on: channel.eventLoop)
        case .tick: drains.scheduleTick(self, on: channel.eventLoop)
        }
        return result
    }

    /// From now on, runs of presence frames go out as `presence` frames (the client's `hello`
    /// carried ``FrameFlags/presenceBatches``).
    func batchPresence() {
        state.withLock { $0.batchesPresence = true }
    }

    /// Writes what is queued, then closes the channel (idempotent).
    func close() {
        let schedule = state.withLock { state -> Bool in
            guard !state.closing else { return false }
            state.closing = true
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if schedule { channel.eventLoop.execute { self.drain() } }
    }

    /// Waits until the channel has closed.
    func closed() async {
        try? await finished.futureResult.get()
    }

    /// On the event loop: writes every pending frame, flushes once, closes when asked to.
    ///
    /// - Parameter tick: Called by the presence tick (which the writer then leaves).
    fileprivate func drain(tick: Bool = false) {
        let (queued, oldest, closing, batchesPresence, encoder) = state.withLock { state in
            defer {
                // Handed over, not emptied in place: the frames returned share the storage, so
                // keeping its capacity would copy it; an idle writer then holds no buffer at all.
                state.pending = []
                state.scheduled = false
                state.oldest = nil
                if tick { state.ticking = false }
            }
            if case .notYet = state.encoder {
                let context = try? channel.pipeline.syncOperations.context(handlerType: MessageToByteHandler<FrameEncoder>.self)
                state.encoder = context.map { .found($0) } ?? .none
            }
            return (state.pending, state.oldest, state.closing, state.batchesPresence, state.encoder)
        }
        if !queued.isEmpty {
            let bytes = queued.reduce(0) { $0 + $1.wireLength }  // as counted when they were queued
            let frames = batchesPresence ? PresencePayload.batching(queued) : queued
            let written = channel.eventLoop.makePromise(of: Void.self)
            if case .found(let context) = encoder, channel.isActive {
                var buffer = channel.allocator.buffer(capacity: bytes)  // batched presence takes no more
                for frame in frames { FrameCodec.encode(frame, into: &buffer) }
                context.writeAndFlush(NIOAny(buffer), promise: written)
            } else {
                for frame in frames.dropLast() { channel.write(frame, promise: nil) }
                channel.writeAndFlush(frames[frames.count - 1], promise: written)
            }
            written.futureResult.whenComplete { [self] _ in
                state.withLock { $0.queuedBytes -= bytes }
                if let oldest { latency(oldest.duration(to: .now)) }
            }
        }
        if closing { channel.close(promise: nil) }
    }
}

/// One event-loop task per loop and fan-out, not per connection: the writers that got frames while
/// a loop's drain was not yet running are drained together by one task on that loop. Deferrable
/// frames wait in the loop's presence tick: one timer per loop, every writer that has some.
enum LoopDrains {
    /// How long a deferrable frame may wait for its writer's next drain.
    static let presenceDelay = TimeAmount.milliseconds(5)

    /// The writers waiting for one loop's next drain task, and for its next presence tick.
    final class Queue: Sendable {
        let writers = Mutex<(pending: [ChannelWriter], scheduled: Bool)>(([], false))
        let ticking = Mutex<(pending: [ChannelWriter], scheduled: Bool)>(([], false))

        /// Adds `writer`; the first one since the last drain schedules the task on `loop`.
        func schedule(_ writer: ChannelWriter, on loop: any EventLoop) {
            LoopDrains.schedule(writer, in: self, on: loop)
        }

        /// Adds `writer` to the next presence tick; the first one schedules the tick on `loop`.
        func scheduleTick(_ writer: ChannelWriter, on loop: any EventLoop) {
            let first = ticking.withLock { state -> Bool in
                state.pending.append(writer)
                guard !state.scheduled else { return false }
                state.scheduled = true
                return true
            }
            guard first else { return }
            loop.scheduleTask(in: LoopDrains.presenceDelay) {
                let writers = self.ticking.withLock { state -> [ChannelWriter] in
                    defer {
                        state.pending.removeAll(keepingCapacity: true)
                        state.scheduled = false
                    }
                    return state.pending
                }
                for writer in writers { writer.drain(tick: true) }
            }
        }
    }

    private static let queues = Mutex<[ObjectIdentifier: Queue]>([:])

    /// The queue of `loop` (one per loop for the life of the process).
    static func queue(for loop: any EventLoop) -> Queue {
        let key = ObjectIdentifier(loop as AnyObject)
        return queues.withLock { queues in
            if let queue = queues[key] { return queue }
            let queue = Queue()
            queues[key] = queue
            return queue
        }
    }

    static func schedule(_ writer: ChannelWriter, in queue: Queue, on loop: any EventLoop) {
        let first = queue.writers.withLock { state -> Bool in
            state.pending.append(writer)
            guard !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        guard first else { return }
        loop.execute {
            let writers = queue.writers.withLock { state -> [ChannelWriter] in
                defer {
                    state.pending.removeAll(keepingCapacity: true)
                    state.scheduled = false
                }
                return state.pending
            }
            for writer in writers { writer.drain() }
        }
    }
}
