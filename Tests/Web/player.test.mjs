// The <video> adapter (Web/static/player/player.js) on a fake element and manual time: commands carried out
// at their instants, the closed loop's estimate and corrections, pause snapping, readiness reports.

import { test } from "node:test";
import assert from "node:assert/strict";

import { THRESHOLDS, TIMING, VideoPlayer } from "../../Web/static/player/player.js";
import { estimateError, rankFromTop } from "../../Web/static/player/playhead.js";
import { correctionFor, ditheredTrim } from "../../Web/static/player/rate.js";
import { FrameGrid, makeMotion, motionItemTime, msToNs } from "../../Web/static/player/schedule.js";
import { FakeVideo, ManualTime } from "./fakes.mjs";

/** Thresholds without the dither (the element at exactly the group's rate unless trimmed), for exact instants. */
const undithered = { video: { ...THRESHOLDS.video, ditherTrim: 0 } };
/** Video thresholds that redo starts (as the audio ones do), to test the mechanism on the fake. */
const redoing = { video: { ...THRESHOLDS.video, ditherTrim: 0, startRetries: 3 } };

function setup(videoOptions = {}, playerOptions = {}) {
  const time = new ManualTime();
  const video = new FakeVideo(time, { offsetMs: 250, ...videoOptions });
  const player = new VideoPlayer({
    video, item: "clip", grid: new FrameGrid(0, 0.04, 60), timers: time, timeOrigin: () => 0, realtime: () => time.now / 1000,
    clock: { nowMs: () => time.now, offsetMs: () => video.offsetMs }, timing: { spinMs: 0 }, ...playerOptions,
  });
  const events = [];
  const readiness = [];
  player.onevent = (e) => events.push(e);
  player.onreadiness = (r) => readiness.push(r);
  player.start();
  const command = (kind, itemTime, atMs, extra = {}) => ({
    kind, itemTime, referenceTime: msToNs(atMs), originator: "ann", expectedItemIdentifier: "clip", revision: 1n, ...extra,
  });
  /** The element's position error now (item seconds ahead of `motion`). */
  const error = (motion) => video.position() - motionItemTime(motion, time.now);
  return { time, video, player, events, readiness, command, error };
}

test("rankFromTop, estimateError and correctionFor", () => {
  assert.equal(rankFromTop([3, 1, 2], 0), 3);
  assert.equal(rankFromTop([3, 1, 2], 1), 2);
  assert.equal(rankFromTop([3], 5), 3);
  assert.equal(rankFromTop([], 1), null);
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(1000), rate: 1 });
  // Frames of a player 10 ms ahead, shown 0-13 ms late: the estimate sees the least late ones.
  const samples = [0, 3.3, 6.7, 10, 13.3, 0, 3.3, 6.7, 10, 13.3].map((lag, i) => ({ mediaTime: i * 0.04, refMs: 1000 + i * 40 - 10 + lag }));
  const e = estimateError(samples, motion, 1, 1500);
  assert.ok(Math.abs(e - 0.010) < 1e-9, `error ${e}`);
  // Projected at the element's actual speed (a 2 % trim).
  const trimmed = samples.map((s, i) => ({ mediaTime: i * 0.04 * 1.02, refMs: 1000 + i * 40 }));
  assert.ok(Math.abs(estimateError(trimmed, motion, 1.02, 1400) - 0.4 * 0.02) < 1e-9);

  const t = { deadbandMs: 1, trimWindowS: 1, maximumTrim: 0.05, seekThresholdMs: 250 };
  assert.ok(THRESHOLDS.video.deadbandMs > 3.34, "the video dead band is wider than one 25 fps / 60 Hz step");
  assert.deepEqual(correctionFor(0.0009, 1, t), { action: "trim", factor: 1 });
  assert.deepEqual(correctionFor(0.3, 1, t), { action: "seek" });
  assert.ok(Math.abs(correctionFor(0.010, 1, t).factor - 0.99) < 1e-12, "10 ms ahead: 1 % slower for a second");
  assert.ok(Math.abs(correctionFor(-0.010, 0.5, t).factor - 1.02) < 1e-12, "behind at half speed");
  assert.equal(correctionFor(0.2, 1, t).factor, 0.95, "trims are clamped");
});

test("play starts the media clock at the instant, at the item time", async () => {
  const { time, video, player, command, error, events } = setup({}, { thresholds: undithered });
  await time.advance(100);
  const at = time.now + 200;
  player.handle(command("seek", 5, at));
  player.handle(command("play", 5, at, { rate: 1 }));
  await time.advance(400);
  const play = video.calls.find((c) => c[0] === "play");
  assert.ok(play, "played");
  assert.equal(play[1], at, "play() at the instant");
  const motion = makeMotion({ item: "clip", itemTime: 5, referenceTime: msToNs(at), rate: 1 });
  assert.ok(Math.abs(error(motion)) < 1e-6, `error ${error(motion)}`);
  await time.advance(2000);
  assert.ok(Math.abs(error(motion)) < 1e-6);
  assert.ok(player.errorMs !== null && Math.abs(player.errorMs) <= 1, `estimate ${player.errorMs} ms`);
  assert.ok(!events.some((e) => e.type === "correction"), "nothing to correct");
});

