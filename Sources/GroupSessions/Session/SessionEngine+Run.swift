/// The engine's one task: the connection's I/O, the read loop, the keepalive and reconnects.
extension SessionEngine {
    /// Runs the session until it is invalidated and its last connection is closed: serves
    /// `first` (connection 0), then, whenever a connection is lost and the machine says to
    /// resume, reconnects and serves the next. Work a handler starts (``spawn(_:)``) runs here
    /// too, as a child. Everything the session does on its own is a child of this call.
    func run(first: any TransportConnection) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                await self.serveConnections(first: first)
                self.jobsContinuation.finish()
            }
            for await job in jobs {
                group.addTask { await job() }
            }
        }
    }

    /// Serves connection after connection, one at a time: connection `n + 1` is only read once
    /// every frame of connection `n` has been handled, so handlers see one ordered sequence.
    private func serveConnections(first: any TransportConnection) async {
        var connection = first
        var generation = 0
        while true {
            await serve(connection, generation: generation)
            let reconnecting = inner.withLock { shell in
                if case .reconnecting = shell.machine.link, !shell.machine.isInvalidated { return true }
                return false
            }
            guard reconnecting, let next = await reconnect() else { return }
            (connection, generation) = next
        }
    }

    /// How a connection's service ended.
    private enum Ended: Sendable {
        /// The read loop ended: the connection closed (or failed with the error).
        case read(reason: String, failure: RelayTransportError?)
        /// The keepalive heard nothing for `silence`.
        case dead(silence: Duration)
    }

    /// Runs connection `generation` until it ends: its I/O, its read loop and, beside them, the
    /// keepalive that pings the relay and gives the connection up when it falls silent. Then
    /// tells the machine, which reconnects or invalidates.
    private func serve(_ connection: any TransportConnection, generation: Int) async {
        let ended = await withTaskGroup(of: Ended?.self) { group -> Ended? in
            group.addTask { await connection.run(); return nil }
            group.addTask { await self.readLoop(connection, generation: generation) }
            group.addTask { await self.keepalive(connection, generation: generation) }
            var first: Ended?
            // The first of the read loop and the keepalive to end decides; the others are cancelled
            // (a read loop in the middle of a frame finishes handling it first).
            while let next = await group.next() {
                if let next, first == nil {
                    first = next
                    group.cancelAll()
                }
            }
            return first
        }
        let now = uptime
        switch ended {
        case .read(let reason, let failure):
            perform { $0.machine.connectionEnded(generation: generation, reason: reason, transportFailure: failure, now: now) }
        case .dead(let silence):
            perform {
                $0.machine.connectionEnded(
                    generation: generation, reason: "nothing received from the relay for \(silence)", now: now)
            }
        case nil:
            perform { $0.machine.connectionEnded(generation: generation, reason: "the connection ended", now: now) }
        }
    }

    private func readLoop(_ connection: any TransportConnection, generation: Int) async -> Ended {
        do {
            for try await frame in connection.inbound {
                receive(frame, generation: generation)
            }
            return .read(reason: "the relay closed the connection", failure: nil)
        } catch {
            return .read(reason: "\(error)", failure: error as? RelayTransportError)
        }
    }

    /// One frame from connection `generation`: journal frames (and the journal's errors) go to
    /// the journal client, everything else to the machine.
    func receive(_ frame: Frame, generation: Int) {
        let now = uptime
        if frame.type.isJournal {
            inner.withLock { $0.machine.heard(generation: generation, now: now) }
            journal.handle(frame)
            return
        }
        if frame.type == .error, let payload = try? ErrorPayload(decoding: frame.payload), journal.handleError(payload) {
            inner.withLock { $0.machine.heard(generation: generation, now: now) }
            return
        }
        perform { $0.machine.receive(frame, generation: generation, now: now) }
    }

    /// Pings every `pingInterval`; once nothing has arrived for `livenessTimeout`, closes the
    /// connection and reports it dead. Returns `nil` when cancelled, when the connection is
    /// replaced, the session invalidated, or keepalive is off.
    private func keepalive(_ connection: any TransportConnection, generation: Int) async -> Ended? {
        while true {
            let now = uptime
            switch inner.withLock({ $0.machine.keepalive(generation: generation, now: now) }) {
            case .stop:
                return nil
            case .wait(let until):
                do { try await Task.sleep(until: origin + until, clock: .continuous) } catch { return nil }
            case .ping(let frame):
                try? connection.send(frame)
            case .dead(let silence):
                logger.info("nothing received from the relay for a while; the connection is taken for lost",
                            metadata: ["silence": "\(silence)"])
                connection.close()
                return .dead(silence: silence)
            }
        }
    }

    /// Attempts new connections with backoff until one is installed (its `hello` sent), the
    /// session is invalidated, or the policy's give-up time has passed since the loss.
    ///
    /// - Returns: The new connection and its generation, or `nil` when there is none to serve.
    private func reconnect() async -> (any TransportConnection, Int)? {
        while true {
            let now = uptime
            switch inner.withLock({ $0.machine.nextReconnectStep(now: now, random: Double.random(in: 0...1)) }) {
            case .stop:
                return nil
            case .giveUp(let actions):
                perform { _ in actions }
                return nil
            case .wait(let delay):
                guard await sleepUnlessStopped(for: delay) else { return nil }
            }
            perform { $0.machine.attemptStarting() }
            let connection: any TransportConnection
            do {
                connection = try await transport.makeConnection(logger: logger)
            } catch {
                inner.withLock { $0.machine.connectFailed("\(error)") }
                logger.debug("reconnect attempt failed", metadata: ["error": "\(error)"])
                continue
            }
            let now2 = uptime
            let generation: Int? = try? performThrowing { shell in
                guard let (generation, actions) = shell.machine.connected(now: now2) else { return (nil, []) }
                shell.connection = connection
                return (generation, actions)
            }
            guard let generation else {
                // Not wanted any more: close it (its I/O ends at once) and let its run finish.
                connection.close()
                await connection.run()
                return nil
            }
            journal.attach(connection)
            return (connection, generation)
        }
    }

    /// Sleeps `delay`; `false` if the session was invalidated (or the task cancelled) first.
    private func sleepUnlessStopped(for delay: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do { try await Task.sleep(for: delay) } catch { return false }
                return true
            }
            group.addTask {
                await self.stopped.wait()
                return false
            }
            let slept = await group.next() ?? false
            group.cancelAll()
            return slept
        }
    }
}
