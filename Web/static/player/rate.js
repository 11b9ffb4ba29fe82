// The player's rate controller: the element runs at the group's rate times a trim. Small errors of the
// pictures (playhead.js) are trimmed away with `playbackRate` (proportional, within `maximumTrim`,
// nothing inside the dead band, never finer than half a step of the lattice of display origins the
// frame clock allows: display.js); large ones are the player's to re-anchor (a restart). The pitch is
// kept for the group's own speeds other than 1, where a person hears it; trims go without.

import { displayDeadbandMs } from "./display.js";
import { THRESHOLDS } from "./tuning.js";

/**
 * The trim to run at, never exactly 1 when `thresholds.ditherTrim` > 0: a proportional trim at
 * least that large stays; inside it the sign follows the error with a hysteresis of
 * ±`ditherHysteresisMs` (`current`: the trim in force).
 */
export function ditheredTrim(factor, errorMs, current, thresholds) {
  const d = thresholds.ditherTrim ?? 0;
  if (d <= 0 || Math.abs(factor - 1) >= d) return factor;
  let direction = current > 1 ? 1 : current < 1 ? -1 : 0;
  if (errorMs > thresholds.ditherHysteresisMs) direction = -1;
  else if (errorMs < -thresholds.ditherHysteresisMs) direction = 1;
  else if (direction === 0) direction = errorMs > 0 ? -1 : 1;
  return 1 + direction * d;
}

/**
 * What to do about an error (seconds of item time): `{action: "seek"}`, or `{action: "trim",
 * factor}` where the element should run at rate x factor (1: no trim).
 */
export function correctionFor(error, rate, thresholds = THRESHOLDS.video) {
  const errorMs = error * 1000;
  if (Math.abs(errorMs) > thresholds.seekThresholdMs) return { action: "seek" };
  if (Math.abs(errorMs) <= thresholds.deadbandMs) return { action: "trim", factor: 1 };
  const raw = 1 - error / thresholds.trimWindowS / rate;
  return { action: "trim", factor: Math.min(1 + thresholds.maximumTrim, Math.max(1 - thresholds.maximumTrim, raw)) };
}

export class RateController {
  /**
   * @param {object} options
   * @param {{keepPitch(keep: boolean): void, setPlaybackRate(rate: number): boolean}} options.element element.js's VideoElement.
   * @param {() => object} options.thresholds the thresholds in force (THRESHOLDS.video or .audio).
   */
  constructor({ element, thresholds }) {
    this.element = element;
    this.thresholds = thresholds;
    this.trim = 1;
    this.groupRate = null; // the rate part of playbackRate (the rest is the trim)
  }

  /** The trim a start or a rate change begins with: off the group's rate by the dither, if any. */
  get startTrim() {
    return 1 + (this.thresholds().ditherTrim ?? 0);
  }

  /**
   * Runs the element at `rate` x `trim`. True when the group's rate changed and with it `playbackRate`:
   * the renderer catches up with a new group rate first (the player then waits before judging). A trim
   * alone does not end the judging: the pictures are judged as shown, and they move late and in whole
   * ticks after a trim.
   */
  set(rate, trim) {
    this.trim = trim;
    // Chromium's pitch-preserving time stretch moves an audio track's clock in steps at a rate change
    // (PLAYERS.md, bench runs); without it trims act smoothly. The pitch is kept for the group's own
    // speeds other than 1, where a person hears it; trims (at most a few % for a second or two) go without.
    this.element.keepPitch(Math.abs(rate - 1) > 1e-9);
    const wanted = rate * trim;
    const rateChanged = this.groupRate !== rate;
    this.groupRate = rate;
    return this.element.setPlaybackRate(wanted) && rateChanged;
  }

  /**
   * The new trim for an error of `error` item seconds at the group's `rate` (the closed loop), or null
   * to keep the one in force. Nothing finer than half a step (`stepMs`, null when unknown) of the
   * lattice of display origins can be corrected (display.js).
   */
  trimFor(error, rate, stepMs) {
    const thresholds = this.thresholds();
    const band = { ...thresholds, deadbandMs: displayDeadbandMs(thresholds.deadbandMs / rate, stepMs) * rate };
    const factor = ditheredTrim(correctionFor(error, rate, band).factor, error * 1000, this.trim, band);
    // The pictures as shown hold still between jumps, so the same error comes back look after look:
    // only a trim that differs by more than 0.01 % (or the end of one) is a new one.
    if (factor === 1 ? this.trim !== 1 : Math.abs(factor - this.trim) > 1e-4) return factor;
    return null;
  }
}
