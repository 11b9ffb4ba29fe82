// The player's playhead: where the element's pictures are against where the group's timeline says
// they should be. Every presented frame is sampled with `requestVideoFrameCallback`
// (`performance.timeOrigin + expectedDisplayTime`, when Chromium shows it, against `mediaTime`, mapped
// to the reference clock); the error is where those pictures sit on the group's timeline (display.js),
// or, with no frames seen for a while, the element's own clock. Also the frame clock's phase (a
// playing frame's display instant, else an animation frame), which placed starts plan on.

import { displayErrorMs } from "./display.js";
import { motionItemTime } from "./schedule.js";
import { TIMING } from "./tuning.js";

/** The value of rank `rank` from the top of `values` (0: the largest; clamped), or null when empty. */
export function rankFromTop(values, rank) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => b - a);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

/**
 * The player's error (item seconds ahead of the group; negative: behind) at reference ms `nowMs`
 * from frame samples taken while the element ran at `speed`: each sample's position projected to
 * now at that speed, minus the group's item time now; a frame shown late only looks behind, so the
 * estimate is the value of rank `rank` from the top of those.
 *
 * @param {Array<{refMs: number, mediaTime: number}>} samples
 */
export function estimateError(samples, motion, speed, nowMs, rank = TIMING.rankFromTop) {
  const groupNow = motionItemTime(motion, nowMs);
  const errors = samples.map((s) => s.mediaTime + (speed * (nowMs - s.refMs)) / 1000 - groupNow);
  return rankFromTop(errors, rank);
}

export class Playhead {
  /**
   * @param {object} options
   * @param {HTMLVideoElement} options.video
   * @param {{nowMs(): number|null, offsetMs(): number}} options.clock the reference clock (ms).
   * @param {{setTimeout, clearTimeout}} options.timers
   * @param {() => number} options.timeOrigin `performance.timeOrigin`.
   * @param {() => number} options.localNow `performance.now()`.
   * @param {((callback: (localMs: number) => void) => void)|null} options.animationFrame `requestAnimationFrame`.
   * @param {object} options.timing TIMING (with overrides).
   * @param {() => {playing: boolean, trim: number}} options.state the player's, stamped on each sample.
   */
  constructor({ video, clock, timers, timeOrigin, localNow, animationFrame, timing, state }) {
    this.video = video;
    this.clock = clock;
    this.timers = timers;
    this.timeOrigin = timeOrigin;
    this.localNow = localNow;
    this.animationFrame = animationFrame;
    this.timing = timing;
    this.state = state;
    this.samplesKept = []; // {wallMs, mediaTime, rate, referenceOffsetMs, refMs, playing, ...}
    this.lastSampleMs = -Infinity; // reference ms of the last frame shown while playing
  }

  /** One presented frame (`requestVideoFrameCallback` metadata). */
  recordFrame(metadata) {
    const offset = this.clock.offsetMs();
    const wallMs = this.timeOrigin() + metadata.expectedDisplayTime;
    const v = this.video;
    const before = this.localNow();
    const currentTime = v.currentTime;
    const clockMs = this.timeOrigin() + (before + this.localNow()) / 2;
    const { playing, trim } = this.state();
    const sample = {
      wallMs, mediaTime: metadata.mediaTime, rate: v.playbackRate, referenceOffsetMs: offset, refMs: wallMs + offset,
      playing: playing && !v.paused && !v.seeking, paused: v.paused, seeking: v.seeking, trim, currentTime, clockMs,
    };
    this.samplesKept.push(sample);
    if (this.samplesKept.length > this.timing.keptSamples) this.samplesKept.splice(0, this.samplesKept.length - this.timing.keptSamples);
    if (sample.playing) this.lastSampleMs = sample.refMs;
  }