test("a start off by more than the tolerance is done again at once, and its latency learnt", async () => {
  const { time, video, player, command, error, events } = setup({ startLatencyMs: 12 }, { thresholds: redoing });
  await time.advance(100);
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(at), rate: 1 });
  await time.advance(400);
  assert.ok(Math.abs(error(motion) + 0.012) < 1e-6, `starts 12 ms late: ${error(motion)}`);
  await time.advance(2600);
  const restarts = events.filter((e) => e.type === "correction" && e.detail === "restart");
  assert.ok(restarts.length >= 1 && restarts.length <= 3, JSON.stringify(restarts));
  assert.ok(restarts[0].errorMs < -8, `the first start judged ${restarts[0].errorMs} ms`);
  assert.ok(player.startLatencyMs > 6, `learnt ${player.startLatencyMs} ms`);
  assert.ok(!video.paused);
  assert.ok(Math.abs(error(motion)) < THRESHOLDS.video.startToleranceMs / 1000 + 0.0034, `within ${error(motion) * 1000} ms after ${restarts.length} restarts`);
  // The next start lands with the learnt latency: no restart.
  const pauseAt = time.now + 300;
  player.handle(command("pause", motionItemTime(motion, pauseAt), pauseAt, { revision: 2n }));
  await time.advance(1000);
  const at2 = time.now + 300;
  player.handle(command("play", 10, at2, { rate: 1, revision: 3n }));
  const before = events.filter((e) => e.detail === "restart").length;
  await time.advance(1500);
  const motion2 = makeMotion({ item: "clip", itemTime: 10, referenceTime: msToNs(at2), rate: 1 });
  assert.ok(Math.abs(error(motion2)) < 0.004, `second start ${error(motion2) * 1000} ms`);
  assert.ok(events.filter((e) => e.detail === "restart").length - before <= 1);
});

test("a start that cannot be fixed is redone at most startRetries times, then trimmed", async () => {
  const { time, video, player, command, error, events } = setup({ startLatencyMs: 12 }, { timing: { spinMs: 0, maximumStartLatencyMs: 0 }, thresholds: redoing });
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(at), rate: 1 });
  await time.advance(10000);
  assert.equal(events.filter((e) => e.detail === "restart").length, 3);
  assert.ok(events.some((e) => e.type === "correction" && e.detail === "rate"), "then trimmed");
  assert.ok(Math.abs(error(motion)) < THRESHOLDS.video.deadbandMs / 1000 + 0.0034, `trimmed to ${error(motion) * 1000} ms`);
  assert.ok(!video.paused);
});

test("pictures ahead of the media clock: a negative start latency is learnt (play() after the instant)", async () => {
  const { time, player, command, error } = setup({ startLatencyMs: -8 });
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(at), rate: 1 });
  await time.advance(3000);
  assert.ok(player.startLatencyMs < -3, `learnt ${player.startLatencyMs} ms`);
  // The frames show the clock 0-3.3 ms late (the least-lag frame): within the tolerance and one step.
  assert.ok(Math.abs(error(motion)) < (THRESHOLDS.video.startToleranceMs + 3.34) / 1000, `${error(motion) * 1000} ms`);
});

test("the adapter's own seeks are not readiness changes unless they outlast ownGraceMs", async () => {
  const { time, video, readiness, player, command } = setup({ seekMs: 300 });
  await time.advance(10);
  assert.deepEqual(readiness, ["ready"]);
  player.handle(command("seek", 5, time.now + 600));
  player.handle(command("play", 5, time.now + 600, { rate: 1 }));
  await time.advance(2500); // the seek outlasts the restart delay once, which then grows
  assert.ok(video.calls.some((c) => c[0] === "seek"), "seeked");
  assert.ok(!video.paused);
  assert.deepEqual(readiness, ["ready"], "a 300 ms own seek is no suspension");
  // A seek that lasts longer than the grace is reported.
  video.seekMs = player.timing.ownGraceMs + 500;
  const pauseAt = time.now + 300;
  player.handle(command("pause", 20, pauseAt, { revision: 2n }));
  await time.advance(300 + player.timing.ownGraceMs + 100);
  assert.deepEqual(readiness, ["ready", "seeking"]);
  await time.advance(600);
  assert.deepEqual(readiness, ["ready", "seeking", "ready"]);
});

test("30 fps: display origins a whole tick apart; a page 6 ms late (the nearest it can be) holds instead of chasing", async () => {
  const interval = 1 / 30;
  const { time, video, player, command, events } = setup({ frameInterval: interval }, { grid: new FrameGrid(0, interval, 60), thresholds: undithered });
  // The fake's frame clock ticks at reference start + n ticks. The group's origin 6 ms before a tick: the
  // pictures of a 30 fps clip (two ticks each) can only sit on ticks, 6 ms late or 10.7 ms early.
  const at = time.now + 60 * (1000 / 60) - 6;
  player.handle(command("play", 5, at, { rate: 1 }));
  const motion = makeMotion({ item: "clip", itemTime: 5, referenceTime: msToNs(at), rate: 1 });
  await time.advance(8000);
  const trims = events.filter((e) => e.type === "correction");
  assert.deepEqual(trims, [], "no trims inside half a tick (a 4 ms band would chase the pictures a tick either way)");
  assert.ok(Math.abs(player.errorMs + 6) < 0.1, `pictures 6 ms late: ${player.errorMs} ms of item time`);
  assert.ok(!video.paused && Math.abs(video.playbackRate - 1) < 1e-12);
  assert.ok(Math.abs(motionItemTime(motion, time.now) - video.position()) < 0.02);
});

