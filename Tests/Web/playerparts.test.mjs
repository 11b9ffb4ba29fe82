// The player's parts, each on its own (Web/static/player/: element.js, playhead.js, rate.js, stall.js,
// placement.js; player.test.mjs drives them composed): the video-element wrapper's operations, the
// playhead's samples and error, the rate controller's trims, the stall detector's readiness reports and
// own-operation grace, and the record of placed starts (what can be placed, latencies, giving up).

import { test } from "node:test";
import assert from "node:assert/strict";

import { VideoElement, hasAudioTrack } from "../../Web/static/player/element.js";
import { PlacedStarts } from "../../Web/static/player/placement.js";
import { Playhead } from "../../Web/static/player/playhead.js";
import { RateController } from "../../Web/static/player/rate.js";
import { StallDetector } from "../../Web/static/player/stall.js";
import { THRESHOLDS, TIMING } from "../../Web/static/player/tuning.js";
import { FrameGrid, makeMotion, msToNs } from "../../Web/static/player/schedule.js";
import { FakeVideo, ManualTime } from "./fakes.mjs";

const clockOf = (time, offsetMs = 0) => ({ nowMs: () => time.now, offsetMs: () => offsetMs });

// MARK: element.js

test("the element wrapper: seek targets within the media, a seek waits for seeked or its timeout", async () => {
  const time = new ManualTime();
  const video = new FakeVideo(time, { duration: 10, seekMs: 30 });
  const element = new VideoElement({ video, timers: time, timing: { seekTimeoutMs: 500 } });
  assert.equal(element.seekTarget(-1), null, "at 0 already");
  assert.equal(element.seekTarget(12), 10, "clamped to the duration");
  assert.equal(element.seekTarget(3.5), 3.5);
  let done = false;
  element.seek(3.5).then(() => (done = true));
  await time.advance(20);
  assert.ok(!done && video.seeking, "waits for seeked");
  await time.advance(20);
  assert.ok(done && !video.seeking && video.currentTime === 3.5);
  assert.equal(element.seekTarget(3.5), null, "there already");
  assert.equal(video.listeners.get("seeked").size, 0, "its listener removed");

  // An element that never says seeked: the wait ends after seekTimeoutMs.
  const mute = { duration: 10, currentTime: 0, seeking: false, addEventListener() {}, removeEventListener() {} };
  const stuck = new VideoElement({ video: mute, timers: time, timing: { seekTimeoutMs: 500 } });
  done = false;
  stuck.seek(2).then(() => (done = true));
  await time.advance(499);
  assert.ok(!done);
  await time.advance(2);
  assert.ok(done && mute.currentTime === 2);
});

test("the element wrapper: play refused for sound plays muted; other refusals are errors, aborted plays nothing", async () => {
  const refusing = (name, muted = false) => ({
    muted, plays: 0,
    play() {
      this.plays += 1;
      if (this.plays === 1) return Promise.reject(Object.assign(new Error(name), { name }));
      return Promise.resolve();
    },
  });
  const run = async (video) => {
    const seen = [];
    new VideoElement({ video, timers: globalThis, timing: {} }).play({ onerror: (e) => seen.push(["error", e.name]), onmuted: () => seen.push(["muted"]) });
    await new Promise((resolve) => setImmediate(resolve));
    return seen;
  };
  const autoplay = refusing("NotAllowedError");
  const element = new VideoElement({ video: autoplay, timers: globalThis, timing: {} });
  const seen = [];
  element.play({ onerror: (e) => seen.push(e), onmuted: () => seen.push("muted") });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(seen, ["muted"]);
  assert.ok(autoplay.muted && element.mutedByPolicy);
  assert.deepEqual(await run(refusing("NotAllowedError", true)), [["error", "NotAllowedError"]], "already muted: an error");
  assert.deepEqual(await run(refusing("NotSupportedError")), [["error", "NotSupportedError"]]);
  assert.deepEqual(await run(refusing("AbortError")), [], "a play superseded by a pause");
  const throwing = { play() { throw Object.assign(new Error("no"), { name: "InvalidStateError" }); } };
  assert.deepEqual(await run(throwing), [["error", "InvalidStateError"]], "a synchronous throw");
});

