import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PlaybackCoordinator

/// A client of mpv's JSON IPC (`--input-ipc-server=PATH`) on its Unix socket: commands with their
/// replies, and mpv's events, each stamped on the event loop with a clock the caller chooses.
///
/// mpv accepts several clients on one socket, so a player adapter and a measuring tool can both
/// talk to the same mpv. A request is stamped just before it is written and its reply as its bytes
/// are read: a `get_property` round trip on loopback takes tens of microseconds, so the midpoint
/// dates a sampled position to about that.
///
/// ```swift
/// let mpv = try await MPVConnection.connect(path: "/tmp/mpv.sock")
/// let reply = try await mpv.command(["get_property", "time-pos"])
/// print(reply.data.number ?? .nan, reply.midpoint)
/// try await mpv.set("pause", false)
/// for await event in mpv.events() where event.name == "playback-restart" { break }
/// ```
public final class MPVConnection: Sendable {
    private let channel: any Channel
    private let handler: NIOLoopBound<MPVIPCHandler>
    private let nextID = NIOLockedValueBox(0)
    private let stamp: @Sendable () -> Double
    private let subscribers: EventSubscribers

    private init(channel: any Channel, handler: NIOLoopBound<MPVIPCHandler>, subscribers: EventSubscribers, stamp: @escaping @Sendable () -> Double) {
        self.channel = channel
        self.handler = handler
        self.subscribers = subscribers
        self.stamp = stamp
    }

    /// mpv's events from now on, in order; the stream finishes when the connection closes (mpv
    /// quit) or when its consumer stops. Each call gives a new, independent stream.
    public func events() -> AsyncStream<MPVEvent> {
        subscribers.subscribe()
    }

