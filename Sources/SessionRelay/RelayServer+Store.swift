import GroupSessions
import Logging

extension RelayServer {
    /// Opens the session store in `directory` and restores the sessions it holds: their members
    /// start away, with the presence grace period to reconnect and resume.
    func openStore(_ directory: String) async throws {
        let store = try SessionStore(directory: directory, logger: logger)
        try await restore(from: store)
        logger.info("restored sessions from the data directory", metadata: ["directory": "\(directory)"])
    }

    /// Restores every session `store` holds (one shard each), with its journal's attachments, and
    /// stores new sessions there.
    func restore(from store: any SessionPersistence) async throws {
        let snapshots = try await store.load()
        let now = self.now()
        var restored: [SessionID: SessionShard] = [:]
        for snapshot in snapshots {
            var hub = SessionHub<Int>(limits: Self.shardLimits(configuration.limits))
            hub.restore(snapshot, now: now)
            // A session the hub did not take (no joined member) is deleted from disk too.
            guard hub.snapshot(of: snapshot.session) != nil else {
                try await store.commit([.deleted(snapshot.session)], of: snapshot.session, lease: nil)
                continue
            }
            hub.restoreJournal(try await storage.journal.attachments(in: snapshot.session), of: snapshot.session)
            restored[snapshot.session] = SessionShard(
                session: snapshot.session, hub: hub, store: store, storage: storage, logger: logger, now: self.now,
                onFailure: { [weak self] shard in self?.retire(shard) })
        }
        core.withLock { core in
            core.shards.merge(restored) { old, _ in old }
            core.store = store
        }
        logger.info("restored sessions", metadata: ["sessions": "\(restored.count)"])
    }

    /// Lets every session's hub expire members away longer than the presence grace and idle
    /// connections, four times a second, until the relay shuts down or is cancelled; updates the
    /// metrics every second.
    func tickLoop() async {
        var ticks = 0
        while !Task.isCancelled {
            do { try await Task.sleep(for: .milliseconds(250)) } catch { return }
            ticks += 1
            if ticks % 4 == 0 { updateMetrics() }
            let shards = core.withLock { core -> [SessionShard]? in
                core.shuttingDown ? nil : Array(core.shards.values)
            }
            guard let shards else { return }
            let now = self.now()
            _ = lobby.tick(now: now)
            for shard in shards where shard.tick(now: now) { retire(shard) }
        }
    }
}
