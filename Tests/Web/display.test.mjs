// What the viewer sees (Web/static/player/display.js): display origins, the lattice of reachable origins,
// and the decisions taken on them.

import { test } from "node:test";
import assert from "node:assert/strict";

import { TICK_MS, displayDeadbandMs, displayErrorMs, displayOrigin, groupOrigin, latticeStepMs, percentileOfSorted, keepsPlacedMiss, placedDriftMs, placedGiveUp, placedVerdict } from "../../Web/static/player/display.js";

/**
 * Frames `first..<end` of a clip (`frameMs` apart at rate 1 / `rate`) whose media clock has origin
 * `clockOriginMs` (reference ms of item time 0), each shown on the first tick (`phaseMs` + n ticks) at or
 * after its instant plus `latencyMs`: `requestVideoFrameCallback`'s view, mapped to the reference clock.
 */
function frames({ first = 0, end = 50, frameMs = 40, rate = 1, clockOriginMs = 1_000_000, phaseMs = 3.7, latencyMs = 0 }) {
  const out = [];
  for (let i = first; i < end; i++) {
    const mediaTime = (i * frameMs) / 1000;
    const due = clockOriginMs + (mediaTime * 1000) / rate + latencyMs;
    const refMs = phaseMs + Math.ceil((due - phaseMs) / TICK_MS - 1e-9) * TICK_MS;
    out.push({ refMs, mediaTime });
  }
  return out;
}

