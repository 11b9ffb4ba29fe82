import Foundation
import Testing

/// `coplay control` is a member for the length of one command: the others must see it leave when it
/// exits, not 15 s later when the relay's presence grace for a vanished connection runs out.
@Suite("coplay control leaves when it exits", .serialized)
struct ControlLeavesCLITests {
    typealias Session = PlaybackSessionCLITests

    @Test("after each of three commands the host sees the control member leave within 5 s (the grace is 15 s)", .timeLimit(.minutes(3)))
    func leavesAtOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coplay-leave-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let media = try await Session.makeMedia(in: directory)
        var children: [Session.Child] = []
        defer { for child in children.reversed() { child.stop() } }
        let (_, host, invite) = try await Session.startRelayAndHost(media: media, children: &children)
        for (round, action) in ["play", "pause", "play"].enumerated() {
            let result = try await CoplayProcess.run(["control", invite, action], timeout: 60)
            #expect(result.status == 0, "control \(action): \(result.stderr)")
            let exited = ContinuousClock.now
            #expect(await host.out.wait(for: .seconds(5)) { lines in
                Session.events(lines).filter { $0["type"] as? String == "left" }.count >= round + 1
            }, "round \(round + 1): the host did not see control leave within 5 s")
            print("control \(action): its leave reached the host \(exited.duration(to: .now)) after it exited")
        }
    }
}
