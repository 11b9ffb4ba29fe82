// Time samples, the sample filter, the synced clock and the converge burst against a simulated relay.

import { test } from "node:test";
import assert from "node:assert/strict";

import {
  PollScheduler, SampleFilter, SyncedClock, TimeClient, TimeExchange, advancedBySeconds, defaultFilterConfiguration,
  errorBound, makeSample, ntpFromUnixNanoseconds, offsetAtLocal, rawDifference, sampleFromTimestamps, secondsSince,
  unixNanosecondsFromMilliseconds, unixNanosecondsFromNTP,
} from "../../Web/static/sync/clock.js";
import { xorshift } from "./support.mjs";

const T = ntpFromUnixNanoseconds(1_790_000_000_000_000_000n);

/** A deterministic generator in [0, 1). */
function uniform(seed) {
  const next = xorshift(seed);
  return () => next() / 4294967296;
}

test("NTP <-> Unix nanoseconds as ReferenceTime+NTP.swift converts them", () => {
  assert.equal(ntpFromUnixNanoseconds(0n), 2_208_988_800n << 32n);
  for (const ns of [0n, 1n, 999_999_999n, 1_790_000_000_123_456_789n, -1n, -1_500_000_000n]) {
    assert.equal(unixNanosecondsFromNTP(ntpFromUnixNanoseconds(ns)), ns, String(ns));
  }
  // Half a second is fraction 2^31 exactly.
  assert.equal(ntpFromUnixNanoseconds(500_000_000n) & 0xffffffffn, 1n << 31n);
  // A Number of Unix milliseconds resolves about 0.24 µs today.
  const converted = unixNanosecondsFromMilliseconds(1_790_000_000_123.4567) - 1_790_000_000_123_456_700n;
  assert.ok(converted >= -250n && converted <= 250n, String(converted));
  assert.equal(unixNanosecondsFromMilliseconds(0.0005), 500n);
});

test("era-safe differences and advancing", () => {
  const max = (1n << 64n) - 1n;
  assert.equal(rawDifference(0n, max), 1n);
  assert.equal(secondsSince(advancedBySeconds(T, 0.5), T), 0.5);
  assert.equal(secondsSince(advancedBySeconds(T, -2.25), T), -2.25);
});

test("a sample's offset and delay (RFC 5905 section 8)", () => {
  // Reference 1.5 s ahead; 10 ms out, 1 ms at the relay, 30 ms back.
  const t1 = T;
  const t2 = advancedBySeconds(T, 1.5 + 0.010);
  const t3 = advancedBySeconds(t2, 0.001);
  const t4 = advancedBySeconds(T, 0.041);
  const sample = sampleFromTimestamps({ t1, t2, t3, t4 });
  assert.ok(Math.abs(sample.offset - (1.5 - 0.010)) < 1e-9, String(sample.offset)); // biased by half the asymmetry
  assert.ok(Math.abs(sample.delay - 0.040) < 1e-9);
  assert.ok(Math.abs(secondsSince(sample.localTime, T) - 0.0205) < 1e-9);
  // A negative delay (two clocks on loopback) is raised to 1 µs.
  assert.equal(sampleFromTimestamps({ t1, t2: advancedBySeconds(T, 1), t3: advancedBySeconds(T, 1.002), t4: advancedBySeconds(T, 0.001) }).delay, 1e-6);
});

test("the filter's offset comes from the lowest-delay bounds, not the average", () => {
  const filter = new SampleFilter(defaultFilterConfiguration());
  const next = uniform(3);
  const offset = 0.25;
  for (let i = 0; i < 64; i++) {
    const forward = 0.002 + 0.030 * next() ** 2;
    const backward = 0.002 + 0.030 * next() ** 2;
    // Sample of an exchange with those one-way delays: offset + (forward - backward)/2, delay forward + backward.
    filter.add(makeSample(offset + (forward - backward) / 2, forward + backward, advancedBySeconds(T, i * 0.05)));
  }
  const estimate = filter.estimate();
  assert.ok(Math.abs(estimate.offset - offset) < 0.001, `offset ${estimate.offset}`);
  assert.ok(errorBound(estimate) >= Math.abs(estimate.offset - offset));
  assert.ok(estimate.typicalError < 0.001);
  assert.equal(estimate.driftPPM, 0); // 3.2 s of samples: below the 8 s span
  assert.ok(filter.delayLimit < 0.010);
});

test("drift is measured over a long enough span and shrunk toward 0 when noisy", () => {
  const drift = 80e-6;
  const filter = new SampleFilter({ ...defaultFilterConfiguration(), minimumDriftSpan: 1 });
  const next = uniform(11);
  for (let i = 0; i < 200; i++) {
    const x = i * 0.1;
    const d = 0.0005 + 0.0002 * next();
    filter.add(makeSample(0.1 + drift * x, d, advancedBySeconds(T, x)));
  }
  const estimate = filter.estimate();
  assert.ok(Math.abs(estimate.driftPPM - 80) < 5, `drift ${estimate.driftPPM}`);
  const newest = filter.samples[filter.samples.length - 1].localTime;
  assert.ok(Math.abs(offsetAtLocal(estimate, newest) - (0.1 + drift * 19.9)) < 1e-4);

  const noisy = new SampleFilter({ ...defaultFilterConfiguration(), minimumDriftSpan: 1 });
  for (let i = 0; i < 20; i++) noisy.add(makeSample(0.1 + (i % 2) * 0.02, 0.04, advancedBySeconds(T, i * 0.1)));
  assert.ok(Math.abs(noisy.estimate().driftPPM) <= 2000);
});

