import NIOCore

extension SessionHub {
    // MARK: Resume

    /// A `hello` carrying `resumeAfter`: the member takes its place back (no `joined`), gets a
    /// `welcome`, then every frame stamped after `after` that was meant for it (flag
    /// `replayed`), with its own data frames answered by their `ack`s instead.
    mutating func resume(
        _ frame: Frame, token: [UInt8], after: UInt64, from connection: Connection,
        into actions: inout [HubAction<Connection>]
    ) {
        let id = frame.session
        let participant = frame.sender
        guard var session = sessions[id] else {
            refuse(connection, .cannotResume,
                   "the relay no longer knows session \(id) (it ended, or its last member timed out)",
                   close: true, into: &actions)
            return
        }
        guard Self.constantTimeEqual(session.tokenHash, SessionKeys.joinTokenHash(token)) else {
            refuse(connection, .unauthorized, "join token does not match this session", close: true, into: &actions)
            return
        }
        guard session.joined.contains(participant) else {
            refuse(connection, .cannotResume,
                   "participant \(participant) is no longer a member (away longer than the grace period)",
                   close: true, into: &actions)
            return
        }
        guard after >= session.log.floor, after <= session.sequence else {
            refuse(connection, .cannotResume,
                   "the frames after \(after) are no longer held (the relay keeps those after \(session.log.floor) up to \(session.sequence))",
                   close: true, into: &actions)
            return
        }
        if let previous = session.members[participant], previous != connection {
            // The old connection was not noticed dead yet: detach it quietly, presence unchanged.
            connections[previous]?.session = nil
            connections[previous]?.participant = nil
            connections[previous]?.joined = false
            actions.append(.close(previous))
        }
        sessions[id] = nil  // mutated in place from here on (see `SessionHub.data`); put back below
        session.away[participant] = nil
        session.members[participant] = connection
        connections[connection]?.session = id
        connections[connection]?.participant = participant
        connections[connection]?.joined = true
        counters.resumes += 1
        let welcome = WelcomePayload(
            sequence: session.sequence, maximumPayload: UInt32(clamping: limits.maximumPayload),
            ratePerSecond: UInt32(clamping: limits.ratePerSecond), burst: UInt32(clamping: limits.burst),
            members: session.joined, retainedCount: 0)
        actions.append(
            .send(connection,
                  Frame(type: .welcome, session: id, sender: .relay, sequence: session.sequence, payload: welcome.encoded()),
                  droppable: false))
        for var logged in session.log.frames(after: after) {
            if logged.type == .data {
                var payload = logged.payload
                guard let route = try? DataRoute.decode(from: &payload) else { continue }
                if logged.sender == participant {
                    var ack = ByteBuffer()
                    ack.writeInteger(route.senderSequence)
                    actions.append(
                        .send(connection, Frame(type: .ack, session: id, sender: .relay, sequence: logged.sequence, payload: ack),
                              droppable: false))
                    continue
                }
                guard !logged.flags.contains(.unreliable),
                    route.recipients.isEmpty || route.recipients.contains(participant)
                else { continue }
            }
            logged.flags.insert(.replayed)
            actions.append(.send(connection, logged, droppable: false))
        }
        sessions[id] = session
    }

    // MARK: Presence grace

    /// Lets time pass: connections that sent nothing for ``HubLimits/idleTimeout`` are closed
    /// (a joined member's connection goes away as if it had dropped: it gets the presence grace),
    /// members away longer than ``HubLimits/presenceGrace`` leave (a `left` frame to the rest),
    /// and a session left without members is deleted.
    ///
    /// The shell calls this periodically (the relay four times a second).
    ///
    /// - Parameter now: The shell's monotonic time, on the same scale as ``receive(_:from:now:)``.
    package mutating func tick(now: Duration) -> [HubAction<Connection>] {
        self.now = max(self.now, now)
        var actions: [HubAction<Connection>] = []
        if limits.idleTimeout > .zero {
            let idle = connections.filter { now - $0.value.lastHeard >= limits.idleTimeout }.map(\.key)
            for connection in idle {
                counters.idleConnectionsClosed += 1
                actions += disconnect(connection)
                actions.append(.close(connection))
            }
        }
        for id in Array(sessions.keys) {
            guard let away = sessions[id]?.away, !away.isEmpty else { continue }
            let expired = away.filter { now - $0.value >= limits.presenceGrace }.map(\.key).sorted()
            if !expired.isEmpty { expire(expired, in: id, into: &actions) }
        }
        return actions
    }

