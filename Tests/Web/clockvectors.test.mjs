// The shared clock-filter vectors (Tests/Vectors/clock/filter.json, written by Swift's FilterVectorTests)
// against clock.js: the same exchanges give the same samples, and the filter the same estimate after each.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { SampleFilter, errorBound, sampleFromTimestamps } from "../../Web/static/sync/clock.js";

const file = join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "clock", "filter.json");
const vector = JSON.parse(readFileSync(file, "utf8"));
const TOLERANCE = 1e-12;

function close(actual, expected, what) {
  if (expected === null || expected === undefined) { // Swift leaves an infinite value out
    assert.equal(actual, Infinity, what);
    return;
  }
  assert.ok(Math.abs(actual - expected) <= TOLERANCE * Math.max(1, Math.abs(expected)), `${what}: ${actual} != ${expected}`);
}

test("the traces cover the cases Swift made them for", () => {
  assert.equal(vector.traces.length, 4);
  assert.ok(vector.traces.reduce((n, t) => n + t.steps.length, 0) >= 300);
});

for (const trace of vector.traces) {
  test(`clock filter: ${trace.name}`, () => {
    const c = trace.configuration;
    const filter = new SampleFilter({ ...c, maximumAge: c.maximumAge ?? Infinity });
    trace.steps.forEach((step, i) => {
      const what = `${trace.name}, step ${i}`;
      const sample = sampleFromTimestamps({ t1: BigInt(step.t1), t2: BigInt(step.t2), t3: BigInt(step.t3), t4: BigInt(step.t4) });
      close(sample.offset, step.offset, `${what}: sample offset`);
      close(sample.delay, step.delay, `${what}: sample delay`);
      assert.equal(String(sample.localTime), step.localTime, `${what}: sample local time`);
      filter.add(sample);
      const estimate = filter.estimate();
      const expected = step.estimate;
      assert.equal(String(estimate.localTime), expected.localTime, `${what}: estimate local time`);
      assert.equal(estimate.usedSamples, expected.usedSamples, `${what}: samples used`);
      for (const field of ["offset", "driftPPM", "driftErrorPPM", "offsetStandardError", "bestDelay", "worstUsedDelay", "envelopeHalfWidth"]) {
        close(estimate[field], expected[field], `${what}: ${field}`);
      }
      close(errorBound(estimate), expected.errorBound, `${what}: errorBound`);
    });
  });
}