test("samples() carry the element's state, the trim and the media clock", async () => {
  const { time, player, command } = setup();
  player.handle(command("play", 0, time.now + 200, { rate: 1 }));
  await time.advance(1000);
  const s = player.samples().at(-1);
  for (const key of ["wallMs", "mediaTime", "rate", "referenceOffsetMs", "paused", "seeking", "trim", "currentTime", "clockMs"]) assert.ok(key in s, key);
  assert.equal(s.paused, false);
  assert.ok(Math.abs(s.rate - s.trim) < 1e-12, "at 1x the element's rate is the trim");
  assert.ok(Math.abs(s.currentTime - s.mediaTime) < 0.04);
});

test("pause stops on the group's frame: seeks just past its presentation time", async () => {
  const { time, video, player, command, events } = setup();
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  await time.advance(1500);
  const pauseAt = time.now + 300;
  const itemTime = motionItemTime(makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(at), rate: 1 }), pauseAt);
  player.handle(command("pause", itemTime, pauseAt));
  await time.advance(500);
  assert.ok(video.paused);
  const frame = Math.floor(itemTime / 0.04 + 1e-9);
  assert.ok(Math.abs(video.currentTime - (frame * 0.04 + 0.0005)) < 1e-9, `at ${video.currentTime}, frame ${frame}`);
  const pause = video.calls.find((c) => c[0] === "pause");
  assert.equal(pause[1], pauseAt, "paused at the instant");
  const stopped = events.find((e) => e.type === "stopped");
  assert.equal(stopped.index, frame);
  assert.equal(stopped.detail, "paused");
});

test("a large error is re-anchored with a seek", async () => {
  const { time, video, player, command, error, events } = setup();
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(at), rate: 1 });
  await time.advance(1500);
  video.jump(0.4);
  await time.advance(2000);
  assert.ok(events.some((e) => e.type === "correction" && e.detail === "seek" && e.errorMs > 300), JSON.stringify(events));
  // Within the quantization of what the frames show (the least-lag frame is 0-3.3 ms behind).
  assert.ok(Math.abs(error(motion)) < 0.0034, `after the seek: ${error(motion)}`);
  assert.ok(!video.paused);
});

test("a rate change without a jump sets playbackRate at the instant", async () => {
  const { time, video, player, command } = setup({}, { thresholds: undithered });
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  await time.advance(1000);
  const change = time.now + 300;
  const itemTime = (change - at) / 1000;
  player.handle(command("play", itemTime, change, { rate: 2, revision: 2n }));
  await time.advance(290);
  assert.equal(video.playbackRate, 1);
  await time.advance(20);
  assert.equal(video.playbackRate, 2);
  const motion = makeMotion({ item: "clip", itemTime, referenceTime: msToNs(change), rate: 2 });
  await time.advance(1000);
  assert.ok(Math.abs(video.position() - motionItemTime(motion, time.now)) < 1e-6);
  assert.equal(video.calls.filter((c) => c[0] === "seek").length, 0, "no seek for a rate change");
});

test("a late command starts a restart delay ahead", async () => {
  const { time, video, player, command, error } = setup({}, { thresholds: undithered });
  const at = time.now - 2000; // the group has been playing for 2 s
  player.handle(command("play", 0, at, { rate: 1 }));
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(at), rate: 1 });
  await time.advance(1000);
  assert.ok(!video.paused);
  assert.ok(Math.abs(error(motion)) < 1e-6, `${error(motion)}`);
});

test("the element's seeking and waiting become readiness reports", async () => {
  const { time, video, readiness, player } = setup();
  video.currentTime = 3;
  await time.advance(10);
  assert.deepEqual(readiness, ["ready", "seeking", "ready"]);
  player.playing = true;
  video.dispatch("waiting");
  video.dispatch("playing");
  assert.deepEqual(readiness.slice(3), ["starved", "ready"]);
});

test("an item the page does not have: paused, a notice, commands resume later", async () => {
  const { time, video, player, command } = setup();
  const notices = [];
  player.onnotice = (n) => notices.push(n);
  player.handle(command("play", 0, time.now + 200, { rate: 1 }));
  await time.advance(1000);
  player.holdForeignItem("other");
  await time.advance(10);
  assert.ok(video.paused);
  assert.deepEqual(notices.at(-1), { kind: "foreignItem", detail: "other" });
  player.handle(command("play", 2, time.now + 200, { rate: 1, revision: 5n }));
  await time.advance(500);
  assert.ok(!video.paused);
  assert.equal(notices.at(-1), null);
});

test("ditheredTrim", () => {
  const t = { ditherTrim: 0.005, ditherHysteresisMs: 1.5 };
  assert.equal(ditheredTrim(1, 0.5, 1, t), 0.995, "ahead from 1x: slower");
  assert.equal(ditheredTrim(1, -0.5, 1, t), 1.005, "behind from 1x: faster");
  assert.equal(ditheredTrim(1, 1, 1.005, t), 1.005, "inside the hysteresis: the direction stays");
  assert.equal(ditheredTrim(1, 2, 1.005, t), 0.995, "beyond it: flips");
  assert.equal(ditheredTrim(1, -2, 0.995, t), 1.005);
  assert.equal(ditheredTrim(0.98, 10, 1, t), 0.98, "a larger trim stays");
  assert.equal(ditheredTrim(1.003, -5, 1, t), 1.005, "a smaller one is raised to the dither");
  assert.equal(ditheredTrim(1, 0.5, 1, { ditherTrim: 0 }), 1, "off");
});

