// Fakes for the page's tests: manual time with timers, and a `<video>` element that plays on it.

/** Manual time: `now` in milliseconds; timers fire in order when `advance` passes them. */
export class ManualTime {
  constructor(start = 1_700_000_000_000) {
    this.now = start;
    this.timers = new Map();
    this.nextId = 1;
  }

  setTimeout = (fn, ms = 0) => {
    const id = this.nextId++;
    this.timers.set(id, { at: this.now + Math.max(0, ms), fn, id });
    return id;
  };

  clearTimeout = (id) => {
    this.timers.delete(id);
  };

  /** Lets pending promise callbacks run. */
  async flush() {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Advances by `ms`, firing timers in order (and letting their async work run). */
  async advance(ms) {
    const end = this.now + ms;
    await this.flush();
    for (;;) {
      let first = null;
      for (const timer of this.timers.values()) if (timer.at <= end && (first === null || timer.at < first.at || (timer.at === first.at && timer.id < first.id))) first = timer;
      if (first === null) break;
      this.timers.delete(first.id);
      this.now = Math.max(this.now, first.at);
      first.fn();
      await this.flush();
    }
    this.now = end;
    await this.flush();
  }
}

/**
 * A `<video>` on manual time: a media clock that starts `startLatencyMs` after play(), seeks that
 * take `seekMs`, frames on a grid (`frameInterval`) shown on a 60 Hz frame clock with
 * `requestVideoFrameCallback` metadata. Reference time = local time + `offsetMs` (the clock fake).
 */
export class FakeVideo {
  constructor(time, { duration = 60, frameInterval = 0.04, startLatencyMs = 0, seekMs = 5, tickMs = 1000 / 60, timeOrigin = 0, offsetMs = 0, cadenceHoldMs = null } = {}) {
    /**
     * null: the pictures follow the media clock. A number: as Chromium's cadence, the pictures advance
     * at the nominal rate (the playback rate to a tenth: trims are smaller) from where they were at the
     * last start, seek or jump to the clock, and jump to the clock only once it is this far (ms of item
     * time) from them: a trim moves `currentTime` at once and the pictures late and all at once.
     */
    this.cadenceHoldMs = cadenceHoldMs;
    this.pictures = null; // {position, at, rate}: the pictures' own clock while a cadence holds
    this.time = time;
    this.duration = duration;
    this.frameInterval = frameInterval;
    this.startLatencyMs = startLatencyMs;
    this.seekMs = seekMs;
    this.tickMs = tickMs;
    this.timeOriginValue = timeOrigin;
    this.offsetMs = offsetMs;
    this.paused = true;
    this.seeking = false;
    this.muted = false;
    this.readyState = 4;
    this.rate = 1;
    this.anchor = { position: 0, at: time.now }; // position at local ms `at` (moving when !paused)
    this.listeners = new Map();
    this.callbacks = [];
    this.lastFrameShown = null;
    this.calls = [];
    this.tick();
  }

  /** Local ms (what performance.timeOrigin + performance.now() would read). */
  get local() {
    return this.time.now - this.offsetMs;
  }

  position(at = this.local) {
    if (this.paused || at < this.anchor.at) return this.anchor.position;
    return Math.min(this.duration, this.anchor.position + (this.rate * (at - this.anchor.at)) / 1000);
  }

  get currentTime() {
    return this.position();
  }

  set currentTime(value) {
    this.calls.push(["seek", value]);
    this.pictures = null;
    this.anchor = { position: value, at: this.local };
    this.seeking = true;
    this.dispatch("seeking");
    this.time.setTimeout(() => {
      this.seeking = false;
      this.anchor = { position: value, at: this.local };
      this.dispatch("seeked");
    }, this.seekMs);
  }

  get playbackRate() {
    return this.rate;
  }

  set playbackRate(value) {
    this.calls.push(["rate", value]);
    this.anchor = { position: this.position(), at: this.local };
    this.rate = value;
  }

  play() {
    this.calls.push(["play", this.time.now]);
    if (!this.paused) return Promise.resolve();
    this.paused = false;
    this.pictures = null;
    this.anchor = { position: this.anchor.position, at: this.local + this.startLatencyMs };
    this.dispatch("playing");
    return Promise.resolve();
  }

  pause() {
    this.calls.push(["pause", this.time.now]);
    if (this.paused) return;
    this.anchor = { position: this.position(), at: this.local };
    this.paused = true;
    this.time.setTimeout(() => this.dispatch("pause"), 0);
  }

  /** Moves the media clock by `seconds` (a glitch). */
  jump(seconds) {
    this.anchor = { position: this.position() + seconds, at: this.local };
    this.pictures = null;
  }

  /** The media time the pictures show at local ms `at` (the clock, or the cadence's own, see cadenceHoldMs). */
  picturePosition(at) {
    const clock = this.position(at);
    if (this.cadenceHoldMs === null || this.paused || at < this.anchor.at) {
      this.pictures = null;
      return clock;
    }
    const nominal = Math.round(this.rate * 10) / 10;
    if (this.pictures !== null) {
      const shown = this.pictures.position + (this.pictures.rate * (at - this.pictures.at)) / 1000;
      if (Math.abs(clock - shown) * 1000 <= this.cadenceHoldMs && this.pictures.rate === nominal) return shown;
    }
    this.pictures = { position: clock, at, rate: nominal };
    return clock;
  }

  addEventListener(name, fn) {
    if (!this.listeners.has(name)) this.listeners.set(name, new Set());
    this.listeners.get(name).add(fn);
  }

  removeEventListener(name, fn) {
    this.listeners.get(name)?.delete(fn);
  }

  dispatch(name) {
    for (const fn of [...(this.listeners.get(name) ?? [])]) fn({ type: name });
  }

  requestVideoFrameCallback(fn) {
    this.callbacks.push(fn);
  }

  /** The 60 Hz frame clock: a new frame (by media time) is reported at the first tick that shows it. */
  tick() {
    this.time.setTimeout(() => {
      const display = this.local;
      const position = this.picturePosition(display);
      const frame = Math.floor(position / this.frameInterval + 1e-9);
      if (!this.seeking && frame !== this.lastFrameShown) {
        this.lastFrameShown = frame;
        const callbacks = this.callbacks.splice(0);
        const metadata = { mediaTime: frame * this.frameInterval, expectedDisplayTime: display - this.timeOriginValue, presentedFrames: frame };
        for (const fn of callbacks) fn(display, metadata);
      }
      this.tick();
    }, this.tickMs);
  }
}
