import ClockSync
import Logging
import NIOCore
import Synchronization

/// A TimeServer on a free loopback UDP port and a client transport to it, shared by the round-trip
/// benchmark's setup, iterations and teardown.
final class TimeServerFixture: Sendable {
    private struct Running: Sendable {
        let server: TimeServer<ContinuousClock>
        let serving: Task<Void, any Error>
        let transport: UDPTimeTransport<ContinuousClock>
        let timescale: LocalTimescale<ContinuousClock>
    }

    private let running = Mutex<Running?>(nil)
    /// Distinguishes requests: the transport matches a response to its request by transmit timestamp.
    private let counter = Atomic<UInt64>(0)

    /// Starts the server (no rate limit: the benchmark is one client asking as fast as it can) and
    /// connects the client.
    func start() async throws {
        var logger = Logger(label: "coplay.benchmarks.time")
        logger.logLevel = .error
        var core = TimeServerCore.Configuration()
        core.rateLimit = nil
        let server = TimeServer(configuration: .init(host: "127.0.0.1", port: 0, core: core), logger: logger)
        let serving = Task { try await server.run() }
        do {
            let address = try await server.boundAddress()
            let timescale = LocalTimescale(clock: ContinuousClock())
            let transport = try await UDPTimeTransport.connect(
                host: "127.0.0.1", port: address.port ?? 0, timescale: timescale, localHost: "127.0.0.1")
            running.withLock {
                $0 = Running(server: server, serving: serving, transport: transport, timescale: timescale)
            }
        } catch {
            server.shutdown()
            serving.cancel()
            throw error
        }
    }

    /// One client request and its response, or `nil` after a second without one.
    func exchange() async throws -> NTPExchange? {
        guard let running = running.withLock({ $0 }) else { return nil }
        let salt = counter.add(1, ordering: .relaxed).newValue
        let transmit = NTPTimestamp(rawValue: running.timescale.now().rawValue ^ (salt & 0xFFF))
        let request = NTPPacket(mode: .client, transmitTimestamp: transmit)
        return try await running.transport.exchange(request, timeout: .seconds(1))
    }

    /// Closes the client and stops the server.
    func stop() async {
        guard let running = running.withLock({ value in defer { value = nil }; return value }) else { return }
        await running.transport.close()
        running.server.shutdown()
        _ = await running.serving.result
    }
}