test("with a dither the element never runs at exactly the group's rate, and stays near the timeline", async () => {
  const dither = { ...THRESHOLDS.video, ditherTrim: 0.005, ditherHysteresisMs: 1.5 };
  const { time, video, player, command, error } = setup({ startLatencyMs: 2 }, { thresholds: { video: dither } });
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  const motion = makeMotion({ item: "clip", itemTime: 0, referenceTime: msToNs(at), rate: 1 });
  await time.advance(1500);
  const rates = new Set();
  let worst = 0;
  for (let i = 0; i < 100; i++) {
    await time.advance(100);
    assert.notEqual(video.playbackRate, 1);
    rates.add(video.playbackRate);
    worst = Math.max(worst, Math.abs(error(motion)));
  }
  assert.ok(rates.has(1 + dither.ditherTrim) && rates.has(1 - dither.ditherTrim), [...rates].join(", "));
  // The frames show the clock 0-3.3 ms late, the hysteresis and a look every 100 ms at 0.5 %.
  assert.ok(worst < 0.0034 + dither.ditherHysteresisMs / 1000 + 0.001, `worst ${worst * 1000} ms`);
});

test("an element still loading reports its own seek as before (the grace starts again, no stale loading)", async () => {
  const time = new ManualTime();
  const video = new FakeVideo(time, { offsetMs: 250, seekMs: 50 });
  video.readyState = 1;
  const player = new VideoPlayer({
    video, item: "clip", grid: new FrameGrid(0, 0.04, 60), timers: time, timeOrigin: () => 0, realtime: () => time.now / 1000,
    clock: { nowMs: () => time.now, offsetMs: () => video.offsetMs }, timing: { spinMs: 0 },
  });
  const readiness = [];
  player.onreadiness = (r) => readiness.push(r);
  player.start();
  assert.equal(player.readiness, "loading", "not ready at the start (the page reports it to the shell)");
  video.readyState = 4;
  player.handle({ kind: "pause", itemTime: 3, referenceTime: msToNs(time.now + 100), originator: "ann", expectedItemIdentifier: "clip", revision: 1n });
  await time.advance(400);
  assert.deepEqual(readiness, ["seeking", "ready"]);
});

// MARK: Placed starts (cadence.js)

/**
 * The fake shows a frame at the first tick at or after its media time, so its display origin is the
 * media clock's plus (16.67 - beta) mod 3.33 ms: for beta = 8.8, 1.2 ms. A profile with k = 10 says so,
 * and its plans put the fake's pictures on the planned lattice point (Chromium's own profile differs).
 */
const fakeProfiles = [{ frameMs: 40, k: 10, beta: 8.8, u: 34 }];

function placedSetup(videoOptions = {}, playerOptions = {}) {
  let context = null;
  let tickBase = null;
  // requestAnimationFrame on the fake's frame clock: it ticks every 1/60 s of local time from its construction.
  const animationFrame = (callback) => {
    const { time, video } = context;
    const local = video.local;
    const tick = tickBase + Math.ceil((local - tickBase) / (1000 / 60) + 1e-9) * (1000 / 60);
    time.setTimeout(() => callback(tick), tick - local);
  };
  // performance.now() on the fake's local clock (the media clock read in each frame callback).
  const localNow = () => context.video.local;
  context = setup(videoOptions, { thresholds: undithered, animationFrame, localNow, profiles: fakeProfiles, ...playerOptions });
  tickBase = context.video.local; // setup() starts nothing on the clock before this
  return context;
}

test("a placed start: play() timed so the pictures land on the group's lattice point; no trims follow", async () => {
  const { time, video, player, command, events } = placedSetup();
  await time.advance(100);
  const at = time.now + 400;
  player.handle(command("play", 5, at, { rate: 1 }));
  await time.advance(600);
  const play = video.calls.find((c) => c[0] === "play");
  assert.ok(play && play[1] >= at - 1 && play[1] < at + 250, `play() in the cycle after the instant (${play?.[1] - at} ms)`);
  assert.ok(player.status.placed, "placed");
  await time.advance(3000);
  assert.ok(player.errorMs !== null && Math.abs(player.errorMs) <= 1000 / 60 / 10 + 0.1, `pictures within half a lattice step: ${player.errorMs} ms`);
  assert.ok(!video.calls.some((c) => c[0] === "rate" && c[1] !== 1), "never trimmed");
  assert.ok(!events.some((e) => e.type === "correction"), JSON.stringify(events.filter((e) => e.type === "correction")));
});

test("placed pictures that slip (a tick late for good) are placed again", async () => {
  const { time, video, player, command, events } = placedSetup();
  await time.advance(100);
  const at = time.now + 400;
  player.handle(command("play", 5, at, { rate: 1 }));
  await time.advance(3000);
  assert.ok(player.status.placed);
  video.jump(-1 / 60); // the pictures now 16.7 ms late
  await time.advance(600);
  assert.ok(events.some((e) => e.type === "correction" && e.detail === "restart"), "placed again");
  await time.advance(2500);
  assert.ok(player.status.placed && !video.paused);
  assert.ok(Math.abs(player.errorMs) <= 1000 / 60 / 10 + 0.1, `back within half a step: ${player.errorMs} ms`);
});