    /// Removes participants that hold no connection (away, or just detached): `left` for the
    /// joined ones, and the session deleted if nobody remains.
    mutating func expire(_ participants: [ParticipantID], in id: SessionID, into actions: inout [HubAction<Connection>]) {
        guard var session = sessions.removeValue(forKey: id) else { return }  // in place; put back below
        var changed = false
        for participant in participants {
            session.away[participant] = nil
            guard let index = session.joined.firstIndex(of: participant) else { continue }
            session.joined.remove(at: index)
            changed = true
            let frame = Frame(type: .left, session: id, sender: participant, sequence: session.stamp())
            for member in session.members.values { actions.append(.send(member, frame, droppable: false)) }
            log(frame, in: &session)
        }
        if session.members.isEmpty && session.away.isEmpty {
            sessions[id] = nil
            journalSessionDeleted(id, into: &actions)
            if recordsStoreEvents { storeEvents.append(.deleted(id)) }
        } else {
            sessions[id] = session
            if changed { recordUpdate(id) }
        }
    }

    // MARK: Log and store events

    /// Appends a frame just stamped to the session's resume log (and the store's, if recording).
    mutating func log(_ frame: Frame, in session: inout SessionState) {
        session.log.append(frame, maximumFrames: limits.resumeLogFrames, maximumBytes: limits.resumeLogBytes)
        if recordsStoreEvents { storeEvents.append(.logged(frame.session, frame)) }
    }

    /// Records the session's metadata (token hash, members, counters) for the store.
    mutating func recordUpdate(_ id: SessionID) {
        guard recordsStoreEvents, let session = sessions[id] else { return }
        storeEvents.append(.updated(metadata(of: session, id: id)))
    }

    private func metadata(of session: SessionState, id: SessionID) -> SessionSnapshot {
        SessionSnapshot(
            session: id, tokenHash: session.tokenHash, sequence: session.sequence, logFloor: session.log.floor,
            joined: session.joined, senderHigh: session.senderHigh)
    }

    /// Takes the store events recorded since the last call, oldest first.
    ///
    /// Call it after every hub call and write the events before carrying out that call's actions.
    package mutating func takeStoreEvents() -> [SessionStoreEvent] {
        defer { storeEvents.removeAll(keepingCapacity: true) }
        return storeEvents
    }

    /// Everything the hub holds about session `id` (metadata, retained frames, resume log), or
    /// `nil` if there is no such session.
    package func snapshot(of id: SessionID) -> SessionSnapshot? {
        guard let session = sessions[id] else { return nil }
        var snapshot = metadata(of: session, id: id)
        snapshot.retained = session.retained.values.sorted { $0.sequence < $1.sequence }
        snapshot.log = Array(session.log.frames)
        return snapshot
    }

    /// Rebuilds a session from a snapshot (a relay restarting on its data directory).
    ///
    /// Every joined member starts away, as if its connection had just dropped: it has
    /// ``HubLimits/presenceGrace`` to resume. A snapshot without joined members is ignored.
    ///
    /// - Parameters:
    ///   - snapshot: The persisted session.
    ///   - now: The shell's monotonic time.
    package mutating func restore(_ snapshot: SessionSnapshot, now: Duration) {
        self.now = max(self.now, now)
        guard !snapshot.joined.isEmpty else { return }
        var session = SessionState(tokenHash: snapshot.tokenHash)
        session.sequence = snapshot.sequence
        session.joined = snapshot.joined
        session.senderHigh = snapshot.senderHigh
        for participant in snapshot.joined { session.away[participant] = now }
        for frame in snapshot.retained { retain(frame, in: &session) }
        session.log = ResumeLog(floor: snapshot.logFloor)
        for frame in snapshot.log where frame.sequence > snapshot.logFloor {
            session.log.append(frame, maximumFrames: limits.resumeLogFrames, maximumBytes: limits.resumeLogBytes)
            session.sequence = max(session.sequence, frame.sequence)
            guard frame.type == .data else { continue }
            retain(frame, in: &session)
            var payload = frame.payload
            if let route = try? DataRoute.decode(from: &payload) {
                session.senderHigh[frame.sender] = max(session.senderHigh[frame.sender, default: 0], route.senderSequence)
            }
        }
        sessions[snapshot.session] = session
    }

    /// Retains a restored frame as the live path did (evictions included, so the restored
    /// session holds the keys the live one held).
    private func retain(_ frame: Frame, in session: inout SessionState) {
        var payload = frame.payload
        guard let route = try? DataRoute.decode(from: &payload), !route.retainKey.isEmpty else { return }
        _ = session.retain(frame, under: route.retainKey, maximum: limits.maximumRetainedKeys)
    }
}
