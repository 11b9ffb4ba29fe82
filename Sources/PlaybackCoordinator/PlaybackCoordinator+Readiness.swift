extension PlaybackCoordinator {
    /// The suspension the coordinator holds on behalf of a player that is not ready.
    enum ReadinessSuspension: Sendable {
        case none
        /// Its begin is being sent.
        case beginning
        case open(PlaybackSuspension)
    }

    /// Follows the player's readiness reports: a report that is still not ready after the grace
    /// period begins a suspension; `ready` ends it. Runs as a child of ``run()``.
    func followReadiness(_ reports: AsyncStream<PlayerReadiness>) async {
        let grace = core.configuration.readinessGrace
        await withTaskGroup(of: Void.self) { group in
            for await report in reports {
                guard report != readiness else { continue }
                readiness = report
                readinessReports += 1
                if report == .ready {
                    await endReadinessSuspension()
                } else {
                    let generation = readinessReports
                    group.addTask {
                        if grace > .zero { do { try await self.clock.sleep(for: grace) } catch { return } }
                        await self.beginReadinessSuspension(ifUnchangedSince: generation)
                    }
                }
            }
            group.cancelAll()
        }
    }

    private func beginReadinessSuspension(ifUnchangedSince generation: Int) async {
        guard generation == readinessReports, let reason = readiness.suspensionReason,
            case .none = readinessSuspension
        else { return }
        readinessSuspension = .beginning
        do {
            let suspension = try await beginSuspension(reason)
            // Re-check after the await: the player may have become ready meanwhile.
            if readiness == .ready {
                readinessSuspension = .none
                try await suspension.end()
            } else {
                readinessSuspension = .open(suspension)
            }
        } catch {
            readinessSuspension = .none
            logger.info("could not suspend for the player", metadata: ["readiness": "\(readiness)", "error": "\(error)"])
        }
    }

    private func endReadinessSuspension() async {
        guard case .open(let suspension) = readinessSuspension else { return }
        readinessSuspension = .none
        do { try await suspension.end() } catch {
            logger.info("could not end the player's suspension", metadata: ["error": "\(error)"])
        }
    }
}