  /**
   * Recent samples `{wallMs, mediaTime, rate, referenceOffsetMs, paused, seeking, trim, currentTime, clockMs}`:
   * wallMs is performance.timeOrigin + expectedDisplayTime; the element's state at the callback, the
   * trim in its playbackRate (the group's rate is rate / trim), and its media clock read in the callback
   * (`currentTime` at local ms `clockMs`, performance.timeOrigin + performance.now()).
   */
  samples() {
    return this.samplesKept.map(({ wallMs, mediaTime, rate, referenceOffsetMs, paused, seeking, trim, currentTime, clockMs }) => ({
      wallMs, mediaTime, rate, referenceOffsetMs, paused, seeking, trim, currentTime, clockMs,
    }));
  }

  /** Frames shown while playing from reference ms `fromMs` up to `nowMs` (and a little after: stamps are of display). */
  playingSince(fromMs, nowMs) {
    return this.samplesKept.filter((s) => s.playing && s.refMs >= fromMs && s.refMs <= nowMs + 50);
  }

  /** Samples the closed loop may judge now: the last `windowMs`, none before `judgeFrom`. */
  judgeable(nowMs, judgeFrom) {
    return this.playingSince(Math.max(judgeFrom, nowMs - this.timing.windowMs), nowMs);
  }

  /** Playing frames shown since reference ms `startedAtMs` (the start in force), the first `placedVerifySkip` left out. */
  framesSinceStart(nowMs, startedAtMs) {
    return this.playingSince(startedAtMs, nowMs).slice(this.timing.placedVerifySkip);
  }

  /**
   * Where the pictures are against `motion` at reference ms `now`: `{samples, error, fine}`, error in
   * item seconds ahead of the group (null: nothing to judge yet). Placed pictures are judged from their
   * first frames on (a slip shows in a few); the closed loop once the renderer settled after a start
   * (`judgeFrom`) and enough frames came (fine: from the pictures as shown). With no frames for a while,
   * the element's own clock (not fine).
   */
  error(motion, now, { placed, startedAtMs, judgeFrom }) {
    const samples = placed ? this.framesSinceStart(now, startedAtMs) : this.judgeable(now, judgeFrom);
    let error = null;
    let fine = false;
    if (samples.length >= (placed ? this.timing.placedSlipFrames : this.timing.minimumSamples)) {
      // How late the pictures are as shown (display.js), as item seconds ahead of the group: the least
      // lag of the last cadence cycle.
      const lateMs = displayErrorMs(samples.slice(-this.timing.recentFrames), motion, { percentile: 0 });
      error = (-lateMs * motion.rate) / 1000;
      fine = true;
    } else if (now - Math.max(this.lastSampleMs, startedAtMs) > this.timing.coarseAfterMs && !this.video.seeking) {
      // No frames seen for a while: the element's own clock, judged only beyond a frame more.
      error = this.video.currentTime - motionItemTime(motion, now);
    }
    return { samples, error, fine };
  }

  /** A frame-clock tick in reference ms: from a recent frame sample, else the next animation frame; null if neither. */
  async frameTick() {
    // Only a playing frame's expectedDisplayTime is on the frame clock's grid (a frame shown after a
    // paused seek is stamped when it arrives: measured 2-8 ms off the grid).
    const now = this.clock.nowMs();
    let last;
    for (let i = this.samplesKept.length - 1; i >= 0; i--) {
      if (this.samplesKept[i].playing) {
        last = this.samplesKept[i];
        break;
      }
    }
    if (now !== null && last !== undefined && now - last.refMs < this.timing.tickFromSampleMs) {
      return last.wallMs + this.clock.offsetMs();
    }
    if (this.animationFrame === null) return null;
    const local = await new Promise((resolve) => {
      let done = false;
      const timer = this.timers.setTimeout(() => {
        if (!done) {
          done = true;
          resolve(null);
        }
      }, 200);
      this.animationFrame((ms) => {
        if (done) return;
        done = true;
        this.timers.clearTimeout(timer);
        resolve(ms);
      });
    });
    return local === null ? null : this.timeOrigin() + local + this.clock.offsetMs();
  }
}
