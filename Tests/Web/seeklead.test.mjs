// When a start's seek is made (Web/static/player/seeklead.js): the slowest recent seek plus a margin
// before play(), never before now.

import { test } from "node:test";
import assert from "node:assert/strict";

import { SeekLead } from "../../Web/static/player/seeklead.js";

test("the lead is the slowest of the last seeks plus the margin, within its bounds", () => {
  const lead = new SeekLead({ marginMs: 40, kept: 3, initialMs: 100, minimumMs: 50, maximumMs: 500 });
  assert.equal(lead.ms, 140, "before any seek: the first guess");
  lead.record(5);
  assert.equal(lead.ms, 50, "a quick seek: the minimum");
  lead.record(120);
  lead.record(30);
  assert.equal(lead.ms, 160, "the slowest of the kept ones");
  lead.record(20);
  lead.record(25);
  assert.equal(lead.ms, 70, "the slow one has left the window");
  lead.record(900);
  assert.equal(lead.ms, 500, "at most the maximum");
  lead.record(Number.NaN);
  lead.record(-1);
  assert.deepEqual(lead.recent, [20, 25, 900], "no nonsense recorded");
});

test("seekAt: the lead before play(), not before now", () => {
  const lead = new SeekLead({ marginMs: 40, kept: 8, initialMs: 60 });
  assert.equal(lead.seekAt(1000, 0), 900);
  assert.equal(lead.seekAt(1000, 950), 950, "too late for the lead: at once");
});
