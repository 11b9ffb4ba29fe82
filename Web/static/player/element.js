// The `<video>` element as the player uses it (the player's video-element wrapper): its operations
// (`play()` with the autoplay policy's muted fallback, `pause()`, a seek that waits for the picture,
// the playback rate and pitch), its events and its presented frames (`requestVideoFrameCallback`).
// No decisions: what to do and when is player.js's; what the element's events say about readiness is
// stall.js's. The element is injected, so Node tests use a fake (Tests/Web/fakes.mjs).

/** Whether an element plays an audio track (Chromium: decoded audio bytes; Firefox: mozHasAudio; tracks where exposed). */
export function hasAudioTrack(video) {
  if (typeof video.mozHasAudio === "boolean") return video.mozHasAudio;
  if (video.audioTracks !== undefined && video.audioTracks !== null && typeof video.audioTracks.length === "number") return video.audioTracks.length > 0;
  if (typeof video.webkitAudioDecodedByteCount === "number") return video.webkitAudioDecodedByteCount > 0;
  return false;
}

export class VideoElement {
  /**
   * @param {object} options
   * @param {HTMLVideoElement} options.video
   * @param {{setTimeout, clearTimeout}} options.timers
   * @param {{seekTimeoutMs: number}} options.timing
   */
  constructor({ video, timers, timing }) {
    this.video = video;
    this.timers = timers;
    this.timing = timing;
    /** True while the wrapper itself pauses the element (its `pause` event is then no one else's). */
    this.pausing = false;
    /** The browser refused to play with sound and the element was muted to play. */
    this.mutedByPolicy = false;
    this.listeners = {};
  }

  /** Whether the media has an audio track. */
  get hasAudio() {
    return hasAudioTrack(this.video);
  }

  /** Listens to the element's events (`{name: listener}`), until `unlisten`. */
  listen(listeners) {
    this.listeners = listeners;
    for (const [name, listener] of Object.entries(listeners)) this.video.addEventListener(name, listener);
  }

  unlisten() {
    for (const [name, listener] of Object.entries(this.listeners ?? {})) this.video.removeEventListener(name, listener);
  }

  /** Calls `onframe(metadata)` for every presented frame while `active()` (where the browser has rVFC). */
  watchFrames(active, onframe) {
    const v = this.video;
    if (typeof v.requestVideoFrameCallback !== "function") return;
    const callback = (now, metadata) => {
      if (!active()) return;
      onframe(metadata);
      v.requestVideoFrameCallback(callback);
    };
    v.requestVideoFrameCallback(callback);
  }

  /**
   * `play()`. A refusal is reported to `onerror(error)` (an aborted play, superseded by a pause or a
   * seek, is not); a refusal to autoplay with sound mutes the element and calls `onmuted()`.
   */
  play({ onerror, onmuted }) {
    let result;
    try {
      result = this.video.play();
    } catch (error) {
      result = Promise.reject(error);
    }
    Promise.resolve(result).catch((error) => {
      if (error?.name !== "NotAllowedError" || this.video.muted) {
        if (error?.name !== "AbortError") onerror(error);
        return;
      }
      // Autoplay with sound refused: play muted, and offer to unmute.
      this.video.muted = true;
      this.mutedByPolicy = true;
      onmuted();
    });
  }

  pause() {
    this.pausing = true;
    try {
      if (!this.video.paused) this.video.pause();
    } finally {
      this.pausing = false;
    }
  }

  /**
   * Keeps the pitch or not. Chromium's pitch-preserving time stretch moves an audio track's clock in
   * steps at a rate change (PLAYERS.md, bench runs); without it trims act smoothly.
   */
  keepPitch(keep) {
    if ("preservesPitch" in this.video) {
      if (this.video.preservesPitch !== keep) this.video.preservesPitch = keep;
    }
  }

  /** Sets `playbackRate`; true when it changed. */
  setPlaybackRate(wanted) {
    if (this.video.playbackRate === wanted) return false;
    this.video.playbackRate = wanted;
    return true;
  }

  /** Where a seek to `itemTime` goes (within the media), or null when the element is there already. */
  seekTarget(itemTime) {
    const v = this.video;
    let target = Math.max(0, itemTime);
    if (Number.isFinite(v.duration) && target > v.duration) target = v.duration;
    if (Math.abs(v.currentTime - target) < 1e-6 && !v.seeking) return null;
    return target;
  }

  /** Sets `currentTime` and waits for `seeked` (or `seekTimeoutMs`). */
  seek(target) {
    const v = this.video;
    return new Promise((resolve) => {
      let timer = null;
      const done = () => {
        v.removeEventListener("seeked", done);
        if (timer !== null) this.timers.clearTimeout(timer);
        resolve();
      };
      v.addEventListener("seeked", done);
      timer = this.timers.setTimeout(done, this.timing.seekTimeoutMs);
      v.currentTime = target;
    });
  }
}