test("percentileOfSorted: nearest rank from the low end", () => {
  assert.equal(percentileOfSorted([], 0.1), null);
  assert.equal(percentileOfSorted([5], 0.1), 5);
  assert.equal(percentileOfSorted([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.1), 1);
  assert.equal(percentileOfSorted([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 0.1), 2);
  assert.equal(percentileOfSorted([1, 2, 3], 0), 1, "0: the least");
  assert.equal(percentileOfSorted([1, 2, 3], 1), 3);
});

test("displayOrigin: the least lag of a 25 fps cadence on 60 Hz, on the frame clock's lattice", () => {
  for (const phaseMs of [0.2, 3.7, 9.9, 16.1]) {
    const samples = frames({ phaseMs, latencyMs: 5 });
    const origin = displayOrigin(samples, 1);
    const lags = samples.map((s) => s.refMs - s.mediaTime * 1000 - origin);
    // Every frame at or after the origin, on five levels 3.33 ms apart: the origin is the least one.
    assert.ok(lags.every((lag) => lag > -1e-6 && lag < 4 * (TICK_MS / 5) + 1e-6), lags.join(", "));
    assert.equal(new Set(lags.map((lag) => Math.round(lag / (TICK_MS / 5)))).size, 5);
    // The clock plus the latency, plus less than one lattice step.
    assert.ok(origin - 1_000_005 >= -1e-6 && origin - 1_000_005 < TICK_MS / 5, `${origin - 1_000_005}`);
  }
  assert.equal(displayOrigin([], 1), null);
  assert.equal(displayOrigin(frames({}), 0), null);
});

test("displayOrigin: one frame stamped early does not move it; a whole tick late does", () => {
  const samples = frames({ end: 25 });
  const base = displayOrigin(samples, 1);
  const odd = samples.map((s, i) => (i === 12 ? { ...s, refMs: s.refMs - 12 } : s));
  assert.equal(displayOrigin(odd, 1), base);
  const late = frames({ end: 25, latencyMs: TICK_MS });
  assert.ok(Math.abs(displayOrigin(late, 1) - base - TICK_MS) < 1e-6);
});

test("displayOrigin at half speed, and with a trim inside the window (driftS)", () => {
  const half = frames({ rate: 0.5, clockOriginMs: 2_000_000, latencyMs: 2 });
  const origin = displayOrigin(half, 0.5);
  assert.ok(origin - 2_000_002 >= -1e-6 && origin - 2_000_002 < TICK_MS / 5);
  // Frames taken as shown: a sample carrying what a trim had added (`driftS`, once used to move it)
  // is not moved: Chromium kept its pictures while the trim moved the media clock.
  const samples = frames({ end: 25 }).map((s, i) => ({ ...s, driftS: i < 12 ? 0 : 0.003 }));
  assert.equal(displayOrigin(samples, 1), displayOrigin(frames({ end: 25 }), 1));
});

test("displayErrorMs: pictures late are positive, in wall ms; the group's origin from the motion", () => {
  const motion = { referenceMs: 1_010_000, itemTime: 10, rate: 1 };
  assert.equal(groupOrigin(motion), 1_000_000);
  const late = frames({ clockOriginMs: 1_000_000, latencyMs: 4.5 });
  const error = displayErrorMs(late, motion);
  assert.ok(error >= 4.5 - 1e-6 && error < 4.5 + TICK_MS / 5, `${error}`);
  assert.ok(Math.abs(error - (displayOrigin(late, 1) - 1_000_000)) < 1e-9);
  const half = { referenceMs: 1_010_000, itemTime: 5, rate: 0.5 };
  assert.equal(groupOrigin(half), 1_000_000);
  assert.equal(displayErrorMs(late, { ...motion, rate: 0 }), null);
  assert.equal(displayErrorMs([], motion), null);
});

test("latticeStepMs: the spacing of reachable display origins", () => {
  const close = (a, b) => a !== null && Math.abs(a - b) < 1e-3;
  assert.ok(close(latticeStepMs(40), TICK_MS / 5), "25 fps at 1x: 3.33 ms");
  assert.ok(close(latticeStepMs(80), TICK_MS / 5), "25 fps at 0.5x");
  assert.ok(close(latticeStepMs(20), TICK_MS / 5), "25 fps at 2x");
  assert.ok(close(latticeStepMs(1000 / 30), TICK_MS), "30 fps: a whole tick");
  assert.ok(close(latticeStepMs(1000 / 60), TICK_MS), "60 fps");
  assert.ok(close(latticeStepMs(1000 / 24), TICK_MS / 2), "24 fps: 8.33 ms");
  assert.equal(latticeStepMs(1001 / 30), null, "29.97 fps on 60 Hz: no common measure");
  assert.equal(latticeStepMs(0), null);
  assert.equal(latticeStepMs(NaN), null);
  // Brute force: the origins a 30 fps clip reaches are one tick apart, a 25 fps clip's 3.33 ms.
  for (const [frameMs, step] of [[1000 / 30, TICK_MS], [40, TICK_MS / 5]]) {
    const points = new Set();
    for (let k = 0; k < 60; k++) for (let i = 0; i < 30; i++) points.add((((k * TICK_MS - i * frameMs) % 100) + 100).toFixed(3) % 100);
    const sorted = [...points].map(Number).sort((a, b) => a - b);
    const gaps = sorted.slice(1).map((p, i) => p - sorted[i]).filter((g) => g > 0.01);
    assert.ok(gaps.every((g) => Math.abs(g - step) < 0.01), `${frameMs}: ${gaps.slice(0, 5)}`);
  }
});

test("displayDeadbandMs: never inside half a lattice step", () => {
  assert.equal(displayDeadbandMs(4, TICK_MS / 5), 4, "25 fps: the configured band is wider than half a step");
  assert.ok(Math.abs(displayDeadbandMs(4, TICK_MS) - (TICK_MS / 2 + 0.5)) < 1e-9, "30 fps: half a tick and a margin");
  assert.equal(displayDeadbandMs(4, null), 4);
});

test("placedVerdict: hold within the drift limit, slip at a tick, drift in between (early or not)", () => {
  const base = { driftMs: 3.4, slipMs: 8, holdMs: 5000 };
  assert.deepEqual(placedVerdict({ ...base, errorMs: 1.6, sinceStartMs: 100 }), { action: "hold", early: false });
  assert.deepEqual(placedVerdict({ ...base, errorMs: -3.4, sinceStartMs: 100 }), { action: "hold", early: false });
  assert.deepEqual(placedVerdict({ ...base, errorMs: TICK_MS, sinceStartMs: 100 }), { action: "slip", early: false });
  assert.deepEqual(placedVerdict({ ...base, errorMs: -TICK_MS, sinceStartMs: 100 }), { action: "slip", early: false });
  assert.deepEqual(placedVerdict({ ...base, errorMs: 4, sinceStartMs: 1000 }), { action: "drift", early: true });
  assert.deepEqual(placedVerdict({ ...base, errorMs: 4, sinceStartMs: 9000 }), { action: "drift", early: false });
  assert.deepEqual(placedVerdict({ ...base, errorMs: null, sinceStartMs: 0 }), { action: "hold", early: false });
});

test("placedVerdict: a slip against the planned point, from a few frames, before a whole cycle shows it", () => {
  const base = { driftMs: 3.4, slipMs: 8, holdMs: 5000, sinceStartMs: 2000 };
  // Placed 1.5 ms early; the last four frames a tick later, the whole cycle not yet.
  assert.deepEqual(placedVerdict({ ...base, plannedMs: -1.5, errorMs: -1.5, slipErrorMs: TICK_MS - 1.5 }), { action: "slip", early: false });
  // Four frames can read up to one lattice step (3.3 ms) above the cycle's least lag: no slip.
  assert.deepEqual(placedVerdict({ ...base, plannedMs: 1.6, errorMs: 1.6, slipErrorMs: 1.6 + TICK_MS / 5 }), { action: "hold", early: false });
  // 30 fps: the nearest lattice point 8 ms off the group. Held there (the drift limit is half a step),
  // but a tick off it is a slip even where it is as near the group on the other side.
  const thirty = { ...base, driftMs: placedDriftMs(3.4, TICK_MS) };
  assert.ok(Math.abs(thirty.driftMs - (TICK_MS / 2 + 0.5)) < 1e-9);
  assert.equal(placedDriftMs(3.4, TICK_MS / 5), 3.4, "25 fps: the configured allowance");
  assert.equal(placedDriftMs(3.4, null), 3.4);
  assert.deepEqual(placedVerdict({ ...thirty, plannedMs: -8, errorMs: -8, slipErrorMs: -8 }), { action: "hold", early: false });
  assert.deepEqual(placedVerdict({ ...thirty, plannedMs: -8, errorMs: -8, slipErrorMs: TICK_MS - 8 }), { action: "slip", early: false });
  assert.deepEqual(placedVerdict({ ...thirty, plannedMs: -8, errorMs: TICK_MS - 8 }), { action: "slip", early: false }, "without a few-frame figure, the cycle's");
});

test("placedGiveUp: for good when the profile does not fit, for the motion when the machine is busy", () => {
  const base = { giveUp: 6, againLimit: 4 };
  assert.equal(placedGiveUp({ ...base, misses: 2, earlyEnds: 1, recentAgain: 3 }), null);
  assert.equal(placedGiveUp({ ...base, misses: 6, recentAgain: 1 }), "page");
  assert.equal(placedGiveUp({ ...base, earlyEnds: 6 }), "page");
  assert.equal(placedGiveUp({ ...base, recentAgain: 4 }), null, "at the limit: placed again");
  assert.equal(placedGiveUp({ ...base, recentAgain: 5 }), "motion");
  assert.equal(placedGiveUp({ ...base, misses: 6, recentAgain: 5 }), "page", "a misfit display wins over a busy one");
});

test("keepsPlacedMiss: a start off its plan is kept only on a point about as near the group", () => {
  const step = TICK_MS / 5; // 25 fps
  const drift = placedDriftMs(3.4, step);
  assert.equal(keepsPlacedMiss({ offMs: 2.2, stepMs: step, driftMs: drift }), true, "the other point next to a group origin halfway");
  assert.equal(keepsPlacedMiss({ offMs: -2.4, stepMs: step, driftMs: drift }), true);
  assert.equal(keepsPlacedMiss({ offMs: 3.3, stepMs: step, driftMs: drift }), false, "a whole step further: placed again");
  assert.equal(keepsPlacedMiss({ offMs: TICK_MS, stepMs: step, driftMs: drift }), false, "a tick: placed again");
  // 30 fps: points a tick apart; the one 8 ms off is as good as the plan's 8.6 ms on the other side.
  assert.equal(keepsPlacedMiss({ offMs: 8, stepMs: TICK_MS, driftMs: placedDriftMs(3.4, TICK_MS) }), true);
  assert.equal(keepsPlacedMiss({ offMs: 9.5, stepMs: TICK_MS, driftMs: placedDriftMs(3.4, TICK_MS) }), false);
  assert.equal(keepsPlacedMiss({ offMs: 1, stepMs: null, driftMs: 3.4 }), false, "no lattice known");
});
