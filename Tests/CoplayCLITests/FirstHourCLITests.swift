import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What got in a new user's way in the first hour, as that user does it: output piped into `head`,
/// the invite kept out of `ps`, readable output, errors that say what to do, `coplay people`.
@Suite("coplay: the first hour of a new user", .serialized)
struct FirstHourCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    /// A temporary directory with the test media, removed by the caller.
    static func workspace() async throws -> (directory: URL, media: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-first-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (directory, try await PlaybackSessionCLITests.makeMedia(in: directory))
    }

    /// Waits until `path` exists (a host writes its invite file once the session exists).
    static func waitForFile(_ path: String, timeout: Duration = .seconds(60)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if FileManager.default.fileExists(atPath: path) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return FileManager.default.fileExists(atPath: path)
    }

    /// The pids of `pid`'s children.
    static func children(of pid: Int32) -> [Int32] {
        ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { Int32($0) }
    }

    /// A shell-quoted word.
    static func quoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    @Test("host | head -1 and control | head -1: the invite is read, the host keeps serving, control exits 0", .timeLimit(.minutes(5)))
    func brokenPipes() async throws {
        let (directory, media) = try await Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, port) = try await PlaybackSessionCLITests.startRelay(children: &children)
        let inviteFile = directory.appendingPathComponent("invite").path
        let coplay = Self.quoted(CoplayProcess.binary.path)
        // The host's output read by `head -1`, which exits after the invite; the host then writes
        // events (--frames: one per frame) into a pipe nobody reads.
        let pipeline = try await Child(
            ["-c", "\(coplay) host \(Self.quoted(media)) --relay 127.0.0.1:\(port) --name host --frames --invite-file \(Self.quoted(inviteFile)) | head -1; echo \"statuses ${PIPESTATUS[*]}\" >&2"],
            executable: URL(fileURLWithPath: "/bin/bash"))
        children.append(pipeline)
        #expect(await pipeline.out.wait(for: .seconds(60)) { !$0.isEmpty })
        let invite = try #require(pipeline.out.snapshot.first)
        #expect(invite.hasPrefix("coplay://127.0.0.1:\(port)/"), "head -1 read \(invite)")
        let shell = try #require(pipeline.process.processIdentifier)
        let hostPID = try #require(Self.children(of: shell).first {
            (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.hasPrefix("coplay") == true
        })

        let joiner = try await Child(["join", "--invite-file", inviteFile, media, "--name", "p1", "--frames"])
        children.append(joiner)
        #expect(await joiner.out.wait(for: .seconds(60)) { PlaybackSessionCLITests.lastStopped($0) != nil })
        // control's one line goes into a pipe whose reader (`true`) is already gone.
        let control = try await CoplayProcess.run(
            ["-c", "\(coplay) control --invite-file \(Self.quoted(inviteFile)) play | true; echo \"control status ${PIPESTATUS[0]}\""],
            executable: URL(fileURLWithPath: "/bin/bash"), timeout: 60)
        #expect(control.stdout.contains("control status 0"), "control: \(control.stdout) \(control.stderr)")
        #expect(!control.stderr.contains("Fatal error"), "\(control.stderr)")
        // The host plays on with nobody reading its output: the joiner presents frames for a while,
        // then a pause from a `control | head -1` reaches it.
        #expect(await joiner.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.frames($0).count >= 50 })
        #expect(kill(hostPID, 0) == 0, "the host died: \(pipeline.err.snapshot.suffix(5))")
        let pause = try await CoplayProcess.run(
            ["-c", "\(coplay) control --invite-file \(Self.quoted(inviteFile)) pause | head -1; echo \"control status ${PIPESTATUS[0]}\""],
            executable: URL(fileURLWithPath: "/bin/bash"), timeout: 60)
        #expect(pause.stdout.contains("pause accepted"), "\(pause.stdout) \(pause.stderr)")
        #expect(pause.stdout.contains("control status 0"), "\(pause.stdout) \(pause.stderr)")
        #expect(await joiner.out.wait(for: .seconds(30)) { PlaybackSessionCLITests.pausedAfterCommand($0, pauses: 1) })
        #expect(kill(hostPID, 0) == 0, "the host died: \(pipeline.err.snapshot.suffix(5))")
        // The host leaves as usual on SIGTERM: exit 0, no crash on the way.
        kill(hostPID, SIGTERM)
        #expect(await pipeline.process.wait(timeout: .seconds(30)) != nil)
        let stderr = pipeline.err.snapshot.joined(separator: "\n")
        #expect(stderr.contains("statuses 0 0"), "host | head -1: \(stderr.suffix(600))")
        #expect(!stderr.contains("Fatal error") && !stderr.contains("Broken pipe"), "\(stderr.suffix(600))")
    }

    @Test("no try! and no trapping FileHandle writes in the CLI's sources")
    func noTrappingIO() throws {
        let sources = CoplayProcess.packageRoot.appendingPathComponent("Sources/coplay")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 20)
        for file in files {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//") else { continue }
                #expect(!code.contains("try!"), "\(file):\(number + 1): \(code)")
                // Foundation's FileHandle.write(_:) traps on EPIPE.
                #expect(!code.contains("FileHandle.standardOutput.write") && !code.contains("FileHandle.standardError.write"),
                        "\(file):\(number + 1): \(code)")
            }
        }
    }

    @Test("the invite from --invite-file (mode 0600) and COPLAY_INVITE: ps shows no secret; people lists the members; text events for a person", .timeLimit(.minutes(5)))
    func inviteOutOfArguments() async throws {
        let (directory, media) = try await Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, port) = try await PlaybackSessionCLITests.startRelay(children: &children)
        let inviteFile = directory.appendingPathComponent("invite.txt").path
        let host = try await Child(["host", media, "--relay", "127.0.0.1:\(port)", "--name", "host", "--invite-file", inviteFile])
        children.append(host)
        #expect(await Self.waitForFile(inviteFile), "the host wrote no invite file: \(host.err.snapshot.suffix(5))")
        let attributes = try FileManager.default.attributesOfItem(atPath: inviteFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600, "invite file mode \(String(describing: attributes[.posixPermissions]))")
        let invite = try String(contentsOfFile: inviteFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(await host.out.wait(for: .seconds(30)) { $0.first == invite }, "the file holds another invite than the host printed")
        let secret = try #require(invite.split(separator: "#").last.map(String.init))

        // alice reads the file and prints text for a person; bob takes the invite from the environment.
        let alice = try await Child(["join", "--invite-file", inviteFile, media, "--name", "alice", "--events", "text"])
        children.append(alice)
        var environment = CoplayProcess.environment
        environment["COPLAY_INVITE"] = invite
        let bob = await ChildProcess.start(CoplayProcess.binary.path, ["join", media, "--name", "bob"], environment: environment)
        defer { bob.terminate() }
        #expect(await alice.out.wait(for: .seconds(60)) { $0.contains { $0.contains("you joined") } }, "\(alice.err.snapshot.suffix(5))")
        #expect(await bob.waitForLine(timeout: .seconds(60)) { $0.contains("\"type\":\"stopped\"") } != nil, "bob: \(bob.stderr.suffix(500))")

        // No process's arguments hold the secret.
        let ps = try await CoplayProcess.run(["-eo", "pid,args"], executable: URL(fileURLWithPath: "/bin/ps"), timeout: 30)
        #expect(ps.status == 0)
        #expect(ps.stdout.contains("--invite-file"), "ps shows no coplay join: \(ps.stdout.suffix(2000))")
        #expect(!ps.stdout.contains(secret), "ps shows the session's secret")

        // coplay people, with the invite from the environment.
        let people = try await CoplayProcess.run(["people", "--listen", "20"], timeout: 90, environment: environment)
        #expect(people.status == 0, "\(people.stderr)")
        let lines = people.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.contains("\u{201C}long-25.mp4\u{201D}: paused at 0:00:00") == true, "\(people.stdout)")
        for name in ["host", "alice", "bob"] {
            #expect(lines.contains { $0.hasPrefix(name) && $0.contains("headless") && $0.contains("paused") && $0.hasSuffix(" ms") },
                    "\(name) missing: \(people.stdout)")
        }
        let json = try await CoplayProcess.run(["people", "--invite-file", inviteFile, "--json", "--listen", "20"], timeout: 90)
        #expect(json.status == 0, "\(json.stderr)")
        let listing = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let members = try #require(listing["members"] as? [[String: Any]])
        #expect(Set(members.compactMap { $0["name"] as? String }) == ["host", "alice", "bob"], "\(json.stdout)")
        #expect(members.allSatisfy { $0["player"] as? String == "headless" && ($0["delayMs"] as? Double) != nil }, "\(json.stdout)")

        // A seek as people write it, from the environment's invite; alice reads names, titles and h:mm:ss.
        let seek = try await CoplayProcess.run(["control", "seek", "0:05"], timeout: 60, environment: environment)
        #expect(seek.status == 0, "\(seek.stderr)")
        #expect(seek.stdout.contains("item time 5.0 s (0:00:05)"), "\(seek.stdout)")
        let play = try await CoplayProcess.run(["control", "--invite-file", inviteFile, "play"], timeout: 60)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(await alice.out.wait(for: .seconds(30)) { $0.contains { $0.contains("control played from 0:00:05") } },
                "\(alice.out.snapshot.suffix(10))")
        let text = alice.out.snapshot
        #expect(text.contains { $0.hasSuffix("you joined \u{201C}long-25.mp4\u{201D} as alice") }, "\(text)")
        #expect(text.contains { $0.hasSuffix("host is here") }, "\(text)")
        #expect(text.contains { $0.hasSuffix("bob joined") || $0.hasSuffix("bob is here") }, "\(text)")
        #expect(text.contains { $0.hasSuffix("control jumped to 0:00:05 (paused)") }, "\(text)")
        // Every line starts with a local clock time; no member shows as a 16-hex id, no item as a fingerprint,
        // and the command members (control, people) come and go without a line.
        #expect(text.allSatisfy { $0.wholeMatch(of: /\d\d:\d\d:\d\d  .+/) != nil }, "\(text)")
        #expect(!text.contains { $0.contains(/[0-9a-f]{16}/) }, "\(text)")
        #expect(!text.contains { $0.contains("control joined") || $0.contains("control left") || $0.contains("people") }, "\(text)")
    }

    @Test("on a terminal, join prints text for a person; piped, JSON Lines", .timeLimit(.minutes(4)))
    func terminalDefault() async throws {
        let script = URL(fileURLWithPath: "/usr/bin/script")
        try #require(FileManager.default.isExecutableFile(atPath: script.path), "util-linux's script(1) gives the child a terminal")
        let (directory, media) = try await Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, port, _, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)
        _ = port
        let inviteFile = directory.appendingPathComponent("invite").path
        try invite.write(toFile: inviteFile, atomically: true, encoding: .utf8)
        let command = "\(Self.quoted(CoplayProcess.binary.path)) join --invite-file \(Self.quoted(inviteFile)) \(Self.quoted(media)) --name tty"
        let terminal = try await Child(["--quiet", "--flush", "--command", command, "/dev/null"], executable: script)
        children.append(terminal)
        #expect(await terminal.out.wait(for: .seconds(60)) { $0.contains { $0.contains("host") && $0.contains("is here") } },
                "\(terminal.out.snapshot.suffix(5)) \(terminal.err.snapshot.suffix(5))")
        let lines = terminal.out.snapshot
        #expect(lines.contains { $0.contains("you joined") }, "\(lines)")
        #expect(!lines.contains { $0.contains("{\"type\"") }, "JSON on a terminal: \(lines)")
    }

    @Test("errors say what happened and what to do", .timeLimit(.minutes(3)))
    func clearErrors() async throws {
        // Nothing listens at the relay's address.
        let port = freePort()
        let invite = "coplay://127.0.0.1:\(port)/0123456789abcdef0123456789abcdef#eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHg"
        let down = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(down.status != 0)
        #expect(down.stderr.contains("nothing listens at 127.0.0.1:\(port) — is `coplay serve` running there"), "\(down.stderr)")
        #expect(!down.stderr.contains("SingleConnectionFailure") && !down.stderr.contains("errno"), "\(down.stderr)")

        // A --mpv-socket nobody made (checked before the relay).
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-no-mpv-\(UUID().uuidString.prefix(8)).sock").path
        let (directory, media) = try await Self.workspace()
        defer { try? FileManager.default.removeItem(at: directory) }
        let noMPV = try await CoplayProcess.run(["join", invite, media, "--mpv-socket", socket], timeout: 60)
        #expect(noMPV.status != 0)
        #expect(noMPV.stderr.contains("no mpv at \(socket)"), "\(noMPV.stderr)")
        #expect(noMPV.stderr.contains("start mpv with --input-ipc-server=\(socket)"), "\(noMPV.stderr)")
        #expect(!noMPV.stderr.contains("errno"), "\(noMPV.stderr)")

        // A socket an mpv left behind when it quit: the file is there, nobody listens.
        let stale = directory.appendingPathComponent("stale.sock").path
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in stale.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        close(descriptor)
        try #require(bound == 0, "could not make a stale socket")
        let quit = try await CoplayProcess.run(["join", invite, media, "--mpv-socket", stale], timeout: 60)
        #expect(quit.status != 0)
        #expect(quit.stderr.contains("no mpv listens at \(stale) any more"), "\(quit.stderr)")

        // A session id the relay does not have (a mistyped invite).
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, relayPort) = try await PlaybackSessionCLITests.startRelay(children: &children)
        let unknown = "coplay://127.0.0.1:\(relayPort)/0123456789abcdef0123456789abcdef#eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHh4eHg"
        let mistyped = try await CoplayProcess.run(["control", unknown, "play"], timeout: 60)
        #expect(mistyped.status != 0)
        #expect(mistyped.stderr.contains("has no session with this invite's id"), "\(mistyped.stderr)")
        #expect(!mistyped.stderr.contains("no activity"), "\(mistyped.stderr)")

        // Times as people write them; nonsense refused with the forms that work.
        // (Accepted forms get as far as the relay, which is down here.)
        for good in ["90", "2.5", "1:30", "1:02:03", "0:00:05.5"] {
            let result = try await CoplayProcess.run(["control", invite, "seek", good], timeout: 30)
            #expect(result.stderr.contains("nothing listens at"), "seek \(good): \(result.stderr)")
        }
        for bad in ["1:75", "1:2:3:4", "abc", "1::2", "inf", "1:60:00"] {
            let result = try await CoplayProcess.run(["control", invite, "seek", bad], timeout: 30)
            #expect(result.status != 0)
            #expect(result.stderr.contains("seek needs a time: seconds (90, 2.5), M:SS (1:30) or H:MM:SS (1:02:03)"), "seek \(bad): \(result.stderr)")
        }
        // No invite anywhere: every way to give one is named.
        var environment = CoplayProcess.environment
        environment["COPLAY_INVITE"] = nil
        let none = try await CoplayProcess.run(["control", "play"], timeout: 30, environment: environment)
        #expect(none.status != 0)
        #expect(none.stderr.contains("--invite-file FILE") && none.stderr.contains("COPLAY_INVITE"), "\(none.stderr)")
        // Two commands in one line (README used to show `play | pause | …` on one line).
        let two = try await CoplayProcess.run(["control", invite, "play", "pause"], timeout: 30)
        #expect(two.status != 0)
        #expect(two.stderr.contains("one command per run"), "\(two.stderr)")
    }
}