test("placed pictures that keep slipping (a loaded machine) are held for placedPauseMs, not trimmed, then placed again", async () => {
  const { time, video, player, command, events } = placedSetup();
  await time.advance(100);
  player.handle(command("play", 5, time.now + 400, { rate: 1 }));
  await time.advance(3000);
  assert.ok(player.status.placed);
  for (let i = 0; i < 12 && !player.status.placedPaused; i++) {
    video.jump(-1 / 60); // a tick late for good, again and again
    await time.advance(1500);
  }
  assert.ok(player.status.placedPaused, "gave up for a while");
  assert.ok(!player.status.placedOff, "not for good: a busy machine says nothing about the next start");
  const restarts = events.filter((e) => e.type === "correction" && e.detail === "restart").length;
  assert.equal(restarts, TIMING.placedAgainLimit, "placed again at most placedAgainLimit times within the window");
  const gaveUp = events.find((e) => e.type === "correction" && e.detail === "unplaced");
  assert.ok(gaveUp);
  // Held meanwhile: no trims (Chromium would drop its cadence and jump the pictures to the media clock).
  await time.advance(gaveUp.realtime * 1000 + TIMING.placedPauseMs - 100 - time.now);
  assert.ok(!events.some((e) => e.type === "correction" && e.detail === "rate"), "no trims");
  assert.ok(!video.calls.some((c) => c[0] === "rate" && c[1] !== 1));
  // Then placed again, and on the lattice point.
  await time.advance(2500);
  assert.ok(player.status.placed && !player.status.placedPaused, "placed again");
  assert.ok(!video.paused);
  assert.ok(Math.abs(player.errorMs) <= 1000 / 60 / 10 + 0.1, `on the lattice point again: ${player.errorMs} ms`);
  // The group's next command is placed too.
  player.handle(command("seek", 30, time.now + 400, { revision: 2n }));
  player.handle(command("play", 30, time.now + 400, { rate: 1, revision: 2n }));
  await time.advance(1500);
  assert.ok(player.status.placed && !player.status.placedPaused, "placed");
  await time.advance(3000);
  assert.ok(Math.abs(player.errorMs) <= 1000 / 60 / 10 + 0.1, `on the lattice point again: ${player.errorMs} ms`);
});

test("placed starts that keep missing are given up: closed-loop starts and trims again", async () => {
  // A profile that does not describe the fake: every placed start lands ~10 ms off.
  const { time, video, player, command, events } = placedSetup({}, { profiles: [{ frameMs: 40, k: 0, beta: 8.8, u: 34 }] });
  await time.advance(100);
  player.handle(command("play", 5, time.now + 400, { rate: 1 }));
  await time.advance(15000);
  // Redone too often within 10 s first: given up for this motion (for placedPauseMs; the trims then
  // hold the pictures within the dead band, so nothing is placed again); the next command's start
  // misses too, and with placedGiveUp misses in a row placing is given up for good.
  assert.ok(events.some((e) => e.type === "correction" && e.detail === "unplaced"), "gave up");
  player.handle(command("seek", 30, time.now + 400, { revision: 2n }));
  player.handle(command("play", 30, time.now + 400, { rate: 1, revision: 2n }));
  await time.advance(15000);
  assert.ok(player.status.placedOff, "gave up for good");
  assert.ok(!player.status.placed);
  const restarts = events.filter((e) => e.type === "correction" && e.detail === "restart").length;
  assert.ok(restarts >= 2, `${restarts} placed again first`);
  assert.ok(events.some((e) => e.type === "correction" && e.detail === "unplaced"));
  assert.ok(Math.abs(player.errorMs) <= THRESHOLDS.video.deadbandMs + 0.1, `then corrected as before: ${player.errorMs} ms`);
  assert.ok(!video.paused);
});

test("no placed starts without a frame clock, a profile, or for audio", async () => {
  // Without requestAnimationFrame (Node, the earlier tests): the closed-loop start at the instant.
  const plain = setup({}, { thresholds: undithered });
  await plain.time.advance(100);
  const at = plain.time.now + 200;
  plain.player.handle(plain.command("play", 5, at, { rate: 1 }));
  await plain.time.advance(400);
  assert.equal(plain.video.calls.find((c) => c[0] === "play")[1], at);
  assert.ok(!plain.player.status.placed);
  // At 2x there is no profile: the closed-loop start.
  const fast = placedSetup();
  await fast.time.advance(100);
  const at2 = fast.time.now + 300;
  fast.player.handle(fast.command("play", 5, at2, { rate: 2 }));
  await fast.time.advance(500);
  assert.equal(fast.video.calls.find((c) => c[0] === "play")[1], at2);
  assert.ok(!fast.player.status.placed);
  assert.equal(THRESHOLDS.audio.placedStarts, false, "media with audio: off");
});

