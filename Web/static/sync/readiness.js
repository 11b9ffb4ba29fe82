// Player readiness -> suspensions: a port of Sources/PlaybackCoordinator/PlaybackCoordinator+Readiness.swift
// (and PlayerReadiness in CoordinatedPlayer.swift).
//
// A player that stays not ready (loading, seeking, starved) for the grace period (the coordinator
// configuration's `readinessGrace`, 100 ms) makes the coordinator begin a suspension on its behalf:
// `buffering` while loading or seeking, `stallRecovery` when starved, so the group holds still until
// the player reports `ready` (which ends the suspension) or the suspension times out.

/** PlayerReadiness. */
export const Readiness = Object.freeze({ ready: "ready", loading: "loading", seeking: "seeking", starved: "starved" });

/** PlayerReadiness.suspensionReason: the suspension a not-ready player begins, or null when ready. */
export function suspensionReason(readiness) {
  switch (readiness) {
    case Readiness.loading:
    case Readiness.seeking:
      return "buffering";
    case Readiness.starved:
      return "stallRecovery";
    default:
      return null;
  }
}

/**
 * Follows readiness reports (PlaybackCoordinator.followReadiness).
 *
 * ```js
 * const follower = new ReadinessFollower({ graceMs: 100, begin: (reason) => shell.beginSuspension(reason), end: (id) => shell.endSuspension(id) });
 * follower.report("seeking"); // ... 100 ms later, still seeking: a buffering suspension begins
 * follower.report("ready");   // ends it
 * ```
 */
export class ReadinessFollower {
  /**
   * @param {object} options
   * @param {number} options.graceMs how long a not-ready report must stand before suspending.
   * @param {(reason: string) => Promise<string>} options.begin begins a suspension, resolves with its id.
   * @param {(id: string) => Promise<void>} options.end ends one.
   * @param {{setTimeout, clearTimeout}} [options.timers]
   * @param {(message: string, error?: unknown) => void} [options.log]
   */
  constructor({ graceMs, begin, end, timers = globalThis, log = () => {} }) {
    this.graceMs = graceMs;
    this.begin = begin;
    this.end = end;
    this.timers = timers;
    this.log = log;
    this.readiness = Readiness.ready;
    this.reports = 0;
    /** {state: "none"} | {state: "beginning"} | {state: "open", id} */
    this.suspension = { state: "none" };
    this.timer = null;
  }

  /** A readiness report; repeats are ignored. */
  report(readiness) {
    if (readiness === this.readiness) return;
    this.readiness = readiness;
    this.reports += 1;
    if (readiness === Readiness.ready) {
      this.endSuspension();
      return;
    }
    const generation = this.reports;
    const fire = () => this.beginSuspension(generation);
    if (this.graceMs > 0) {
      this.timer = this.timers.setTimeout(fire, this.graceMs);
    } else {
      fire();
    }
  }

  async beginSuspension(generation) {
    const reason = suspensionReason(this.readiness);
    if (generation !== this.reports || reason === null || this.suspension.state !== "none") return;
    this.suspension = { state: "beginning" };
    try {
      const id = await this.begin(reason);
      // Re-check after the await: the player may have become ready meanwhile.
      if (this.readiness === Readiness.ready) {
        this.suspension = { state: "none" };
        await this.end(id);
      } else {
        this.suspension = { state: "open", id };
      }
    } catch (error) {
      this.suspension = { state: "none" };
      this.log("could not suspend for the player", error);
    }
  }

  async endSuspension() {
    if (this.suspension.state !== "open") return;
    const { id } = this.suspension;
    this.suspension = { state: "none" };
    try {
      await this.end(id);
    } catch (error) {
      this.log("could not end the player's suspension", error);
    }
  }

  /** Stops following (a pending grace timer is cancelled). */
  stop() {
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }
}
