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
// origins the frame clock allows (display.js `latticeStepMs`). Thresholds: `THRESHOLDS` below.
//
// Placed starts (cadence.js): Chromium shows a constant-rate clip on a cadence of its frame clock that
// trims cannot move, but that a start sets deterministically. Where a start profile exists (25 fps at 1x
// and 0.5x on 60 Hz, video only) every start is timed so the pictures land on the display origin nearest
// the group's; no trims follow, and pictures that land or slip elsewhere are placed again.
//
// The `<video>`'s own waiting / seeking / stalls become readiness reports (readiness.js), which the
// coordinator turns into buffering / stallRecovery suspensions.
//
// Everything the adapter touches is injected (the element, the clock, timers), so Node tests drive it
// with a fake element and a manual clock.

import { PROFILES, planStart, profileFor } from "./cadence.js";
import { displayDeadbandMs, displayErrorMs, keepsPlacedMiss, latticeStepMs, placedDriftMs, placedGiveUp, placedVerdict } from "./display.js";
import { Readiness } from "../sync/readiness.js";
import { CommandSchedule, isContinued, motionItemTime, sameMotion } from "./schedule.js";

/**
 * Correction thresholds, picked from measurements in headless Chromium 156 (Web/README.md, "Timing").
 *
 * What rVFC shows of the media clock is quantized: a frame is displayed on a 60 Hz tick, so at 25 fps
 * the per-frame errors take 5 levels 3.33 ms apart and the estimate moves in 3.33 ms steps as the
 * media clock slides past the tick phase. Chromium's renderer also tolerates some drift between the
 * media clock and the frames it shows and catches up in whole-tick steps after a `playbackRate`
 * change (seen: a 1.1 % trim for 0.4 s moved the displayed frames by 10 ms, not 4). With a 1 ms dead
 * band the controller never settles (it chased the steps: ±10 ms swings); a dead band wider than one
 * step always has a level inside it, and gentle, rare trims keep the renderer from stepping. Starts
 * are precise on their own (two pages started 0.03-0.1 ms apart). PLAYERS.md also saw a rate change
 * jump playback by 20-30 ms on media with an audio track, so media with audio get their own set:
 * no trims in practice (only a re-anchoring restart beyond the seek threshold).
 */
export const THRESHOLDS = Object.freeze({
  video: Object.freeze({
    /** Errors at or below this are left alone: the element runs at the group's rate (ms of item time). */
    deadbandMs: 4,
    /** A trim removes the measured error over about this long (s): proportional control. */
    trimWindowS: 2,
    /** The largest trim, as a fraction of the group's rate. */
    maximumTrim: 0.02,
    /** Errors above this are corrected by a re-anchoring restart rather than a trim (ms of item time). */
    seekThresholdMs: 120,
    /**
     * A start (play, seek, item, resume, rate change) whose first frames are off by more than this
     * (wall-clock ms) is done again at once, up to `startRetries` times, instead of being trimmed
     * for seconds. Off (0 retries): measured (bench, Nov 2026), a redone start lands as far off as
     * the first (Chromium's pictures take a new cadence phase each time, −14 ... +18 ms), so redoing
     * cost pictures without lowering the p99.
     */
    startToleranceMs: 5,
    /** How often in a row such a start is done again (0: never; trims fix it). */
    startRetries: 0,
    /**
     * An experiment, off (0): the element never runs at exactly the group's rate but at least this
     * trim, its sign flipped when the error crosses ±`ditherHysteresisMs`. Meant to keep Chromium
     * from locking a 25 fps clip onto a 60 Hz cadence; measured (bench, Nov 2026), the pictures still
     * kept their cadence and moved in 3.3-10 ms steps, and the p99 did not improve.
     */
    ditherTrim: 0,
    ditherHysteresisMs: 1.5,
    /**
     * Placed starts (cadence.js): where a start profile exists (25 fps at 1x and 0.5x on a 60 Hz frame
     * clock), every start is timed so Chromium's pictures land on the display origin nearest the
     * group's, and no trims follow (they do not move the pictures). Needs `requestAnimationFrame`.
     */
    placedStarts: true,
    /** A placed start whose pictures are further than this (wall ms) from the planned origin missed. */
    placedToleranceMs: 1.5,
    /** How often in a row a missed placed start is done again. */
    placedRetries: 2,
    /** After this many missed placed starts (or early drifts) in a row, the page goes back to closed-loop starts. */
    placedGiveUp: 6,
    /** Placed pictures further than this from the group's origin (wall ms; the frame clock drifts) are placed again. */
    placedDriftMs: 3.4,
    /** A placed start's first guess of `play()` to the media clock moving (ms); learnt per speed from the clock each start reaches. */
    placedLatencyMs: 0.35,
  }),
  audio: Object.freeze({
    /**
     * The first guess of the time from `play()` to the media clock moving, before any start was learnt
     * (ms): with an audio track Chromium's clock starts with the audio output, measured 40-42 ms after
     * `play()` for a muted element and 65-90 ms unmuted (under `--mute-audio`). Guessing 0 made every
     * page's first start with sound 40-90 ms late, a corrective seek the person saw in the log.
     */
    startLatencyMs: 60,
    deadbandMs: 4,
    trimWindowS: 1,
    maximumTrim: 0.03,
    seekThresholdMs: 40,
    startToleranceMs: 20,
    startRetries: 0,
    ditherTrim: 0,
    ditherHysteresisMs: 1.5,
    /**
     * Off. With an audio track the media clock starts with the audio output, on its own ~10 ms grid:
     * measured 65-90 ms after `play()` (a muted element: 40.3-41.7 ms, or whole 20 ms buffers later),
     * a different grid point each time, while a profile's start holds only within ±3 ms at 1x: placed
     * starts with audio missed most of the time in the bench (p99 40-50 ms, 26-43 re-placements a run).
     */
    placedStarts: false,
    placedToleranceMs: 1.5,
    placedRetries: 2,
    placedGiveUp: 6,
    placedDriftMs: 3.4,
    placedLatencyMs: 75,
  }),
});

