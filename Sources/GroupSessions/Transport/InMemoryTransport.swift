import Logging
import Synchronization

/// A transport whose hub lives in this process: for unit tests and one-process demos.
///
/// It routes through the same `SessionHub` as the network relay, so sessions on it behave
/// as they do over TCP (ordering, retained frames, presence, limits), just without sockets.
/// It has no timer: members away longer than the presence grace are expired on the next
/// connect or frame.
///
/// ```swift
/// let transport = InMemoryTransport()
/// let center = GroupActivityCenter<Movie>(transport: transport, logger: logger)
/// ```
public final class InMemoryTransport: SessionTransport {
    private struct State: ~Copyable {
        var hub: SessionHub<Int>
        /// Journal attachments (the hub's journal operations are carried out at once).
        let journal = MemoryJournalStorage()
        var connections: [Int: AsyncThrowingStream<Frame, any Error>.Continuation] = [:]
        var nextID = 1
    }

    private let state: Mutex<State>
    private let start = ContinuousClock.now

    /// Creates an in-process hub with `limits`.
    public init(limits: HubLimits = HubLimits()) {
        state = Mutex(State(hub: SessionHub(limits: limits)))
    }

    public func connect(logger: Logger) async throws -> any TransportConnection {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Frame.self)
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.connections[id] = continuation
            let now = ContinuousClock.now - start
            var actions = state.hub.connect(id, now: now)
            actions += state.hub.tick(now: now)
            Self.apply(actions, to: &state)
            return id
        }
        return InMemoryConnection(id: id, transport: self, inbound: stream)
    }

    fileprivate func deliver(_ frame: Frame, from id: Int) throws {
        try state.withLock { state in
            guard state.connections[id] != nil else { throw GroupSessionError.connectionClosed }
            let now = ContinuousClock.now - start
            var actions = state.hub.receive(frame, from: id, now: now)
            actions += state.hub.tick(now: now)
            Self.apply(actions, to: &state)
        }
    }

    fileprivate func disconnect(_ id: Int) {
        state.withLock { state in
            let actions = state.hub.disconnect(id)
            state.connections.removeValue(forKey: id)?.finish()
            Self.apply(actions, to: &state)
        }
    }

    private static func apply(_ actions: [HubAction<Int>], to state: inout State) {
        var pending = actions
        while !pending.isEmpty {
            let action = pending.removeFirst()
            switch action {
            case .send(let id, let frame, _):
                state.connections[id]?.yield(frame)
            case .close(let id):
                state.connections.removeValue(forKey: id)?.finish()
                pending += state.hub.disconnect(id)
            case .journal(let operation):
                pending += state.hub.journalCompleted(operation, state.journal.performNow(operation))
            }
        }
    }
}

/// A connection to an ``InMemoryTransport``.
final class InMemoryConnection: TransportConnection {
    let id: Int
    let transport: InMemoryTransport
    let inbound: AsyncThrowingStream<Frame, any Error>

    init(id: Int, transport: InMemoryTransport, inbound: AsyncThrowingStream<Frame, any Error>) {
        self.id = id
        self.transport = transport
        self.inbound = inbound
    }

    func send(_ frame: Frame) throws { try transport.deliver(frame, from: id) }
    func close() { transport.disconnect(id) }
}
