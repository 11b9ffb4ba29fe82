import Crypto
import NIOCore
import RateLimiting

/// The relay's routing core as a pure state machine: frames and connection events in,
/// ``HubAction``s out, no I/O and no clock of its own (journal storage too is read and written
/// by its shell: ``HubAction/journal(_:)``, ``journalCompleted(_:_:)``).
///
/// The hub admits connections to sessions by join-token hash (the first connection registers
/// the hash), stamps one per-session sequence number on every frame it forwards (one total
/// order), fans data out to all members or a listed subset, keeps the latest retained frame
/// per key and replays it to every newly admitted connection, announces presence, ends
/// sessions, and enforces ``HubLimits`` by answering the offender only with an error frame.
///
/// Both the network relay (`SessionRelay`) and ``InMemoryTransport`` drive a hub, so the
/// in-process transport routes exactly as the relay does.
///
/// ```swift
/// var hub = SessionHub<Int>(limits: HubLimits())
/// var actions = hub.connect(1)
/// actions += hub.receive(helloFrame, from: 1, now: .zero)
/// for action in actions { /* write or close */ }
/// ```
package struct SessionHub<Connection: Hashable & Sendable>: Sendable {
    /// A connection's place in the hub.
    struct ConnectionState: Sendable {
        var session: SessionID?
        var participant: ParticipantID?
        var joined = false
        /// Its data frames' rate limit (``HubLimits/ratePerSecond``, ``HubLimits/burst``).
        var tokens: TokenBucket
        /// When the last frame arrived on it (or it connected), for ``HubLimits/idleTimeout``.
        var lastHeard: Duration
    }

    /// One session's routing state.
    struct SessionState: Sendable {
        var tokenHash: [UInt8]
        var sequence: UInt64 = 0
        /// Admitted connections by participant.
        var members: [ParticipantID: Connection] = [:]
        /// Participants that have joined, in join order.
        var joined: [ParticipantID] = []
        /// Latest retained data frame per opaque key.
        var retained: [[UInt8]: Frame] = [:]
        /// Joined participants whose connection dropped, with the time it dropped (presence grace).
        var away: [ParticipantID: Duration] = [:]
        /// Stamped frames kept for resuming members.
        var log = ResumeLog()
        /// Per sender, the highest sender sequence stamped.
        var senderHigh: [ParticipantID: UInt64] = [:]

        mutating func stamp() -> UInt64 {
            sequence &+= 1
            return sequence
        }

        /// Whether a frame retained under `key` fits: the key is held already, the session holds
        /// fewer than `maximum` keys, or one of its frames may make room (``FrameFlags/evictable``).
        func hasRoom(for key: [UInt8], maximum: Int) -> Bool {
            retained[key] != nil || retained.count < maximum || retained.values.contains { $0.flags.contains(.evictable) }
        }

        /// Keeps `frame` as the latest under `key` unless a later one is held, dropping the least
        /// recently stamped evictable frames while the session would hold more than `maximum`
        /// keys. Returns how many were dropped.
        mutating func retain(_ frame: Frame, under key: [UInt8], maximum: Int) -> Int {
            if let held = retained[key], held.sequence > frame.sequence { return 0 }
            var frame = frame
            frame.flags.remove(.replayed)
            retained[key] = frame
            var evicted = 0
            while retained.count > maximum,
                let oldest = retained.filter({ $0.key != key && $0.value.flags.contains(.evictable) })
                    .min(by: { $0.value.sequence < $1.value.sequence })?.key
            {
                retained[oldest] = nil
                evicted += 1
            }
            return evicted
        }
    }

    /// The limits in force.
    package let limits: HubLimits
    /// Running totals.
    package internal(set) var counters = HubCounters()
    var connections: [Connection: ConnectionState] = [:]
    var sessions: [SessionID: SessionState] = [:]
    /// Committed journal attachments and uploads in progress (`SessionHub+Journal.swift`).
    var journal = HubJournalState<Connection>()
    /// The latest time an event carried (disconnects use it to date the start of a grace period).
    var now: Duration = .zero
    /// Whether the hub collects ``SessionStoreEvent``s for a persistent store.
    package var recordsStoreEvents = false
    var storeEvents: [SessionStoreEvent] = []

    /// Creates an empty hub.
    ///
    /// - Parameter limits: The limits to enforce.
    package init(limits: HubLimits) {
        self.limits = limits
    }

    /// Connections currently held.
    package var connectionCount: Int { connections.count }
    /// Sessions currently alive.
    package var sessionCount: Int { sessions.count }
    /// Joined participants over all sessions.
    package var participantCount: Int { sessions.values.reduce(0) { $0 + $1.joined.count - $1.away.count } }
    /// The session `connection` was admitted to (by `hello`), if any.
    package func session(of connection: Connection) -> SessionID? { connections[connection]?.session }
    /// The participant that said `hello` on `connection`, if any.
    package func participant(of connection: Connection) -> ParticipantID? { connections[connection]?.participant }
    /// Whether the hub holds neither connections nor sessions.
    package var isEmpty: Bool { connections.isEmpty && sessions.isEmpty }

    // MARK: Events

    /// A new connection arrived.
    ///
    /// - Returns: An error and a close if the hub is full, otherwise nothing.
    package mutating func connect(_ connection: Connection, now: Duration = .zero) -> [HubAction<Connection>] {
        guard connections.count < limits.maximumConnections else {
            counters.framesRefused += 1
            return [
                .send(connection, Self.error(.tooManyConnections, detail: "relay is at its connection limit"), droppable: false),
                .close(connection),
            ]
        }
        self.now = max(self.now, now)
        connections[connection] = ConnectionState(
            tokens: TokenBucket(capacity: Double(limits.burst), rate: Double(limits.ratePerSecond), now: now), lastHeard: now)
        return []
    }

    /// A connection went away (closed by the peer, failed, or closed by the shell).
    ///
    /// A joined member stays a member for ``HubLimits/presenceGrace`` (see ``tick(now:)``), so it
    /// can resume without its presence flapping.
    package mutating func disconnect(_ connection: Connection) -> [HubAction<Connection>] {
        disconnect(connection, immediately: false)
    }

    mutating func disconnect(_ connection: Connection, immediately: Bool) -> [HubAction<Connection>] {
        guard let state = connections.removeValue(forKey: connection) else { return [] }
        var actions: [HubAction<Connection>] = []
        if let id = state.session, let participant = state.participant {
            removeMember(participant, connection: connection, from: id, immediately: immediately, into: &actions)
        }
        return actions
    }

    /// The connection's byte stream could not be decoded: answer and close it.
    package mutating func decodingFailed(_ error: FrameDecodingError, on connection: Connection) -> [HubAction<Connection>] {
        counters.framesRefused += 1
        return [
            .send(connection, Self.error(error.relayErrorCode, detail: error.description), droppable: false),
            .close(connection),
        ]
    }

    /// A frame arrived on `connection`.
    ///
    /// - Parameters:
    ///   - frame: The decoded frame.
    ///   - connection: Who sent it.
    ///   - now: The shell's monotonic time, for rate limiting.
    package mutating func receive(_ frame: Frame, from connection: Connection, now: Duration) -> [HubAction<Connection>] {
        guard connections[connection] != nil else { return [] }
        self.now = max(self.now, now)
        if let heard = connections[connection]?.lastHeard, heard < now { connections[connection]?.lastHeard = now }
        counters.framesReceived += 1
        var actions: [HubAction<Connection>] = []
        switch frame.type {
        case .hello: hello(frame, from: connection, into: &actions)
        case .join: join(from: connection, into: &actions)
        case .data: data(frame, from: connection, now: now, into: &actions)
        case .end: end(from: connection, into: &actions)
        case .leave:
            actions += disconnect(connection, immediately: true)
            actions.append(.close(connection))
        case .ping:
            var pong = frame
            pong.type = .pong
            pong.sender = .relay
            pong.payload = ByteBuffer()
            actions.append(.send(connection, pong, droppable: false))
        case .pong:
            break
        case let type where type.isJournal:
            journalFrame(frame, from: connection, into: &actions)
        default:
            refuse(connection, .unsupportedType, "frame type \(frame.type) is not accepted by the relay", into: &actions)
        }
        return actions
    }

    // MARK: Frame handlers

    private mutating func hello(_ frame: Frame, from connection: Connection, into actions: inout [HubAction<Connection>]) {
        guard connections[connection]?.session == nil else {
            refuse(connection, .malformed, "hello sent twice on one connection", close: true, into: &actions)
            return
        }
        guard frame.sender != .relay else {
            refuse(connection, .malformed, "participant id 0 is reserved", close: true, into: &actions)
            return
        }
        let hello: HelloPayload
        do { hello = try HelloPayload(decoding: frame.payload) } catch {
            refuse(connection, .malformed, error.description, close: true, into: &actions)
            return
        }
        if let resumeAfter = hello.resumeAfter {
            resume(frame, token: hello.token, after: resumeAfter, from: connection, into: &actions)
            return
        }
        let hash = SessionKeys.joinTokenHash(hello.token)
        let isNew = sessions[frame.session] == nil
        var session = sessions[frame.session] ?? SessionState(tokenHash: hash)
        guard Self.constantTimeEqual(session.tokenHash, hash) else {
            refuse(connection, .unauthorized, "join token does not match this session", close: true, into: &actions)
            return
        }
        if let previous = session.members[frame.sender], previous != connection {
            // The same participant reconnected before its old connection was noticed dead:
            // the authenticated newcomer replaces it.
            sessions[frame.session] = session
            connections[previous]?.session = nil
            removeMember(frame.sender, connection: previous, from: frame.session, immediately: true, into: &actions)
            actions.append(.close(previous))
            session = sessions[frame.session] ?? SessionState(tokenHash: hash)
        } else if session.away[frame.sender] != nil {
            // A member that was away enters afresh instead of resuming: it left first.
            sessions[frame.session] = session
            expire([frame.sender], in: frame.session, into: &actions)
            session = sessions[frame.session] ?? SessionState(tokenHash: hash)
        }
        guard session.members.count + session.away.count < limits.maximumMembersPerSession else {
            refuse(connection, .quotaExceeded, "session is at its member limit", close: true, into: &actions)
            return
        }
        sessions[frame.session] = nil  // mutated in place from here on (see `data`); put back below
        session.members[frame.sender] = connection
        connections[connection]?.session = frame.session
        connections[connection]?.participant = frame.sender
        let welcome = WelcomePayload(
            sequence: session.sequence, maximumPayload: UInt32(clamping: limits.maximumPayload),
            ratePerSecond: UInt32(clamping: limits.ratePerSecond), burst: UInt32(clamping: limits.burst),
            members: session.joined, retainedCount: UInt32(session.retained.count))
        actions.append(
            .send(
                connection,
                Frame(type: .welcome, session: frame.session, sender: .relay, sequence: session.sequence,
                      payload: welcome.encoded()),
                droppable: false))
        for var retained in session.retained.values.sorted(by: { $0.sequence < $1.sequence }) {
            retained.flags.insert(.replayed)
            actions.append(.send(connection, retained, droppable: false))
        }
        replayJournal(frame.session, to: connection, into: &actions)
        sessions[frame.session] = session
        if isNew { recordUpdate(frame.session) }
    }

    private mutating func join(from connection: Connection, into actions: inout [HubAction<Connection>]) {
        guard let state = connections[connection], let id = state.session, let participant = state.participant,
            sessions[id] != nil
        else {
            refuse(connection, .notJoined, "join needs a hello first", into: &actions)
            return
        }
        guard !state.joined, var session = sessions.removeValue(forKey: id) else { return }  // in place, as in `data`
        connections[connection]?.joined = true
        session.joined.append(participant)
        let frame = Frame(type: .joined, session: id, sender: participant, sequence: session.stamp())
        for member in session.members.values { actions.append(.send(member, frame, droppable: false)) }
        log(frame, in: &session)
        sessions[id] = session
        recordUpdate(id)
    }

    private mutating func data(
        _ frame: Frame, from connection: Connection, now: Duration, into actions: inout [HubAction<Connection>]
    ) {
        // Taken out of the dictionary and put back on every path, so that stamping, logging and the
        // sender's high-water mark mutate the session in place: a copy left in `sessions` would make
        // each of them copy the whole resume log and member tables (copy-on-write), per frame.
        guard let state = connections[connection], state.joined, let id = state.session,
            let participant = state.participant, var session = sessions.removeValue(forKey: id)
        else {
            refuse(connection, .notJoined, "data needs a joined connection", into: &actions)
            return
        }
        defer { sessions[id] = session }
        var payload = frame.payload
        let route: DataRoute
        do { route = try DataRoute.decode(from: &payload) } catch {
            refuse(connection, .malformed, error.description, into: &actions)
            return
        }
        guard frame.session == id else {
            refuse(connection, .wrongSession, "frame names session \(frame.session)", sequence: route.senderSequence,
                   into: &actions)
            return
        }
        guard frame.payload.readableBytes <= limits.maximumPayload else {
            refuse(connection, .frameTooLarge,
                   "data payload of \(frame.payload.readableBytes) bytes exceeds \(limits.maximumPayload)",
                   sequence: route.senderSequence, into: &actions)
            return
        }
        guard route.senderSequence > session.senderHigh[participant, default: 0] else {
            // A resuming sender sent again a frame already stamped: its ack was replayed.
            counters.duplicatesDropped += 1
            return
        }
        guard takeToken(connection, now: now) else {
            refuse(connection, .rateLimited,
                   "more than \(limits.ratePerSecond) frames/s (burst \(limits.burst)); frame dropped",
                   sequence: route.senderSequence, into: &actions)
            return
        }
        let retained = !route.retainKey.isEmpty
        if retained {
            guard route.recipients.isEmpty else {
                refuse(connection, .malformed, "a retained frame must go to every member",
                       sequence: route.senderSequence, into: &actions)
                return
            }
            guard session.hasRoom(for: route.retainKey, maximum: limits.maximumRetainedKeys) else {
                refuse(connection, .quotaExceeded, "more than \(limits.maximumRetainedKeys) retained keys",
                       sequence: route.senderSequence, into: &actions)
                return
            }
        }

        var out = frame
        out.sender = participant
        out.flags.remove(.replayed)
        out.sequence = session.stamp()
        session.senderHigh[participant] = route.senderSequence
        var ack = ByteBuffer()
        ack.writeInteger(route.senderSequence)
        actions.append(
            .send(connection, Frame(type: .ack, session: id, sender: .relay, sequence: out.sequence, payload: ack),
                  droppable: false))

        let droppable = frame.flags.contains(.unreliable)
        var count: UInt64 = 0
        if route.recipients.isEmpty {
            for (member, target) in session.members where member != participant {
                // Admitted-but-not-joined connections see retained updates only.
                guard retained || connections[target]?.joined == true else { continue }
                actions.append(.send(target, out, droppable: droppable))
                count += 1
            }
        } else {
            for recipient in Set(route.recipients) where recipient != participant {
                guard let target = session.members[recipient], connections[target]?.joined == true else { continue }
                actions.append(.send(target, out, droppable: droppable))
                count += 1
            }
        }
        counters.framesForwarded += count
        counters.bytesForwarded += count * UInt64(out.payload.readableBytes)
        if retained {
            counters.retainedEvicted += UInt64(session.retain(out, under: route.retainKey, maximum: limits.maximumRetainedKeys))
        }
        log(out, in: &session)
    }

    private mutating func end(from connection: Connection, into actions: inout [HubAction<Connection>]) {
        guard let state = connections[connection], state.joined, let id = state.session,
            let participant = state.participant, var session = sessions.removeValue(forKey: id)
        else {
            refuse(connection, .notJoined, "end needs a joined connection", into: &actions)
            return
        }
        let frame = Frame(type: .end, session: id, sender: participant, sequence: session.stamp())
        journalMemberGone(connection, session: id, sessionDeleted: true, into: &actions)
        for member in session.members.values {
            connections[member]?.session = nil
            connections[member]?.participant = nil
            connections[member]?.joined = false
            actions.append(.send(member, frame, droppable: false))
            actions.append(.close(member))
        }
        if recordsStoreEvents { storeEvents.append(.deleted(id)) }
    }

    // MARK: Helpers

    private mutating func removeMember(
        _ participant: ParticipantID, connection: Connection, from id: SessionID, immediately: Bool,
        into actions: inout [HubAction<Connection>]
    ) {
        guard var session = sessions[id], session.members[participant] == connection else { return }
        sessions[id] = nil  // mutated in place (see `data`); put back on both paths below
        session.members[participant] = nil
        if session.joined.contains(participant), !immediately, limits.presenceGrace > .zero {
            session.away[participant] = now
            sessions[id] = session
            journalMemberGone(connection, session: id, sessionDeleted: false, into: &actions)
            return
        }
        sessions[id] = session
        journalMemberGone(connection, session: id, sessionDeleted: false, into: &actions)
        expire([participant], in: id, into: &actions)
    }

    private mutating func takeToken(_ connection: Connection, now: Duration) -> Bool {
        guard let granted = connections[connection]?.tokens.take(now: now) else { return false }
        return granted
    }

    mutating func refuse(
        _ connection: Connection, _ code: RelayErrorCode, _ detail: String, sequence: UInt64 = 0, close: Bool = false,
        into actions: inout [HubAction<Connection>]
    ) {
        counters.framesRefused += 1
        actions.append(.send(connection, Self.error(code, sequence: sequence, detail: detail), droppable: false))
        if close {
            actions += disconnect(connection, immediately: false)
            actions.append(.close(connection))
        }
    }

    /// An error frame from the relay.
    static func error(_ code: RelayErrorCode, sequence: UInt64 = 0, detail: String) -> Frame {
        Frame(
            type: .error, session: SessionID(high: 0, low: 0), sender: .relay,
            payload: ErrorPayload(code: code, senderSequence: sequence, detail: detail).encoded())
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }

    /// Records unreliable frames the shell dropped for slow recipients.
    package mutating func recordDropped(_ count: Int) { counters.framesDropped += UInt64(count) }
}
