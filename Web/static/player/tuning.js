// The player's tuning: the correction thresholds (per kind of media: video only, or with an audio
// track) and the sampling and timing settings every part of the player reads (player.js composes
// them: playhead.js, rate.js, stall.js, element.js). Every figure was measured in headless Chromium
// (docs/benchmarks.md, PLAYERS.md); the comments say where and how.


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
  /**
   * A start's seek is made no earlier than the slowest of the last `seekLeadKept` seeks plus this
   * before its `play()` (seeklead.js): a paused seek's picture is up as soon as it is decoded, so a
   * restart that sought at once showed its start frame 255-372 ms ahead of the group's timeline.
   * The margin covers a seek a little slower than the recent ones (a slower one makes the start late:
   * it is started again, as any start whose seek outlasted its delay). Seeks are timed by their picture
   * (its rVFC sample): Chromium shows it before the page hears `seeked`, under load tens of ms before.
   * Timed by `seeked` with 40 ms and the last eight, the pictures came 40-86 ms ahead at load 14-16 on
   * two cores; as now, -27 to +46 ms (median +16) at load 10-11 (docs/web.md, "Known limits").
   */
  seekLeadMarginMs: 20,
  seekLeadKept: 5,
  /** The seek's lead before any seek was timed (a first seek decodes from a keyframe, cold). */
  seekLeadInitialMs: 100,
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
