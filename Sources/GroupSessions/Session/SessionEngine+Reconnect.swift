import Logging

extension SessionEngine {
    /// The connection state now.
    var connectionState: GroupSessionConnectionState { inner.withLock { $0.link } }

    /// The connection state now, then every change; finishes after `invalidated`.
    func connectionStateUpdates() -> AsyncStream<GroupSessionConnectionState> {
        let (stream, continuation) = AsyncStream.makeStream(of: GroupSessionConnectionState.self)
        subscribe(continuation, initial: { $0.link }, store: { $0.connectionStreams[$1] = $2 },
                  remove: { $0.connectionStreams[$1] = nil },
                  finished: { if case .invalidated = $0.state { true } else { false } })
        return stream
    }

    private static func setLink(_ link: GroupSessionConnectionState, inner: inout Inner) {
        guard inner.link != link else { return }
        inner.link = link
        for continuation in inner.connectionStreams.values { continuation.yield(link) }
    }

    /// The read loop of connection `generation` ended: reconnect (or invalidate if the session
    /// was never welcomed or the policy says never).
    func connectionDropped(generation: Int, reason: String) {
        enum Next { case nothing, invalidate, reconnect }
        let next = inner.withLock { inner -> Next in
            guard inner.generation == generation else { return .nothing }
            if case .invalidated = inner.state { return .nothing }
            guard inner.welcomed, policy.giveUpAfter > .zero else { return .invalidate }
            inner.lastConnectError = reason
            inner.resuming = false
            if inner.link == .connected {
                inner.lossStarted = .now
                Self.setLink(.reconnecting(attempt: 0), inner: &inner)
            }
            guard !inner.reconnectTaskRunning else { return .nothing }
            inner.reconnectTaskRunning = true
            return .reconnect
        }
        switch next {
        case .nothing: break
        case .invalidate: invalidate(.connectionLost(reason))
        case .reconnect:
            // Journal transfers do not resume: the ones in flight fail (the caller retries).
            journal.fail(all: .connectionClosed)
            logger.info("lost the connection to the relay; reconnecting", metadata: ["reason": "\(reason)"])
            // Runs until a new connection is installed, the session is invalidated, or it gives up.
            Task { await self.reconnect() }
        }
    }

    /// Attempts new connections with backoff until one is installed (its `hello` sent) or the
    /// policy's give-up time has passed since the loss.
    private func reconnect() async {
        while true {
            let step = inner.withLock { inner -> (attempt: Int, elapsed: Duration, error: String)? in
                guard case .reconnecting(let attempt) = inner.link else {
                    inner.reconnectTaskRunning = false
                    return nil
                }
                if case .invalidated = inner.state {
                    inner.reconnectTaskRunning = false
                    return nil
                }
                return (attempt, (inner.lossStarted ?? .now).duration(to: .now), inner.lastConnectError)
            }
            guard let step else { return }
            guard step.elapsed < policy.giveUpAfter else {
                invalidate(.connectionLost(
                    "could not resume the session within \(policy.giveUpAfter) of losing the relay (last error: \(step.error))"))
                return
            }
            try? await Task.sleep(for: min(policy.delay(forAttempt: step.attempt), policy.giveUpAfter - step.elapsed))
            inner.withLock { inner in
                if case .reconnecting(let attempt) = inner.link { Self.setLink(.reconnecting(attempt: attempt + 1), inner: &inner) }
            }
            let connection: any TransportConnection
            do {
                connection = try await transport.connect(logger: logger)
            } catch {
                inner.withLock { $0.lastConnectError = "\(error)" }
                logger.debug("reconnect attempt failed", metadata: ["error": "\(error)"])
                continue
            }
            let generation = inner.withLock { inner -> Int? in
                inner.reconnectTaskRunning = false
                guard case .reconnecting = inner.link else { return nil }
                if case .invalidated = inner.state { return nil }
                inner.generation += 1
                inner.connection = connection
                inner.keepalive = Keepalive(policy: policy, now: uptime)
                let joined = inner.state == .joined
                inner.resuming = joined
                let hello = HelloPayload(token: keys.joinToken, resumeAfter: joined ? inner.lastStamp : nil)
                try? connection.send(
                    Frame(type: .hello, flags: .presenceBatches, session: session, sender: local, payload: hello.encoded()))
                return inner.generation
            }
            guard let generation else {
                connection.close()
                return
            }
            journal.attach(connection)
            // The new connection's read loop and keepalive; its end starts the next reconnect.
            Task { await self.serve(connection, generation: generation) }
            return
        }
    }

    /// Handles the `welcome` answering a resuming `hello`: re-sends every unacknowledged
    /// reliable frame (the relay drops those it already stamped) and reports `connected`.
    ///
    /// - Returns: `false` if this welcome is not the answer to a resume.
    func resumed(_ welcome: WelcomePayload) -> Bool {
        let resent = inner.withLock { inner -> Int? in
            guard inner.resuming else { return nil }
            inner.resuming = false
            inner.maximumPayload = Int(welcome.maximumPayload)
            inner.ratePerSecond = max(1, Int(Double(welcome.ratePerSecond) * Self.rateMargin))
            inner.burst = max(1, Int(Double(welcome.burst) * Self.rateMargin))
            inner.tokens.setLimits(capacity: Double(inner.burst), rate: Double(inner.ratePerSecond))
            let members = Set(welcome.members)
            if members != inner.members {
                inner.members = members
                for continuation in inner.participantStreams.values { continuation.yield(inner.participants) }
            }
            for frame in inner.unacked.frames { try? inner.connection.send(frame) }
            inner.lossStarted = nil
            Self.setLink(.connected, inner: &inner)
            return inner.unacked.count
        }
        guard let resent else { return false }
        logger.info("resumed the session", metadata: ["resent": "\(resent)"])
        return true
    }

    /// A plain `welcome` after a reconnect (the member had not joined yet): connected again,
    /// and a join that was under way is asked again.
    func welcomedAfterReconnect(inner: inout Inner) {
        inner.resuming = false
        guard inner.link != .connected else { return }
        inner.lossStarted = nil
        Self.setLink(.connected, inner: &inner)
        if inner.joinWaiter != nil { try? inner.connection.send(Frame(type: .join, session: session, sender: local)) }
    }
}
