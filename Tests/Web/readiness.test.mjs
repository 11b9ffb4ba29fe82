// Player readiness -> suspensions (Web/static/sync/readiness.js, the port of PlaybackCoordinator+Readiness.swift).

import { test } from "node:test";
import assert from "node:assert/strict";

import { Readiness, ReadinessFollower, suspensionReason } from "../../Web/static/sync/readiness.js";
import { ManualTime } from "./fakes.mjs";

function follower(time, { beginDelay = 0 } = {}) {
  const calls = [];
  let count = 0;
  const f = new ReadinessFollower({
    graceMs: 100,
    timers: time,
    begin: async (reason) => {
      const id = `me#${++count}`;
      calls.push(["begin", reason, id]);
      if (beginDelay > 0) await new Promise((resolve) => time.setTimeout(resolve, beginDelay));
      return id;
    },
    end: async (id) => {
      calls.push(["end", id]);
    },
  });
  return { f, calls };
}

test("reasons: loading and seeking buffer, starved is stallRecovery", () => {
  assert.equal(suspensionReason(Readiness.loading), "buffering");
  assert.equal(suspensionReason(Readiness.seeking), "buffering");
  assert.equal(suspensionReason(Readiness.starved), "stallRecovery");
  assert.equal(suspensionReason(Readiness.ready), null);
});

test("a not-ready report shorter than the grace suspends nobody", async () => {
  const time = new ManualTime();
  const { f, calls } = follower(time);
  f.report("seeking");
  await time.advance(60);
  f.report("ready");
  await time.advance(200);
  assert.deepEqual(calls, []);
});

test("a stall beyond the grace begins stallRecovery; ready ends it", async () => {
  const time = new ManualTime();
  const { f, calls } = follower(time);
  f.report("starved");
  await time.advance(99);
  assert.deepEqual(calls, []);
  await time.advance(2);
  assert.deepEqual(calls, [["begin", "stallRecovery", "me#1"]]);
  f.report("starved"); // repeats are ignored
  f.report("ready");
  await time.advance(1);
  assert.deepEqual(calls, [["begin", "stallRecovery", "me#1"], ["end", "me#1"]]);
});

test("changing between not-ready states keeps one suspension", async () => {
  const time = new ManualTime();
  const { f, calls } = follower(time);
  f.report("loading");
  await time.advance(150);
  f.report("seeking");
  await time.advance(150);
  f.report("ready");
  await time.advance(1);
  assert.deepEqual(calls, [["begin", "buffering", "me#1"], ["end", "me#1"]]);
});

test("ready while the begin is still being sent ends the suspension right after", async () => {
  const time = new ManualTime();
  const { f, calls } = follower(time, { beginDelay: 50 });
  f.report("seeking");
  await time.advance(120); // begin under way
  f.report("ready");
  await time.advance(100);
  assert.deepEqual(calls, [["begin", "buffering", "me#1"], ["end", "me#1"]]);
  assert.equal(f.suspension.state, "none");
});

test("a failed begin leaves no suspension and the next stall tries again", async () => {
  const time = new ManualTime();
  let attempts = 0;
  const f = new ReadinessFollower({ graceMs: 100, timers: time, begin: async () => { attempts += 1; throw new Error("not joined"); }, end: async () => {} });
  f.report("starved");
  await time.advance(150);
  assert.equal(f.suspension.state, "none");
  f.report("ready");
  f.report("starved");
  await time.advance(150);
  assert.equal(attempts, 2);
});