    /// Connects to mpv's IPC socket.
    ///
    /// - Parameters:
    ///   - path: the socket's path (mpv's `--input-ipc-server`).
    ///   - stamp: the clock requests, replies and events are stamped with, in seconds
    ///     (default `CLOCK_REALTIME`).
    ///   - group: the event loop group the connection runs on.
    /// - Throws: ``MPVError/ipc(_:)`` when nothing listens there.
    public static func connect(
        path: String, stamp: @escaping @Sendable () -> Double = MPVConnection.realtime,
        group: any EventLoopGroup = MPVConnection.timingGroup
    ) async throws -> MPVConnection {
        let subscribers = EventSubscribers()
        let channel: any Channel
        do {
            channel = try await ClientBootstrap(group: group)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(MPVIPCHandler(events: subscribers, stamp: stamp))
                    }
                }
                .connect(unixDomainSocketPath: path)
                .get()
        } catch {
            subscribers.finish()
            throw MPVError.ipc("cannot connect to \(path): \(error)")
        }
        let handler = try await channel.eventLoop.submit {
            NIOLoopBound(try channel.pipeline.syncOperations.handler(type: MPVIPCHandler.self), eventLoop: channel.eventLoop)
        }.get()
        return MPVConnection(channel: channel, handler: handler, subscribers: subscribers, stamp: stamp)
    }

    /// Connects once mpv has opened its socket: retries every 50 ms for up to `timeout` (an mpv
    /// takes 60-100 ms from its start to a connectable socket).
    ///
    /// - Throws: ``MPVError/didNotStart(_:)`` when nothing accepts within `timeout`.
    public static func connect(
        path: String, waitingUpTo timeout: Duration, stamp: @escaping @Sendable () -> Double = MPVConnection.realtime
    ) async throws -> MPVConnection {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let connection = try? await connect(path: path, stamp: stamp) { return connection }
            guard ContinuousClock.now < deadline else { throw MPVError.didNotStart("nothing accepts on \(path) after \(timeout)") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `CLOCK_REALTIME` in seconds.
    public static let realtime: @Sendable () -> Double = { Realtime.now() }

    /// Sends one command (mpv's `command` array) and waits for its reply.
    ///
    /// - Throws: ``MPVError/ipc(_:)`` when the connection is closed (mpv quit).
    @discardableResult
    public func command(_ arguments: [any Sendable]) async throws -> MPVReply {
        try await send(command: arguments.map { $0 as Any })
    }

    /// Sends one command with named arguments (`{"name": "osd-overlay", "id": 1, …}`) and waits for
    /// its reply.
    ///
    /// - Throws: ``MPVError/ipc(_:)`` when the connection is closed (mpv quit).
    @discardableResult
    public func command(named arguments: [String: any Sendable]) async throws -> MPVReply {
        try await send(command: arguments.mapValues { $0 as Any })
    }

    /// Writes a request for `command` from the event loop (at `instant` on the stamp clock, if given:
    /// see ``command(_:at:)``) and waits for its reply.
    private func send(command: Any, at instant: Double? = nil) async throws -> MPVReply {
        let id = nextID.withLockedValue { value -> Int in
            value += 1
            return value
        }
        let object: [String: Any] = ["command": command, "request_id": id]
        var line = try JSONSerialization.data(withJSONObject: object)
        line.append(UInt8(ascii: "\n"))
        let buffer = ByteBuffer(bytes: line)
        let handler = self.handler
        let channel = self.channel
        let stamp = self.stamp
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: MPVReply.self)
        let write: @Sendable () -> Void = {
            if let instant {
                // Spins to the instant; one already past, or a clock not known (NaN), writes at once.
                var now = stamp()
                let giveUp = now + Self.maximumTimedSpin
                while now < instant, now < giveUp { now = stamp() }
            }
            handler.value.register(id, sent: stamp(), promise: promise)
            channel.writeAndFlush(buffer, promise: nil)
        }
        // A timed command waits on the event loop's timer until the spin window before its instant.
        let ahead = instant.map { $0 - stamp() - Self.timedSpin } ?? 0
        if ahead > 0, ahead < 3600 {
            loop.scheduleTask(in: .nanoseconds(Int64(ahead * 1e9))) { write() }
        } else {
            loop.execute(write)
        }
        return try await promise.futureResult.get()
    }

    /// Sends one command when the stamp clock reaches `instant` (seconds on it), and waits for its reply.
    ///
    /// The request is built at once and handed to the event loop, which waits on its timer until
    /// ``timedSpin`` before the instant, then spins to it and writes: a command sent the ordinary way
    /// leaves when the thread that decided it has woken up, later by a varying amount on a busy machine.
    /// On the real-time ``timingGroup`` (the default) the loop's own wake-up is on time too. Call it
    /// some milliseconds ahead (a past instant, or an unknown clock (NaN), writes at once).
    @discardableResult
    public func command(_ arguments: [any Sendable], at instant: Double) async throws -> MPVReply {
        try await send(command: arguments.map { $0 as Any }, at: instant)
    }

    /// How long before a timed command's instant the event loop wakes and starts spinning (seconds).
    public static let timedSpin = 0.001

    /// The longest an event loop spins for a timed command's instant (seconds).
    public static let maximumTimedSpin = 0.005

    /// The event loop connections use unless told otherwise: one thread of its own, asking the system
    /// for `SCHED_FIFO` priority 10 (the headless player's presentation thread's; granted to root or
    /// with `CAP_SYS_NICE` or an `RLIMIT_RTPRIO`, else it runs at the normal policy), so that a timed
    /// command and the stamps of mpv's events and replies do not wait for a busy machine to schedule it.
    /// Measured in `coplay bench --scenario queue` (two cores, 7-10 busy processes): on the shared
    /// event loops, timed unpauses left p50 0.1 / p90 2.8 / p99 6.5 ms late, at most 18 ms.
    public static let timingGroup: MultiThreadedEventLoopGroup = {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // The loop's first task, so before any connection's work; nothing waits for it.
        group.next().execute {
            let setup = PresentationThread.prepareCurrentThread(name: "mpv-ipc", configuration: .init())
            timingSetup.withLockedValue { $0 = setup }
        }
        return group
    }()

    /// What ``timingGroup``'s thread obtained from the system (nil until its thread has asked, which is
    /// its first task: done once a connection on it has connected).
    public static var timingThreadSetup: PresentationThread.Setup? {
        _ = timingGroup
        return timingSetup.withLockedValue { $0 }
    }
    private static let timingSetup = NIOLockedValueBox<PresentationThread.Setup?>(nil)

    /// Sends a command and throws unless mpv answers `success`.
    public func run(_ arguments: [any Sendable]) async throws {
        let reply = try await command(arguments)
        guard reply.succeeded else {
            throw MPVError.commandFailed(arguments.map { "\($0)" }.joined(separator: " "), reply.error)
        }
    }

    /// Reads a property (its reply, so the caller also has the request's stamps).
    public func get(_ property: String) async throws -> MPVReply {
        try await command(["get_property", property])
    }

    /// Reads a numeric property, or `nil` when mpv says it is unavailable.
    public func number(_ property: String) async throws -> Double? {
        let reply = try await get(property)
        return reply.succeeded ? reply.data.number : nil
    }

    /// Sets a property; throws unless mpv accepts it.
    public func set(_ property: String, _ value: any Sendable) async throws {
        try await run(["set_property", property, value])
    }

    /// Asks mpv to send `property-change` events for `property`.
    public func observe(_ property: String, id: Int) async throws {
        try await run(["observe_property", id, property])
    }

    /// Closes the connection (mpv keeps running).
    public func close() async {
        try? await channel.close()
    }
}

