// The `<video>` player adapter: the browser twin of Sources/MPVControl/MPVPlayer.swift (and of the
// headless player's contract in Sources/PlaybackCoordinator/HeadlessPlayer.swift). The coordinator's
// commands (shell.js -> `handle(command)`) become, at their reference instants on the synced clock:
//
//   play   paused at the item time (a seek ahead of the instant), `play()` a learned start latency
//          before the instant, so the media clock starts moving at the instant;
//   pause  `pause()` at the instant, then a seek to the group's frame (the frame grid from the
//          activity when known), so every member stops on the same picture;
//   rate   `playbackRate` at the instant when the motion continues; a jump restarts;
//   buffer like pause, while the group waits for a suspended member;
//   seek   nothing by itself (the play / pause for the same instant carries it).
//
// Aligned by display time: every presented frame is sampled with `requestVideoFrameCallback`
// (`performance.timeOrigin + expectedDisplayTime`, when Chromium shows it, against `mediaTime`, mapped
// to the reference clock), and what is steered is where the pictures sit on the group's timeline, not
// the media clock: the display origin of the last second's frames (their low tenth percentile of
// display instant minus media time, display.js) against the group's. Small errors are trimmed with
// `playbackRate`, large ones re-anchored with a seek, never less than half a step of the lattice of
// origins the frame clock allows (display.js `latticeStepMs`). Thresholds: `THRESHOLDS` (tuning.js).
//
// Placed starts (cadence.js): Chromium shows a constant-rate clip on a cadence of its frame clock that
// trims cannot move, but that a start sets deterministically. Where a start profile exists (25 fps at 1x
// and 0.5x on 60 Hz, video only) every start is timed so the pictures land on the display origin nearest
// the group's; no trims follow, and pictures that land or slip elsewhere are placed again.
//
// The player's parts, composed here (the way shaka-player splits its player):
//   element.js   the video-element wrapper: play (muted when autoplay is refused), pause, seeks that
//                wait for the picture, rate and pitch, events, presented frames;
//   playhead.js  where the pictures are (rVFC samples) against where the group's timeline wants them,
//                and the frame clock's phase;
//   rate.js      the rate controller: the group's rate times a trim, the closed loop's trims;
//   placement.js placed starts as a record: whether a motion's start can be placed, the latencies
//                learnt, when placing is given up (for good, or a while);
//   stall.js     the stall detector: the element's waiting / seeking / stalls become readiness reports
//                (readiness.js), which the coordinator turns into buffering / stallRecovery suspensions;
//   tuning.js    THRESHOLDS and TIMING.
// This file keeps the control loop (commands at their instants, restarts, starts judged on their first
// frames, placed starts) and the state the parts share.
//
// Everything the adapter touches is injected (the element, the clock, timers), so Node tests drive it
// with a fake element and a manual clock.

import { PROFILES, planStart } from "./cadence.js";
import { displayErrorMs, keepsPlacedMiss, latticeStepMs, placedDriftMs, placedVerdict } from "./display.js";
import { VideoElement } from "./element.js";
import { PlacedStarts } from "./placement.js";
import { Playhead } from "./playhead.js";
import { RateController } from "./rate.js";
import { SeekLead } from "./seeklead.js";
import { CommandSchedule, isContinued, motionItemTime, sameMotion } from "./schedule.js";
import { StallDetector } from "./stall.js";
import { THRESHOLDS, TIMING } from "./tuning.js";

/** What placedStart returns when another motion takes over before its start (nothing was done). */
const SUPERSEDED = "superseded";

/** The tuning, exported where it always was (scripts/browser-driver.py's experiments override it here). */
export { THRESHOLDS, TIMING };

/**
 * Drives one `<video>` element from the coordinator's commands.
 *
 * ```js
 * const player = new VideoPlayer({ video, clock, item: activity.item, grid: FrameGrid.fromActivity(activity) });
 * player.onreadiness = (r) => shell.reportReadiness(r);
 * player.onevent = (event) => log(event);
 * player.start();
 * shell = new CoordinatorShell({ ..., player });
 * ```
 */