test("the element wrapper: its own pause is marked, rate and pitch set only when they change, listeners and frames", async () => {
  const time = new ManualTime();
  const video = new FakeVideo(time);
  video.preservesPitch = true;
  const element = new VideoElement({ video, timers: time, timing: {} });
  const pausing = [];
  element.listen({ pause: () => pausing.push(element.pausing) });
  video.paused = false;
  const pause = video.pause.bind(video);
  video.pause = () => {
    pausing.push(element.pausing);
    pause();
  };
  element.pause();
  assert.equal(element.pausing, false);
  await time.advance(1);
  assert.deepEqual(pausing, [true, false], "pausing during its own pause() only (the event comes later)");
  element.unlisten();
  assert.equal(video.listeners.get("pause").size, 0);

  assert.equal(element.setPlaybackRate(1), false);
  assert.equal(element.setPlaybackRate(1.5), true);
  assert.equal(video.playbackRate, 1.5);
  element.keepPitch(false);
  assert.equal(video.preservesPitch, false);
  const calls = video.calls.length;
  element.keepPitch(false);
  element.setPlaybackRate(1.5);
  assert.equal(video.calls.length, calls, "nothing set again");

  const frames = [];
  let active = true;
  element.watchFrames(() => active, (metadata) => frames.push(metadata.mediaTime));
  video.play();
  await time.advance(200);
  assert.ok(frames.length >= 4, `${frames.length} frames`);
  active = false;
  await time.advance(100);
  const seen = frames.length;
  await time.advance(200);
  assert.equal(frames.length, seen, "no frames once inactive");
  assert.equal(element.hasAudio, false);
  assert.equal(hasAudioTrack({ webkitAudioDecodedByteCount: 10 }), true);
  assert.equal(hasAudioTrack({ audioTracks: { length: 0 }, webkitAudioDecodedByteCount: 10 }), false);
  assert.equal(hasAudioTrack({ mozHasAudio: true }), true);
});

// MARK: rate.js

test("the rate controller: the group's rate times a trim; a new group rate (not a trim) makes the renderer catch up", () => {
  const time = new ManualTime();
  const video = new FakeVideo(time);
  video.preservesPitch = true;
  const element = new VideoElement({ video, timers: time, timing: {} });
  const thresholds = { ...THRESHOLDS.video, ditherTrim: 0 };
  const rate = new RateController({ element, thresholds: () => thresholds });
  assert.equal(rate.startTrim, 1);
  assert.equal(rate.set(1, 1), false, "playbackRate already 1: nothing to catch up with");
  assert.equal(video.preservesPitch, false, "no pitch kept at 1x");
  assert.equal(rate.set(2, 1), true);
  assert.equal(video.playbackRate, 2);
  assert.equal(video.preservesPitch, true, "the pitch kept at 2x");
  assert.equal(rate.set(2, 1.01), false, "a trim alone");
  assert.equal(rate.trim, 1.01);
  assert.ok(Math.abs(video.playbackRate - 2.02) < 1e-12);
  assert.equal(rate.set(2, 1.01), false, "nothing changed");
  const dithered = new RateController({ element, thresholds: () => ({ ...thresholds, ditherTrim: 0.001 }) });
  assert.equal(dithered.startTrim, 1.001);
});

test("the rate controller: trims for errors, none inside the dead band, the end of one, never finer than half a lattice step", () => {
  const time = new ManualTime();
  const element = new VideoElement({ video: new FakeVideo(time), timers: time, timing: {} });
  const thresholds = { ...THRESHOLDS.video, ditherTrim: 0 };
  const rate = new RateController({ element, thresholds: () => thresholds });
  assert.equal(rate.trimFor(0.002, 1, null), null, "2 ms inside the 4 ms band, no trim in force");
  const factor = rate.trimFor(0.050, 1, null);
  assert.equal(factor, 1 - thresholds.maximumTrim, "50 ms ahead: the largest trim down");
  rate.set(1, factor);
  assert.equal(rate.trimFor(0.050, 1, null), null, "the same trim again is no new one");
  assert.equal(rate.trimFor(0.002, 1, null), 1, "back inside the band: the trim ends");
  const small = rate.trimFor(0.010, 1, null);
  assert.ok(Math.abs(small - (1 - 0.010 / thresholds.trimWindowS)) < 1e-12, `proportional: ${small}`);
  rate.set(1, 1);
  assert.equal(rate.trimFor(0.010, 1, 25), null, "10 ms is inside half a 25 ms lattice step (plus margin)");
  assert.notEqual(rate.trimFor(0.014, 1, 25), null, "14 ms is not");
});

// MARK: playhead.js