/// Splits mpv's IPC stream into JSON lines: replies complete the promise waiting for their
/// `request_id`, events go to the event stream. Lives on its channel's event loop.
final class MPVIPCHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private var pending = ByteBuffer()
    private var waiting: [Int: (sent: Double, promise: EventLoopPromise<MPVReply>)] = [:]
    private var closed = false
    private let events: EventSubscribers
    private let stamp: @Sendable () -> Double

    init(events: EventSubscribers, stamp: @escaping @Sendable () -> Double) {
        self.events = events
        self.stamp = stamp
    }

    /// Registers a promise for `requestID`; fails it at once if the channel is gone.
    func register(_ requestID: Int, sent: Double, promise: EventLoopPromise<MPVReply>) {
        if closed {
            promise.fail(MPVError.ipc("the connection to mpv is closed"))
        } else {
            waiting[requestID] = (sent, promise)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let received = stamp()
        var buffer = unwrapInboundIn(data)
        pending.writeBuffer(&buffer)
        while let newline = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
            let length = newline - pending.readerIndex
            guard let line = pending.readBytes(length: length) else { break }
            pending.moveReaderIndex(forwardBy: 1)
            handle(line: line, received: received)
        }
        pending.discardReadBytes()
    }

    private func handle(line: [UInt8], received: Double) {
        guard let message = try? JSONDecoder().decode(Line.self, from: Data(line)) else { return }
        if let requestID = message.request_id {
            guard let (sent, promise) = waiting.removeValue(forKey: requestID) else { return }
            promise.succeed(MPVReply(error: message.error ?? "", data: message.data ?? .none, sent: sent, received: received))
        } else if let name = message.event {
            events.yield(MPVEvent(
                name: name, property: message.name, data: message.data ?? .none, reason: message.reason,
                fileError: message.file_error, args: message.args, received: received, playlistEntryID: message.playlist_entry_id))
        }
    }

    /// A line of mpv's IPC: a reply (with `request_id`) or an event (with `event`).
    private struct Line: Decodable {
        var request_id: Int?
        var error: String?
        var data: MPVValue?
        var event: String?
        var name: String?
        var reason: String?
        var file_error: String?
        var args: [String]?
        var playlist_entry_id: Int?
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        for (_, promise) in waiting.values {
            promise.fail(MPVError.ipc("mpv closed the connection"))
        }
        waiting.removeAll()
        events.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// The event streams handed out by ``MPVConnection/events()``: each event goes to every one.
final class EventSubscribers: Sendable {
    private struct State {
        var next = 0
        var continuations: [Int: AsyncStream<MPVEvent>.Continuation] = [:]
        var finished = false
    }
    private let state = NIOLockedValueBox(State())

    func subscribe() -> AsyncStream<MPVEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: MPVEvent.self, bufferingPolicy: .bufferingNewest(4096))
        let id: Int? = state.withLockedValue { state in
            guard !state.finished else { return nil }
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLockedValue { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    func yield(_ event: MPVEvent) {
        let all = state.withLockedValue { Array($0.continuations.values) }
        for continuation in all { continuation.yield(event) }
    }

    func finish() {
        let all = state.withLockedValue { state in
            state.finished = true
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in all { continuation.finish() }
    }
}
