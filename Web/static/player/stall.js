// The player's stall detector: the `<video>` element's waiting / seeking / stalls become readiness
// reports (readiness.js), which the coordinator turns into buffering / stallRecovery suspensions.
// The player's own seeks and the first moments after its own starts are its own doing: a ready
// element's not-ready state is then reported only if it outlasts `ownGraceMs` (under load the page's
// own corrective seeks became group-wide buffering suspensions); ready is reported at once.

import { Readiness } from "../sync/readiness.js";

const HAVE_CURRENT_DATA = 2;
const HAVE_FUTURE_DATA = 3;

export class StallDetector {
  /**
   * @param {object} options
   * @param {HTMLVideoElement} options.video
   * @param {{nowMs(): number|null}} options.clock the reference clock (ms).
   * @param {{setTimeout, clearTimeout}} options.timers
   * @param {{ownGraceMs: number}} options.timing
   * @param {() => boolean} options.playing whether the player has the element playing.
   * @param {() => boolean} options.stopped whether the player stopped.
   * @param {(readiness: string) => void} options.onreadiness where reports go.
   */
  constructor({ video, clock, timers, timing, playing, stopped, onreadiness }) {
    this.video = video;
    this.clock = clock;
    this.timers = timers;
    this.timing = timing;
    this.playing = playing;
    this.stopped = stopped;
    this.onreadiness = onreadiness;
    this.readiness = Readiness.loading;
    this.ownSeeks = 0;
    this.quietUntilMs = -Infinity;
    this.deferredReadiness = null;
    this.deferTimer = null;
  }

  /** The element's events that say something about readiness, as `{name: listener}`. */
  listeners() {
    const v = this.video;
    return {
      seeking: () => this.elementReadiness(Readiness.seeking),
      seeked: () => this.elementReadiness(v.readyState >= HAVE_CURRENT_DATA ? Readiness.ready : Readiness.loading),
      waiting: () => this.elementReadiness(v.seeking ? Readiness.seeking : this.playing() ? Readiness.starved : Readiness.loading),
      stalled: () => {
        if (this.playing() && v.readyState < HAVE_FUTURE_DATA) this.elementReadiness(Readiness.starved);
      },
      playing: () => this.elementReadiness(Readiness.ready),
      canplay: () => {
        if (!v.seeking) this.elementReadiness(Readiness.ready);
      },
      loadeddata: () => {
        if (!v.seeking) this.elementReadiness(Readiness.ready);
      },
    };
  }

  /** The element's readiness when the player starts following it. */
  reportInitial() {
    const v = this.video;
    this.reportReadiness(v.readyState >= HAVE_CURRENT_DATA && !v.seeking ? Readiness.ready : Readiness.loading);
  }

  /** Drops a report still waiting (the player stopped). */
  cancel() {
    if (this.deferTimer !== null) this.timers.clearTimeout(this.deferTimer);
    this.deferTimer = null;
  }

  /** Runs `seek` (an own seek: what the element then says is the player's doing). */
  async ownSeek(seek) {
    this.ownSeeks += 1;
    try {
      await seek();
    } finally {
      this.ownSeeks -= 1;
    }
  }

  /** What the element says until reference ms `ms` is the player's own start's doing. */
  quietUntil(ms) {
    this.quietUntilMs = ms;
  }

  /** Whether the element's state is the adapter's own doing now (an own seek, just after an own start). */
  get ownOperation() {
    return this.ownSeeks > 0 || (this.clock.nowMs() ?? -Infinity) < this.quietUntilMs;
  }

  /**
   * What the element's events say about readiness. During the adapter's own seeks and starts a
   * ready element's not-ready state is reported only if it outlasts `ownGraceMs` (under load the
   * page's own corrective seeks became group-wide buffering suspensions); ready is reported at once.
   */
  elementReadiness(readiness) {
    // Only a ready element's reports wait: one already not ready (loading at the start) reports as
    // before, so its new report restarts the coordinator's grace instead of leaving the old one running.
    if (readiness !== Readiness.ready && this.readiness === Readiness.ready && this.ownOperation) {
      this.deferredReadiness = readiness;
      if (this.deferTimer === null) {
        this.deferTimer = this.timers.setTimeout(() => {
          this.deferTimer = null;
          const deferred = this.deferredReadiness;
          this.deferredReadiness = null;
          if (deferred !== null && !this.stopped()) this.reportReadiness(deferred);
        }, this.timing.ownGraceMs);
      }
      return;
    }
    this.deferredReadiness = null;
    if (this.deferTimer !== null) {
      this.timers.clearTimeout(this.deferTimer);
      this.deferTimer = null;
    }
    this.reportReadiness(readiness);
  }

  reportReadiness(readiness) {
    if (readiness === this.readiness) return;
    this.readiness = readiness;
    this.onreadiness(readiness);
  }
}
