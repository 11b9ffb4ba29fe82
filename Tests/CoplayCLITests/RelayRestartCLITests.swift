import Foundation
import Testing

/// `coplay join` across relay restarts: the real relay process is SIGKILLed and restarted on
/// its `--data-dir`, and finally killed for good.
@Suite("coplay join across a relay restart", .serialized)
struct RelayRestartCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    @Test("coplay join keeps playing across a SIGKILLed relay restarted on its --data-dir; with the relay gone for good it stops", .timeLimit(.minutes(5)))
    func joinSurvivesRestart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-restart-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await PlaybackSessionCLITests.makeMedia(in: directory)
        let dataDir = directory.appendingPathComponent("relay-data").path

        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let first = try await PlaybackSessionCLITests.startRelayAndHost(
            media: [media], relayArguments: ["--data-dir", dataDir], children: &children)
        var relay = first.relay
        let (port, invite) = (first.port, first.invite)
        // It gives up 5 s after losing the relay (--reconnect-for; 30 s by default), which the end of the test waits for.
        let joiner = try await Child(["join", invite, media, "--name", "p1", "--frames", "--reconnect-for", "5"])
        children.append(joiner)
        #expect(await joiner.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil })
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        #expect(await joiner.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count >= 25 })

        // SIGKILL the relay mid-session and restart it on the same port and data directory.
        relay.process.kill()
        await relay.process.wait()
        try await Task.sleep(for: .seconds(1))
        relay = try await PlaybackSessionCLITests.startRelay(["--data-dir", dataDir], port: port, children: &children).relay
        let framesAtRestart = PlaybackSessionCLITests.frames(joiner.out.snapshot).count
        #expect(await joiner.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count >= framesAtRestart + 25 })
        #expect(joiner.process.isRunning, "join exited: \(joiner.err.snapshot.suffix(5))")
        // The session resumed through the new relay: a pause reaches the joiner.
        let pause = try await CoplayProcess.run(["control", invite, "pause"], timeout: 60)
        #expect(pause.status == 0, "control pause after the restart failed: \(pause.stderr)")
        #expect(await joiner.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.pausedAfterCommand($0, pauses: 1) })

        // The relay gone for good: after the give-up time (--reconnect-for 5) join ends.
        relay.process.kill()
        await relay.process.wait()
        let killed = ContinuousClock.now
        let deadline = killed + .seconds(90)
        while joiner.process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
        #expect(!joiner.process.isRunning, "join still running 90 s after the relay went away")
        if !joiner.process.isRunning {
            let stderr = joiner.err.snapshot.joined(separator: "\n")
            #expect(joiner.process.termination != .exited(0))
            #expect(stderr.contains("the session ended: connection lost"), "no clear message: \(stderr.suffix(400))")
            let secret = try #require(invite.split(separator: "#").last)
            #expect(!stderr.contains(secret), "join printed the invite's secret to stderr")
        }
        print("coplay join after the relay went away: ended after \(killed.duration(to: .now)), status \(joiner.process.termination?.description ?? "running"), stderr: \(joiner.err.snapshot.suffix(3))")
    }
}
