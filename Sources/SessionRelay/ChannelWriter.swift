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
        var scheduled = false
        /// When the oldest pending frame was queued.
        var oldest: ContinuousClock.Instant?
    }

    private let state = Mutex(State())
    private let channel: any Channel
    let softLimit: Int
    let hardLimit: Int
    private let latency: @Sendable (Duration) -> Void
    private let finished: EventLoopPromise<Void>
    private let drains: LoopDrains.Queue

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

    /// Queues `frame` after everything queued before.
    @discardableResult
    func enqueue(_ frame: Frame, droppable: Bool = false) -> FrameOutbox.EnqueueResult {
        let (result, schedule) = state.withLock { state -> (FrameOutbox.EnqueueResult, Bool) in
            guard !state.closing, !state.closed else { return (.closed, false) }
            if droppable && state.queuedBytes > softLimit { return (.dropped, false) }
            guard state.queuedBytes <= hardLimit else { return (.overflow, false) }
            state.queuedBytes += frame.wireLength
            if state.pending.isEmpty { state.oldest = .now }
            state.pending.append(frame)
            guard !state.scheduled else { return (.queued, false) }
            state.scheduled = true
            return (.queued, true)
        }
        if schedule { drains.schedule(self, on: channel.eventLoop) }
        return result
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
    fileprivate func drain() {
        let (frames, oldest, closing) = state.withLock { state in
            defer {
                state.pending.removeAll(keepingCapacity: true)
                state.scheduled = false
                state.oldest = nil
            }
            return (state.pending, state.oldest, state.closing)
        }
        if !frames.isEmpty {
            let bytes = frames.reduce(0) { $0 + $1.wireLength }
            for frame in frames.dropLast() { channel.write(frame, promise: nil) }
            let written = channel.eventLoop.makePromise(of: Void.self)
            channel.writeAndFlush(frames[frames.count - 1], promise: written)
            written.futureResult.whenComplete { [self] _ in
                state.withLock { $0.queuedBytes -= bytes }
                if let oldest { latency(oldest.duration(to: .now)) }
            }
        }
        if closing { channel.close(promise: nil) }
    }
}

/// One event-loop task per loop and fan-out, not per connection: the writers that got frames while
/// a loop's drain was not yet running are drained together by one task on that loop.
enum LoopDrains {
    /// The writers waiting for one loop's next drain task.
    final class Queue: Sendable {
        let writers = Mutex<(pending: [ChannelWriter], scheduled: Bool)>(([], false))

        /// Adds `writer`; the first one since the last drain schedules the task on `loop`.
        func schedule(_ writer: ChannelWriter, on loop: any EventLoop) {
            LoopDrains.schedule(writer, in: self, on: loop)
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
