import MPVControl
import PlaybackCoordinator
import TestSupport
import Testing

@Suite("CommandSchedule: the coordinator's commands in reference-time order")
struct CommandScheduleTests {
    static func t(_ seconds: Double) -> ReferenceTime { ReferenceTime(seconds: 1000 + seconds) }
    static func command(_ kind: PlaybackCommand.Kind, revision: UInt64 = 1) -> PlaybackCommand {
        PlaybackCommand(kind: kind, originator: "a", expectedItemIdentifier: "clip", revision: revision)
    }

    @Test("the motion in force and the next one; seeks add nothing")
    func lookup() {
        var schedule = CommandSchedule()
        schedule.insert(Self.command(.seek(itemTime: 5, referenceTime: Self.t(1), completionDueDate: Self.t(1))))
        #expect(schedule.motion(at: Self.t(2)) == nil)
        schedule.insert(Self.command(.play(itemTime: 5, referenceTime: Self.t(1), rate: 1)))
        schedule.insert(Self.command(.buffer(itemTime: 7, referenceTime: Self.t(3), completionDueDate: Self.t(4))))
        schedule.insert(Self.command(.play(itemTime: 7, referenceTime: Self.t(4), rate: 1)))
        #expect(schedule.motion(at: Self.t(0.5)) == nil)
        #expect(schedule.next(after: Self.t(0.5))?.itemTime == 5)
        #expect(schedule.motion(at: Self.t(2))?.itemTime(at: Self.t(2.5)) == 6.5)
        #expect(schedule.motion(at: Self.t(3.5))?.waiting == true)
        #expect(schedule.motion(at: Self.t(3.5))?.rate == 0)
        #expect(schedule.next(after: Self.t(3.5))?.referenceTime == Self.t(4))
    }

    @Test("a command replaces every motion at or after its instant")
    func replaces() {
        var schedule = CommandSchedule()
        schedule.insert(Self.command(.play(itemTime: 0, referenceTime: Self.t(1), rate: 1)))
        schedule.insert(Self.command(.buffer(itemTime: 2, referenceTime: Self.t(3), completionDueDate: Self.t(4))))
        schedule.insert(Self.command(.play(itemTime: 2, referenceTime: Self.t(4), rate: 1)))
        schedule.insert(Self.command(.pause(itemTime: 1.5, referenceTime: Self.t(2.5)), revision: 2))
        #expect(schedule.next(after: Self.t(2.6)) == nil)
        #expect(schedule.motion(at: Self.t(10))?.itemTime == 1.5)
        #expect(schedule.motion(at: Self.t(10))?.revision == 2)
    }

    @Test("a rate change continues a motion; a seek does not")
    func continuity() {
        let playing = CommandSchedule.Motion(item: "clip", itemTime: 0, referenceTime: Self.t(0), rate: 1, revision: 1, waiting: false)
        let faster = CommandSchedule.Motion(item: "clip", itemTime: 2, referenceTime: Self.t(2), rate: 2, revision: 2, waiting: false)
        let jump = CommandSchedule.Motion(item: "clip", itemTime: 9, referenceTime: Self.t(2), rate: 1, revision: 3, waiting: false)
        #expect(playing.isContinued(by: faster))
        #expect(!playing.isContinued(by: jump))
    }

    @Test("pruning keeps the motion in force")
    func prune() {
        var schedule = CommandSchedule()
        schedule.insert(Self.command(.play(itemTime: 0, referenceTime: Self.t(1), rate: 1)))
        schedule.insert(Self.command(.pause(itemTime: 2, referenceTime: Self.t(3))))
        schedule.prune(before: Self.t(5))
        #expect(schedule.motion(at: Self.t(5))?.itemTime == 2)
    }
}

@Suite("FrameClock: the error from the instants mpv's frame changes")
struct FrameClockTests {
    static let start = ReferenceTime(seconds: 500)
    static let motion = CommandSchedule.Motion(item: "clip", itemTime: 0, referenceTime: start, rate: 1, revision: 1, waiting: false)

    /// Samples a player showing 25 fps frames `offset` seconds early, every `interval` seconds.
    static func sampled(offset: Double, interval: Double, until end: Double) -> FrameClock {
        var clock = FrameClock()
        var t = 0.001
        while t < end {
            let shown = ((t + offset) * 25).rounded(.down) / 25
            clock.record(position: shown, at: start + .secondsRounded(t))
            t += interval
        }
        return clock
    }

    @Test("a player ahead by 3 ms measures +3 ms; behind by 2 ms, -2 ms (within the sampling bracket)", arguments: [0.003, -0.002, 0])
    func measuresOffset(offset: Double) throws {
        let clock = Self.sampled(offset: offset, interval: 0.0004, until: 1)
        let error = try #require(clock.error(for: Self.motion))
        #expect(abs(error - offset) < 0.0003)
    }

    @Test("sparse samples give no fine estimate, only a coarse one")
    func sparse() throws {
        let clock = Self.sampled(offset: 0.2, interval: 0.01, until: 1)
        #expect(clock.error(for: Self.motion) == nil)
        let coarse = try #require(clock.coarseError(for: Self.motion, frameInterval: 0.04))
        #expect(abs(coarse - 0.2) <= 0.021)
    }

    @Test("only wide brackets (3-5 ms, at random phases, as on a busy machine): the envelope still measures the error within about a ms", arguments: [0.004, -0.012, 0])
    func envelope(offset: Double) throws {
        var clock = FrameClock()
        var generator = SplitMix64(seed: 7)
        var t = 0.001
        while t < 1 {
            let shown = ((t + offset) * 25).rounded(.down) / 25
            clock.record(position: shown, at: Self.start + .secondsRounded(t))
            t += 0.003 + 0.002 * generator.unit()
        }
        #expect(clock.changes.allSatisfy { $0.uncertainty > clock.maximumUncertainty })
        let error = try #require(clock.error(for: Self.motion))
        #expect(abs(error - offset) <= 2 * clock.maximumUncertainty + FrameClock.envelopeJitter)
    }

    @Test("a jump backwards (a seek) starts afresh")
    func seekResets() {
        var clock = Self.sampled(offset: 0, interval: 0.0004, until: 0.5)
        #expect(clock.error(for: Self.motion) != nil)
        clock.record(position: 0.0, at: Self.start + .seconds(1))
        #expect(clock.changes.isEmpty)
    }
}