test("the window keeps its capacity and maximum age, oldest first even out of order", () => {
  const filter = new SampleFilter({ ...defaultFilterConfiguration(), capacity: 4, maximumAge: 10 });
  for (const x of [0, 2, 1, 3, 4, 5]) filter.add(makeSample(0, 0.001, advancedBySeconds(T, x)));
  assert.deepEqual(filter.samples.map((s) => secondsSince(s.localTime, T)), [2, 3, 4, 5]);
  filter.add(makeSample(0, 0.001, advancedBySeconds(T, 14)));
  assert.deepEqual(filter.samples.map((s) => secondsSince(s.localTime, T)), [4, 5, 14]);
  filter.add(makeSample(NaN, 0.001, T));
  assert.equal(filter.samples.length, 3);
});

test("poll scheduler: burst, doubling on good samples, halving on bad, backing off on RATE", () => {
  const scheduler = new PollScheduler({ burstCount: 2, burstInterval: 200, minimumInterval: 2000, maximumInterval: 8000, stableSamplesToLengthen: 2 });
  assert.equal(scheduler.next("goodSample"), 200);
  assert.deepEqual([1, 2, 3, 4, 5].map(() => scheduler.next("goodSample")), [2000, 4000, 4000, 8000, 8000]);
  assert.equal(scheduler.next("badSample"), 4000);
  assert.equal(scheduler.next("rateLimited"), 8000);
});

test("the synced clock slews small corrections and steps gross ones", () => {
  let local = T;
  const clock = new SyncedClock({ localNow: () => local });
  assert.equal(clock.now(), null);
  const estimate = (offset) => ({ localTime: local, offset, driftPPM: 0, bestDelay: 0.001, worstUsedDelay: 0.001, envelopeHalfWidth: 0.0005, offsetStandardError: 0 });
  clock.update(estimate(1.0));
  assert.equal(clock.now(), unixNanosecondsFromNTP(T) + 1_000_000_000n);
  clock.update(estimate(1.002));
  assert.ok(Math.abs(clock.correction(local) - 1.0) < 1e-9); // continuous at the update
  local = advancedBySeconds(T, 0.2); // 5000 ppm x 0.2 s = 1 ms slewed in
  assert.ok(Math.abs(clock.correction(local) - 1.001) < 1e-6);
  local = advancedBySeconds(T, 1);
  assert.ok(Math.abs(clock.correction(local) - 1.002) < 1e-9);
  clock.update(estimate(2.0));
  assert.equal(clock.steps, 1);
  assert.ok(Math.abs(clock.correction(local) - 2.0) < 1e-9);
  const target = clock.now() + 500_000_000n;
  assert.ok(Math.abs(secondsSince(clock.localAt(target), local) - 0.5) < 1e-6);
});

test("converge against a simulated relay: offset within its jitter, burst ends early on a quiet path", async () => {
  const trueOffset = -3.75;
  const next = uniform(5);
  let local = T;
  let requests = 0;
  const transport = {
    async request(t1) {
      requests += 1;
      const forward = 0.0003 + 0.002 * next() ** 3;
      const backward = 0.0003 + 0.002 * next() ** 3;
      const t2 = advancedBySeconds(t1, trueOffset + forward);
      const t3 = advancedBySeconds(t2, 0.00005);
      const t4 = advancedBySeconds(t1, forward + 0.00005 + backward);
      return { t2, t3, t4 };
    },
  };
  const syncedClock = new SyncedClock({ localNow: () => local });
  const client = new TimeClient({
    transport, syncedClock,
    wait: async (ms) => {
      local = advancedBySeconds(local, ms / 1000);
    },
  });
  const estimate = await client.converge({ target: 250e-6 });
  assert.ok(Math.abs(estimate.offset - trueOffset) < 0.0005, `offset ${estimate.offset}`);
  assert.ok(requests >= 8 && requests <= 128, `requests ${requests}`);
  assert.ok(syncedClock.isSynchronized);
  assert.ok(Math.abs(syncedClock.correction(local) - trueOffset) < 0.001);
});

test("converge fails when the relay never answers; TimeExchange matches replies by t1 and times out", async () => {
  const client = new TimeClient({ transport: { request: async () => null }, syncedClock: new SyncedClock({ localNow: () => T }), wait: async () => {} });
  await assert.rejects(client.converge({ maximumSamples: 4, minimumSamples: 1 }), /none of 4/);

  const sent = [];
  const exchange = new TimeExchange({ send: (t1) => sent.push(t1), timeout: 20 });
  const answered = exchange.request(5n);
  const unanswered = exchange.request(6n);
  assert.deepEqual(sent, [5n, 6n]);
  assert.equal(exchange.receive({ t1: 99n, t2: 1n, t3: 2n }, 3n), false);
  assert.equal(exchange.receive({ t1: 5n, t2: 1n, t3: 2n }, 3n), true);
  assert.deepEqual(await answered, { t2: 1n, t3: 2n, t4: 3n });
  assert.equal(await unanswered, null);
});
