// The person's copies of the group's items: which File (or media URL) this page plays for each queue
// entry. Pure (no DOM): the interface (media.js, copies.js) fills it from the file picker, dropped
// folders and the `media` URL, and asks it per item.
//
// Items are named by identities a browser cannot always compute: `coplay host` queues a file under
// its video stream's identity (`v3:…`, from the packets) and sends the file's fingerprint (`v2:…`)
// beside it (the activity's `fingerprint`, a queue entry's `fingerprint`); an entry the page itself
// queues is named by its fingerprint. So the library keeps copies by fingerprint and learns, from the
// activity and the queue, which fingerprint each item has. A copy plays an item only when its size
// and digest match that fingerprint (fingerprint.js `fingerprintsMatch`): the page never plays other
// media in step with the group.

import { fingerprintsMatch, parseFingerprint } from "./fingerprint.js";

/**
 * The copies this page has and the items they play.
 *
 * ```js
 * const library = new MediaLibrary();
 * library.learn({ item: "v3:…", fingerprint: "v2:1234:ab…" });       // from the activity or an entry
 * library.add({ fingerprint: "v2:1234:ab…", name: "Episode 1.mkv", source: file });
 * library.copyFor("v3:…")?.name;                                     // "Episode 1.mkv"
 * ```
 */
export class MediaLibrary {
  constructor() {
    /** Copies in the order they were added: {fingerprint, name, size, source, crossOrigin, duration}. */
    this.copies = [];
    // item -> the fingerprint its copies must have (learned from the activity and queue entries).
    this.fingerprints = new Map();
    // item -> duration in seconds, as the group knows it (for presence reports).
    this.durations = new Map();
  }

  /**
   * Learns an item's fingerprint (and duration): from the activity `{item, fingerprint, duration}` or
   * a queue entry `{item, fingerprint, duration}`. An item that is a fingerprint itself needs nothing.
   * Returns whether this made an item playable that was not before.
   */
  learn({ item, fingerprint = null, duration = null }) {
    if (typeof item !== "string") return false;
    const before = this.has(item);
    if (typeof fingerprint === "string" && parseFingerprint(fingerprint) !== null) this.fingerprints.set(item, fingerprint);
    if (Number.isFinite(duration) && duration > 0) this.durations.set(item, duration);
    return !before && this.has(item);
  }

  /** Learns every entry of a queue (a PlayQueue or its entries). Returns whether an item became playable. */
  learnEntries(entries) {
    let changed = false;
    for (const entry of entries) changed = this.learn(entry) || changed;
    return changed;
  }

  /** The fingerprint a copy of `item` must have, or null when the page cannot tell. */
  fingerprintOf(item) {
    if (this.fingerprints.has(item)) return this.fingerprints.get(item);
    return parseFingerprint(item) !== null ? item : null;
  }

  /**
   * Adds a copy `{fingerprint, name, size?, source (Blob or URL), crossOrigin?, duration?}`. A copy
   * with the fingerprint of one already there replaces nothing. Returns the copy kept.
   */
  add(copy) {
    const known = this.copies.find((c) => fingerprintsMatch(c.fingerprint, copy.fingerprint));
    if (known !== undefined) {
      if (known.duration === null && Number.isFinite(copy.duration)) known.duration = copy.duration;
      return known;
    }
    const kept = {
      fingerprint: copy.fingerprint, name: copy.name, size: copy.size ?? parseFingerprint(copy.fingerprint)?.size ?? null,
      source: copy.source, crossOrigin: copy.crossOrigin === true, duration: Number.isFinite(copy.duration) ? copy.duration : null,
    };
    this.copies.push(kept);
    return kept;
  }

  /** The copy that plays `item`, or null. */
  copyFor(item) {
    const fingerprint = this.fingerprintOf(item);
    if (fingerprint === null) return null;
    return this.copies.find((c) => fingerprintsMatch(c.fingerprint, fingerprint)) ?? null;
  }

  /** The copy of a queue entry (by its item, or the fingerprint it carries), or null. */
  copyForEntry(entry) {
    if (entry === null || entry === undefined) return null;
    this.learn(entry);
    return this.copyFor(entry.item);
  }

  /** Whether the page has a copy of `item`. */
  has(item) {
    return this.copyFor(item) !== null;
  }

  /**
   * The items the page can play, with durations: the coordinator's `items` (presence reports tell the
   * others; the group's timeline ends at an item's duration).
   */
  items() {
    const result = [];
    const seen = new Set();
    for (const item of [...this.fingerprints.keys(), ...this.copies.map((c) => c.fingerprint)]) {
      if (seen.has(item)) continue;
      seen.add(item);
      const copy = this.copyFor(item);
      if (copy === null) continue;
      result.push({ item, duration: this.durations.get(item) ?? copy.duration ?? null });
    }
    return result;
  }
}

/** Whether a file looks like media a browser may play (by type, else by extension): folders hold other files too. */
export function isMediaFile({ name = "", type = "" }) {
  if (/^(video|audio)\//.test(type)) return true;
  return /\.(mp4|m4v|mkv|webm|mov|ogv|ogg|ts|m2ts|mp3|m4a|opus|flac|wav)$/i.test(name);
}
