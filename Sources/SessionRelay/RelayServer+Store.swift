import GroupSessions
import Logging

extension RelayServer {
    /// Opens the session store in `directory` and restores the sessions it holds: their members
    /// start away, with the presence grace period to reconnect and resume.
    func openStore(_ directory: String) throws {
        let store = try SessionStore(directory: directory, logger: logger)
        let snapshots = try store.load()
        core.withLock { core in
            let now = self.now()
            for snapshot in snapshots { core.hub.restore(snapshot, now: now) }
            // Sessions the hub did not take (no joined member) are deleted from disk too.
            for snapshot in snapshots where core.hub.snapshot(of: snapshot.session) == nil {
                store.apply(.deleted(snapshot.session))
            }
            core.hub.recordsStoreEvents = true
            core.store = store
        }
        logger.info("restored sessions from the data directory", metadata: [
            "sessions": "\(snapshots.count)", "directory": "\(directory)",
        ])
    }

    /// Writes the hub's pending store events (with the core lock held).
    func persist(_ core: inout Core) {
        guard let store = core.store else { return }
        let events = core.hub.takeStoreEvents()
        guard !events.isEmpty else { return }
        var compact: Set<SessionID> = []
        for event in events {
            store.apply(event)
            if case .logged(let session, _) = event, store.needsCompaction(session) { compact.insert(session) }
        }
        for session in compact {
            guard let snapshot = core.hub.snapshot(of: session) else { continue }
            do { try store.compact(snapshot) } catch {
                logger.info("could not compact session state", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Lets the hub expire members away longer than the presence grace, four times a second,
    /// until the relay shuts down or is cancelled.
    func tickLoop() async {
        var ticks = 0
        while !Task.isCancelled {
            do { try await Task.sleep(for: .milliseconds(250)) } catch { return }
            ticks += 1
            if ticks % 4 == 0 { updateMetrics() }
            let stop = core.withLock { core -> Bool in
                guard !core.shuttingDown else { return true }
                apply(core.hub.tick(now: now()), to: &core)
                return false
            }
            if stop { return }
        }
    }
}
