import PlaybackCoordinator

/// The coordinator's commands for one player, in reference-time order: what the player must be
/// doing now, and what it must do next. Sans-IO: ``MPVPlayer`` keeps one and asks it at each step.
///
/// A command replaces every command already scheduled at or after its reference time (the
/// coordinator's rule, see `PlaybackCommand`). A `seek` names where the next motion starts; the
/// play, pause or buffer command for the same instant that follows it carries the motion.
///
/// ```swift
/// var schedule = CommandSchedule()
/// schedule.insert(play)            // play(itemTime: 0, referenceTime: t, rate: 1)
/// schedule.motion(at: t + .seconds(1))?.itemTime(at: t + .seconds(1))   // 1.0
/// ```
public struct CommandSchedule: Sendable, Hashable {
    /// A motion the player follows from its reference time on: the item at `itemTime` at
    /// `referenceTime`, advancing at `rate` (0: stopped).
    public struct Motion: Sendable, Hashable {
        public var item: String
        public var itemTime: Double
        public var referenceTime: ReferenceTime
        public var rate: Double
        /// The revision (channel sequence) of the group state it comes from.
        public var revision: UInt64
        /// Whether the group holds still waiting for a suspended member (a `buffer` command).
        public var waiting: Bool

        /// Creates a motion.
        public init(item: String, itemTime: Double, referenceTime: ReferenceTime, rate: Double, revision: UInt64, waiting: Bool) {
            self.item = item
            self.itemTime = itemTime
            self.referenceTime = referenceTime
            self.rate = rate
            self.revision = revision
            self.waiting = waiting
        }

        /// The item time at `t` on this motion.
        public func itemTime(at t: ReferenceTime) -> Double {
            itemTime + (t - referenceTime).secondsValue * rate
        }

        /// Whether `next` continues this motion without a jump in item time (a rate change only).
        public func isContinued(by next: Motion, tolerance: Double = 1e-4) -> Bool {
            next.item == item && abs(itemTime(at: next.referenceTime) - next.itemTime) <= tolerance
        }
    }

    private(set) var motions: [Motion] = []

    /// An empty schedule.
    public init() {}

    /// Adds `command`, dropping every motion at or after its reference time. Seeks add nothing.
    public mutating func insert(_ command: PlaybackCommand) {
        let motion: Motion
        switch command.kind {
        case .play(let itemTime, let at, let rate):
            motion = Motion(item: command.expectedItemIdentifier, itemTime: itemTime, referenceTime: at, rate: rate, revision: command.revision, waiting: false)
        case .pause(let itemTime, let at):
            motion = Motion(item: command.expectedItemIdentifier, itemTime: itemTime, referenceTime: at, rate: 0, revision: command.revision, waiting: false)
        case .buffer(let itemTime, let at, _):
            motion = Motion(item: command.expectedItemIdentifier, itemTime: itemTime, referenceTime: at, rate: 0, revision: command.revision, waiting: true)
        case .seek:
            return
        }
        // The same motion at the same instant again (a coordinator continuing this player in a
        // successor session repeats what the player follows, under another revision): it stays as
        // it is, so mpv is not restarted for it; what followed it goes, as for any command.
        if let same = motions.first(where: { $0.referenceTime == motion.referenceTime }), same.item == motion.item,
            same.itemTime == motion.itemTime, same.rate == motion.rate, same.waiting == motion.waiting
        {
            motions.removeAll { $0.referenceTime > motion.referenceTime }
            return
        }
        motions.removeAll { $0.referenceTime >= motion.referenceTime }
        // A command that only restates the motion in force (the coordinator replacing a stale later
        // command, such as a resume moved later by another suspension) cancels what followed and
        // adds nothing: mpv is not touched again for a motion it is already in.
        if let last = motions.last, last.isContinued(by: motion), last.rate == motion.rate, last.waiting == motion.waiting { return }
        motions.append(motion)
    }

    /// The motion in force at `t` (the last one at or before it), or `nil` before the first.
    public func motion(at t: ReferenceTime) -> Motion? {
        motions.last { $0.referenceTime <= t }
    }

    /// The first motion after `t`, or `nil`.
    public func next(after t: ReferenceTime) -> Motion? {
        motions.first { $0.referenceTime > t }
    }

    /// Forgets motions that ended before `t` (keeping the one in force).
    public mutating func prune(before t: ReferenceTime) {
        guard let index = motions.lastIndex(where: { $0.referenceTime <= t }), index > 0 else { return }
        motions.removeFirst(index)
    }
}
