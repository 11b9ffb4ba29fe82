import Foundation
import Testing

/// A member joining after the group waited out a suspension, the way people run it: a relay, a
/// host and a member playing, `coplay control suspend`, then a late `coplay join`, then
/// `coplay control pause`; once with the relay SIGKILLed and restarted during the wait. Judged
/// from the players' own frame lines (CLOCK_REALTIME presentation stamps on one machine).
@Suite("a late joiner after a wait, over a real relay", .serialized)
struct LateJoinAfterWaitCLITests {
    typealias Session = PlaybackSessionCLITests

    /// The spread of one frame's presentation between two players, over the frames both presented.
    static func sharedFrames(_ a: [Session.Frame], _ b: [Session.Frame]) -> [Double] {
        var first: [Int: Double] = [:]
        for frame in a where first[frame.index] == nil { first[frame.index] = frame.realtime }
        var seen = Set<Int>()
        var spreads: [Double] = []
        for frame in b where seen.insert(frame.index).inserted {
            if let other = first[frame.index] { spreads.append(abs(frame.realtime - other)) }
        }
        return spreads.sorted()
    }

    @Test("after `suspend 3` (with and without a relay restart during it) a late joiner presents the waiting member's frames, and a pause stops both on the frame they showed",
          .timeLimit(.minutes(5)), arguments: [false, true])
    func lateJoinerAfterWait(restartDuringWait: Bool) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-latejoin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Session.makeMedia(in: directory)
        let dataDir = directory.appendingPathComponent("relay-data").path

        var children: [Session.Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let started = try await Session.startRelayAndHost(media: [media], relayArguments: ["--data-dir", dataDir], children: &children)
        var relay = started.relay
        let invite = started.invite
        let p1 = try await Session.Child(["join", invite, media, "--name", "p1", "--frames"])
        children.append(p1)
        #expect(await p1.out.wait(for: .seconds(60)) { Session.lastStopped($0) != nil })
        let play = try await CoplayProcess.run(["control", invite, "play"], timeout: 60)
        #expect(play.status == 0, "control play failed: \(play.stderr)")
        #expect(await p1.out.wait(for: .seconds(30)) { Session.frames($0).count >= 25 })

        // The wait: `control suspend 3`, the relay SIGKILLed and restarted in the middle of it.
        let suspend = try await Session.Child(["control", invite, "suspend", "3"])
        children.append(suspend)
        #expect(await p1.out.wait(for: .seconds(30)) { lines in
            Session.events(lines).contains { $0["type"] as? String == "suspensionBegan" }
        }, "the group never began waiting: \(suspend.err.snapshot.suffix(5))")
        if restartDuringWait {
            relay.process.kill()
            _ = await relay.process.wait()
            try await Task.sleep(for: .milliseconds(500))
            relay = try await Session.startRelay(["--data-dir", dataDir], port: started.port, children: &children).relay
        }
        let suspended = await suspend.process.wait()
        #expect(suspended == .exited(0), "control suspend failed: \(suspend.err.snapshot.suffix(5))")
        #expect(await p1.out.wait(for: .seconds(30)) { lines in
            guard let end = Session.events(lines).first(where: { $0["type"] as? String == "suspensionEnded" })?["referenceTime"] as? Double
            else { return false }
            return Session.frames(lines).filter { $0.referenceTime >= end }.count >= 10
        }, "p1 did not resume after the wait")

        // The late joiner.
        let p2 = try await Session.Child(["join", invite, media, "--name", "p2", "--frames"])
        children.append(p2)
        #expect(await p2.out.wait(for: .seconds(60)) { Session.frames($0).count >= 50 }, "p2 does not play: \(p2.err.snapshot.suffix(5))")
        let spreads = Self.sharedFrames(Session.frames(p1.out.snapshot), Session.frames(p2.out.snapshot))
        #expect(spreads.count >= 40, "p1 and p2 share only \(spreads.count) frames")
        if let worst = spreads.last {
            // The defect this guards against put the joiner whole seconds ahead. A loaded machine may
            // delay a frame by some milliseconds; accuracy itself is measured by benchmarks.
            #expect(worst < 0.05, "a frame of the late joiner was \(worst * 1000) ms away from p1's")
            let p99 = spreads[min(spreads.count - 1, Int((Double(spreads.count) * 0.99).rounded(.up)) - 1)]
            print("late joiner after a 3 s wait\(restartDuringWait ? " with a relay restart" : ""): \(spreads.count) shared frames, p50 \(String(format: "%.3f", spreads[spreads.count / 2] * 1000)) ms, p99 \(String(format: "%.3f", p99 * 1000)) ms, max \(String(format: "%.3f", worst * 1000)) ms")
        }

        // A later pause stops both on one frame: the one each was showing, with no jump.
        let pause = try await CoplayProcess.run(["control", invite, "pause"], timeout: 60)
        #expect(pause.status == 0, "control pause failed: \(pause.stderr)")
        var stops: [Int] = []
        for player in [p1, p2] {
            #expect(await player.out.wait(for: .seconds(30)) { Session.pausedAfterCommand($0, pauses: 1) })
            let lines = player.out.snapshot
            let stopped = try #require(Session.lastStopped(lines))
            let index = try #require(stopped["index"] as? Int)
            let shown = Session.frames(lines).last { $0.referenceTime <= (stopped["referenceTime"] as? Double ?? .infinity) }
            #expect(shown?.index == index, "stopped on frame \(index) after showing \(String(describing: shown?.index))")
            stops.append(index)
        }
        #expect(Set(stops).count == 1, "the players stopped on different frames: \(stops)")
    }
}
