// When a start's seek is made. A paused `<video>` shows the picture of a seek as soon as it is decoded
// and keeps it up until `play()`, so a start that seeks long before its instant shows a frame of the
// future: measured in Chromium (issue 22's note, Tests/Browser/test_group.py), a restart that sought at
// once to its start 200-400 ms ahead (the restart delay, plus up to a 25 fps cadence cycle for a placed
// start) showed that frame 255-372 ms ahead of the group's timeline, frozen until the start. The seek
// is therefore made as late as the recent seeks allow: its picture comes up shortly before it is due,
// and an element that was playing plays on (near the timeline) until then.

/**
 * How long before a start's `play()` its seek is made: the slowest of the last `kept` seeks plus
 * `marginMs` (`initialMs` before any), at least `minimumMs`, at most `maximumMs`.
 */
export class SeekLead {
  constructor({ marginMs, kept, initialMs, minimumMs = 0, maximumMs = Infinity }) {
    this.marginMs = marginMs;
    this.kept = kept;
    this.initialMs = initialMs;
    this.minimumMs = minimumMs;
    this.maximumMs = maximumMs;
    /** The durations of the last seeks (ms), oldest first. */
    this.recent = [];
  }

  /** A seek took `ms` (from setting `currentTime` to `seeked`). */
  record(ms) {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.recent.push(ms);
    if (this.recent.length > this.kept) this.recent.splice(0, this.recent.length - this.kept);
  }

  /** The lead in force (ms). */
  get ms() {
    const slowest = this.recent.length === 0 ? this.initialMs : Math.max(...this.recent);
    return Math.min(this.maximumMs, Math.max(this.minimumMs, slowest + this.marginMs));
  }

  /** When (reference ms) to seek for a `play()` at `playMs`: `playMs` minus the lead, not before `nowMs`. */
  seekAt(playMs, nowMs) {
    return Math.max(nowMs, playMs - this.ms);
  }
}