/** A playhead over a plain element (`video` fields set by the test) at reference = local + offset. */
function playheadOn(time, { offsetMs = 0, timing = {}, animationFrame = null, state = { playing: true, trim: 1 } } = {}) {
  const video = { currentTime: 0, paused: false, seeking: false, playbackRate: 1 };
  const playhead = new Playhead({
    video, clock: clockOf(time, offsetMs), timers: time, timeOrigin: () => 0, localNow: () => time.now - offsetMs,
    animationFrame, timing: { ...TIMING, ...timing }, state: () => state,
  });
  return { video, playhead };
}

test("the playhead: frames stamped in reference time, kept up to keptSamples, judged from judgeFrom and within the window", () => {
  const time = new ManualTime();
  const { video, playhead } = playheadOn(time, { offsetMs: 100, timing: { keptSamples: 40 } });
  const start = time.now;
  // 50 frames, 40 ms apart: displayed (local) at their media time's instant.
  for (let k = 0; k < 50; k++) {
    time.now = start + k * 40;
    video.currentTime = k * 0.04;
    playhead.recordFrame({ mediaTime: k * 0.04, expectedDisplayTime: time.now - 100 });
  }
  const samples = playhead.samples();
  assert.equal(samples.length, 40, "the oldest dropped");
  assert.equal(samples.at(-1).referenceOffsetMs, 100);
  assert.equal(samples.at(-1).wallMs + 100, time.now, "reference = wall + offset");
  assert.deepEqual(Object.keys(samples[0]).sort(), ["clockMs", "currentTime", "mediaTime", "paused", "rate", "referenceOffsetMs", "seeking", "trim", "wallMs"]);
  assert.equal(playhead.lastSampleMs, time.now);
  assert.equal(playhead.judgeable(time.now, -Infinity).length, 26, "the last second's frames (and the one at its edge)");
  assert.equal(playhead.judgeable(time.now, time.now - 200).length, 6, "none before judgeFrom");
  assert.equal(playhead.framesSinceStart(time.now, time.now - 200).length, 6 - TIMING.placedVerifySkip);

  // A paused element's frames are kept but not judged.
  video.paused = true;
  time.now += 40;
  playhead.recordFrame({ mediaTime: 2, expectedDisplayTime: time.now - 100 });
  assert.equal(playhead.samples().at(-1).paused, true);
  assert.equal(playhead.playingSince(time.now - 1, time.now).length, 0);
  assert.equal(playhead.lastSampleMs, time.now - 40);
});

test("the playhead: the error of the pictures against the group, from frames or, with none for a while, the element's clock", () => {
  const time = new ManualTime();
  const { video, playhead } = playheadOn(time);
  const start = time.now;
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(start), rate: 1 });
  // Nothing yet, and not long since the start: nothing to judge.
  assert.deepEqual(playhead.error(motion, start + 500, { placed: false, startedAtMs: start, judgeFrom: start + 300 }), { samples: [], error: null, fine: false });
  // No frames for longer than coarseAfterMs: the element's clock, 30 ms ahead.
  video.currentTime = 1.53;
  const coarse = playhead.error(motion, start + 1500, { placed: false, startedAtMs: start, judgeFrom: start + 300 });
  assert.ok(Math.abs(coarse.error - 0.03) < 1e-9 && !coarse.fine, `${coarse.error}`);
  video.seeking = true;
  assert.equal(playhead.error(motion, start + 1500, { placed: false, startedAtMs: start, judgeFrom: start }).error, null, "not while seeking");
  video.seeking = false;
  // Frames shown 10 ms late from the start on.
  for (let k = 0; k < 40; k++) {
    time.now = start + k * 40 + 10;
    playhead.recordFrame({ mediaTime: k * 0.04, expectedDisplayTime: time.now });
  }
  const fine = playhead.error(motion, time.now, { placed: false, startedAtMs: start, judgeFrom: start + 300 });
  assert.ok(fine.fine && Math.abs(fine.error + 0.010) < 1e-9, `10 ms behind: ${fine.error}`);
  assert.ok(fine.samples.every((s) => s.refMs >= start + 300));
  // Placed: judged on the frames since the start (5 here, the first left out), judgeFrom or not.
  const placed = playhead.error(motion, time.now, { placed: true, startedAtMs: time.now - 170, judgeFrom: Infinity });
  assert.ok(placed.fine && placed.samples.length === 5 - TIMING.placedVerifySkip, `${placed.samples.length} frames`);
  assert.ok(Math.abs(placed.error + 0.010) < 1e-9);
});

