import Synchronization

/// What a benchmark's setup opened, for its closure and teardown.
final class RelayFixtures: Sendable {
    let relay = Mutex<RelayProcess?>(nil)
    let forwarding = Mutex<ForwardingSession?>(nil)
    let fanOut = Mutex<FanOutSession?>(nil)

    func startRelay() async throws -> RelayProcess {
        let relay = try await RelayProcess.start()
        self.relay.withLock { $0 = relay }
        return relay
    }

    func tearDown() {
        forwarding.withLock { $0 }?.close()
        fanOut.withLock { $0 }?.close()
        forwarding.withLock { $0 = nil }
        fanOut.withLock { $0 = nil }
        relay.withLock { $0 }?.stop()
        relay.withLock { $0 = nil }
    }
}