/** Sampling and timing settings (milliseconds unless named otherwise). */
export const TIMING = Object.freeze({
  /** Frames looked at for one estimate: the most recent this long. */
  windowMs: 1000,
  /**
   * The estimate: this percentile (nearest rank, from the low end) of the frames' display instant minus
   * media time, the display origin (display.js). Frames are shown on the 60 Hz frame clock, so their
   * lag behind their instant cycles (25 fps: 5 phases 3.3 ms apart, measured in Chromium 156; the least
   * lag is steady to ~0.05 ms); the low tenth of a second's 25 frames is a least-lag frame, and one odd
   * frame cannot move it.
   */
  displayPercentile: 0.1,
  /**
   * The estimate: the per-frame error of this rank from the top (0: the largest). Frames are shown
   * on the 60 Hz frame clock, so their lag behind the media clock cycles (25 fps: 5 phases 3.3 ms
   * apart, measured in Chromium 156; the least lag is steady to ~0.05 ms); with two cycles in the
   * window the second largest error is a least-lag frame, and one odd frame cannot move it.
   */
  rankFromTop: 1,
  /** At least this many frames (since the last start, seek or rate change) before judging: two 60 Hz / 25 fps cycles. */
  minimumSamples: 10,
  /** Frames within this after a start or a rate change are not judged (the renderer catching up with the clock). */
  settleMs: 300,
  /** How often the error is looked at. */
  correctionIntervalMs: 100,
  /** How long before its instant a motion is prepared (the seek of a start, the paused position). */
  prepareHorizonMs: 250,
  /**
   * A motion that must be (re)started late starts at least this far ahead; grows with slow seeks (and
   * comes back after timely starts). 200 ms, not 300: a placed start's first frame that fits comes up to
   * 200 ms later still, and while a page restarts it shows no new frame (bench, load 10-17: restarts froze
   * the pictures 0.4-0.6 s).
   */
  restartDelayMs: 200,
  /** Sleep until this long before an instant, then spin on the clock. */
  spinMs: 3,
  /** The first guess of the time from `play()` to the media clock moving; learned from errors. */
  startLatencyMs: 0,
  /** The learned start latency stays within [minimum, maximum] (less than the restart delay). */
  maximumStartLatencyMs: 200,
  /**
   * Negative: `play()` after the instant. Chromium shows a video-only clip's pictures 2-12 ms ahead
   * of its media clock after a start (bench runs, Nov 2026), so the learnt latency goes below 0.
   */
  minimumStartLatencyMs: -50,
  /** A start is verified on frames presented from this long after its instant... */
  verifySettleMs: 300,
  /** ... once this many have been (two 25 fps / 60 Hz cycles: the estimate's rank needs two least-lag frames)... */
  verifySamples: 10,
  /** ... and not after this (then the ordinary loop judges it). */
  verifyWithinMs: 1500,
  /** The share of a verified start's error learnt into the start latency (all of it beyond `learnWholeAboveMs`). */
  latencyGain: 0.5,
  learnWholeAboveMs: 20,
  /**
   * The adapter's own seeks (starts, re-anchoring, snaps) and the first moments after its own starts
   * report the element's seeking / waiting only once it lasts this long: a page correcting itself
   * must not stop the whole group (the coordinator's grace is 100 ms).
   */
  ownGraceMs: 1000,
  /** How long after an own start the element's waiting counts as the start's (see ownGraceMs). */
  ownStartQuietMs: 500,
  /** After a pause, seek this far past the frame's presentation time so rounding cannot show the previous frame (s). */
  snapEpsilon: 0.0005,
  /** Without any frame sample for this long while playing, the position is judged from `currentTime`. */
  coarseAfterMs: 1000,
  /** Give up waiting for a seek after this long. */
  seekTimeoutMs: 10000,
  /** rVFC samples kept for `samples()`. */
  keptSamples: 1500,
  /** A placed start's measured clock start off the plan by at most this (ms) is learnt into its latency (more: a late audio buffer). */
  placedLearnWithinMs: 8,
  /**
   * A placed start is judged on its first frames, not after a settling time: this many, after the first
   * `placedVerifySkip` shown from the instant on. Measured (bench logs, 27 Nov 2026, 221 placed starts):
   * the least lag of frames 2-6 equalled the cadence's from then on within 0.3 ms in 211 (the first frame
   * alone is shown a lattice step early in about a third of the starts); in the others the first frames
   * came one to two ticks late, which is a slipped start to place again.
   */
  placedVerifyFrames: 5,
  placedVerifySkip: 1,
  /**
   * A slip (a tick, 16.7 ms, at once) shows in this many frames: the least lag of any 4 frames in a
   * row is at most one lattice step (3.3 ms) above the cadence's, far below `placedSlipMs`.
   */
  placedSlipFrames: 4,
  /**
   * Placing given up for a motion (redone too often) is tried again after this long, if the pictures
   * are off; they are held meanwhile (no trims).
   */
  placedPauseMs: 1500,
  /**
   * The closed loop judges the pictures as shown: the least lag of this many recent frames (a 25 fps
   * cadence cycle and one more; at 30 fps every frame has the same lag), never projected by what a trim
   * added to the media clock: Chromium moves the pictures late and in whole ticks, if at all.
   */
  recentFrames: 6,
  /** Placed pictures that drift off sooner than this after their start count towards giving up (THRESHOLDS placedGiveUp). */
  placedHoldMs: 5000,
  /** Placed pictures this far off at once (wall ms; a tick is 16.7) slipped: placed again without counting towards giving up. */
  placedSlipMs: 8,
  /**
   * More than this many placements done again (slips and misses alike) within `placedAgainWindowMs`
   * pause placing for `placedPauseMs` (the pictures held as they are): on a loaded machine Chromium
   * slips again and again, and each new placement is a restart (the Chromium tests at load 7-12 saw a
   * page restart six times in 10 s and never settle). Not for good: a bench run at load 9-13 saw both
   * pages give up within seconds and trim for the rest of the run (its display origins 10-50 ms
   * apart). Six, not four: at load 10-16 a page slips a few times while the late joiner's browser starts.
   */
  placedAgainLimit: 6,
  placedAgainWindowMs: 10000,
  /**
   * The frame clock's phase is taken from a playing frame's sample this recent, else from
   * `requestAnimationFrame` (its timestamp is on the same grid within ~0.2 ms); the frame clock drifts
   * about 0.04 ms/s against the system clock.
   */
  tickFromSampleMs: 20000,
});

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

