import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `coplay serve` as README starts it (no flags but --listen) keeps sessions across a restart, in a
/// state directory of its own; `--memory-only` does not, and its members say so.
@Suite("coplay serve keeps sessions by default", .serialized)
struct RelayStateCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    /// `coplay serve --listen 127.0.0.1:PORT ARGS` with `XDG_STATE_HOME=state`; waits for its listening line.
    static func startRelay(port: Int, state: URL, _ arguments: [String] = []) async throws -> ChildProcess {
        var environment = CoplayProcess.environment
        environment["XDG_STATE_HOME"] = state.path
        let relay = try await CoplayProcess.start(["serve", "--listen", "127.0.0.1:\(port)"] + arguments, environment: environment)
        let line = await relay.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("coplay relay listening on") }
        try #require(line != nil, "the relay did not start: \(relay.stderr.suffix(800))")
        return relay
    }

    @Test("a relay started with no flags, SIGKILLed and restarted the same way: every member resumes, nothing is lost", .timeLimit(.minutes(6)))
    func restartKeepsSessions() async throws {
        let (directory, media) = try await FirstHourCLITests.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("state")
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let port = freePort()
        var relay = try await Self.startRelay(port: port, state: state)
        defer { relay.kill() }
        let expected = state.appendingPathComponent("coplay/relay-127.0.0.1-\(port)").path
        #expect(relay.stdoutLines.contains { $0 == "coplay relay keeps sessions in \(expected) (they survive a restart)" },
                "\(relay.stdoutLines)")

        let inviteFile = directory.appendingPathComponent("invite").path
        let host = try await Child(["host", media, "--relay", "127.0.0.1:\(port)", "--name", "host", "--invite-file", inviteFile, "--frames"])
        children.append(host)
        #expect(await FirstHourCLITests.waitForFile(inviteFile))
        var joiners: [Child] = []
        for name in ["p1", "p2"] {
            let joiner = try await Child(["join", "--invite-file", inviteFile, media, "--name", name, "--frames"])
            children.append(joiner)
            joiners.append(joiner)
        }
        for joiner in joiners {
            #expect(await joiner.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil })
        }
        let play = try await CoplayProcess.run(["control", "--invite-file", inviteFile, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        for member in [host] + joiners {
            #expect(await member.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count >= 25 })
        }

        // SIGKILL: no graceful anything. Then the same command line again.
        relay.kill()
        _ = await relay.wait()
        try await Task.sleep(for: .seconds(1))
        let framesAtRestart = ([host] + joiners).map { PlaybackSessionCLITests.frames($0.out.snapshot).count }
        relay = try await Self.startRelay(port: port, state: state)
        for (member, frames) in zip([host] + joiners, framesAtRestart) {
            #expect(await member.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count >= frames + 25 })
            #expect(member.process.isRunning, "a member exited: \(member.err.snapshot.suffix(5))")
            // Each told its person what happened (JSON Lines stay events only: the notices go to stderr).
            #expect(await member.err.wait(for: .seconds(30)) { $0.contains { $0.contains("reconnected to the relay at 127.0.0.1:\(port): the session resumed") } },
                    "\(member.err.snapshot.suffix(5))")
        }
        // The group still works as one: a pause reaches every member, on one frame.
        let pause = try await CoplayProcess.run(["control", "--invite-file", inviteFile, "pause"], timeout: 60)
        #expect(pause.status == 0, "control pause after the restart failed: \(pause.stderr)")
        var stops: [Int] = []
        for member in [host] + joiners {
            #expect(await member.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.pausedAfterCommand($0, pauses: 1) })
            if let index = PlaybackSessionCLITests.lastStopped(member.out.snapshot)?["index"] as? Int { stops.append(index) }
        }
        #expect(stops.count == 3 && Set(stops).count == 1, "members stopped on frames \(stops)")
        // Nothing lost or repeated: every member saw the same commands, in the same order.
        let commands = ([host] + joiners).map { member in
            PlaybackSessionCLITests.events(member.out.snapshot)
                .filter { ["play", "pause", "seek", "rate", "item"].contains($0["type"] as? String ?? "") }
                .compactMap { $0["revision"] as? Int }
        }
        #expect(commands.allSatisfy { $0 == commands[0] } && commands[0].count >= 3, "revisions seen: \(commands)")

        // Two relays never share a state directory.
        let second = try await CoplayProcess.run(["serve", "--listen", "127.0.0.1:0", "--data-dir", expected], timeout: 60)
        #expect(second.status != 0)
        #expect(second.stderr.contains("another coplay serve (pid \(relay.processIdentifier ?? -1)) keeps its sessions in \(expected)"),
                "\(second.stderr)")
    }

    @Test("--memory-only: after a restart the members say the relay forgot the session", .timeLimit(.minutes(4)))
    func memoryOnlyForgets() async throws {
        let (directory, media) = try await FirstHourCLITests.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        let state = directory.appendingPathComponent("state")
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let port = freePort()
        var relay = try await Self.startRelay(port: port, state: state, ["--memory-only"])
        defer { relay.kill() }
        #expect(relay.stdoutLines.contains("coplay relay keeps sessions in memory only (a restart ends them)"), "\(relay.stdoutLines)")
        let host = try await Child(["host", media, "--relay", "127.0.0.1:\(port)", "--name", "host"])
        children.append(host)
        #expect(await host.out.wait(for: .seconds(60)) { !$0.isEmpty })
        let invite = try #require(host.out.snapshot.first)
        let joiner = try await Child(["join", invite, media, "--name", "p1"])
        children.append(joiner)
        #expect(await joiner.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil })
        // An mpv member (headless mpv): its mpv closing in the teardown must not be the first thing it says.
        var members = [host, joiner]
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv") {
            let viewer = try await Child(["join", invite, media, "--name", "viewer", "--player", "mpv", "--mpv-arg=--vo=null", "--mpv-arg=--ao=null"])
            children.append(viewer)
            #expect(await viewer.out.wait(for: .seconds(60)) { lines in PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "pause" } },
                    "\(viewer.err.snapshot.suffix(5))")
            members.append(viewer)
        }

        relay.kill()
        _ = await relay.wait()
        relay = try await Self.startRelay(port: port, state: state, ["--memory-only"])
        for member in members {
            let ended = await member.process.wait(timeout: .seconds(60))
            #expect(ended != nil && ended != .exited(0), "still running or exit 0: \(String(describing: ended))")
            let stderr = member.err.snapshot.joined(separator: "\n")
            #expect(stderr.contains("the relay at 127.0.0.1:\(port) no longer has it")
                        && stderr.contains("or the relay restarted and forgot the session (it ran without a state directory"),
                    "\(stderr.suffix(600))")
            #expect(!stderr.contains("mpv quit"), "\(stderr.suffix(600))")
        }
        // Nothing was written for this relay.
        #expect(!FileManager.default.fileExists(atPath: state.appendingPathComponent("coplay").path))
    }

    @Test("the default state directory: XDG_STATE_HOME, else ~/.local/state, one per address; port 0 keeps nothing")
    func defaultDirectory() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-state-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        var environment = CoplayProcess.environment
        environment["XDG_STATE_HOME"] = nil
        environment["HOME"] = directory.path
        let relay = try await CoplayProcess.start(["serve", "--listen", "127.0.0.1:0"], environment: environment)
        defer { relay.kill() }
        let line = await relay.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("coplay relay keeps sessions") }
        #expect(line?.hasPrefix("coplay relay keeps sessions in memory only") == true, "\(relay.stdoutLines)")
        if geteuid() != 0 {
            let port = freePort()
            let home = try await CoplayProcess.start(["serve", "--listen", "127.0.0.1:\(port)"], environment: environment)
            defer { home.kill() }
            let kept = await home.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("coplay relay keeps sessions") }
            #expect(kept == "coplay relay keeps sessions in \(directory.path)/.local/state/coplay/relay-127.0.0.1-\(port) (they survive a restart)")
        }
    }
}
