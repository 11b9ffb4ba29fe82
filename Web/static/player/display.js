// What the viewer sees: where a page's pictures sit on the group's timeline, and what to do about it.
// Pure functions (no element, no clock), used by player.js and tested under Node.
//
// A page's pictures are dated by `requestVideoFrameCallback`: the frame of media time `mediaTime` is
// shown at `performance.timeOrigin + expectedDisplayTime` (wall ms), which the synced clock maps to a
// reference instant (`refMs`). The group's timeline says item time T is due at reference
// `groupOrigin + T * 1000 / rate`; a page is in step when the frame of item time T is *displayed* then,
// not when its media clock (`currentTime`) reaches T: Chromium shows frames on its 60 Hz frame clock, a
// display latency after the clock, by an amount each start sets anew (PLAYERS.md, docs/web.md).
//
// The **display origin** of a set of frames is the reference instant at which item time 0 would be
// shown at the rate: `refMs - mediaTime * 1000 / rate` per frame, its low tenth percentile over the
// set. A frame clock shows a 25 fps frame 0-13.3 ms after its instant in a 2-3-2-3-2 tick cadence (at
// 30 fps every frame two ticks, the lag constant), so the low percentile is the least lag: the cadence's
// position, which is what a start sets and a viewer judges. Its **error** is that minus the group's
// origin (wall ms; positive: the pictures are late).
//
// The origins a page can reach lie on a **lattice**: the frame clock's ticks minus the frames' wall
// times, `latticeStepMs` apart (3.33 ms for 25 fps at 1x or 0.5x on 60 Hz, a whole tick, 16.7 ms, for
// 30 fps). Nothing inside a step can be corrected, so no decision acts on less than half a step.

/** A 60 Hz frame clock's tick (ms). */
export const TICK_MS = 1000 / 60;

/** The nearest-rank percentile `p` (0...1) of `sorted` (ascending), or null when empty. */
export function percentileOfSorted(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil(Math.min(1, Math.max(0, p)) * sorted.length);
  return sorted[Math.max(1, rank) - 1];
}

/**
 * The display origin of frame samples (reference ms at which item time 0 would be shown at `rate`):
 * the low `percentile` of `refMs - mediaTime * 1000 / rate`, nearest rank; null without samples.
 * The frames are taken as shown: a `playbackRate` trim moves Chromium's pictures late and in whole
 * ticks, if at all (a 30 fps clip kept its origin for seconds under 0.5-2 % trims), so a sample is
 * never moved by what a trim added to the media clock since it was shown.
 *
 * @param {Array<{refMs: number, mediaTime: number}>} samples
 * @param {number} rate the group's rate (> 0).
 * @param {{percentile?: number}} [options]
 */
export function displayOrigin(samples, rate, { percentile = 0.1 } = {}) {
  if (!(rate > 0)) return null;
  const origins = samples
    .map((s) => s.refMs - (s.mediaTime * 1000) / rate)
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  return percentileOfSorted(origins, percentile);
}

/** The group's display origin for `motion` (rate > 0): the reference ms at which item time 0 is due. */
export function groupOrigin(motion) {
  return motion.referenceMs - (motion.itemTime * 1000) / motion.rate;
}

/**
 * How late the page's pictures are on the group's timeline (wall ms; negative: early), from frame
 * samples shown while `motion` was in force; null without samples.
 */
export function displayErrorMs(samples, motion, options = {}) {
  if (!(motion?.rate > 0)) return null;
  const origin = displayOrigin(samples, motion.rate, options);
  return origin === null ? null : origin - groupOrigin(motion);
}

/**
 * The spacing of the display origins a page can reach (ms): frames `frameMs` of wall time apart shown
 * on ticks `tickMs` apart reach every tick minus every frame time, a lattice of their greatest common
 * divisor (to `tolerance`). 25 fps at 1x (40 ms) or 0.5x (80 ms) on 60 Hz: 3.33 ms; 30 fps (33.3 ms):
 * 16.7 ms. Null when none is found down to `minimumMs` (no common measure: the origins are dense).
 */
