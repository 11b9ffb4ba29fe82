// The player's placed starts, as a record (cadence.js plans them; player.js carries them out): whether a
// start of a motion can be placed on this page (a browser frame clock, a frame grid, a start profile,
// not given up), the `play()`-to-clock latency learnt per kind of media and speed, and when placing is
// given up (display.js `placedGiveUp`): for good (the profile does not fit this display) or for one
// motion for a while (redone too often: a busy machine). No element, no timers: Node-tested alone.

import { profileFor } from "./cadence.js";
import { placedGiveUp } from "./display.js";
import { sameMotion } from "./schedule.js";

export class PlacedStarts {
  /**
   * @param {object} options
   * @param {{nowMs(): number|null}} options.clock the reference clock (ms).
   * @param {object} options.timing TIMING (with overrides).
   * @param {() => object} options.thresholds the thresholds in force (THRESHOLDS.video or .audio).
   * @param {() => boolean} options.hasAudio whether the media has an audio track.
   * @param {() => import("./schedule.js").FrameGrid|null} options.grid the media's frame grid, when constant.
   * @param {boolean} options.hasFrameClock whether the browser gives animation frames (`requestAnimationFrame`).
   * @param {Array<object>} options.profiles placed-start profiles (cadence.js PROFILES).
   */
  constructor({ clock, timing, thresholds, hasAudio, grid, hasFrameClock, profiles }) {
    this.clock = clock;
    this.timing = timing;
    this.thresholds = thresholds;
    this.hasAudio = hasAudio;
    this.grid = grid;
    this.hasFrameClock = hasFrameClock;
    this.profiles = profiles;
    this.misses = 0; // placed starts in a row whose pictures missed
    this.off = false; // given up on placed starts for good (they kept missing: the profile does not fit)
    this.pausedFor = null; // the motion placing is given up for (redone too often: a busy machine)
    this.pausedUntilMs = -Infinity; // ... until this reference ms
    this.againAt = []; // reference ms of recent placements done again (slips and misses)
    this.earlyEnds = 0; // placements in a row that drifted off sooner than TIMING.placedHoldMs
    this.latencies = new Map(); // learnt play()-to-clock latency (ms) per "audio:rate"
  }

  /** The learnt latency from `play()` to the media clock moving, for placed starts at `rate`. */
  latency(rate) {
    return this.latencies.get(`${this.hasAudio()}:${rate}`) ?? this.thresholds().placedLatencyMs ?? 0;
  }

  /** Learns that a placed start at `rate` reached its clock `lateMs` after the plan. */
  learnLatency(rate, lateMs) {
    this.latencies.set(`${this.hasAudio()}:${rate}`, this.latency(rate) + lateMs * 0.7);
  }

  /** The start profile for `motion` (cadence.js), or null. */
  profile(motion) {
    return profileFor((this.grid().interval * 1000) / motion.rate, this.profiles);
  }

  /** Whether a start of `motion` can be placed now: placeable, and placing not paused for a busy moment. */
  canPlace(motion) {
    if (!this.placeable(motion)) return false;
    return !(this.pausedFor !== null && sameMotion(this.pausedFor, motion) && (this.clock.nowMs() ?? Infinity) < this.pausedUntilMs);
  }

  /** Whether starts of `motion` are placed on this page: a browser frame clock, a frame grid, a start profile, not given up for good. */
  placeable(motion) {
    if (!this.hasFrameClock || this.off || this.grid() === null || !(motion.rate > 0)) return false;
    if (!this.thresholds().placedStarts) return false;
    return this.profile(motion) !== null;
  }

  /** Whether placing is paused now for `motion` (a busy moment). */
  pausedNow(motion) {
    return this.pausedFor !== null && sameMotion(this.pausedFor, motion) && (this.clock.nowMs() ?? Infinity) < this.pausedUntilMs;
  }

  /**
   * Records a placement done again at reference ms `now` and decides (display.js `placedGiveUp`) whether
   * placing stops: for good (the profile does not fit this display) or for `motion` only (too many
   * redone lately: a busy machine; the group's next command is placed again). True when it stops.
   */
  giveUp(motion, now, thresholds) {
    this.againAt = this.againAt.filter((at) => now - at < this.timing.placedAgainWindowMs);
    this.againAt.push(now);
    const verdict = placedGiveUp({
      misses: this.misses, earlyEnds: this.earlyEnds, recentAgain: this.againAt.length,
      giveUp: thresholds.placedGiveUp, againLimit: this.timing.placedAgainLimit,
    });
    if (verdict === null) return false;
    if (verdict === "page") this.off = true;
    else {
      this.pausedFor = motion;
      this.pausedUntilMs = now + this.timing.placedPauseMs;
      this.againAt = [];
    }
    return true;
  }
}
