/// Noticing a connection that went silent (see ``Keepalive`` and ``ReconnectPolicy``).
extension SessionEngine {
    /// The engine's monotonic time: time since it was created.
    var uptime: Duration { origin.duration(to: .now) }

    /// Runs connection `generation` until its read loop ends: the read loop itself and, beside
    /// it, the keepalive that pings the relay and gives the connection up when it falls silent.
    func serve(_ connection: any TransportConnection, generation: Int) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.keepalive(connection, generation: generation) }
            await readLoop(connection, generation: generation)
            group.cancelAll()
        }
    }

    /// Pings every `pingInterval`; once nothing has arrived for `livenessTimeout`, closes the
    /// connection and goes through the same path as a closed socket (reconnect and resume, or
    /// invalidate). Ends when cancelled, when the connection is replaced or the session invalidated.
    private func keepalive(_ connection: any TransportConnection, generation: Int) async {
        var pings: UInt64 = 0
        while !Task.isCancelled {
            let now = uptime
            let action = inner.withLock { inner -> Keepalive.Action? in
                guard inner.generation == generation else { return nil }
                if case .invalidated = inner.state { return nil }
                return inner.keepalive.poll(now: now)
            }
            switch action {
            case nil, .wait(until: .none):
                return
            case .wait(let until?):
                do { try await Task.sleep(until: origin + until, clock: .continuous) } catch { return }
            case .ping:
                pings += 1
                // The relay echoes the sequence in its pong; any frame counts as a sign of life.
                try? connection.send(Frame(type: .ping, session: session, sender: local, sequence: pings))
            case .dead(let silence):
                logger.info("nothing received from the relay for a while; the connection is taken for lost",
                            metadata: ["silence": "\(silence)"])
                connection.close()
                connectionDropped(generation: generation, reason: "nothing received from the relay for \(silence)")
                return
            }
        }
    }
}