test("placements that keep drifting off within seconds (a frame clock the profile does not describe) are given up", async () => {
  const { time, video, player, command, events } = placedSetup();
  await time.advance(100);
  player.handle(command("play", 5, time.now + 400, { rate: 1 }));
  await time.advance(1500);
  assert.ok(player.status.placed);
  // The pictures fall behind 5 ms/s, as on a display whose ticks are not the profile's; the group's
  // commands keep coming (each starts placed again unless placing was given up for good).
  for (let i = 0, revision = 2n; i < 400 && !player.status.placedOff; i++) {
    video.jump(-0.0005);
    await time.advance(100);
    if (player.status.placedPaused) {
      player.handle(command("seek", 10 + i / 10, time.now + 400, { revision }));
      player.handle(command("play", 10 + i / 10, time.now + 400, { rate: 1, revision }));
      revision += 1n;
      await time.advance(500);
    }
  }
  assert.ok(player.status.placedOff, "gave up for good");
  const restarts = events.filter((e) => e.type === "correction" && e.detail === "restart").length;
  // Given up after placedGiveUp early ends, or sooner when more than placedAgainLimit placements
  // (these and the misses of their checks) come within placedAgainWindowMs.
  assert.ok(restarts >= 2, `${restarts} placed again first`);
  assert.ok(events.some((e) => e.type === "correction" && e.detail === "unplaced"));
});

test("a placed start learns how long after play() the media clock moves", async () => {
  const { time, player, command } = placedSetup({ startLatencyMs: 3 });
  await time.advance(100);
  player.handle(command("play", 5, time.now + 400, { rate: 1 }));
  await time.advance(6000);
  assert.ok(player.placedLatency(1) > 2 && player.placedLatency(1) < 3.5, `learnt ${player.placedLatency(1)} ms`);
  assert.ok(player.status.placed);
  assert.ok(Math.abs(player.errorMs) <= 1000 / 60 / 10 + 0.1, `placed: ${player.errorMs} ms`);
});

test("a placed start whose first frames come a tick late is placed again from those frames, not a settling time later", async () => {
  const { time, video, player, command, events } = placedSetup();
  await time.advance(100);
  const at = time.now + 400;
  player.handle(command("play", 5, at, { rate: 1 }));
  // Wait for play(), then make its pictures a tick late (as Chromium does under load).
  let playedAt = null;
  for (let i = 0; i < 200 && playedAt === null; i++) {
    await time.advance(5);
    playedAt = video.calls.find((c) => c[0] === "play")?.[1] ?? null;
  }
  assert.ok(playedAt !== null);
  video.jump(-1 / 60);
  await time.advance(1500);
  const restart = events.find((e) => e.type === "correction" && e.detail === "restart");
  assert.ok(restart, "placed again");
  // Its first frames: the first is left out, three more show a tick (40 ms apart; a whole cycle, five,
  // judges a smaller miss), and a look every 100 ms.
  const latestMs = (TIMING.placedVerifySkip + TIMING.placedSlipFrames - 1 + 1) * 40 + TIMING.correctionIntervalMs + 40;
  assert.ok(restart.realtime * 1000 - playedAt <= latestMs, `${restart.realtime * 1000 - playedAt} ms after play() (at most ${latestMs})`);
  assert.ok(restart.realtime * 1000 - playedAt < TIMING.verifySettleMs + TIMING.verifySamples * 40, "sooner than a closed-loop start's check");
  assert.ok(restart.errorMs < -TICK_MS_TEST + 3.4, `a tick late: ${restart.errorMs}`);
  await time.advance(2000);
  assert.ok(player.status.placed && Math.abs(player.errorMs) <= 1000 / 60 / 10 + 0.1, `placed: ${player.errorMs} ms`);
});

const TICK_MS_TEST = 1000 / 60;

test("placed pictures that slip are seen within placedSlipFrames frames", async () => {
  const { time, video, player, command, events } = placedSetup();
  await time.advance(100);
  player.handle(command("play", 5, time.now + 400, { rate: 1 }));
  await time.advance(3000);
  assert.ok(player.status.placed);
  const slippedAt = time.now;
  video.jump(-1 / 60);
  await time.advance(1000);
  const restart = events.find((e) => e.type === "correction" && e.detail === "restart");
  assert.ok(restart, "placed again");
  const latestMs = (TIMING.placedSlipFrames + 1) * 40 + TIMING.correctionIntervalMs;
  assert.ok(restart.realtime * 1000 - slippedAt <= latestMs, `${restart.realtime * 1000 - slippedAt} ms after the slip (at most ${latestMs})`);
  assert.ok(TIMING.placedSlipFrames < TIMING.recentFrames, "fewer frames than a whole cycle");
});

test("placing given up for a busy moment is tried again after placedPauseMs when the pictures are off", async () => {
  const { time, video, player, command, events } = placedSetup({}, { thresholds: { video: { ...THRESHOLDS.video, ditherTrim: 0, maximumTrim: 0 } } });
  await time.advance(100);
  player.handle(command("play", 5, time.now + 400, { rate: 1 }));
  await time.advance(3000);
  for (let i = 0; i < 8 && !player.status.placedPaused; i++) {
    video.jump(-1 / 60);
    await time.advance(1500);
  }
  assert.ok(player.status.placedPaused, "gave up for this motion");
  const restartsBefore = events.filter((e) => e.type === "correction" && e.detail === "restart").length;
  // No trims (maximumTrim 0): the pictures stay a tick late until placing is tried again.
  const gaveUpAt = events.find((e) => e.type === "correction" && e.detail === "unplaced").realtime * 1000;
  video.jump(-1 / 60);
  await time.advance(gaveUpAt + TIMING.placedPauseMs - 300 - time.now);
  assert.equal(events.filter((e) => e.type === "correction" && e.detail === "restart").length, restartsBefore, "not during the pause");
  await time.advance(3000);
  assert.ok(events.filter((e) => e.type === "correction" && e.detail === "restart").length > restartsBefore, "placed again after it");
  assert.ok(player.status.placed && !player.status.placedPaused);
  assert.ok(Math.abs(player.errorMs) <= 1000 / 60 / 10 + 0.1, `on the lattice point: ${player.errorMs} ms`);
});

