import Foundation
import MPVControl
import Testing

/// Notices in the players, end to end: a real relay, a headless host, a person's own mpv with a
/// window under Xvfb attached with `--mpv-socket`, a second mpv member with `--notices off`, and
/// one-shot `coplay control` commands given a name.
@Suite("Notices on mpv's screen; one-shot commands under their name", .serialized)
struct NoticesCLITests {
    typealias Child = PlaybackSessionCLITests.Child

    /// The notices' text as the member wrote it where IPC reads it (mpv 0.36+: `user-data`; 0.35:
    /// the `coplay-notices` key of `shared-script-properties`).
    static func notices(_ mpv: MPVConnection) async throws -> String? {
        let userData = try await mpv.get("user-data/coplay/notices")
        if userData.succeeded, let text = userData.data.string { return text }
        return try await mpv.get("shared-script-properties").data["coplay-notices"]?.string
    }

    @Test(
        "control pause --name alice: every member's pause names alice, nobody hears it join or leave, mpv's screen says 'alice paused at', --notices off shows nothing",
        .timeLimit(.minutes(5)))
    func oneShotPauseOnMPVScreen() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: MPVPlayerCLITests.mpv), "mpv is missing: scripts/install-deps.sh installs it")
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb"), "Xvfb is missing: scripts/install-deps.sh installs it (Debian xvfb)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-notices-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await MPVPlainCLITests.makeMedia(in: directory, fps: 25, seconds: 900, audio: false, size: "640x360")
        var children: [Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (xvfb, display) = try await MPVPlayerCLITests.startXvfb()
        children.append(xvfb)
        let deadline = ContinuousClock.now + .seconds(20)
        while !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(display.dropFirst())"), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let (_, _, host, invite) = try await PlaybackSessionCLITests.startRelayAndHost(media: [media], children: &children)

        // The person's mpv, with a window; and one started headless whose member shows no notices.
        let windowSocket = directory.appendingPathComponent("window.sock").path
        let window = try await Child(
            ["DISPLAY=\(display)", MPVPlayerCLITests.mpv] + MPVProcess.baseArguments + [
                "--ao=null", "--geometry=640x300+0+0", "--no-border", "--input-ipc-server=\(windowSocket)",
            ], executable: URL(fileURLWithPath: "/usr/bin/env"))
        children.append(window)
        let quietSocket = directory.appendingPathComponent("quiet.sock").path
        children.append(try await MPVPlayerCLITests.startMPV(socket: quietSocket))
        let windowMPV = try await MPVPlayerCLITests.connect(windowSocket)
        let quietMPV = try await MPVPlayerCLITests.connect(quietSocket)
        defer {
            Task {
                await windowMPV.close()
                await quietMPV.close()
            }
        }
        let member = try await Child(["join", invite, media, "--mpv-socket", windowSocket, "--name", "ma"])
        children.append(member)
        let quiet = try await Child(["join", invite, media, "--mpv-socket", quietSocket, "--name", "mq", "--notices", "off"])
        children.append(quiet)
        for joiner in [member, quiet] {
            #expect(await joiner.out.wait(for: .seconds(60)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "joined" }
            }, "a member did not join: \(joiner.err.snapshot.suffix(5))")
        }
        // The host hears of the two players joining, by name.
        #expect(await host.out.wait(for: .seconds(30)) { lines in
            Set(PlaybackSessionCLITests.events(lines).filter { $0["type"] as? String == "joined" }.compactMap { $0["originator"] as? String })
                .isSuperset(of: ["ma", "mq"])
        }, "the host did not list both players joining by name")

        let play = try await CoplayProcess.run(["control", invite, "play", "--name", "alice"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        try await Task.sleep(for: .seconds(2))
        let pause = try await CoplayProcess.run(["control", invite, "pause", "--name", "alice"], timeout: 60)
        #expect(pause.status == 0, "control pause failed: \(pause.stderr)")
        for watcher in [host, member, quiet] {
            #expect(await watcher.out.wait(for: .seconds(30)) { lines in
                PlaybackSessionCLITests.events(lines).contains { $0["type"] as? String == "pause" && $0["originator"] as? String == "alice" }
            }, "no pause by alice: \(watcher.out.snapshot.suffix(4))")
        }

        // mpv's screen: the notice is set (and read back); the member with --notices off set none.
        var shown: String?
        for _ in 0..<100 {
            shown = try await Self.notices(windowMPV)
            if shown?.contains("alice paused at") == true { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        let text = try #require(shown, "no notices were written to mpv")
        #expect(text.contains("alice paused at 0:0"), "mpv shows: \(text)")
        #expect(text.contains("alice played from"), "mpv shows: \(text)")
        #expect(!text.contains("joined") && !text.contains("left"), "mpv announced the one-shot member: \(text)")
        #expect(try await Self.notices(quietMPV) ?? "" == "", "--notices off showed notices")
        print("mpv's notices after control play/pause --name alice:\n\(text)")

        // A picture of the window with its notice.
        let shot = directory.appendingPathComponent("mpv-notice.png").path
        try await windowMPV.run(["screenshot-to-file", shot, "window"])
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.count > 1000, "the screenshot is empty")
        if let keep = ProcessInfo.processInfo.environment["COPLAY_SCREENSHOTS"] {
            let target = URL(fileURLWithPath: keep).appendingPathComponent("mpv-notice.png")
            try? FileManager.default.removeItem(at: target)
            try FileManager.default.copyItem(at: URL(fileURLWithPath: shot), to: target)
            print("screenshot: \(target.path)")
        }

        // Nobody heard alice (or "control") join or leave, long after it left.
        try await Task.sleep(for: .seconds(4))
        for watcher in [host, member, quiet] {
            let membership = PlaybackSessionCLITests.events(watcher.out.snapshot).filter {
                ["joined", "left"].contains($0["type"] as? String) && ["alice", "control"].contains($0["originator"] as? String ?? "")
            }
            #expect(membership.isEmpty, "a one-shot member was announced: \(membership)")
            // Any other member's join names it (no bare ids of one-shot members either).
            let unnamed = PlaybackSessionCLITests.events(watcher.out.snapshot).filter {
                ["joined", "left"].contains($0["type"] as? String) && ($0["originator"] as? String ?? "").count == 16
                    && ($0["originator"] as? String) == ($0["originatorId"] as? String)
            }
            #expect(unnamed.isEmpty, "members announced by id: \(unnamed)")
        }
    }
}