test("the playhead: the frame clock's phase from a recent playing frame, else an animation frame, else none", async () => {
  const time = new ManualTime();
  const { playhead } = playheadOn(time, { offsetMs: 5 });
  assert.equal(await playhead.frameTick(), null, "no frames, no requestAnimationFrame");
  playhead.recordFrame({ mediaTime: 0, expectedDisplayTime: time.now - 5 - 3 });
  assert.equal(await playhead.frameTick(), time.now - 3, "the frame's display instant, in reference time");

  const frames = [];
  const withFrames = playheadOn(time, { offsetMs: 5, animationFrame: (callback) => frames.push(callback) }).playhead;
  const tick = withFrames.frameTick();
  await time.advance(10);
  frames.shift()(1234.5);
  assert.equal(await tick, 1234.5 + 5);
  const never = withFrames.frameTick();
  let result;
  never.then((value) => (result = value));
  await time.advance(199);
  assert.equal(result, undefined);
  await time.advance(2);
  assert.equal(result, null, "no animation frame within 200 ms");
  frames.shift()(99);
  await time.flush();
  assert.equal(result, null, "a late one changes nothing");
});

// MARK: stall.js

function stallOn(time, { ownGraceMs = 1000 } = {}) {
  const video = new FakeVideo(time, { seekMs: 30 });
  const reports = [];
  const flags = { playing: false, stopped: false };
  const stall = new StallDetector({
    video, clock: clockOf(time), timers: time, timing: { ownGraceMs },
    playing: () => flags.playing, stopped: () => flags.stopped, onreadiness: (r) => reports.push(r),
  });
  for (const [name, listener] of Object.entries(stall.listeners())) video.addEventListener(name, listener);
  return { video, stall, reports, flags };
}

test("the stall detector: the element's events as readiness reports, each change once", async () => {
  const time = new ManualTime();
  const { video, stall, reports, flags } = stallOn(time);
  stall.reportInitial();
  assert.deepEqual(reports, ["ready"]);
  video.currentTime = 3;
  await time.advance(40);
  assert.deepEqual(reports, ["ready", "seeking", "ready"]);
  video.dispatch("waiting");
  assert.equal(reports.at(-1), "loading", "waiting while not playing: loading");
  flags.playing = true;
  video.dispatch("waiting");
  assert.equal(reports.at(-1), "starved");
  video.dispatch("playing");
  video.readyState = 2;
  video.dispatch("stalled");
  assert.deepEqual(reports.slice(3), ["loading", "starved", "ready", "starved"]);
  video.dispatch("canplay");
  video.dispatch("loadeddata");
  assert.deepEqual(reports.slice(7), ["ready"], "reported once");
});

test("the stall detector: during its own seeks and starts a ready element's stalls wait out the grace", async () => {
  const time = new ManualTime();
  const { video, stall, reports, flags } = stallOn(time, { ownGraceMs: 1000 });
  stall.reportInitial();
  // A short own seek: nobody hears of it.
  await Promise.all([stall.ownSeek(() => new Promise((resolve) => {
    video.addEventListener("seeked", function done() {
      video.removeEventListener("seeked", done);
      resolve();
    });
    video.currentTime = 2;
  })), time.advance(40)]);
  assert.ok(!stall.ownOperation);
  await time.advance(2000);
  assert.deepEqual(reports, ["ready"]);
  // An own seek that outlasts the grace: reported then.
  let finish;
  const seek = stall.ownSeek(() => new Promise((resolve) => (finish = resolve)));
  assert.ok(stall.ownOperation);
  video.dispatch("seeking");
  await time.advance(999);
  assert.deepEqual(reports, ["ready"]);
  await time.advance(2);
  assert.deepEqual(reports, ["ready", "seeking"]);
  video.dispatch("seeked");
  finish();
  await seek;
  assert.deepEqual(reports, ["ready", "seeking", "ready"]);
  // Just after an own start: the element's waiting waits too, and a stop drops it.
  flags.playing = true;
  stall.quietUntil(time.now + 500);
  video.dispatch("waiting");
  flags.stopped = true;
  await time.advance(1500);
  assert.deepEqual(reports, ["ready", "seeking", "ready"]);
  // ... and ready cancels it.
  flags.stopped = false;
  stall.quietUntil(time.now + 500);
  video.dispatch("waiting");
  video.dispatch("playing");
  await time.advance(1500);
  assert.deepEqual(reports, ["ready", "seeking", "ready"]);
  // An element not ready yet reports at once, own operation or not.
  stall.quietUntil(time.now + 500);
  flags.playing = false;
  video.readyState = 1;
  stall.reportReadiness("loading");
  video.dispatch("seeking");
  assert.deepEqual(reports.slice(3), ["loading", "seeking"]);
  stall.cancel();
});

// MARK: placement.js

