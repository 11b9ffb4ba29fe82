// Placed starts' planning (Web/static/player/cadence.js): the geometry of a plan, not Chromium's timing.

import { test } from "node:test";
import assert from "node:assert/strict";

import { PROFILES, TICK_MS, latticePoint, planStart, profileFor } from "../../Web/static/player/cadence.js";

/** `x` modulo `m` into [-m/2, m/2). */
const centred = (x, m) => ((((x + m / 2) % m) + m) % m) - m / 2;

test("profiles: 25 fps at 1x and 0.5x, 30 fps at 1x, looked up by the frame's wall duration", () => {
  assert.equal(profileFor(40), PROFILES[0]);
  assert.equal(profileFor(80), PROFILES[1]);
  assert.equal(profileFor(40.02), PROFILES[0]);
  assert.equal(profileFor(1000 / 30), PROFILES[2], "30 fps");
  assert.equal(profileFor(2000 / 30), null, "30 fps at 0.5x: none measured");
  assert.equal(profileFor(1000 / 24), null, "24 fps: none measured");
  assert.equal(profileFor(20), null, "25 fps at 2x: none");
  assert.equal(profileFor(NaN), null);
});

test("latticePoint: a tick minus a frame's wall time, the one nearest the origin", () => {
  const grid = 1000.4; // a tick
  for (const origin of [5000, 5001.1, 5002.9, 123456.78]) {
    const point = latticePoint(origin, grid, 0, 0.04, 1);
    assert.ok(Math.abs(point - origin) <= TICK_MS / 10 + 1e-9, `25 fps on 60 Hz: 3.33 ms apart (${point - origin})`);
    // On the lattice: tick + n ticks - k frames.
    const rest = centred(point - grid, TICK_MS / 5);
    assert.ok(Math.abs(rest) < 1e-6, `on the lattice (${rest})`);
  }
  // At half speed the frames are 80 ms apart: the same 3.33 ms lattice.
  const half = latticePoint(5001.1, grid, 0, 0.04, 0.5);
  assert.ok(Math.abs(half - 5001.1) <= TICK_MS / 10 + 1e-9);
});

test("planStart: the frame boundary after play() lies beta after a tick, u after the start, on the origin's lattice point", () => {
  const grid = { start: 0, interval: 0.04 };
  for (const [rate, profile] of [[1, PROFILES[0]], [0.5, PROFILES[1]]]) {
    for (const originMs of [1_700_000_000_000.3, 1_700_000_123_456.9, 1_700_000_000_017.7]) {
      const gridMs = 1_700_000_000_004.21;
      const notBeforeMs = 1_700_000_200_000;
      const plan = planStart({ originMs, rate, gridMs, grid, notBeforeMs });
      assert.ok(plan !== null);
      assert.ok(plan.startMs >= notBeforeMs, "not before");
      assert.ok(plan.startMs < notBeforeMs + (5 * 40) / rate + profile.u + 1, "within one cycle of the earliest");
      assert.ok(Math.abs(plan.offsetMs) <= TICK_MS / 10 + 1e-6, `within half a lattice step (${plan.offsetMs})`);
      assert.equal(plan.latticeMs, latticePoint(originMs, gridMs, 0, 0.04, rate));
      assert.ok(Math.abs(plan.clockOriginMs - (plan.latticeMs - profile.k + profile.beta)) < 1e-6);
      // The element's clock reads itemTime at startMs, and the next frame begins u later, beta after a tick.
      assert.ok(Math.abs(plan.clockOriginMs + (plan.itemTime * 1000) / rate - plan.startMs) < 1e-6);
      const boundary = plan.startMs + profile.u;
      const frame = ((boundary - plan.clockOriginMs) * rate) / 1000 / grid.interval;
      assert.ok(Math.abs(frame - Math.round(frame)) < 1e-6, "a frame boundary");
      assert.ok(Math.abs(centred(boundary - gridMs - profile.beta, TICK_MS)) <= 0.5, "beta after a tick");
    }
  }
});

test("planStart: nothing without a profile, a grid or finite times; never before item time 0", () => {
  const base = { originMs: 1000, gridMs: 3.1, grid: { start: 0, interval: 0.04 }, notBeforeMs: 0 };
  assert.equal(planStart({ ...base, rate: 2 }), null, "no profile for 20 ms frames");
  assert.equal(planStart({ ...base, rate: 1, grid: null }), null);
  assert.equal(planStart({ ...base, rate: 0 }), null);
  assert.equal(planStart({ ...base, rate: 1, gridMs: NaN }), null);
  const plan = planStart({ ...base, rate: 1 });
  assert.ok(plan !== null && plan.itemTime >= 0, JSON.stringify(plan));
});
