// The coordinator's commands for one player, in reference-time order (a port of
// Sources/MPVControl/CommandSchedule.swift), and the frame grid of constant-frame-rate media
// (MediaTimeline's `.grid`, from the activity's `frameInterval` / `firstFrameTime` / `duration`).
//
// Reference instants are kept twice: `referenceTime`, BigInt nanoseconds of Unix time as the
// coordinator gives them, and `referenceMs`, a Number of milliseconds (exact to the microsecond),
// which is what the page's timers and `requestVideoFrameCallback` stamps are compared with.

/** BigInt nanoseconds -> Number milliseconds, exact to the microsecond. */
export function nsToMs(ns) {
  return Number(ns / 1000n) / 1000;
}

/** Number milliseconds -> BigInt nanoseconds (rounded to the nanosecond). */
export function msToNs(ms) {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
}

/** A motion: the item at `itemTime` at `referenceMs`, advancing at `rate` (0: stopped). */
export function makeMotion({ item, itemTime, referenceTime, rate, revision = 0n, waiting = false, originator = null }) {
  return { item, itemTime, referenceTime, referenceMs: nsToMs(referenceTime), rate, revision, waiting, originator };
}

/** The item time at reference milliseconds `ms` on `motion`. */
export function motionItemTime(motion, ms) {
  return motion.itemTime + ((ms - motion.referenceMs) / 1000) * motion.rate;
}

/** Whether `next` continues `motion` without a jump in item time (a rate change only). */
export function isContinued(motion, next, tolerance = 1e-4) {
  return next.item === motion.item && Math.abs(motionItemTime(motion, next.referenceMs) - next.itemTime) <= tolerance;
}

/** Whether two motions are the same (as Swift's `==` on Motion). */
export function sameMotion(a, b) {
  if (a === null || b === null || a === undefined || b === undefined) return a === b;
  return a.item === b.item && a.itemTime === b.itemTime && a.referenceTime === b.referenceTime && a.rate === b.rate && a.revision === b.revision && a.waiting === b.waiting;
}

/** CommandSchedule: a command replaces every motion at or after its instant; seeks add nothing. */
export class CommandSchedule {
  constructor() {
    this.motions = [];
  }

  /** Adds a coordinator command (coordinator.js's command shape). Returns the motion added, or null (a seek, or a motion already scheduled). */
  insert(command) {
    let waiting = false;
    let rate;
    switch (command.kind) {
      case "play":
        rate = command.rate;
        break;
      case "pause":
        rate = 0;
        break;
      case "buffer":
        rate = 0;
        waiting = true;
        break;
      default:
        return null; // seek: the play / pause / buffer for the same instant carries the motion
    }
    const motion = makeMotion({
      item: command.expectedItemIdentifier, itemTime: command.itemTime, referenceTime: command.referenceTime, rate,
      revision: command.revision, waiting, originator: command.originator ?? null,
    });
    // The same motion at the same instant again (a coordinator continuing this player in a successor
    // session repeats what the player follows, under another revision): it stays as it is, so the
    // player is not restarted for it; what followed it goes, as for any command.
    const same = this.motions.find((m) => m.referenceTime === motion.referenceTime);
    if (same !== undefined && same.item === motion.item && same.itemTime === motion.itemTime && same.rate === motion.rate && same.waiting === motion.waiting) {
      this.motions = this.motions.filter((m) => m.referenceTime <= motion.referenceTime);
      return null;
    }
    this.motions = this.motions.filter((m) => m.referenceTime < motion.referenceTime);
    this.motions.push(motion);
    return motion;
  }

  /** The motion in force at reference ms `t` (the last at or before it), or null. */
  motionAt(t) {
    return this.motions.findLast((m) => m.referenceMs <= t) ?? null;
  }

  /** The first motion after reference ms `t`, or null. */
  nextAfter(t) {
    return this.motions.find((m) => m.referenceMs > t) ?? null;
  }

  /** Forgets motions that ended before `t` (keeping the one in force). */
  prune(t) {
    const index = this.motions.findLastIndex((m) => m.referenceMs <= t);
    if (index > 0) this.motions.splice(0, index);
  }

  clear() {
    this.motions = [];
  }
}

/**
 * Frames on a constant grid: `firstFrameTime + index * frameInterval` while before `duration`.
 * Built from the activity's optional fields; `null` when they are missing or unusable.
 */
export class FrameGrid {
  static fromActivity(activity) {
    const interval = Number(activity?.frameInterval);
    if (!(interval > 0) || !Number.isFinite(interval)) return null;
    const start = Number.isFinite(Number(activity.firstFrameTime)) ? Number(activity.firstFrameTime) : 0;
    const duration = Number(activity.duration);
    return new FrameGrid(start, interval, Number.isFinite(duration) && duration > 0 ? duration : Infinity);
  }

  constructor(start, interval, duration = Infinity) {
    this.start = start;
    this.interval = interval;
    this.duration = duration;
    this.count = Number.isFinite(duration) ? Math.max(0, Math.ceil((duration - start) / interval - 1e-6)) : Infinity;
  }

  /** Presentation time of frame `index`. */
  presentationTime(index) {
    return this.start + index * this.interval;
  }

  /** The frame on screen at `time` (the last at or before it, 1 ns tolerance), or null before the first. */
  frameDisplayedAt(time) {
    const raw = Math.floor((time - this.start + 1e-9) / this.interval);
    if (raw < 0) return null;
    return Math.min(raw, this.count - 1);
  }

  /** The presentation time of the frame on screen at `time` (`time` itself before the first frame). */
  snap(time) {
    const index = this.frameDisplayedAt(time);
    return index === null ? time : this.presentationTime(index);
  }
}
