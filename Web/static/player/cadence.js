// Starts that put Chromium's pictures where the group wants them (measured in headless Chromium 156,
// 60 Hz frame clock; docs/benchmarks.md, "Pictures placed by the start").
//
// Chromium's VideoRendererAlgorithm shows a constant-rate clip on a cadence of its frame clock's ticks
// (25 fps at 1x on 60 Hz: 2-3-2-3-2 ticks) and keeps that cadence while the media clock stays within its
// drift tolerance (half a frame), so small `playbackRate` trims do not move the pictures at all until
// they suddenly jump. But the cadence is set at the start, and how it is set is deterministic: with the
// element started (paused at item time t, `play()` at wall instant C0) so that the next frame boundary
// after t comes `u` ms after C0 and lies `beta` ms after a frame-clock tick, the pictures' display origin
// (expectedDisplayTime minus mediaTime, the least of the cycle) is exactly `K - beta` ms after the media
// clock's origin. Every display origin lies on a lattice (the frame clock's ticks minus the frames' wall
// times: 3.33 ms apart at 25 fps on 60 Hz), and the two pages' frame clocks tick together, so a page that
// picks the lattice point nearest the group's origin and works back to the media clock origin and start
// instant that produce it shows its pictures within half a lattice step of the group's, whatever jitter
// its `play()` has (within the profile's margins): the media clock is left a few ms off the group's on
// purpose, the pictures are on time.
//
// Profiles are keyed by the frame's wall duration (frame interval / rate) on a 60 Hz frame clock; other
// combinations have none and the player keeps its closed-loop start.

/** The frame clock's tick (ms): headless Chromium and most displays run at 60 Hz. */
export const TICK_MS = 1000 / 60;

/**
 * Measured start profiles: `frameMs` the frame's wall duration, `k` the display origin minus the clock
 * origin plus `beta` (ms, expectedDisplayTime based), `beta` the phase after a tick at which the first
 * new frame's boundary is placed, `u` how long after `play()` it comes (ms). Margins measured: 25 fps at
 * 1x held for beta 6-12 ms with u 31-37 ms (22 of 23 starts, the miss a `play()` 11 ms late), at 0.5x for
 * beta -4...+4 ms with u 35-63 ms (19 of 19).
 */
export const PROFILES = Object.freeze([
  Object.freeze({ frameMs: 40, k: 10 / 3, beta: 8.8, u: 34 }),
  Object.freeze({ frameMs: 80, k: -20 / 3, beta: 0.3, u: 50 }),
  // 30 fps at 1x (every frame two ticks): the display origin is the clock origin minus beta, or a tick
  // later (closed-loop starts of two bench runs, 27 Nov 2026: minus beta in 18 of the 19 with beta 0-6 ms);
  // with u 34 and beta 3, as placed, a tick later in 20 of 22 starts of two runs (k 0 missed them all by a
  // tick). No profile at 0.5x: not measured.
  Object.freeze({ frameMs: 100 / 3, k: 1000 / 60, beta: 3, u: 34 }),
]);

/** The profile for frames of `frameMs` wall milliseconds, or null. */
export function profileFor(frameMs, profiles = PROFILES) {
  if (!(frameMs > 0) || !Number.isFinite(frameMs)) return null;
  return profiles.find((p) => Math.abs(p.frameMs - frameMs) < 0.05) ?? null;
}

/** `x` modulo `m` into [-m/2, m/2). */
function centred(x, m) {
  return ((((x + m / 2) % m) + m) % m) - m / 2;
}

/**
 * The display origin nearest `originMs` that a page can show: a tick (`gridMs` + n ticks) minus a
 * frame's wall time (`frameTimes[i] * 1000 / rate`, item seconds).
 */
export function latticePoint(originMs, gridMs, frameStart, frameInterval, rate, tickMs = TICK_MS, frames = 60) {
  let best = null;
  for (let i = 0; i < frames; i++) {
    const wall = ((frameStart + i * frameInterval) * 1000) / rate;
    const base = gridMs - wall;
    const point = base + Math.round((originMs - base) / tickMs) * tickMs;
    if (best === null || Math.abs(point - originMs) < Math.abs(best - originMs)) best = point;
  }
  return best;
}

/**
 * Plans a start whose pictures land on the lattice point nearest the group's display origin.
 *
 * @param {object} p
 * @param {number} p.originMs the group's display origin: the reference ms at which item time 0 would be
 *   shown at the group's rate (motion.referenceMs - motion.itemTime * 1000 / rate).
 * @param {number} p.rate the group's rate (> 0).
 * @param {number} p.gridMs a frame-clock tick (reference ms of an expectedDisplayTime).
 * @param {{start: number, interval: number}} p.grid the frame grid (item seconds).
 * @param {number} p.notBeforeMs the earliest reference ms for `play()`.
 * @param {object} [p.profile] overrides the profile looked up for the frame duration.
 * @returns {{startMs: number, itemTime: number, latticeMs: number, clockOriginMs: number, offsetMs: number}|null}
 *   `play()` at `startMs` with the element paused at `itemTime`; `latticeMs` the display origin it gives,
 *   `offsetMs` that minus the group's (within half a lattice step), `clockOriginMs` the media clock's.
 */
export function planStart({ originMs, rate, gridMs, grid, notBeforeMs, profile = null, tickMs = TICK_MS }) {
  if (!(rate > 0) || grid === null || grid === undefined || !(grid.interval > 0)) return null;
  if (![originMs, gridMs, notBeforeMs].every(Number.isFinite)) return null;
  const frameMs = (grid.interval * 1000) / rate;
  const chosen = profile ?? profileFor(frameMs);
  if (chosen === null) return null;
  const lattice = latticePoint(originMs, gridMs, grid.start, grid.interval, rate, tickMs);
  const clockOrigin = lattice - chosen.k + chosen.beta;
  // Frame i's boundary (wall) is clockOrigin + its item time at the rate: find the first one late
  // enough whose phase after a tick is beta (one in every few frames).
  const first = Math.max(0, Math.ceil(((notBeforeMs + chosen.u - clockOrigin) * rate) / 1000 / grid.interval - grid.start / grid.interval));
  for (let i = first; i < first + 240; i++) {
    const frameTime = grid.start + i * grid.interval;
    const boundary = clockOrigin + (frameTime * 1000) / rate;
    if (boundary - chosen.u < notBeforeMs || frameTime - (chosen.u * rate) / 1000 < 0) continue;
    if (Math.abs(centred(boundary - gridMs - chosen.beta, tickMs)) > 0.5) continue;
    return {
      startMs: boundary - chosen.u,
      itemTime: frameTime - (chosen.u * rate) / 1000,
      latticeMs: lattice,
      clockOriginMs: clockOrigin,
      offsetMs: lattice - originMs,
    };
  }
  return null;
}
