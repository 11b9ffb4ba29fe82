import ClockSync
import Foundation
import GroupSessions
import Logging
import PlaybackCoordinator
import SessionRelay
import Testing

// The coplay half of docs/porting.md's "watch together" example. The code between the markers is
// copied into that page verbatim (`snippetIsInPortingGuide` checks it) and run below against a
// real relay and its NTP server on loopback.

// snippet:begin
/// What the group does together: one movie (GroupActivities' `GroupActivity`).
struct MovieNight: GroupActivity {
    var movie: String
    var metadata: GroupActivityMetadata { GroupActivityMetadata(title: movie, type: .watchTogether) }
}

/// The app's own player, driven by the coordinator (AVFoundation's
/// `AVPlaybackCoordinatorPlaybackControlDelegate`). Commands are absolute and future-dated: "be
/// at `itemTime` at `referenceTime`, moving at `rate`" on the clock the whole group shares.
actor MoviePlayer: PlaybackControlDelegate {
    let movie: String
    private(set) var isPlaying = false

    init(movie: String) { self.movie = movie }

    func handle(_ command: PlaybackCommand) async {
        guard command.expectedItemIdentifier == movie else { return }  // another item: ignore it
        switch command.kind {
        case .play(_, _, let rate): isPlaying = rate > 0  // a real player schedules the start
        case .pause, .buffer: isPlaying = false
        case .seek: break  // the play or pause for the same instant follows
        }
    }
}

struct NotInTime: Error {}

/// Polls `condition` every 20 ms for up to 10 s.
func waitUntil(_ condition: () async -> Bool) async throws {
    for _ in 0..<500 {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw NotInTime()
}

/// Ana starts movie night, Ben joins with her invite, Ana presses play and Ben's player plays;
/// then Ben stalls and the group waits for him. Returns the others as Ben's coordinator sees them.
func movieNight(invite: Invite) async throws -> [CoordinatedPlaybackParticipant] {
    // Ana activates the activity (Apple: `try await MovieNight(movie:).activate()`).
    let anaCenter = GroupActivityCenter<MovieNight>(transport: RelayTransport(invite: invite), logger: .current)
    let anaSession = try await anaCenter.activate(MovieNight(movie: "clip"), invite: invite)
    try await anaSession.join()
    defer { anaSession.leave() }

    // Ben gets the session from the invite Ana sent him (Apple: `for await session in
    // MovieNight.sessions()`), and joins it.
    let benCenter = GroupActivityCenter<MovieNight>(transport: RelayTransport(invite: invite), logger: .current)
    let benSession = try await benCenter.accept(invite)
    try await benSession.join()
    defer { benSession.leave() }

    // Each coordinates a player with the session (Apple: `coordinateWithSession(session)`): first
    // a clock shared with the relay, then the coordinator.
    let ana = try await GroupPlayback.prepare(session: anaSession, timeServer: invite)
        .makeCoordinator(delegate: MoviePlayer(movie: "clip"), localItem: "clip", name: "Ana")
    let benPlayer = MoviePlayer(movie: "clip")
    let ben = try await GroupPlayback.prepare(session: benSession, timeServer: invite)
        .makeCoordinator(delegate: benPlayer, localItem: "clip", name: "Ben")

    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { await ana.run() }
        group.addTask { await ben.run() }
        defer { group.cancelAll() }

        // Ana presses play (Apple: `coordinateRateChange(to: 1, options: [])`): everyone starts
        // at the same instant, a little ahead.
        try await waitUntil { await ana.otherParticipants.count == 1 }
        try await ana.coordinateRateChange(to: 1)
        try await waitUntil { await benPlayer.isPlaying }

        // Ben's player stalls (Apple: `beginSuspension(for: .stallRecovery)`): the group holds
        // still until he ends it (or 10 s pass).
        let stall = try await ben.beginSuspension(for: .stallRecovery)
        try await waitUntil { await ana.otherParticipants.first?.suspensionReasons == [.stallRecovery] }
        try await stall.end()
        try await waitUntil { await ana.otherParticipants.first?.isSuspended == false }
        return await ben.otherParticipants
    }
}
// snippet:end

@Suite("The porting guide's watch-together snippet")
struct PortingSnippetTests {
    static let guide = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs").appendingPathComponent("porting.md")

    @Test("the snippet runs against a real relay: Ben plays when Ana does, and sees Ana by id and name")
    func runs() async throws {
        let others = try await withLocalRelay { invite in try await movieNight(invite: invite) }
        #expect(others.count == 1)
        #expect(others.first?.name == "Ana" && others.first?.label == "Ana")
        #expect(others.first?.id.rawValue.count == 16)  // the session's participant id, not the name
        #expect(others.first?.isSuspended == false)
    }

    @Test("docs/porting.md shows exactly the code this file runs")
    func snippetIsInPortingGuide() throws {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let begin = try #require(source.range(of: "// snippet:begin\n"))
        let end = try #require(source.range(of: "// snippet:end"))
        let snippet = String(source[begin.upperBound..<end.lowerBound])
        let guide = try String(contentsOf: Self.guide, encoding: .utf8)
        #expect(guide.contains(snippet), "copy the snippet between the markers into docs/porting.md")
    }
}