test("the closed loop judges the pictures as shown: trims until a held cadence jumps, then stops (30 fps)", async () => {
  // 30 fps on 60 Hz without a profile (none given): the closed loop. The pictures hold their cadence
  // while the media clock is within 12 ms of them (cadenceHoldMs), as Chromium's do, and the start
  // comes 17 ms late.
  const { time, video, player, command, events } = setup(
    { frameInterval: 1 / 30, startLatencyMs: 17, cadenceHoldMs: 12 },
    { grid: new FrameGrid(0, 1 / 30, 60), thresholds: undithered },
  );
  await time.advance(100);
  const at = time.now + 300;
  player.handle(command("play", 5, at, { rate: 1 }));
  await time.advance(8000);
  const trims = events.filter((e) => e.type === "correction" && e.detail === "rate");
  assert.ok(trims.length >= 1, "trimmed");
  // One trim on, one off: never the other way (judged on projected samples, the loop believed the
  // pictures had moved while they had not, stopped, and trimmed again: ±12-18 ms swings).
  const directions = trims.map((e) => Math.sign(e.rate - 1)).filter((d) => d !== 0);
  assert.ok(directions.every((d) => d === directions[0]), `trims ${trims.map((e) => e.rate).join(", ")}`);
  assert.ok(trims.length <= 3, `${trims.length} trims`);
  assert.equal(video.playbackRate, 1, "back at the group's rate");
  assert.ok(Math.abs(player.errorMs) <= 1000 / 60 / 2 + 0.5, `within half a tick: ${player.errorMs} ms`);
});

test("media with audio: the first start guesses the audio output's latency; a start's own correction is marked", async () => {
  // A fake whose media clock starts 70 ms after play() and which reports an audio track.
  const { time, video, player, command, events } = setup({ startLatencyMs: 70 }, { thresholds: undithered });
  video.webkitAudioDecodedByteCount = 1000;
  assert.equal(player.status.hasAudio, true);
  assert.equal(player.startLatency, THRESHOLDS.audio.startLatencyMs, "the audio guess before any start");
  await time.advance(100);
  const at = time.now + 400;
  player.handle(command("play", 5, at, { rate: 1 }));
  await time.advance(3000);
  // 10 ms late at most: within the audio seek threshold, trimmed, no corrective seek.
  assert.ok(!events.some((e) => e.type === "correction" && e.detail === "seek"), JSON.stringify(events.filter((e) => e.type === "correction")));
  // A start 120 ms off (a start latency far from the guess): the seek that follows is the start's own.
  const late = setup({ startLatencyMs: 200 }, { thresholds: undithered });
  late.video.webkitAudioDecodedByteCount = 1000;
  await late.time.advance(100);
  late.player.handle(late.command("play", 5, late.time.now + 400, { rate: 1 }));
  await late.time.advance(3000);
  const seeks = late.events.filter((e) => e.type === "correction" && e.detail === "seek");
  assert.ok(seeks.length >= 1, "re-anchored");
  assert.equal(seeks[0].afterStart, true, "the first correction after a start");
  // Later corrections, long after a start, are not.
  const { time: t2, video: v2, events: e2, player: p2, command: c2 } = setup({}, { thresholds: undithered });
  await t2.advance(100);
  p2.handle(c2("play", 5, t2.now + 300, { rate: 1 }));
  await t2.advance(5000);
  v2.jump(-0.3);
  await t2.advance(2000);
  const lateSeek = e2.find((e) => e.type === "correction" && e.detail === "seek");
  assert.ok(lateSeek && lateSeek.afterStart === false, JSON.stringify(lateSeek));
});

test("at the end, then a stop or a start in the middle: no longer at the end, and the end notice goes", async () => {
  const { time, video, player, command } = setup({}, { thresholds: undithered });
  const notices = [];
  player.onnotice = (n) => notices.push(n);
  await time.advance(100);
  player.handle(command("play", 61, time.now + 300, { rate: 1 }));
  await time.advance(800);
  assert.equal(player.status.ended, true, "past the end: the last picture");
  assert.equal(notices.at(-1)?.kind, "ended");
  player.handle(command("pause", 6, time.now + 300, { revision: 2n }));
  await time.advance(800);
  assert.equal(player.status.ended, false);
  assert.equal(notices.at(-1), null, "the notice cleared");
  assert.ok(Math.abs(video.currentTime - 6) < 0.05);
  // And from the end straight into playing.
  player.handle(command("play", 61, time.now + 300, { rate: 1, revision: 3n }));
  await time.advance(800);
  assert.equal(player.status.ended, true);
  player.handle(command("play", 10, time.now + 300, { rate: 1, revision: 4n }));
  await time.advance(800);
  assert.equal(player.status.ended, false);
  assert.equal(notices.at(-1), null);
  assert.ok(!video.paused);
});

// MARK: Seeks of starts (seeklead.js)

/**
 * Every frame the element presented from reference ms `fromMs` on, as ms ahead of `motion` when it
 * was shown (a frame of media time m is due from m on: a frame shown before its time is ahead).
 */
