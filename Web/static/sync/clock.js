// The page's reference clock: NTP-style time transfer with the relay over the WebSocket
// (frame types 0x0D timeRequest / 0x0E timeReply, docs/protocol.md), filtered as
// Sources/ClockSync does it. Ports, kept parallel to their Swift files:
//   - NTPSample.swift (offset and delay of one exchange),
//   - SampleFilter.swift (the delay envelope of the window, drift with a prior),
//   - ClockEstimate.swift (offset(atLocal:), errorBound),
//   - PollScheduler.swift (when to poll next),
//   - SyncedClock.swift (estimates slewed in, gross errors stepped),
//   - TimeClient.swift (converge: a burst until the typical error is small; then polling).
//
// NTP timestamps are BigInt raw 32.32 values (seconds since 1900 << 32 | fraction), era 0.
// The page's local clock is `performance.timeOrigin + performance.now()` (milliseconds since the
// Unix epoch, monotonic after page load), converted with the era-0 offset 2208988800 s.
// The reference time the coordinator uses is ReferenceTime: BigInt nanoseconds of Unix time on
// the relay's timescale (ReferenceTime+NTP.swift).

// MARK: NTP timestamps

/** Seconds between the NTP epoch (1900) and the Unix epoch (1970). */
export const UNIX_EPOCH_OFFSET = 2_208_988_800n;
const TWO_32 = 4_294_967_296;
const NS = 1_000_000_000n;