/**
 * The trim to run at, never exactly 1 when `thresholds.ditherTrim` > 0: a proportional trim at
 * least that large stays; inside it the sign follows the error with a hysteresis of
 * ±`ditherHysteresisMs` (`current`: the trim in force).
 */
export function ditheredTrim(factor, errorMs, current, thresholds) {
  const d = thresholds.ditherTrim ?? 0;
  if (d <= 0 || Math.abs(factor - 1) >= d) return factor;
  let direction = current > 1 ? 1 : current < 1 ? -1 : 0;
  if (errorMs > thresholds.ditherHysteresisMs) direction = -1;
  else if (errorMs < -thresholds.ditherHysteresisMs) direction = 1;
  else if (direction === 0) direction = errorMs > 0 ? -1 : 1;
  return 1 + direction * d;
}

/**
 * What to do about an error (seconds of item time): `{action: "seek"}`, or `{action: "trim",
 * factor}` where the element should run at rate x factor (1: no trim).
 */
export function correctionFor(error, rate, thresholds = THRESHOLDS.video) {
  const errorMs = error * 1000;
  if (Math.abs(errorMs) > thresholds.seekThresholdMs) return { action: "seek" };
  if (Math.abs(errorMs) <= thresholds.deadbandMs) return { action: "trim", factor: 1 };
  const raw = 1 - error / thresholds.trimWindowS / rate;
  return { action: "trim", factor: Math.min(1 + thresholds.maximumTrim, Math.max(1 - thresholds.maximumTrim, raw)) };
}

