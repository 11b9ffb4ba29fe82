import Foundation
import Testing

/// `coplay control` is a member for the length of one command: the relay must see it leave when it
/// exits, not 15 s later when the relay's presence grace for a vanished connection runs out. Its
/// leaving is no event on the other members (a one-shot member is not announced), so the relay's
/// own count of joined participants (`--metrics`, `coplay_relay_participants`) is what shows it.
@Suite("coplay control leaves when it exits", .serialized)
struct ControlLeavesCLITests {
    typealias Session = PlaybackSessionCLITests

    /// `coplay_relay_participants` from the relay's metrics endpoint, or nil.
    static func participants(metricsPort: Int) async -> Int? {
        guard let result = try? await CoplayProcess.run(
            ["-s", "--max-time", "5", "http://127.0.0.1:\(metricsPort)/metrics"], executable: URL(fileURLWithPath: "/usr/bin/curl"), timeout: 10)
        else { return nil }
        let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("coplay_relay_participants ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) }
    }

    @Test("after each of three commands the relay counts the control member gone within 5 s (the grace is 15 s); no member hears of it", .timeLimit(.minutes(3)))
    func leavesAtOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-leave-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Session.makeMedia(in: directory)
        var children: [Session.Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (relay, _, host, invite) = try await Session.startRelayAndHost(
            media: [media], relayArguments: ["--metrics", "127.0.0.1:0"], children: &children)
        #expect(await relay.out.wait(for: .seconds(30)) { $0.contains { $0.contains("/metrics") } })
        let metricsPort = try #require(CoplayProcess.port(in: relay.out.snapshot.first { $0.contains("/metrics") }?.replacingOccurrences(of: "/metrics", with: "")))
        var hostOnly = false
        for _ in 0..<200 where !hostOnly {
            hostOnly = await Self.participants(metricsPort: metricsPort) == 1
            if !hostOnly { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(hostOnly, "the relay never counted the host alone")
        for action in ["play", "pause", "play"] {
            let result = try await CoplayProcess.run(["control", invite, action], timeout: 60)
            #expect(result.status == 0, "control \(action): \(result.stderr)")
            let exited = ContinuousClock.now
            var gone = false
            while !gone, exited.duration(to: .now) < .seconds(5) {
                gone = await Self.participants(metricsPort: metricsPort) == 1
                if !gone { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(gone, "control \(action): the relay still counted it 5 s after it exited")
            print("control \(action): the relay counted it gone \(exited.duration(to: .now)) after it exited")
        }
        let membership = Session.events(host.out.snapshot).filter { ["joined", "left"].contains($0["type"] as? String) && $0["originator"] as? String != "host" }
        #expect(membership.isEmpty, "the host announced a one-shot member: \(membership)")
    }
}