export class VideoPlayer {
  /**
   * @param {object} options
   * @param {HTMLVideoElement} options.video
   * @param {{nowMs(): number|null, offsetMs(): number}} options.clock the reference clock in
   *   milliseconds of Unix time, and reference minus local (`performance.timeOrigin + performance.now()`).
   * @param {string|null} options.item the item identifier of the loaded media.
   * @param {import("./schedule.js").FrameGrid|null} [options.grid] its frame grid, when constant.
   * @param {{setTimeout, clearTimeout}} [options.timers]
   * @param {() => number} [options.timeOrigin] `performance.timeOrigin`.
   * @param {() => number} [options.localNow] `performance.now()`.
   * @param {() => number} [options.realtime] seconds since the Unix epoch, to stamp events.
   * @param {object} [options.timing] overrides of TIMING.
   * @param {object} [options.thresholds] overrides of THRESHOLDS ({video, audio}).
   * @param {((callback: (localMs: number) => void) => void)|null} [options.animationFrame]
   *   `requestAnimationFrame` (the frame clock's phase, for placed starts; null: no placed starts).
   * @param {Array<object>} [options.profiles] placed-start profiles (cadence.js PROFILES).
   */
  constructor({ video, clock, item, grid = null, timers = globalThis, timeOrigin = () => performance.timeOrigin, localNow = () => performance.now(), realtime = () => Date.now() / 1000, timing = {}, thresholds = {}, profiles = PROFILES, animationFrame = typeof globalThis.requestAnimationFrame === "function" ? (callback) => globalThis.requestAnimationFrame(callback) : null }) {
    this.video = video;
    this.clock = clock;
    this.item = item;
    this.grid = grid;
    this.timers = timers;
    this.realtime = realtime;
    this.placement = null; // the placed start in force: {latticeMs, offsetMs, ...} (cadence.js planStart)
    this.timing = { ...TIMING, ...timing };
    this.thresholdSets = { ...THRESHOLDS, ...thresholds };
    // The parts (docs/web.md, "The page's files"): the element, where its pictures are, its rate, placed starts, its stalls.
    this.element = new VideoElement({ video, timers, timing: this.timing });
    this.playhead = new Playhead({
      video, clock, timers, timeOrigin, localNow, animationFrame, timing: this.timing,
      state: () => ({ playing: this.playing, trim: this.rateController.trim }),
    });
    this.rateController = new RateController({ element: this.element, thresholds: () => this.thresholds });
    this.placed = new PlacedStarts({
      clock, timing: this.timing, thresholds: () => this.thresholds, hasAudio: () => this.element.hasAudio, grid: () => this.grid,
      hasFrameClock: animationFrame !== null, profiles,
    });
    this.stall = new StallDetector({
      video, clock, timers, timing: this.timing, playing: () => this.playing, stopped: () => this.stopped,
      onreadiness: (readiness) => this.onreadiness(readiness),
    });
    this.schedule = new CommandSchedule();
    this.applied = null;
    this.playing = false;
    this.startLatencyMs = null; // learnt from starts (ms); null: the first guess (THRESHOLDS startLatencyMs, else TIMING's)
    this.correctionsSinceStart = 0;
    this.restartDelayMs = this.timing.restartDelayMs;
    this.lastSeekMs = null; // how long the last start's seek took (ms)
    this.seekPicture = null; // while a start's seek waits for its picture: (sample) => void
    // How long before a start's play() its seek is made (seeklead.js): a paused seek's picture is shown at once.
    this.seekLead = new SeekLead({
      marginMs: this.timing.seekLeadMarginMs, kept: this.timing.seekLeadKept, initialMs: this.timing.seekLeadInitialMs, maximumMs: 2000,
    });
    this.verifying = null; // {fromMs, attempt, learn}: a start whose first frames are still to be judged
    this.restarts = 0; // starts done again after their first frames
    this.judgeFrom = -Infinity; // reference ms: samples before this are not judged
    this.lastCorrectionMs = -Infinity;
    this.startedAtMs = -Infinity;
    this.errorMs = null; // the latest estimate (ms of item time), null when not playing
    this.foreignItem = null;
    this.ended = false;
    this.stopped = true;
    this.wakeUp = null;
    /** Readiness reports ("ready" | "loading" | "seeking" | "starved"). */
    this.onreadiness = () => {};
    /** Events: stopped, correction, commandIgnored (PlaybackEvent-like objects). */
    this.onevent = () => {};
    /** Something the person should know: {kind: "autoplay" | "foreignItem" | "ended" | "error", detail} or null. */
    this.onnotice = () => {};
  }

  /** The thresholds in force (audio or video-only media). */
  get thresholds() {
    return this.element.hasAudio ? this.thresholdSets.audio : this.thresholdSets.video;
  }

  /** Readiness as last reported ("ready" | "loading" | "seeking" | "starved"). */
  get readiness() {
    return this.stall.readiness;
  }

  /** The trim in force (the element runs at the group's rate times this). */
  get trim() {
    return this.rateController.trim;
  }

  /** The browser refused to play with sound and the element plays muted. */
  get mutedByPolicy() {
    return this.element.mutedByPolicy;
  }

  /** Recent frame samples (playhead.js `samples`). */
  samples() {
    return this.playhead.samples();
  }