function placedOn(time, { hasFrameClock = true, grid = FrameGrid.fromActivity({ frameInterval: 0.04 }), audio = false, thresholds = THRESHOLDS } = {}) {
  const flags = { audio, grid };
  const placed = new PlacedStarts({
    clock: clockOf(time), timing: TIMING, thresholds: () => (flags.audio ? thresholds.audio : thresholds.video),
    hasAudio: () => flags.audio, grid: () => flags.grid, hasFrameClock, profiles: undefined,
  });
  return { placed, flags };
}

test("placed starts: only with a frame clock, a frame grid, a start profile for the speed, video only", () => {
  const time = new ManualTime();
  const at = (rate, itemTime = 0) => makeMotion({ item: "clip", itemTime, referenceTime: msToNs(time.now), rate });
  const { placed, flags } = placedOn(time);
  assert.ok(placed.placeable(at(1)), "25 fps at 1x: a profile");
  assert.ok(placed.placeable(at(0.5)), "25 fps at 0.5x: a profile");
  assert.ok(!placed.placeable(at(2)), "no profile at 2x");
  assert.ok(!placed.placeable(at(0)), "a pause is not started");
  assert.equal(placed.profile(at(1)).frameMs, 40);
  flags.grid = FrameGrid.fromActivity({ frameInterval: 1 / 24 });
  assert.ok(!placed.placeable(at(1)), "24 fps: no profile");
  flags.grid = null;
  assert.ok(!placed.placeable(at(1)), "no frame grid");
  flags.grid = FrameGrid.fromActivity({ frameInterval: 0.04 });
  flags.audio = true;
  assert.ok(!placed.placeable(at(1)), "with an audio track placed starts are off (THRESHOLDS.audio)");
  assert.ok(!placedOn(time, { hasFrameClock: false }).placed.placeable(at(1)), "no requestAnimationFrame");
});

test("placed starts: latencies learnt per kind of media and speed, from the thresholds' first guess", () => {
  const time = new ManualTime();
  const { placed, flags } = placedOn(time);
  assert.equal(placed.latency(1), THRESHOLDS.video.placedLatencyMs);
  placed.learnLatency(1, 1);
  assert.ok(Math.abs(placed.latency(1) - (THRESHOLDS.video.placedLatencyMs + 0.7)) < 1e-12, "70 % of what the start was late by");
  assert.equal(placed.latency(0.5), THRESHOLDS.video.placedLatencyMs, "another speed");
  flags.audio = true;
  assert.equal(placed.latency(1), THRESHOLDS.audio.placedLatencyMs, "media with audio");
});

test("placed starts: given up for a motion a while when redone too often, for good after too many misses", () => {
  const time = new ManualTime();
  const { placed } = placedOn(time);
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(time.now), rate: 1 });
  const other = makeMotion({ item: "clip", itemTime: 5, referenceTime: msToNs(time.now), rate: 1 });
  const thresholds = THRESHOLDS.video;
  // Redone up to placedAgainLimit times within the window: placing goes on.
  for (let i = 0; i < TIMING.placedAgainLimit; i++) assert.equal(placed.giveUp(motion, time.now + i, thresholds), false);
  assert.ok(placed.canPlace(motion));
  // Once more: paused for this motion (a busy machine), not for the group's next command.
  assert.equal(placed.giveUp(motion, time.now + 10, thresholds), true);
  assert.ok(!placed.canPlace(motion) && placed.pausedNow(motion));
  assert.ok(placed.canPlace(other) && !placed.pausedNow(other));
  assert.ok(placed.placeable(motion), "placeable still: only paused");
  assert.deepEqual(placed.againAt, [], "the count starts again");
  time.now += 10 + TIMING.placedPauseMs;
  assert.ok(placed.canPlace(motion), "after the pause");
  // Redone placements older than the window no longer count.
  for (let i = 0; i < TIMING.placedAgainLimit; i++) placed.giveUp(motion, time.now, thresholds);
  assert.equal(placed.giveUp(motion, time.now + TIMING.placedAgainWindowMs, thresholds), false, "the others left the window");
  // Misses in a row (or placements that drift off early) up to placedGiveUp: off for good.
  placed.misses = thresholds.placedGiveUp - 1;
  assert.equal(placed.giveUp(motion, time.now + TIMING.placedAgainWindowMs * 3, thresholds), false);
  placed.misses = thresholds.placedGiveUp;
  assert.equal(placed.giveUp(motion, time.now + TIMING.placedAgainWindowMs * 4, thresholds), true);
  assert.ok(placed.off && !placed.placeable(other) && !placed.canPlace(other));
});
