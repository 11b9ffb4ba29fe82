import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import GroupSessions
import Logging
import SessionRelay
import Subprocess
import Testing
import TestSupport

/// The relay's metrics through swift-metrics and swift-prometheus, checked by Prometheus' own tools.
@Suite("Relay metrics (swift-metrics, Prometheus)", .timeLimit(.minutes(5)))
struct MetricsTests {
    /// A relay with a Prometheus registry and its metrics endpoint, for the duration of `body`.
    func withMetricsRelay(_ body: (RelayServer, _ relayPort: Int, _ metricsPort: Int) async throws -> Void) async throws {
        let prometheus = RelayPrometheus()
        var configuration = RelayConfiguration(host: "127.0.0.1", port: 0)
        configuration.metricsFactory = prometheus.factory
        try await withRelay(configuration) { relay, port in
            let metrics = MetricsServer(host: "127.0.0.1", port: 0, relay: relay, prometheus: prometheus, logger: Logger(label: "m"))
            let task = Task { try await metrics.run() }
            defer { task.cancel() }
            try await body(relay, port, try await metrics.boundPort())
        }
    }

    func get(_ url: String) async throws -> (status: Int, body: String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// Two members, one message, one refused hello: the counters and gauges that should move.
    func makeTraffic(port: Int) async throws -> (GroupSession<WatchMovie>, GroupSession<WatchMovie>) {
        let center = GroupActivityCenter<WatchMovie>(transport: RelayTransport(host: "127.0.0.1", port: port), logger: Logger(label: "test"))
        let invite = Invite.generate(host: "127.0.0.1", port: port)
        let a = try await center.activate(WatchMovie(movie: "m"), invite: invite)
        try await a.join()
        let b = try await center.accept(invite)
        let got = Collector(GroupSessionMessenger(session: b).messages(of: Data.self))
        try await b.join()
        try GroupSessionMessenger(session: a).send(Data("hi".utf8))
        await eventually("delivered") { got.count == 1 }
        var wrong = invite
        wrong.secret[0] ^= 1
        _ = try? await center.accept(wrong)  // refused: unauthorized
        return (a, b)
    }

    @Test("the exposition passes promtool check metrics and counts connections, frames, errors by code and delivery latency")
    func exposition() async throws {
        let promtool = "/usr/bin/promtool"
        try #require(FileManager.default.isExecutableFile(atPath: promtool), "promtool missing: scripts/install-deps.sh installs Debian's prometheus")
        try await withMetricsRelay { _, port, metricsPort in
            let (a, b) = try await makeTraffic(port: port)
            defer { a.leave(); b.leave() }
            let (status, text) = try await get("http://127.0.0.1:\(metricsPort)/metrics")
            #expect(status == 200)
            #expect(text.contains("coplay_relay_participants 2"))
            #expect(text.contains(#"coplay_relay_errors_total{code="unauthorized"} 1"#))
            #expect(text.contains("coplay_relay_frames_forwarded_total"))
            #expect(text.contains("# TYPE coplay_relay_delivery_latency_seconds histogram"))
            #expect(text.contains(#"coplay_relay_delivery_latency_seconds_bucket{le="+Inf"}"#))
            let check = try await Subprocess.run(
                .path(.init(promtool)), arguments: ["check", "metrics"], input: .string(text),
                output: .string(limit: 1 << 16), error: .string(limit: 1 << 16))
            #expect(check.terminationStatus.isSuccess, "promtool: \(check.standardOutput) \(check.standardError)")
            #expect(try await get("http://127.0.0.1:\(metricsPort)/other").status == 404)
        }
    }

    @Test("a real Prometheus server scrapes the relay and answers a query with its value")
    func realPrometheus() async throws {
        let binary = "/usr/bin/prometheus"
        try #require(FileManager.default.isExecutableFile(atPath: binary), "prometheus missing: scripts/install-deps.sh installs it")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-prometheus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withMetricsRelay { _, port, metricsPort in
            let (a, b) = try await makeTraffic(port: port)
            defer { a.leave(); b.leave() }
            let config = directory.appendingPathComponent("prometheus.yml")
            try """
                global:
                  scrape_interval: 1s
                scrape_configs:
                  - job_name: coplay-relay
                    static_configs:
                      - targets: ['127.0.0.1:\(metricsPort)']
                """.write(to: config, atomically: true, encoding: .utf8)
            let webPort = freePort()
            var options = PlatformOptions()
            options.teardownSequence = [.send(signal: .terminate, allowedDurationToNextStep: .seconds(5))]
            let outcome = try await Subprocess.run(
                .path(.init(binary)),
                arguments: [
                    "--config.file=\(config.path)", "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)",
                    "--web.listen-address=127.0.0.1:\(webPort)",
                ],
                platformOptions: options, input: .none, output: .discarded, error: .discarded
            ) { execution in
                defer { try? execution.send(signal: .terminate) }
                let query = "http://127.0.0.1:\(webPort)/api/v1/query?query=coplay_relay_participants"
                let deadline = ContinuousClock.now + .seconds(60)
                while ContinuousClock.now < deadline {
                    if let answer = try? await get(query), answer.body.contains(#""job":"coplay-relay""#) {
                        return answer.body
                    }
                    try await Task.sleep(for: .milliseconds(500))
                }
                return "no answer within 60 s"
            }
            let answer = outcome.closureResult
            #expect(answer.contains(#""__name__":"coplay_relay_participants""#), "\(answer)")
            #expect(answer.contains(#","2"]"#), "Prometheus stored the relay's value (2 participants): \(answer)")
        }
    }
}