  // MARK: Life cycle

  /** Starts following commands and the element's events. */
  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.element.listen({
      ...this.stall.listeners(),
      ended: () => {
        this.ended = true;
        this.onnotice({ kind: "ended", detail: "the end of the media" });
      },
      pause: () => {
        // The element paused without us (the browser, picture-in-picture, a media key): follow the
        // group again at the next step.
        if (this.playing && !this.element.pausing) {
          this.playing = false;
          this.applied = null;
          this.wake();
        }
      },
    });
    this.stall.reportInitial();
    this.element.watchFrames(() => !this.stopped, (metadata) => {
      this.playhead.recordFrame(metadata);
      this.seekPicture?.(this.playhead.samplesKept[this.playhead.samplesKept.length - 1]);
    });
    this.loop().catch((error) => this.onnotice({ kind: "error", detail: `the player stopped: ${error?.message ?? error}` }));
  }

  /** Stops (the element is paused). */
  stop() {
    this.stopped = true;
    this.stall.cancel();
    this.element.unlisten();
    this.pauseElement();
    this.wake();
  }

  /** A coordinator command (PlaybackControlDelegate.handle). */
  handle(command) {
    if (command.expectedItemIdentifier !== this.item) {
      this.onevent({
        type: "commandIgnored", realtime: this.realtime(), originator: command.originator,
        originatorName: command.originatorName ?? null, item: command.expectedItemIdentifier,
        revision: command.revision, detail: "item not loaded",
      });
      return;
    }
    if (this.foreignItem !== null) {
      this.foreignItem = null;
      this.onnotice(null);
    }
    this.schedule.insert(command);
    this.wake();
  }

  /**
   * The group moved to an item this page does not have: stay paused where we are and say so (the
   * coordinator sends no commands for it; when the group comes back, commands resume).
   */
  holdForeignItem(item) {
    if (this.foreignItem === item) return;
    this.foreignItem = item;
    this.schedule.clear();
    this.applied = null;
    this.pauseElement();
    this.playing = false;
    this.errorMs = null;
    this.onnotice({ kind: "foreignItem", detail: item });
    this.wake();
  }

  // MARK: The control loop (MPVPlayer.control)

  wake() {
    const wake = this.wakeUp;
    this.wakeUp = null;
    wake?.();
  }

  /** Sleeps `ms`, or until a command arrives. */
  sleep(ms) {
    return new Promise((resolve) => {
      const timer = this.timers.setTimeout(() => {
        if (this.wakeUp === resolve) this.wakeUp = null;
        resolve();
      }, Math.max(0, ms));
      this.wakeUp = () => {
        this.timers.clearTimeout(timer);
        resolve();
      };
    });
  }

  /** Sleeps until reference ms `instant` (not interrupted by commands); spins the last `spinMs`. */
  async waitUntil(instant) {
    for (;;) {
      const now = this.clock.nowMs();
      if (now === null || now >= instant) return;
      const remaining = instant - now;
      if (remaining > this.timing.spinMs) {
        await new Promise((resolve) => this.timers.setTimeout(resolve, remaining - this.timing.spinMs));
        continue;
      }
      if (this.timing.spinMs <= 0) return;
      while ((this.clock.nowMs() ?? Infinity) < instant) {
        // spin: a few milliseconds at most
      }
      return;
    }
  }

  async loop() {
    while (!this.stopped) {
      const now = this.clock.nowMs();
      if (now === null || this.foreignItem !== null) {
        await this.sleep(50);
        continue;
      }
      this.schedule.prune(now - 5000);
      const current = this.schedule.motionAt(now);
      const next = this.schedule.nextAfter(now);
      if (next !== null && sameMotion(this.applied, next)) {
        // Already carried out (started a latency ahead of its instant): let the instant come.
        await this.waitUntil(next.referenceMs);
        continue;
      }
      if (next !== null && next.referenceMs - now <= this.timing.prepareHorizonMs) {
        await this.transition(next, current);
        continue;
      }
      if (current !== null && !sameMotion(this.applied, current)) {
        await this.restart(current);
        continue;
      }
      let pause = 50;
      if (current !== null && current.rate > 0 && this.playing) {
        pause = this.timing.correctionIntervalMs;
        if (now - this.lastCorrectionMs >= this.timing.correctionIntervalMs) {
          this.lastCorrectionMs = now;
          await this.correct(current, now);
          continue;
        }
      }
      if (next !== null) pause = Math.min(pause, Math.max(1, next.referenceMs - now - this.timing.prepareHorizonMs));
      await this.sleep(pause);
    }
  }

  /** Carries out `next` at its instant, from whatever the element does now. */
  async transition(next, current) {
    if (next.rate > 0) {
      if (this.playing && current !== null && sameMotion(this.applied, current) && current.rate > 0 && isContinued(current, next) && !this.placed.canPlace(next)) {
        // A rate change without a jump: at the instant.
        await this.waitUntil(next.referenceMs);
        this.setRate(next.rate, this.startTrim);
        this.placement = null;
        this.applied = next;
        // Chromium's pictures (with audio: its clock) step at a rate change: judged like a start.
        this.verifying = { fromMs: next.referenceMs + this.timing.verifySettleMs, attempt: 0, learn: false };
        return;
      }
      if (this.playing) {
        // A jump while playing (or, with placed starts, a rate change: only a start places the
        // pictures): play on until the instant, then restart at the new time.
        await this.waitUntil(next.referenceMs);
        this.pauseElement();
        await this.restart(next);
        return;
      }
      const placed = await this.placedStart(next, next.referenceMs);
      if (placed !== null) {
        if (placed === true) this.applied = next;
        return;
      }
      if ((await this.seekForStart(next.itemTime, next.referenceMs - this.startLatency, next)) === null) return;
      this.setRate(next.rate, this.startTrim);
      if (await this.startAt(next.referenceMs, next)) this.applied = next;
      return;
    }
    let stoppedAt = null;
    if (this.playing) {
      await this.waitUntil(next.referenceMs);
      this.pauseElement();
      stoppedAt = this.realtime();
    }
    await this.seekTo(this.snap(next.itemTime));
    this.settleEnd(next.itemTime);
    this.emitStopped(next, stoppedAt ?? this.realtime());
    this.applied = next;
    // Stay here no longer than the instant: the loop then finds it applied.
    await this.waitUntil(next.referenceMs);
  }

  /** Starts `motion`, already in force, a little in the future (a late command, a re-anchoring). */
  async restart(motion, attempt = 0) {
    if (this.clock.nowMs() === null) return;
    if (motion.rate === 0) {
      this.pauseElement();
      await this.seekTo(this.snap(motion.itemTime));
      this.settleEnd(motion.itemTime);
      this.emitStopped(motion, this.realtime());
      this.applied = motion;
      return;
    }
    // An element that plays (a re-anchoring of the same motion) plays on, near the timeline, until
    // the start's seek (seekForStart), which is made as late as the recent seeks allow: its picture
    // is not shown ahead of the group's timeline. Starts from a stop (a jump was paused at its instant)
    // hold their last picture until then.
    if (!sameMotion(this.applied, motion)) this.pauseElement();
    const delay = Math.max(this.restartDelayMs, this.seekLead.ms + this.timing.spinMs);
    const placedFrom = this.clock.nowMs();
    const placed = await this.placedStart(motion, placedFrom + delay, attempt);
    if (placed !== null) {
      if (placed === SUPERSEDED) return;
      if (placed) {
        this.applied = motion;
        this.restartDelayMs = Math.max(this.timing.restartDelayMs, this.restartDelayMs * 0.75);
      } else {
        // The seek took longer than the delay allowed: allow more next time, and start again (the
        // element is paused: the motion is not applied, even when it was before this restart).
        this.applied = null;
        this.restartDelayMs = Math.min(2000, Math.max(this.restartDelayMs * 2, 2 * (this.lastSeekMs ?? 0) + this.timing.spinMs));
      }
      return;
    }
    const later = this.clock.nowMs() + delay;
    const target = motionItemTime(motion, later);
    const seekMs = await this.seekForStart(target, later - this.startLatency, motion);
    if (seekMs === null) return;
    this.setRate(motion.rate, this.startTrim);
    if (await this.startAt(later, motion, attempt)) {
      this.applied = motion;
      // A seek slowed by a busy moment made the delay grow: back towards the usual one as starts succeed.
      this.restartDelayMs = Math.max(this.timing.restartDelayMs, this.restartDelayMs * 0.75);
    } else {
      // The seek took longer than the delay allowed: allow more next time, and start again.
      this.applied = null;
      this.restartDelayMs = Math.min(2000, Math.max(this.restartDelayMs * 2, 2 * seekMs + this.timing.spinMs));
    }
  }

  /**
   * Starts the element so its media clock moves from reference ms `instant` on (it is paused at the
   * motion's item time for that instant). Returns false when the instant is too close or past.
   */
  async startAt(instant, motion, attempt = 0, placement = null) {
    const duration = this.video.duration;
    if (Number.isFinite(duration) && motionItemTime(motion, instant) >= duration - 1e-3) {
      // Past the end: show the last picture, do not play.
      this.ended = true;
      this.onnotice({ kind: "ended", detail: "the group is past the end of the media" });
      return true;
    }
    const latency = placement !== null ? this.placedLatency(motion.rate) : this.startLatency;
    const now = this.clock.nowMs();
    if (now === null || instant - latency < now) return false;
    await this.waitUntil(instant - latency);
    // Stopped while waiting (the page was removed, or the session ended): a start must not outlive it.
    if (this.stopped) return false;
    this.leaveEnd();
    this.playElement();
    this.playing = true;
    this.startedAtMs = instant;
    this.judgeFrom = instant + this.timing.settleMs;
    this.lastCorrectionMs = instant;
    this.stall.quietUntil(instant + this.timing.ownStartQuietMs);
    this.placement = placement;
    this.correctionsSinceStart = 0;
    this.verifying = { fromMs: placement !== null ? instant : instant + this.timing.verifySettleMs, attempt, learn: placement === null, placement };
    return true;
  }

  // MARK: Placed starts (cadence.js)

  /** The latency from `play()` to the media clock moving for closed-loop starts (ms): learnt, else the first guess. */
  get startLatency() {
    return this.startLatencyMs ?? this.thresholds.startLatencyMs ?? this.timing.startLatencyMs;
  }

  /** The learnt latency from `play()` to the media clock moving, for placed starts at `rate` (placement.js). */
  placedLatency(rate) {
    return this.placed.latency(rate);
  }

  /**
   * Starts `motion` (rate > 0) placed (cadence.js): paused at the planned item time, `play()` at the
   * planned instant, no earlier than `notBeforeMs`. Returns null when no placed start is possible (the
   * caller starts as before), false when the seek left too little time, true when started, SUPERSEDED
   * when another motion takes over before the planned start (nothing done: the loop carries that out).
   */
  async placedStart(motion, notBeforeMs, attempt = 0) {
    if (!this.placed.canPlace(motion)) return null;
    const gridMs = await this.playhead.frameTick();
    const now = this.clock.nowMs();
    if (gridMs === null || now === null) return null;
    const plan = planStart({
      originMs: motion.referenceMs - (motion.itemTime * 1000) / motion.rate,
      rate: motion.rate,
      gridMs,
      grid: this.grid,
      notBeforeMs: Math.max(notBeforeMs, now),
      profile: this.placed.profile(motion),
    });
    if (plan === null) return null;
    if ((await this.seekForStart(plan.itemTime, plan.startMs - this.placedLatency(motion.rate), motion)) === null) return SUPERSEDED;
    this.setRate(motion.rate, 1);
    return this.startAt(plan.startMs, motion, attempt, plan);
  }

  /** One look at the error, then a trim or a re-anchoring seek. */
  async correct(motion, now) {
    if (this.ended || this.video.paused) {
      this.errorMs = null;
      return;
    }
    if (this.verifying !== null && (await this.verifyStart(motion, now))) return;
    const placed = this.placement !== null;
    // Where the pictures are against the group (playhead.js).
    const { samples, error, fine } = this.playhead.error(motion, now, { placed, startedAtMs: this.startedAtMs, judgeFrom: this.judgeFrom });
    if (error === null) return;
    this.errorMs = error * 1000;
    const thresholds = this.thresholds;
    const slack = fine ? 0 : (this.grid?.interval ?? 0.04) * 1000;
    if (Math.abs(error * 1000) > thresholds.seekThresholdMs + slack) {
      this.emitCorrection("seek", error * 1000, null);
      this.errorMs = null;
      await this.restart(motion);
      return;
    }
    if (!fine) return;
    const stepMs = this.grid === null ? null : latticeStepMs((this.grid.interval * 1000) / motion.rate);
    if (placed) {
      // Placed pictures do not follow trims: only a new placed start moves them. Under load Chromium
      // sometimes shows a frame a tick late and keeps the cadence from there (the pictures 16.7 ms
      // late for good): the least lag of the last `placedSlipFrames` frames against the planned point
      // tells within a few frames, and such a slip is placed again at once. A display whose frame
      // clock is not what the profile assumes (59.94 Hz, say) drifts off within seconds every time:
      // placements that keep ending early are given up like missed ones.
      const lateMs = -this.errorMs / motion.rate;
      const slipLateMs = displayErrorMs(samples.slice(-this.timing.placedSlipFrames), motion, { percentile: 0 });
      const verdict = placedVerdict({
        errorMs: lateMs, slipErrorMs: slipLateMs, plannedMs: this.placement.offsetMs,
        driftMs: placedDriftMs(thresholds.placedDriftMs, stepMs), slipMs: this.timing.placedSlipMs,
        sinceStartMs: now - this.startedAtMs, holdMs: this.timing.placedHoldMs,
      });
      if (verdict.action !== "hold") {
        // A slip is a whole tick at once; a frame clock the profile does not describe drifts off gradually.
        if (verdict.action === "drift") this.placed.earlyEnds = verdict.early ? this.placed.earlyEnds + 1 : 0;
        const quickMs = -(verdict.action === "slip" ? slipLateMs : lateMs) * motion.rate;
        if (this.givePlacingUp(motion, now, thresholds)) {
          this.emitCorrection("unplaced", quickMs, null);
          return;
        }
        this.emitCorrection("restart", quickMs, null);
        this.errorMs = null;
        await this.restart(motion);
      }
      return;
    }
    if (this.placed.placeable(motion)) {
      // Placing was given up for a busy moment (`placedPauseMs`): the pictures are held, not trimmed
      // (measured at load 10-19: trims on placed pictures made Chromium drop its cadence and jump them
      // to the media clock, 7-17 ms early, and back), and placed again after the pause if they are off.
      if (this.placed.canPlace(motion) && Math.abs(error * 1000) / motion.rate > placedDriftMs(thresholds.placedDriftMs, stepMs)) {
        this.emitCorrection("restart", error * 1000, null);
        this.errorMs = null;
        await this.restart(motion);
      }
      return;
    }
    // A trim (rate.js), when it is a new one.
    const factor = this.rateController.trimFor(error, motion.rate, stepMs);
    if (factor !== null) {
      this.setRate(motion.rate, factor);
      this.emitCorrection("rate", error * 1000, motion.rate * factor);
    }
  }

  /**
   * Judges a start on its first frames (`verifySamples` from `verifySettleMs` after the instant):
   * Chromium keeps the frame cadence it picks at a start, so pictures that start off stay off until
   * trims move them, late and in whole frame-clock ticks; a start off by more than
   * `startToleranceMs` is done again at once (a re-seek and a timed play), up to `startRetries`
   * times. The error is also learnt into the start latency (the part common to every start; with an
   * audio track Chromium's clock starts with the audio output, tens of ms after play()).
   * Returns true while the start is still being judged or was redone (the ordinary loop waits).
   */
  async verifyStart(motion, now) {
    const check = this.verifying;
    // A placed start is judged on its first frames (TIMING placedVerifyFrames); the others after a
    // settling time, on enough frames for the estimate's percentile.
    const samples = check.placement
      ? this.playhead.playingSince(check.fromMs, now).slice(this.timing.placedVerifySkip)
      : this.playhead.playingSince(check.fromMs, now);
    // A placed start that came a tick off shows it in fewer frames than a whole cadence cycle: their
    // least lag can read up to a lattice step late, never early, far below a tick (placedVerdict).
    const slipped = check.placement && samples.length >= this.timing.placedSlipFrames - 1
      && Math.abs(displayErrorMs(samples, motion, { percentile: 0 }) - check.placement.offsetMs) >= this.timing.placedSlipMs;
    if (!slipped && samples.length < (check.placement ? this.timing.placedVerifyFrames : this.timing.verifySamples)) {
      if (now - check.fromMs < this.timing.verifyWithinMs) return true;
      this.verifying = null;
      return false;
    }
    this.verifying = null;
    const errorMs = -displayErrorMs(samples, motion, { percentile: check.placement ? 0 : this.timing.displayPercentile }) * motion.rate;
    this.errorMs = errorMs;
    if (check.placement) return this.verifyPlacement(motion, check, errorMs, samples, now);
    if (check.learn) {
      const gain = Math.abs(errorMs) > this.timing.learnWholeAboveMs ? 1 : this.timing.latencyGain;
      this.startLatencyMs = Math.min(this.timing.maximumStartLatencyMs, Math.max(this.timing.minimumStartLatencyMs, this.startLatency - (errorMs * gain) / motion.rate));
    }
    // Judged in wall-clock ms (what a viewer sees): at half speed an item-time error shows twice as long.
    if (Math.abs(errorMs / motion.rate) <= this.thresholds.startToleranceMs || check.attempt >= (this.thresholds.startRetries ?? 0)) return false;
    this.restarts += 1;
    this.emitCorrection("restart", errorMs, null);
    this.errorMs = null;
    await this.restart(motion, check.attempt + 1);
    return true;
  }

  /**
   * A placed start's first frames: on the planned display origin (the pictures minus the group's,
   * -error / rate in wall ms, equal to the plan's offset) or missed; a miss is placed again, and after
   * `placedGiveUp` misses in a row the page goes back to closed-loop starts.
   */
  async verifyPlacement(motion, check, errorMs, samples, now) {
    const thresholds = this.thresholds;
    // The clock the start reached (reference ms of item time 0) against the plan's: learnt into the
    // latency (with audio a start can also come whole output buffers late: not learnt).
    const origins = samples
      .filter((s) => Number.isFinite(s.currentTime) && Number.isFinite(s.clockMs))
      .map((s) => s.clockMs + s.referenceOffsetMs - (s.currentTime * 1000) / motion.rate)
      .sort((a, b) => a - b);
    if (origins.length > 0) {
      const lateMs = origins[Math.floor(origins.length / 2)] - check.placement.clockOriginMs;
      if (Math.abs(lateMs) <= this.timing.placedLearnWithinMs) {
        this.placed.learnLatency(motion.rate, lateMs);
      }
    }
    const offMs = -errorMs / motion.rate; // the pictures minus the group's origin (wall ms)
    const missMs = offMs - check.placement.offsetMs;
    if (Math.abs(missMs) <= thresholds.placedToleranceMs) {
      this.placed.misses = 0;
      return false;
    }
    const stepMs = latticeStepMs((this.grid.interval * 1000) / motion.rate);
    if (keepsPlacedMiss({ offMs, stepMs, driftMs: placedDriftMs(thresholds.placedDriftMs, stepMs) })) {
      // Off the plan, but about as near the group (display.js): kept, judged from where it is.
      this.placement = { ...check.placement, offsetMs: offMs };
      return false;
    }
    this.placed.misses += 1;
    if (this.givePlacingUp(motion, now, thresholds)) {
      this.emitCorrection("unplaced", errorMs, null);
      return false;
    }
    if (check.attempt >= thresholds.placedRetries) return false;
    this.restarts += 1;
    this.emitCorrection("restart", errorMs, null);
    this.errorMs = null;
    await this.restart(motion, check.attempt + 1);
    return true;
  }

  /**
   * Records a placement done again at reference ms `now` and decides (display.js `placedGiveUp`) whether
   * placing stops: for good (the profile does not fit this display) or for `motion` only (too many
   * redone lately: a busy machine; the group's next command is placed again). True when it stops.
   */
  givePlacingUp(motion, now, thresholds) {
    if (!this.placed.giveUp(motion, now, thresholds)) return false;
    this.placement = null;
    return true;
  }

  // MARK: Element operations

  /** The trim a start or a rate change begins with (rate.js). */
  get startTrim() {
    return this.rateController.startTrim;
  }

  /** Runs the element at `rate` x `trim` (rate.js); a new group rate is judged once the renderer caught up. */
  setRate(rate, trim) {
    const now = this.clock.nowMs();
    if (this.rateController.set(rate, trim) && now !== null) this.judgeFrom = Math.max(this.judgeFrom, now + this.timing.settleMs);
  }

  playElement() {
    if (this.stopped) return;
    this.element.play({
      onerror: (error) => this.onnotice({ kind: "error", detail: `the browser would not play: ${error?.message ?? error}` }),
      onmuted: () => {
        this.onnotice({ kind: "autoplay", detail: "the browser started playback muted" });
        if (this.playing) {
          this.applied = null;
          this.playing = false;
          this.wake();
        }
      },
    });
  }

  pauseElement() {
    this.element.pause();
    this.playing = false;
    this.errorMs = null;
    this.verifying = null;
    this.placement = null;
  }

  /**
   * A stop at `itemTime`: at the end of the media when the group stopped there (the group's timeline
   * ends at the item's duration: its last picture stays up, the "end of the video" notice with it),
   * else no longer at the end.
   */
  settleEnd(itemTime) {
    const duration = this.video.duration;
    if (Number.isFinite(duration) && itemTime >= duration - 1e-3) {
      if (!this.ended) {
        this.ended = true;
        this.onnotice({ kind: "ended", detail: "the group reached the end of the media" });
      }
      return;
    }
    this.leaveEnd();
  }

  /**
   * The element left the end of the media (a stop or a start before it): no longer at the end, and the
   * "end of the video" notice goes (it stayed up over a picture from the middle of the file).
   */
  leaveEnd() {
    if (!this.ended) return;
    const duration = this.video.duration;
    if (Number.isFinite(duration) && this.video.currentTime >= duration - 1e-3) return;
    this.ended = false;
    if (this.foreignItem === null) this.onnotice(null);
  }

  /** The time to show for a stop at `itemTime`: just past its frame's presentation time. */
  snap(itemTime) {
    if (this.grid === null) return itemTime;
    return this.grid.snap(itemTime) + this.timing.snapEpsilon;
  }

  /** Whether a motion other than `motion` comes into force after now and no later than reference ms `beforeMs`. */
  supersededBefore(motion, beforeMs) {
    const now = this.clock.nowMs();
    if (now === null) return false;
    return this.schedule.motions.some((m) => m.referenceMs > now && m.referenceMs <= beforeMs && !sameMotion(m, motion));
  }

  /** Seeks (paused) and waits until the element has the picture (an own seek: stall.js); true when it sought. */
  async seekTo(itemTime) {
    const target = this.element.seekTarget(itemTime);
    if (target === null) return false;
    await this.stall.ownSeek(() => this.element.seek(target));
    return true;
  }

  /**
   * Seeks to `itemTime` for a `play()` at reference ms `playMs`, no earlier than the seek lead before it
   * (seeklead.js): a paused seek's picture is shown as soon as it is decoded and stays up until the
   * start, so seeking at once showed a frame of the future (255-372 ms ahead in Chromium). An element
   * still playing plays on until then and is paused for the seek. Returns how long the seek took (ms),
   * or null, without pausing or seeking, when another motion than `motion` comes into force before
   * `playMs` (a command that arrived meanwhile: the loop carries it out at its instant, the element
   * playing on until then instead of being paused for a start that would come after it).
   */
  async seekForStart(itemTime, playMs, motion) {
    const start = this.clock.nowMs();
    const seekAt = start === null ? null : this.seekLead.seekAt(playMs, start);
    // Until then a command may arrive (handle() wakes the sleep): one that comes first ends this start.
    for (let i = 0; seekAt !== null && i < 10_000; i++) {
      if (this.supersededBefore(motion, playMs)) return null;
      const now = this.clock.nowMs();
      if (now === null || now >= seekAt - this.timing.spinMs) break;
      await this.sleep(seekAt - now - this.timing.spinMs);
    }
    if (seekAt !== null) await this.waitUntil(seekAt);
    if (this.supersededBefore(motion, playMs)) return null;
    if (!this.video.paused || this.playing) this.pauseElement();
    const started = this.clock.nowMs();
    // Chromium often presents the seek's picture before the page hears `seeked` (under load tens of
    // ms before; the picture's rVFC sample even reads seeking): the seek is timed by its picture,
    // dated by the compositor, and the start goes on as soon as either came.
    let pictureMs = null;
    const picture = new Promise((resolve) => {
      this.seekPicture = (sample) => {
        if (started === null || sample.refMs < started || !sample.paused) return;
        if (Math.abs(sample.mediaTime - itemTime) > (this.grid?.interval ?? 0.05) + 0.002) return;
        pictureMs = sample.refMs - started;
        resolve(true);
      };
    });
    const sought = await Promise.race([this.seekTo(itemTime), picture]);
    this.seekPicture = null;
    const seekMs = pictureMs ?? Math.max(0, (this.clock.nowMs() ?? started) - started);
    if (sought) {
      this.seekLead.record(seekMs);
      this.lastSeekMs = seekMs;
    }
    return seekMs;
  }

  // MARK: Events

  emitStopped(motion, stamp) {
    this.errorMs = null;
    this.onevent({
      type: "stopped", realtime: stamp, item: motion.item, itemTime: motion.itemTime, referenceTime: motion.referenceMs / 1000,
      index: this.grid?.frameDisplayedAt(motion.itemTime) ?? undefined, detail: motion.waiting ? "waiting" : "paused",
    });
  }

  /**
   * A correction event. `afterStart` marks the first correction after a start that comes while the
   * start is still young (`verifyWithinMs` plus the settling): the start's own adjustment (with an
   * audio track Chromium's clock starts with the audio output, tens of ms after `play()`, differently
   * each time), not the page losing the group.
   */
  emitCorrection(kind, errorMs, rate) {
    const now = this.clock.nowMs();
    const afterStart = this.correctionsSinceStart === 0 && now !== null && now - this.startedAtMs <= this.timing.verifyWithinMs + this.timing.settleMs;
    if (kind !== "unplaced") this.correctionsSinceStart += 1;
    this.onevent({ type: "correction", realtime: this.realtime(), errorMs, rate: rate ?? undefined, detail: kind, afterStart });
  }

  /** The state for the page and its test hook. */
  get status() {
    return {
      playing: this.playing, trim: this.trim, errorMs: this.errorMs, startLatencyMs: this.startLatency, readiness: this.readiness, restarts: this.restarts,
      placed: this.placement !== null, placedOff: this.placed.off,
      placedPaused: this.placed.pausedNow(this.applied),
      foreignItem: this.foreignItem, ended: this.ended, hasAudio: this.element.hasAudio,
      // The revision of the group state whose motion the element follows (a string: BigInt does not cross to tests).
      motionRevision: this.applied === null ? null : String(this.applied.revision),
      seekLeadMs: this.seekLead.ms, recentSeeksMs: [...this.seekLead.recent],
    };
  }
}