/** Swift's `Double.rounded()`: to nearest, halves away from zero. */
function roundHalfAwayFromZero(x) {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** ReferenceTime.ntpTimestamp: Unix nanoseconds -> NTP raw, rounded up so converting back is exact. */
export function ntpFromUnixNanoseconds(ns) {
  let whole = ns / NS;
  let nanos = ns % NS;
  if (nanos < 0n) {
    whole -= 1n;
    nanos += NS;
  }
  const fraction = ((nanos << 32n) + 999_999_999n) / NS;
  return BigInt.asUintN(64, ((whole + UNIX_EPOCH_OFFSET) << 32n) + fraction);
}

/** ReferenceTime(ntp:): NTP raw (era 0) -> Unix nanoseconds, truncated. */
export function unixNanosecondsFromNTP(raw) {
  const seconds = (raw >> 32n) - UNIX_EPOCH_OFFSET;
  const nanoseconds = ((raw & 0xffff_ffffn) * NS) >> 32n;
  return seconds * NS + nanoseconds;
}

/** Milliseconds since the Unix epoch (a Number with a fraction) -> BigInt nanoseconds. */
export function unixNanosecondsFromMilliseconds(ms) {
  const whole = Math.floor(ms);
  return BigInt(whole) * 1_000_000n + BigInt(Math.round((ms - whole) * 1e6));
}

/** The page's local clock as an NTP timestamp. */
export function browserLocalNTP() {
  return ntpFromUnixNanoseconds(unixNanosecondsFromMilliseconds(performance.timeOrigin + performance.now()));
}

/** NTPTimestamp.rawDifference(from:): the signed 64-bit difference a - b. */
export function rawDifference(a, b) {
  return BigInt.asIntN(64, a - b);
}

/** NTPTimestamp.seconds(since:). */
export function secondsSince(a, b) {
  return Number(rawDifference(a, b)) / TWO_32;
}

/** NTPTimestamp.advanced(bySeconds:). */
export function advancedBySeconds(raw, seconds) {
  return BigInt.asUintN(64, raw + BigInt(roundHalfAwayFromZero(seconds * TWO_32)));
}

// MARK: NTPSample

/** The smallest delay a sample reports: 1 µs. */
export const MINIMUM_DELAY = 1e-6;

/** NTPSample.init(offset:delay:localTime:). */
export function makeSample(offset, delay, localTime) {
  return { offset, delay: Math.max(MINIMUM_DELAY, delay), localTime };
}

/**
 * NTPSample.init(t1:t2:t3:t4:): offset = ((t2 - t1) + (t3 - t4)) / 2, delay = (t4 - t1) - (t3 - t2),
 * at the local middle of the exchange. t1, t4 local; t2, t3 the relay's.
 */
export function sampleFromTimestamps({ t1, t2, t3, t4 }) {
  const forward = rawDifference(t2, t1);
  const backward = rawDifference(t3, t4);
  const offset = (Number(forward) + Number(backward)) / 2 / TWO_32;
  const roundTrip = Number(rawDifference(t4, t1)) / TWO_32;
  const serverTime = Number(rawDifference(t3, t2)) / TWO_32;
  return makeSample(offset, roundTrip - serverTime, advancedBySeconds(t1, roundTrip / 2));
}

// MARK: ClockEstimate

/** ClockEstimate.offset(atLocal:): reference minus local at local time `t`, seconds. */
export function offsetAtLocal(estimate, t) {
  return estimate.offset + estimate.driftPPM * 1e-6 * secondsSince(t, estimate.localTime);
}

/** ClockEstimate.errorBound. */
export function errorBound(estimate) {
  const envelope = Number.isFinite(estimate.envelopeHalfWidth) ? Math.max(estimate.bestDelay / 2, estimate.envelopeHalfWidth) : Infinity;
  return Math.min(estimate.bestDelay / 2 + (estimate.worstUsedDelay - estimate.bestDelay) / 2, envelope) + 3 * estimate.offsetStandardError;
}

// MARK: SampleFilter

/** SampleFilter.Configuration defaults. */
export function defaultFilterConfiguration() {
  return {
    capacity: 128,
    maximumAge: Infinity,
    relativeDelayTolerance: 0.5,
    absoluteDelayTolerance: 20e-6,
    minimumDriftSpan: 8,
    maximumDriftPPM: 2000,
    driftPriorPPM: 100,
  };
}

/** TimeClient.Configuration.playback's filter: 1024 samples, 10 minutes, drift from a 1 s span. */
export function playbackFilterConfiguration() {
  return { ...defaultFilterConfiguration(), capacity: 1024, maximumAge: 600, minimumDriftSpan: 1 };
}

function median(values) {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The slope of the lower convex hull of (xs[i], ys[i]) over `x`, or null. */
function supportSlope(xs, ys, x) {
  const points = xs.map((xi, i) => [xi, ys[i]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const hull = [];
  for (const point of points) {
    const last = hull[hull.length - 1];
    if (last !== undefined && last[0] === point[0]) continue; // same x, higher y: never on the hull
    while (hull.length >= 2) {
      const a = hull[hull.length - 2];
      const b = hull[hull.length - 1];
      const cross = (b[0] - a[0]) * (point[1] - a[1]) - (b[1] - a[1]) * (point[0] - a[0]);
      if (cross <= 0) hull.pop();
      else break;
    }
    hull.push(point);
  }
  for (let i = 0; i + 1 < hull.length; i++) {
    const a = hull[i];
    const b = hull[i + 1];
    if (a[0] <= x && x <= b[0]) return (b[1] - a[1]) / (b[0] - a[0]);
  }
  return null;
}

/** The drift (s/s) and its uncertainty, or null while the window is too short (SampleFilter.drift). */
function driftOf(xs, upper, lower, spread, configuration) {
  if (xs.length < 3) return null;
  const span = xs[xs.length - 1] - xs[0];
  if (!(span >= configuration.minimumDriftSpan && span > 0)) return null;
  const meanX = xs.reduce((a, b) => a + b, 0) / xs.length;
  const forward = supportSlope(xs, upper, meanX);
  const backwardNegated = supportSlope(xs, lower.map((y) => -y), meanX);
  if (forward === null || backwardNegated === null) return null;
  const backward = -backwardNegated;
  const raw = (forward + backward) / 2;
  const sigma = Math.max(Math.abs(forward - backward) / 2, (4 * spread) / (xs.length * span), 1e-12);
  const prior = Math.max(configuration.driftPriorPPM * 1e-6, 1e-12);
  const tauSquared = Math.max(prior * prior, raw * raw - 25 * sigma * sigma);
  const posterior = (raw * tauSquared) / (tauSquared + sigma * sigma);
  const posteriorError = sigma * Math.sqrt(tauSquared / (tauSquared + sigma * sigma));
  const limit = configuration.maximumDriftPPM * 1e-6;
  const slope = Math.min(Math.max(posterior, -limit), limit);
  return { slope, error: posteriorError + Math.abs(posterior - slope) };
}

/** SampleFilter: the delay envelope of the recent samples (see SampleFilter.swift for the method). */
export class SampleFilter {
  constructor(configuration = defaultFilterConfiguration()) {
    this.configuration = configuration;
    /** The samples in the window, oldest first. */
    this.samples = [];
  }

  /** Adds a sample in local-time order, dropping the oldest beyond the capacity or the age. */
  add(sample) {
    if (!Number.isFinite(sample.offset) || !Number.isFinite(sample.delay)) return;
    let index = this.samples.length;
    while (index > 0 && secondsSince(this.samples[index - 1].localTime, sample.localTime) > 0) index -= 1;
    this.samples.splice(index, 0, sample);
    const capacity = Math.max(1, this.configuration.capacity);
    if (this.samples.length > capacity) this.samples.splice(0, this.samples.length - capacity);
    if (Number.isFinite(this.configuration.maximumAge) && this.samples.length > 0) {
      const newest = this.samples[this.samples.length - 1];
      let tooOld = 0;
      while (tooOld < this.samples.length && secondsSince(newest.localTime, this.samples[tooOld].localTime) > this.configuration.maximumAge) tooOld += 1;
      this.samples.splice(0, Math.min(tooOld, this.samples.length - 1));
    }
  }

  /** Forgets every sample. */
  reset() {
    this.samples = [];
  }

  /** The largest delay of a "clean" sample (Infinity when empty). */
  get delayLimit() {
    if (this.samples.length === 0) return Infinity;
    const best = Math.min(...this.samples.map((s) => s.delay));
    return best * (1 + this.configuration.relativeDelayTolerance) + this.configuration.absoluteDelayTolerance;
  }

  /** The current ClockEstimate, or null before the first sample. */
  estimate() {
    const samples = this.samples;
    if (samples.length === 0) return null;
    const origin = samples[samples.length - 1].localTime;
    const xs = samples.map((s) => secondsSince(s.localTime, origin));
    const upper = samples.map((s) => s.offset + s.delay / 2);
    const lower = samples.map((s) => s.offset - s.delay / 2);
    const delays = samples.map((s) => s.delay);
    const bestDelay = Math.min(...delays);
    const spread = Math.max(0, median(delays) - bestDelay);

    const drift = driftOf(xs, upper, lower, spread, this.configuration);
    const slope = drift?.slope ?? 0;
    const widening = drift?.error ?? 0;
    let upperIndex = 0;
    let lowerIndex = 0;
    let tightestUpper = Infinity;
    let tightestLower = -Infinity;
    for (let i = 0; i < samples.length; i++) {
      const u = upper[i] - slope * xs[i] + widening * Math.abs(xs[i]);
      const l = lower[i] - slope * xs[i] - widening * Math.abs(xs[i]);
      if (u < tightestUpper) {
        tightestUpper = u;
        upperIndex = i;
      }
      if (l > tightestLower) {
        tightestLower = l;
        lowerIndex = i;
      }
    }
    const offset = (tightestUpper + tightestLower) / 2;
    const halfWidth = Math.abs(tightestUpper - tightestLower) / 2;
    const oldestAge = Math.max(-xs[upperIndex], -xs[lowerIndex]);
    const driftError = drift?.error ?? Infinity;
    const offsetStandardError = Number.isFinite(driftError) ? (2 / 3) * driftError * oldestAge : 0;
    const noise = samples.length < 4 ? Infinity : spread / samples.length;
    return {
      localTime: origin,
      offset,
      driftPPM: slope * 1e6,
      driftErrorPPM: driftError * 1e6,
      offsetStandardError,
      bestDelay,
      worstUsedDelay: Math.max(delays[upperIndex], delays[lowerIndex]),
      latestSampleTime: origin,
      usedSamples: samples.length,
      totalSamples: samples.length,
      envelopeHalfWidth: halfWidth,
      typicalError: noise + offsetStandardError,
    };
  }
}

// MARK: PollScheduler

/** PollScheduler: an initial burst, then an interval that doubles while samples are good. Milliseconds. */
export class PollScheduler {
  constructor({ burstCount = 8, burstInterval = 200, minimumInterval = 2000, maximumInterval = 32000, maximumBackoffInterval = 1_024_000, stableSamplesToLengthen = 4 } = {}) {
    this.configuration = { burstCount, burstInterval, minimumInterval, maximumInterval, maximumBackoffInterval, stableSamplesToLengthen };
    this.interval = minimumInterval;
    this.burstRemaining = Math.max(1, burstCount);
    this.goodInARow = 0;
  }

  /** Records the outcome of a poll ("goodSample" | "badSample" | "timeout" | "rateLimited"); returns the wait in ms. */
  next(outcome) {
    const c = this.configuration;
    if (outcome === "rateLimited") {
      this.burstRemaining = 0;
      this.goodInARow = 0;
      this.interval = Math.min(Math.max(this.interval * 2, c.minimumInterval * 4), c.maximumBackoffInterval);
      return this.interval;
    }
    if (this.burstRemaining > 0) this.burstRemaining -= 1;
    if (this.burstRemaining > 0) return c.burstInterval;
    if (outcome === "goodSample") {
      this.goodInARow += 1;
      if (this.goodInARow >= c.stableSamplesToLengthen) {
        this.goodInARow = 0;
        if (this.interval < c.maximumInterval) this.interval = Math.min(this.interval * 2, c.maximumInterval);
      }
    } else {
      this.goodInARow = 0;
      this.interval = Math.max(this.interval / 2, c.minimumInterval);
    }
    return this.interval;
  }
}

// MARK: SyncedClock

/**
 * SyncedClock: local time mapped to reference time by the latest estimate plus a residual that
 * keeps reference time continuous and decays at the slew rate (playback: 5000 ppm); corrections
 * above 0.1 s step.
 */
export class SyncedClock {
  constructor({ localNow = browserLocalNTP, maximumSlewRate = 0.005, stepThreshold = 0.1 } = {}) {
    this.localNow = localNow;
    this.maximumSlewRate = maximumSlewRate;
    this.stepThreshold = stepThreshold;
    this.model = null; // {estimate, updateTime, residual}
    this.updates = 0;
    this.steps = 0;
  }

  get isSynchronized() {
    return this.model !== null;
  }

  residualAt(t) {
    const m = this.model;
    const elapsed = Math.max(0, secondsSince(t, m.updateTime));
    const remaining = Math.max(0, Math.abs(m.residual) - this.maximumSlewRate * elapsed);
    return m.residual < 0 ? -remaining : remaining;
  }

  /** Reference minus local time at local `t`, seconds (0 while unsynchronized). */
  correction(t) {
    if (this.model === null) return 0;
    return offsetAtLocal(this.model.estimate, t) + this.residualAt(t);
  }

  /** Applies a new estimate, slewing toward it (SyncedClock.update(with:atLocal:)). */
  update(estimate, now = this.localNow()) {
    this.updates += 1;
    if (this.model === null) {
      this.model = { estimate, updateTime: now, residual: 0 };
      return;
    }
    const residual = this.correction(now) - offsetAtLocal(estimate, now);
    if (Math.abs(residual) > this.stepThreshold) {
      this.steps += 1;
      this.model = { estimate, updateTime: now, residual: 0 };
      return;
    }
    this.model = { estimate, updateTime: now, residual };
  }

  /** Adopts an estimate at once, without slewing (the end of the initial burst). */
  adopt(estimate, now = this.localNow()) {
    this.updates += 1;
    if (this.model !== null && Math.abs(offsetAtLocal(estimate, now) - this.correction(now)) > this.stepThreshold) this.steps += 1;
    this.model = { estimate, updateTime: now, residual: 0 };
  }

  /** The reference NTP timestamp at local NTP time `t`. */
  referenceAt(t) {
    return advancedBySeconds(t, this.correction(t));
  }

  /** The reference time now as a ReferenceTime (BigInt Unix nanoseconds), or null while unsynchronized. */
  now() {
    if (this.model === null) return null;
    return unixNanosecondsFromNTP(this.referenceAt(this.localNow()));
  }

  /** The local NTP time at which the reference clock reads `reference` (ReferenceTime ns). */
  localAt(reference) {
    const target = ntpFromUnixNanoseconds(reference);
    // One fixed-point step is exact to well below a microsecond: the correction changes by at
    // most (drift + slew) x the correction itself between the two instants.
    const guess = advancedBySeconds(target, -this.correction(target));
    return advancedBySeconds(target, -this.correction(guess));
  }

  /** The current error bound in seconds (Infinity while unsynchronized). */
  get errorBound() {
    return this.model === null ? Infinity : errorBound(this.model.estimate);
  }
}

// MARK: TimeClient

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Measures the relay's clock and disciplines a SyncedClock (TimeClient.swift, playback settings).
 *
 * The transport is `{request(t1) -> Promise<{t2, t3, t4} | null>}`: it sends a timeRequest with
 * transmit time t1 (local NTP), and resolves with the relay's t2 and t3 and the local receipt
 * time t4 stamped when the reply arrived, or null after its timeout.
 */
export class TimeClient {
  constructor({ transport, syncedClock, localNow = syncedClock?.localNow ?? browserLocalNTP, filter = playbackFilterConfiguration(), poll = { minimumInterval: 125 }, wait = sleep }) {
    this.transport = transport;
    this.syncedClock = syncedClock;
    this.localNow = localNow;
    this.filter = new SampleFilter(filter);
    this.pollConfiguration = poll;
    this.wait = wait;
    this.statistics = { sent: 0, samples: 0, timeouts: 0, invalid: 0 };
  }

  /** The filter's current estimate, or null. */
  get estimate() {
    return this.filter.estimate();
  }

  /** Sends one request and folds the answer into the filter and the clock; returns the poll outcome. */
  async poll() {
    const t1 = this.localNow();
    this.statistics.sent += 1;
    const reply = await this.transport.request(t1);
    if (reply === null) {
      this.statistics.timeouts += 1;
      return "timeout";
    }
    const { t2, t3, t4 } = reply;
    if (t2 === 0n || t3 === 0n || rawDifference(t3, t2) < 0n || rawDifference(t4, t1) < 0n) {
      this.statistics.invalid += 1;
      return "timeout";
    }
    const sample = sampleFromTimestamps({ t1, t2, t3, t4 });
    this.statistics.samples += 1;
    this.filter.add(sample);
    const estimate = this.filter.estimate();
    if (estimate === null) return "badSample";
    this.syncedClock.update(estimate, this.localNow());
    // Good: a low-delay sample that agrees with the fit.
    const residual = Math.abs(sample.offset - offsetAtLocal(estimate, sample.localTime));
    const lowDelay = sample.delay <= this.filter.delayLimit;
    return lowDelay && residual <= 3 * errorBound(estimate) + 1e-6 ? "goodSample" : "badSample";
  }

  /**
   * A burst until the estimate is good (TimeClient.converge): a request every `interval` ms, at
   * most `maximumInFlight` awaiting answers, until `minimumSamples` answers and a typical error
   * at most `target` seconds, or `maximumSamples` requests; then the clock adopts the estimate.
   *
   * @returns {Promise<object>} the estimate adopted.
   * @throws {Error} when no answer arrived at all.
   */
  async converge({ target = 250e-6, minimumSamples = 8, maximumSamples = 128, interval = 20, maximumInFlight = 8 } = {}) {
    const maximum = Math.max(1, minimumSamples, maximumSamples);
    const samplesBefore = this.statistics.samples;
    let sent = 0;
    let inFlight = 0;
    let finished = false;
    let failure = null;
    let wake = null;
    const woken = () => new Promise((resolve) => (wake = resolve));
    let signal = woken();
    const done = () => {
      const estimate = this.filter.estimate();
      const answers = this.statistics.samples - samplesBefore;
      if (answers >= minimumSamples && estimate !== null && estimate.typicalError <= target) return true;
      return sent >= maximum && inFlight === 0;
    };
    while (!finished) {
      if (sent < maximum && inFlight < Math.max(1, maximumInFlight)) {
        sent += 1;
        inFlight += 1;
        this.poll().then(
          () => {
            inFlight -= 1;
            wake();
          },
          (error) => {
            inFlight -= 1;
            failure = error;
            wake();
          },
        );
        await Promise.race([this.wait(interval), signal]);
      } else {
        await signal;
      }
      if (failure !== null) throw failure;
      signal = woken();
      finished = done();
    }
    const estimate = this.filter.estimate();
    if (estimate === null) throw new Error(`the relay answered none of ${sent} time requests`);
    this.syncedClock.adopt(estimate, this.localNow());
    return estimate;
  }

  /** Polls until `abort.aborted` (an AbortSignal): the poll scheduler's intervals, burst skipped. */
  async run(abort) {
    const scheduler = new PollScheduler({ burstCount: 1, ...this.pollConfiguration });
    while (!abort?.aborted) {
      const outcome = await this.poll();
      await this.wait(scheduler.next(outcome));
    }
  }
}

/**
 * The WebSocket side of time requests: `request(t1)` sends a timeRequest through `send(t1)` and
 * resolves when `receive(reply, t4)` is called with the matching timeReply (matched by the echoed
 * t1), or with null after `timeout` ms.
 */
export class TimeExchange {
  constructor({ send, timeout = 1000 }) {
    this.send = send;
    this.timeout = timeout;
    this.pending = new Map(); // t1 -> resolve
  }

  request(t1) {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(t1);
        resolve(null);
      }, this.timeout);
      this.pending.set(t1, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      try {
        this.send(t1);
      } catch {
        this.pending.delete(t1);
        clearTimeout(timer);
        resolve(null);
      }
    });
  }

  /** Hands over a timeReply payload `{t1, t2, t3}` received at local time `t4`; unmatched replies are dropped. */
  receive({ t1, t2, t3 }, t4) {
    const resolve = this.pending.get(t1);
    if (resolve === undefined) return false;
    this.pending.delete(t1);
    resolve({ t2, t3, t4 });
    return true;
  }

  /** Answers every pending request with null (the connection closed). */
  cancelAll() {
    for (const resolve of this.pending.values()) resolve(null);
    this.pending.clear();
  }
}
