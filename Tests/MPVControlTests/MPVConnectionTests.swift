import Foundation
import MPVControl
import Testing

/// The timed send of ``MPVConnection/command(_:at:)`` against a real, idle mpv: a command leaves at its
/// instant on the stamp clock, not before (the adapter's unpause at the group's instant relies on it),
/// and one handed over early waits on the event loop's timer without holding up other commands.
@Suite("MPVConnection's timed commands with a real mpv")
struct MPVConnectionTests {
    @Test("a command handed over a few ms or a second ahead leaves at its instant, not before, and does not hold up others; a past instant or an unknown clock sends at once")
    func timedCommand() async throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/mpv"), "mpv is missing: scripts/install-deps.sh installs it")
        try await MPVProcess.run(arguments: MPVProcess.headlessArguments + ["--idle=yes"]) { mpv in
            for _ in 0..<5 {
                let instant = MPVConnection.realtime() + 0.003
                let reply = try await mpv.command(["get_property", "idle-active"], at: instant)
                #expect(reply.succeeded, "\(reply)")
                // `sent` is stamped on the event loop just before the write, after its spin.
                #expect(reply.sent >= instant, "sent \((instant - reply.sent) * 1000) ms before its instant")
            }
            let past = MPVConnection.realtime() - 1
            let called = MPVConnection.realtime()
            let late = try await mpv.command(["get_property", "idle-active"], at: past)
            #expect(late.succeeded)
            #expect(late.sent >= called)
            // Handed over a second ahead: the event loop waits on its timer (serving other requests
            // meanwhile) and still writes at the instant, not before.
            let far = MPVConnection.realtime() + 1
            async let early = mpv.command(["get_property", "idle-active"], at: far)
            let meanwhile = try await mpv.command(["get_property", "idle-active"])
            #expect(meanwhile.sent < far - 0.5, "an ordinary command waited for the timed one")
            let waited = try await early
            #expect(waited.sent >= far, "sent \((far - waited.sent) * 1000) ms before its instant")
            #expect(waited.sent < far + 0.5)
        }
        // The connections' own event loop asked for real-time priority; root (as in CI) gets it.
        if geteuid() == 0 {
            #expect(MPVConnection.timingThreadSetup?.realtime == true, "SCHED_FIFO refused to root")
        }
        // A stamp clock that does not know the time yet (NaN, before the member has a reference): at once.
        try await MPVProcess.run(arguments: MPVProcess.headlessArguments + ["--idle=yes"], stamp: { .nan }) { mpv in
            let reply = try await mpv.command(["get_property", "idle-active"], at: 1e12)
            #expect(reply.succeeded)
        }
    }
}