function presentedAhead(player, motion, fromMs) {
  return player.samples()
    .filter((s) => s.wallMs + s.referenceOffsetMs >= fromMs)
    .map((s) => ({ aheadMs: (s.mediaTime - motionItemTime(motion, s.wallMs + s.referenceOffsetMs)) * 1000, paused: s.paused }));
}

for (const placed of [false, true]) {
  test(`a re-anchoring restart (${placed ? "placed" : "closed-loop"}) shows no frame ahead of the group: it plays on and seeks just before its start`, async () => {
    // A seek that takes 30 ms; the fake shows a paused seek's picture at the next tick, as Chromium does.
    const { time, video, player, command, events } = (placed ? placedSetup : setup)({ seekMs: 30 }, placed ? {} : { thresholds: undithered });
    await time.advance(100);
    const at = time.now + 400;
    player.handle(command("play", 5, at, { rate: 1 }));
    const motion = makeMotion({ item: "clip", itemTime: 5, referenceTime: msToNs(at), rate: 1 });
    await time.advance(2500);
    const from = time.now;
    video.jump(placed ? -1 / 60 : 0.4); // a slip of a tick (placed), pictures 400 ms ahead (closed loop)
    let pausedAt = null;
    for (let i = 0; i < 120 && pausedAt === null; i++) {
      await time.advance(5);
      if (video.paused) pausedAt = time.now;
    }
    assert.ok(pausedAt !== null, "the element was paused for the restart's seek");
    await time.advance(2500);
    const restart = events.find((e) => e.type === "correction" && (e.detail === "restart" || e.detail === "seek"));
    assert.ok(restart, JSON.stringify(events));
    const play = video.calls.filter((c) => c[0] === "play").at(-1);
    const frames = presentedAhead(player, motion, from).filter((f) => placed || f.paused || f.aheadMs < 300);
    const seekFrame = frames.find((f) => f.paused);
    assert.ok(seekFrame, `the seek's picture was presented: ${JSON.stringify(frames)}`);
    // Before: the seek was made at once and its picture shown 200 ms and more ahead (the restart delay).
    const worst = Math.max(...frames.map((f) => f.aheadMs));
    console.log(`${placed ? "placed" : "closed-loop"}: the seek's picture ${seekFrame.aheadMs.toFixed(1)} ms ahead; the most ahead of any frame ${worst.toFixed(1)} ms`);
    assert.ok(seekFrame.aheadMs <= TIMING.seekLeadMarginMs + 1, `the seek's picture ${seekFrame.aheadMs} ms ahead`);
    // The element was paused only for the seek, shortly before play() (the lead: the slowest recent seek plus the margin).
    assert.ok(play[1] - pausedAt <= 30 + TIMING.seekLeadMarginMs + 1000 / 60 + 1, `paused ${play[1] - pausedAt} ms before play()`);
    assert.ok(!video.paused);
  });
}

test("a command that comes into force before a restart's start ends the restart: the element plays on to its instant", async () => {
  const { time, video, player, command, events } = setup({ seekMs: 30 }, { thresholds: undithered });
  const at = time.now + 200;
  player.handle(command("play", 0, at, { rate: 1 }));
  await time.advance(1500);
  const seeksBefore = video.calls.filter((c) => c[0] === "seek").length;
  video.jump(0.4); // a re-anchoring restart follows within a correction interval
  for (let i = 0; i < 100 && !events.some((e) => e.type === "correction" && e.detail === "seek"); i++) await time.advance(2);
  assert.ok(events.some((e) => e.type === "correction" && e.detail === "seek"), JSON.stringify(events));
  // A pause for 100 ms from now: before the restart's start (the restart delay, 200 ms).
  const callsBefore = video.calls.length;
  const pauseAt = time.now + 100;
  const pauseItemTime = (pauseAt - at) / 1000;
  player.handle(command("pause", pauseItemTime, pauseAt, { rate: 0, revision: 2n }));
  await time.advance(90);
  assert.ok(!video.paused, "still playing before the pause's instant (the restart gave way)");
  await time.advance(400);
  const pause = video.calls.find((c) => c[0] === "pause");
  assert.ok(pause && pause[1] >= pauseAt - 1 && pause[1] <= pauseAt + 5, `paused at the instant: ${pause?.[1] - pauseAt} ms`);
  assert.equal(video.calls.filter((c) => c[0] === "seek").length, seeksBefore + 1, "no seek for the abandoned restart, one for the stop");
  assert.deepEqual(video.calls.slice(callsBefore).map((c) => c[0]), ["pause", "seek"], `only the stop: ${JSON.stringify(video.calls.slice(callsBefore))}`);
  const stopped = events.find((e) => e.type === "stopped");
  assert.ok(stopped && Math.abs(stopped.itemTime - pauseItemTime) < 1e-9, JSON.stringify(stopped));
  assert.ok(video.paused);
});

test("stop() while a start waits for its instant: the element is never played (a removed page stays stopped)", async () => {
  const { time, video, player, command } = setup({}, { thresholds: undithered });
  await time.advance(100);
  const at = time.now + 300;
  player.handle(command("seek", 5, at));
  player.handle(command("play", 5, at, { rate: 1 }));
  // The start's seek is made and play() is waiting for the instant when the page is stopped.
  await time.advance(200);
  player.stop();
  await time.advance(1000);
  assert.ok(!video.calls.some((c) => c[0] === "play"), `the stopped element was played: ${JSON.stringify(video.calls)}`);
  assert.equal(video.paused, true);
  assert.equal(player.playing, false);
});