/** Whether an element plays an audio track (Chromium: decoded audio bytes; Firefox: mozHasAudio; tracks where exposed). */
export function hasAudioTrack(video) {
  if (typeof video.mozHasAudio === "boolean") return video.mozHasAudio;
  if (video.audioTracks !== undefined && video.audioTracks !== null && typeof video.audioTracks.length === "number") return video.audioTracks.length > 0;
  if (typeof video.webkitAudioDecodedByteCount === "number") return video.webkitAudioDecodedByteCount > 0;
  return false;
}

const HAVE_CURRENT_DATA = 2;
const HAVE_FUTURE_DATA = 3;

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
    this.timeOrigin = timeOrigin;
    this.localNow = localNow;
    this.realtime = realtime;
    this.animationFrame = animationFrame;
    this.profiles = profiles;
    this.placement = null; // the placed start in force: {latticeMs, offsetMs, ...} (cadence.js planStart)
    this.placedMisses = 0; // placed starts in a row whose pictures missed
    this.placedOff = false; // given up on placed starts for good (they kept missing: the profile does not fit)
    this.placedPausedFor = null; // the motion placing is given up for (redone too often: a busy machine)
    this.placedPausedUntilMs = -Infinity; // ... until this reference ms
    this.placedAgainAt = []; // reference ms of recent placements done again (slips and misses)
    this.placedEarlyEnds = 0; // placements in a row that drifted off sooner than TIMING.placedHoldMs
    this.placedLatencies = new Map(); // learnt play()-to-clock latency (ms) per "audio:rate"
    this.timing = { ...TIMING, ...timing };
    this.thresholdSets = { ...THRESHOLDS, ...thresholds };
    this.schedule = new CommandSchedule();
    this.applied = null;
    this.playing = false;
    this.trim = 1;
    this.startLatencyMs = null; // learnt from starts (ms); null: the first guess (THRESHOLDS startLatencyMs, else TIMING's)
    this.correctionsSinceStart = 0;
    this.restartDelayMs = this.timing.restartDelayMs;
    this.verifying = null; // {fromMs, attempt, learn}: a start whose first frames are still to be judged
    this.restarts = 0; // starts done again after their first frames
    this.ownSeeks = 0;
    this.quietUntilMs = -Infinity;
    this.deferredReadiness = null;
    this.deferTimer = null;
    this.groupRate = null; // the rate part of playbackRate (the rest is the trim)
    this.judgeFrom = -Infinity; // reference ms: samples before this are not judged
    this.lastCorrectionMs = -Infinity;
    this.lastSampleMs = -Infinity;
    this.startedAtMs = -Infinity;
    this.samplesKept = []; // {wallMs, mediaTime, rate, referenceOffsetMs, refMs}
    this.errorMs = null; // the latest estimate (ms of item time), null when not playing
    this.foreignItem = null;
    this.ended = false;
    this.stopped = true;
    this.wakeUp = null;
    this.readiness = Readiness.loading;
    this.mutedByPolicy = false;
    /** Readiness reports ("ready" | "loading" | "seeking" | "starved"). */
    this.onreadiness = () => {};
    /** Events: stopped, correction, commandIgnored (PlaybackEvent-like objects). */
    this.onevent = () => {};
    /** Something the person should know: {kind: "autoplay" | "foreignItem" | "ended" | "error", detail} or null. */
    this.onnotice = () => {};
  }

  /** The thresholds in force (audio or video-only media). */
  get thresholds() {
    return hasAudioTrack(this.video) ? this.thresholdSets.audio : this.thresholdSets.video;
  }

  // MARK: Life cycle

  /** Starts following commands and the element's events. */
  start() {
    if (!this.stopped) return;
    this.stopped = false;
    const v = this.video;
    this.listeners = {
      seeking: () => this.elementReadiness(Readiness.seeking),
      seeked: () => this.elementReadiness(v.readyState >= HAVE_CURRENT_DATA ? Readiness.ready : Readiness.loading),
      waiting: () => this.elementReadiness(v.seeking ? Readiness.seeking : this.playing ? Readiness.starved : Readiness.loading),
      stalled: () => {
        if (this.playing && v.readyState < HAVE_FUTURE_DATA) this.elementReadiness(Readiness.starved);
      },
      playing: () => this.elementReadiness(Readiness.ready),
      canplay: () => {
        if (!v.seeking) this.elementReadiness(Readiness.ready);
      },
      loadeddata: () => {
        if (!v.seeking) this.elementReadiness(Readiness.ready);
      },
      ended: () => {
        this.ended = true;
        this.onnotice({ kind: "ended", detail: "the end of the media" });
      },
      pause: () => {
        // The element paused without us (the browser, picture-in-picture, a media key): follow the
        // group again at the next step.
        if (this.playing && !this.pausing) {
          this.playing = false;
          this.applied = null;
          this.wake();
        }
      },
    };
    for (const [name, listener] of Object.entries(this.listeners)) v.addEventListener(name, listener);
    this.reportReadiness(v.readyState >= HAVE_CURRENT_DATA && !v.seeking ? Readiness.ready : Readiness.loading);
    this.watchFrames();
    this.loop().catch((error) => this.onnotice({ kind: "error", detail: `the player stopped: ${error?.message ?? error}` }));
  }

  /** Stops (the element is paused). */
  stop() {
    this.stopped = true;
    if (this.deferTimer !== null) this.timers.clearTimeout(this.deferTimer);
    this.deferTimer = null;
    for (const [name, listener] of Object.entries(this.listeners ?? {})) this.video.removeEventListener(name, listener);
    this.pauseElement();
    this.wake();
  }

  /** Whether the element's state is the adapter's own doing now (an own seek, just after an own start). */
  get ownOperation() {
    return this.ownSeeks > 0 || (this.clock.nowMs() ?? -Infinity) < this.quietUntilMs;
  }

  /**
   * What the element's events say about readiness. During the adapter's own seeks and starts a
   * ready element's not-ready state is reported only if it outlasts `ownGraceMs` (under load the
   * page's own corrective seeks became group-wide buffering suspensions); ready is reported at once.
   */
  elementReadiness(readiness) {
    // Only a ready element's reports wait: one already not ready (loading at the start) reports as
    // before, so its new report restarts the coordinator's grace instead of leaving the old one running.
    if (readiness !== Readiness.ready && this.readiness === Readiness.ready && this.ownOperation) {
      this.deferredReadiness = readiness;
      if (this.deferTimer === null) {
        this.deferTimer = this.timers.setTimeout(() => {
          this.deferTimer = null;
          const deferred = this.deferredReadiness;
          this.deferredReadiness = null;
          if (deferred !== null && !this.stopped) this.reportReadiness(deferred);
        }, this.timing.ownGraceMs);
      }
      return;
    }
    this.deferredReadiness = null;
    if (this.deferTimer !== null) {
      this.timers.clearTimeout(this.deferTimer);
      this.deferTimer = null;
    }
    this.reportReadiness(readiness);
  }

  reportReadiness(readiness) {
    if (readiness === this.readiness) return;
    this.readiness = readiness;
    this.onreadiness(readiness);
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

  // MARK: Frame samples

  watchFrames() {
    const v = this.video;
    if (typeof v.requestVideoFrameCallback !== "function") return;
    const callback = (now, metadata) => {
      if (this.stopped) return;
      this.recordFrame(metadata);
      v.requestVideoFrameCallback(callback);
    };
    v.requestVideoFrameCallback(callback);
  }

  /** One presented frame (`requestVideoFrameCallback` metadata). */
  recordFrame(metadata) {
    const offset = this.clock.offsetMs();
    const wallMs = this.timeOrigin() + metadata.expectedDisplayTime;
    const v = this.video;
    const before = this.localNow();
    const currentTime = v.currentTime;
    const clockMs = this.timeOrigin() + (before + this.localNow()) / 2;
    const sample = {
      wallMs, mediaTime: metadata.mediaTime, rate: v.playbackRate, referenceOffsetMs: offset, refMs: wallMs + offset,
      playing: this.playing && !v.paused && !v.seeking, paused: v.paused, seeking: v.seeking, trim: this.trim, currentTime, clockMs,
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

  /** Samples the controller may judge now. */
  judgeable(nowMs) {
    const from = Math.max(this.judgeFrom, nowMs - this.timing.windowMs);
    return this.samplesKept.filter((s) => s.playing && s.refMs >= from && s.refMs <= nowMs + 50);
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
      if (this.playing && current !== null && sameMotion(this.applied, current) && current.rate > 0 && isContinued(current, next) && !this.canPlace(next)) {
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
        if (placed) this.applied = next;
        return;
      }
      await this.seekTo(next.itemTime);
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
    this.pauseElement();
    const placedFrom = this.clock.nowMs();
    const placed = await this.placedStart(motion, placedFrom + this.restartDelayMs, attempt);
    if (placed !== null) {
      if (placed) {
        this.applied = motion;
        this.restartDelayMs = Math.max(this.timing.restartDelayMs, this.restartDelayMs * 0.75);
      } else this.restartDelayMs = Math.min(2000, Math.max(this.restartDelayMs * 2, 2 * ((this.clock.nowMs() ?? placedFrom) - placedFrom) + this.timing.spinMs));
      return;
    }
    const later = this.clock.nowMs() + this.restartDelayMs;
    const target = motionItemTime(motion, later);
    const seekStarted = this.clock.nowMs();
    await this.seekTo(target);
    const seekMs = (this.clock.nowMs() ?? seekStarted) - seekStarted;
    this.setRate(motion.rate, this.startTrim);
    if (await this.startAt(later, motion, attempt)) {
      this.applied = motion;
      // A seek slowed by a busy moment made the delay grow: back towards the usual one as starts succeed.
      this.restartDelayMs = Math.max(this.timing.restartDelayMs, this.restartDelayMs * 0.75);
    } else {
      // The seek took longer than the delay allowed: allow more next time.
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
    this.leaveEnd();
    this.playElement();
    this.playing = true;
    this.startedAtMs = instant;
    this.judgeFrom = instant + this.timing.settleMs;
    this.lastCorrectionMs = instant;
    this.quietUntilMs = instant + this.timing.ownStartQuietMs;
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

  /** The learnt latency from `play()` to the media clock moving, for placed starts at `rate`. */
  placedLatency(rate) {
    return this.placedLatencies.get(`${hasAudioTrack(this.video)}:${rate}`) ?? this.thresholds.placedLatencyMs ?? 0;
  }

  /** Whether a start of `motion` can be placed now: placeable, and placing not paused for a busy moment. */
  canPlace(motion) {
    if (!this.placeable(motion)) return false;
    return !(this.placedPausedFor !== null && sameMotion(this.placedPausedFor, motion) && (this.clock.nowMs() ?? Infinity) < this.placedPausedUntilMs);
  }

  /** Whether starts of `motion` are placed on this page: a browser frame clock, a frame grid, a start profile, not given up for good. */
  placeable(motion) {
    if (this.animationFrame === null || this.placedOff || this.grid === null || !(motion.rate > 0)) return false;
    if (!this.thresholds.placedStarts) return false;
    return profileFor((this.grid.interval * 1000) / motion.rate, this.profiles) !== null;
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

  /**
   * Starts `motion` (rate > 0) placed (cadence.js): paused at the planned item time, `play()` at the
   * planned instant, no earlier than `notBeforeMs`. Returns null when no placed start is possible (the
   * caller starts as before), false when the seek left too little time, true when started.
   */
  async placedStart(motion, notBeforeMs, attempt = 0) {
    if (!this.canPlace(motion)) return null;
    const gridMs = await this.frameTick();
    const now = this.clock.nowMs();
    if (gridMs === null || now === null) return null;
    const plan = planStart({
      originMs: motion.referenceMs - (motion.itemTime * 1000) / motion.rate,
      rate: motion.rate,
      gridMs,
      grid: this.grid,
      notBeforeMs: Math.max(notBeforeMs, now),
      profile: profileFor((this.grid.interval * 1000) / motion.rate, this.profiles),
    });
    if (plan === null) return null;
    await this.seekTo(plan.itemTime);
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
    // Placed pictures are judged from their first frames on (a slip shows in a few); the closed loop
    // once the renderer settled after a start (`judgeFrom`) and enough frames came.
    const samples = placed ? this.framesSinceStart(now) : this.judgeable(now);
    let error = null;
    let fine = false;
    if (samples.length >= (placed ? this.timing.placedSlipFrames : this.timing.minimumSamples)) {
      // How late the pictures are as shown (display.js), as item seconds ahead of the group: the least
      // lag of the last cadence cycle.
      const lateMs = displayErrorMs(samples.slice(-this.timing.recentFrames), motion, { percentile: 0 });
      error = (-lateMs * motion.rate) / 1000;
      fine = true;
    } else if (now - Math.max(this.lastSampleMs, this.startedAtMs) > this.timing.coarseAfterMs && !this.video.seeking) {
      // No frames seen for a while: the element's own clock, judged only beyond a frame more.
      error = this.video.currentTime - motionItemTime(motion, now);
    }
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
        if (verdict.action === "drift") this.placedEarlyEnds = verdict.early ? this.placedEarlyEnds + 1 : 0;
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
    if (this.placeable(motion)) {
      // Placing was given up for a busy moment (`placedPauseMs`): the pictures are held, not trimmed
      // (measured at load 10-19: trims on placed pictures made Chromium drop its cadence and jump them
      // to the media clock, 7-17 ms early, and back), and placed again after the pause if they are off.
      if (this.canPlace(motion) && Math.abs(error * 1000) / motion.rate > placedDriftMs(thresholds.placedDriftMs, stepMs)) {
        this.emitCorrection("restart", error * 1000, null);
        this.errorMs = null;
        await this.restart(motion);
      }
      return;
    }
    // Nothing finer than half a step of the lattice of display origins can be corrected (display.js).
    const band = { ...thresholds, deadbandMs: displayDeadbandMs(thresholds.deadbandMs / motion.rate, stepMs) * motion.rate };
    const factor = ditheredTrim(correctionFor(error, motion.rate, band).factor, error * 1000, this.trim, band);
    // The pictures as shown hold still between jumps, so the same error comes back look after look:
    // only a trim that differs by more than 0.01 % (or the end of one) is a new one.
    if (factor === 1 ? this.trim !== 1 : Math.abs(factor - this.trim) > 1e-4) {
      this.setRate(motion.rate, factor);
      this.emitCorrection("rate", error * 1000, motion.rate * factor);
    }
  }

  /** Playing frames shown since the start in force (its instant), the first `placedVerifySkip` left out. */
  framesSinceStart(now) {
    return this.samplesKept.filter((s) => s.playing && s.refMs >= this.startedAtMs && s.refMs <= now + 50).slice(this.timing.placedVerifySkip);
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
      ? this.samplesKept.filter((s) => s.playing && s.refMs >= check.fromMs && s.refMs <= now + 50).slice(this.timing.placedVerifySkip)
      : this.samplesKept.filter((s) => s.playing && s.refMs >= check.fromMs && s.refMs <= now + 50);
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
        this.placedLatencies.set(`${hasAudioTrack(this.video)}:${motion.rate}`, this.placedLatency(motion.rate) + lateMs * 0.7);
      }
    }
    const offMs = -errorMs / motion.rate; // the pictures minus the group's origin (wall ms)
    const missMs = offMs - check.placement.offsetMs;
    if (Math.abs(missMs) <= thresholds.placedToleranceMs) {
      this.placedMisses = 0;
      return false;
    }
    const stepMs = latticeStepMs((this.grid.interval * 1000) / motion.rate);
    if (keepsPlacedMiss({ offMs, stepMs, driftMs: placedDriftMs(thresholds.placedDriftMs, stepMs) })) {
      // Off the plan, but about as near the group (display.js): kept, judged from where it is.
      this.placement = { ...check.placement, offsetMs: offMs };
      return false;
    }
    this.placedMisses += 1;
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
    this.placedAgainAt = this.placedAgainAt.filter((at) => now - at < this.timing.placedAgainWindowMs);
    this.placedAgainAt.push(now);
    const verdict = placedGiveUp({
      misses: this.placedMisses, earlyEnds: this.placedEarlyEnds, recentAgain: this.placedAgainAt.length,
      giveUp: thresholds.placedGiveUp, againLimit: this.timing.placedAgainLimit,
    });
    if (verdict === null) return false;
    if (verdict === "page") this.placedOff = true;
    else {
      this.placedPausedFor = motion;
      this.placedPausedUntilMs = now + this.timing.placedPauseMs;
      this.placedAgainAt = [];
    }
    this.placement = null;
    return true;
  }

  // MARK: Element operations

  /** The trim a start or a rate change begins with: off the group's rate by the dither, if any. */
  get startTrim() {
    return 1 + (this.thresholds.ditherTrim ?? 0);
  }

  setRate(rate, trim) {
    const now = this.clock.nowMs();
    this.trim = trim;
    // Chromium's pitch-preserving time stretch moves an audio track's clock in steps at a rate change
    // (PLAYERS.md, bench runs); without it trims act smoothly. The pitch is kept for the group's own
    // speeds other than 1, where a person hears it; trims (at most a few % for a second or two) go without.
    if ("preservesPitch" in this.video) {
      const keep = Math.abs(rate - 1) > 1e-9;
      if (this.video.preservesPitch !== keep) this.video.preservesPitch = keep;
    }
    const wanted = rate * trim;
    const rateChanged = this.groupRate !== rate;
    this.groupRate = rate;
    if (this.video.playbackRate !== wanted) {
      this.video.playbackRate = wanted;
      // The renderer catches up with a new group rate first. A trim alone does not end the judging:
      // the pictures are judged as shown, and they move late and in whole ticks after a trim.
      if (now !== null && rateChanged) this.judgeFrom = Math.max(this.judgeFrom, now + this.timing.settleMs);
    }
  }

  playElement() {
    let result;
    try {
      result = this.video.play();
    } catch (error) {
      result = Promise.reject(error);
    }
    Promise.resolve(result).catch((error) => {
      if (error?.name !== "NotAllowedError" || this.video.muted) {
        if (error?.name !== "AbortError") this.onnotice({ kind: "error", detail: `the browser would not play: ${error?.message ?? error}` });
        return;
      }
      // Autoplay with sound refused: play muted, and offer to unmute.
      this.video.muted = true;
      this.mutedByPolicy = true;
      this.onnotice({ kind: "autoplay", detail: "the browser started playback muted" });
      if (this.playing) {
        this.applied = null;
        this.playing = false;
        this.wake();
      }
    });
  }

  pauseElement() {
    this.pausing = true;
    try {
      if (!this.video.paused) this.video.pause();
    } finally {
      this.pausing = false;
    }
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

  /** Seeks (paused) and waits until the element has the picture. */
  async seekTo(itemTime) {
    const v = this.video;
    let target = Math.max(0, itemTime);
    if (Number.isFinite(v.duration) && target > v.duration) target = v.duration;
    if (Math.abs(v.currentTime - target) < 1e-6 && !v.seeking) return;
    this.ownSeeks += 1;
    try {
      await this.seekElement(target);
    } finally {
      this.ownSeeks -= 1;
    }
  }

  /** Sets `currentTime` and waits for `seeked` (or `seekTimeoutMs`). */
  seekElement(target) {
    const v = this.video;
    return new Promise((resolve) => {
      let timer = null;
      const done = () => {
        v.removeEventListener("seeked", done);
        if (timer !== null) this.timers.clearTimeout(timer);
        resolve();
      };
      v.addEventListener("seeked", done);
      timer = this.timers.setTimeout(done, this.timing.seekTimeoutMs);
      v.currentTime = target;
    });
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
      placed: this.placement !== null, placedOff: this.placedOff,
      placedPaused: this.placedPausedFor !== null && sameMotion(this.placedPausedFor, this.applied) && (this.clock.nowMs() ?? Infinity) < this.placedPausedUntilMs,
      foreignItem: this.foreignItem, ended: this.ended, hasAudio: hasAudioTrack(this.video),
    };
  }
}