export function latticeStepMs(frameMs, tickMs = TICK_MS, { tolerance = 0.02, minimumMs = 0.5 } = {}) {
  if (!(frameMs > 0) || !(tickMs > 0) || !Number.isFinite(frameMs)) return null;
  let a = Math.max(frameMs, tickMs);
  let b = Math.min(frameMs, tickMs);
  while (b > tolerance) {
    const r = a % b;
    a = b;
    b = r > b - tolerance ? 0 : r;
  }
  return a >= minimumMs ? a : null;
}

/**
 * The dead band of a closed loop on the display (ms of wall time): the configured one, but never less
 * than half a lattice step plus `marginMs` (a lattice point is the best a page can do: chasing the rest
 * only moves the pictures to the next point and back).
 */
export function displayDeadbandMs(baseMs, stepMs, marginMs = 0.5) {
  if (!(stepMs > 0)) return baseMs;
  return Math.max(baseMs, stepMs / 2 + marginMs);
}

/**
 * What to do about placed pictures (a start put them on a lattice point; trims cannot move them):
 *
 * - `slip`: the least lag of the last few frames (`slipErrorMs`, against the group's origin) is
 *   `slipMs` or more off the point the start planned (`plannedMs`, the plan's offset from the group):
 *   Chromium showed a frame a tick late, or early, and kept its cadence from there. A few frames tell
 *   (`slipErrorMs` may come from fewer frames than a whole cadence cycle, so it can read up to one
 *   lattice step late, far below a tick): placed again at once;
 * - `drift`: the least lag of a whole cycle (`errorMs`) is further than `driftMs` from the group's
 *   origin (the frame clock drifts about 0.04 ms/s against the system clock; a display the profile does
 *   not describe drifts off in seconds): placed again, counted towards giving up when it came sooner than
 *   `holdMs` after the start;
 * - `hold` otherwise.
 *
 * @returns {{action: "hold"|"slip"|"drift", early: boolean}}
 */
export function placedVerdict({ errorMs, slipErrorMs = errorMs, plannedMs = 0, driftMs, slipMs, sinceStartMs, holdMs }) {
  if (slipErrorMs !== null && Number.isFinite(slipErrorMs) && Math.abs(slipErrorMs - plannedMs) >= slipMs) return { action: "slip", early: false };
  if (errorMs === null || !Number.isFinite(errorMs) || Math.abs(errorMs) <= driftMs) return { action: "hold", early: false };
  if (Math.abs(errorMs - plannedMs) >= slipMs) return { action: "slip", early: false };
  return { action: "drift", early: sinceStartMs < holdMs };
}

/**
 * How far placed pictures may sit from the group's origin before they are placed again (ms): the
 * configured drift allowance, but never less than half a lattice step plus `marginMs` (at 30 fps on
 * 60 Hz the nearest lattice point can be 8.3 ms away; placing again would land on the same point).
 */
export function placedDriftMs(baseMs, stepMs, marginMs = 0.5) {
  if (!(stepMs > 0)) return baseMs;
  return Math.max(baseMs, stepMs / 2 + marginMs);
}

/**
 * Whether a placed start that landed off its plan is kept: its pictures (`offMs` from the group's origin)
 * are on a lattice point about as near the group as the planned one (within half a lattice step plus
 * `marginMs`, and within the drift allowance `driftMs`): the group's origin lay about halfway between
 * two points. Placing it again would gain a millisecond or so and risk a slip under load.
 */
export function keepsPlacedMiss({ offMs, stepMs, driftMs, marginMs = 0.75 }) {
  if (!(stepMs > 0) || !Number.isFinite(offMs)) return false;
  return Math.abs(offMs) <= Math.min(driftMs, stepMs / 2 + marginMs);
}

/**
 * Whether placed starts are given up, and for how long, after a placement was redone:
 *
 * - `"page"`, for good: `misses` placed starts in a row landed off their plan, or `earlyEnds`
 *   placements in a row drifted off within seconds: the profile does not describe this display (another
 *   refresh rate, another browser);
 * - `"motion"`, until the group's next command: more than `againLimit` placements were redone within
 *   the window (`recentAgain`): the machine is too busy now (Chromium slips a tick again and again, and
 *   each placement is a restart), which says nothing about the next start;
 * - null: place again.
 */
export function placedGiveUp({ misses = 0, earlyEnds = 0, recentAgain = 0, giveUp, againLimit }) {
  if (misses >= giveUp || earlyEnds >= giveUp) return "page";
  if (recentAgain > againLimit) return "motion";
  return null;
}
