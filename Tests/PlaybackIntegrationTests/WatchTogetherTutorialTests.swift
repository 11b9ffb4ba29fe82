import ClockSync
import Foundation
import GroupSessions
import Logging
import PlaybackCoordinator
import SessionRelay
import Testing
import TestSupport

// The code of the DocC article "Watch together in 30 lines"
// (Sources/PlaybackCoordinator/PlaybackCoordinator.docc/WatchTogetherIn30Lines.md), compiled and run
// here; the test below checks that the article shows exactly these lines.
// tutorial:begin
/// Joins the session `invite` names (creating it when `host` is set) and plays `clip` in step
/// with everyone in it, until the session ends or the task is cancelled.
func watchTogether(
    invite: Invite, clip: MediaTimeline, host: Bool, onEvent: @escaping @Sendable (PlaybackEvent) -> Void
) async throws {
    // 1. What the group watches: the host publishes it, a guest reads it.
    let activity = WatchTogetherActivity(item: clip.identifier, fingerprint: "", title: "Movie night")
    // 2. A session on the relay the invite names, created or accepted, then joined.
    let center = GroupActivityCenter<WatchTogetherActivity>(transport: RelayTransport(invite: invite), logger: .current)
    let session = host
        ? try await center.activate(activity, invite: invite)
        : try await center.accept(invite)
    try await session.join()
    // 3. A player on the group's reference clock, coordinated until the session ends.
    try await GroupPlayback.coordinate(
        session: session, timeServer: invite, clock: ContinuousClock(),
        player: { reference in HeadlessPlayer(items: [clip], reference: reference, logger: .current) },
        localItem: clip.identifier,
        publishInitialState: host,
        onEvent: onEvent,
        started: { coordinator in
            // 4. A command from any member plays for everyone at one instant.
            if host { try? await coordinator.play() }
        })
}
// tutorial:end

@Suite("The DocC tutorial 'Watch together in 30 lines'")
struct WatchTogetherTutorialTests {
    static let clip = MediaTimeline(identifier: "clip", duration: 30, frameRate: 25)

    @Test("host and guest run the tutorial's function against a real relay and both present frames")
    func hostAndGuestPresent() async throws {
        try await withLocalRelay { invite in
            let hostFrames = LockedBox(0)
            let guestFrames = LockedBox(0)
            let host = Task {
                try await watchTogether(invite: invite, clip: Self.clip, host: true) { event in
                    if event.type == .frame { hostFrames.mutate { $0 += 1 } }
                }
            }
            defer { host.cancel() }
            await eventually("the host presents frames") { hostFrames.value > 0 }
            let guest = Task {
                try await watchTogether(invite: invite, clip: Self.clip, host: false) { event in
                    if event.type == .frame { guestFrames.mutate { $0 += 1 } }
                }
            }
            defer { guest.cancel() }
            await eventually("the guest joins the playing group and presents frames") { guestFrames.value > 0 }
            guest.cancel()
            host.cancel()
            _ = try? await guest.value
            _ = try? await host.value
        }
    }

    @Test("the article shows exactly the code compiled here")
    func articleMatchesTest() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/PlaybackCoordinator/PlaybackCoordinator.docc/WatchTogetherIn30Lines.md"),
            encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex(of: "// tutorial:begin"))
        let end = try #require(lines.firstIndex(of: "// tutorial:end"))
        let code = lines[(begin + 1)..<end].joined(separator: "\n")
        #expect(article.contains("```swift\nimport GroupSessions\nimport PlaybackCoordinator\n\n" + code + "\n```"))
        #expect(end - begin - 1 <= 30, "the tutorial's function is \(end - begin - 1) lines")
    }
}
