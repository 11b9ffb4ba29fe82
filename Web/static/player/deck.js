// The page's players for a queue: one `<video>` element and VideoPlayer (player.js) per item it has a
// copy of, stacked in the screen, the one showing the group's entry on top. The coordinator's commands
// (shell.js -> `handle`) go to the player of their item; a player for the next entry is made ahead
// (`prepare`: loaded and paused on its first picture), so at a transition on the shared clock the
// next entry starts like any scheduled start, at its instant, while the previous element holds its
// last picture until the new one has shown its first (then it goes on top).
//
// Only the player of the group's item speaks for the page: its readiness becomes the page's (a
// preloading element's loading makes nobody wait), its events and notices go to the page, and the
// test hook reads its samples.

import { VideoPlayer } from "./player.js";
import { msToNs } from "./schedule.js";

/** The most players (and elements, decoders) kept at once: the group's, the prepared next one, the last one. */
export const MAX_PLAYERS = 3;

export class PlayerDeck {
  /**
   * @param {object} options
   * @param {() => HTMLVideoElement} options.createVideo a new element in the screen (the first call may return the page's own).
   * @param {import("./library.js").MediaLibrary} options.library the person's copies.
   * @param {{nowMs(): number|null, offsetMs(): number}} options.clock the reference clock (ms).
   * @param {(item: string) => import("./schedule.js").FrameGrid|null} options.gridFor an item's frame grid.
   * @param {(options: object) => VideoPlayer} [options.makePlayer]
   * @param {{setTimeout, clearTimeout}} [options.timers]
   * @param {{createObjectURL, revokeObjectURL}} [options.urls]
   */
  constructor({ createVideo, library, clock, gridFor, makePlayer = (options) => new VideoPlayer(options), timers = globalThis, urls = globalThis.URL }) {
    this.createVideo = createVideo;
    this.library = library;
    this.clock = clock;
    this.gridFor = gridFor;
    this.makePlayer = makePlayer;
    this.timers = timers;
    this.urls = urls;
    this.decks = new Map(); // item -> {item, player, video, url, used}
    this.activeItem = null; // the item whose player speaks for the page
    this.shownItem = null; // the item whose element is on top
    this.preparedItem = null;
    this.spare = []; // elements of disposed players, reused
    this.useCounter = 0;
    this.running = false;
    /** Readiness of the group's player ("ready" | "loading" | "seeking" | "starved"). */
    this.onreadiness = () => {};
    /** Events (PlaybackEvent-like) of the group's player, and commandIgnored for items without a copy. */
    this.onevent = () => {};
    /** Notices of the group's player (player.js `onnotice`). */
    this.onnotice = () => {};
    /** The element on top changed: (video) => void. */
    this.onshown = () => {};
  }

  /** The player of the group's item, or null. */
  get active() {
    return this.decks.get(this.activeItem)?.player ?? null;
  }

  /** The element on top (the page's own before any player). */
  get video() {
    return this.decks.get(this.shownItem)?.video ?? null;
  }

  /** The active player's readiness ("loading" without one). */
  get readiness() {
    return this.active?.readiness ?? "loading";
  }

  get status() {
    return this.active?.status ?? null;
  }

  get thresholds() {
    return this.active?.thresholds ?? null;
  }

  samples() {
    return this.active?.samples() ?? [];
  }

  /** The items with a player now (tests, the hook). */
  get loadedItems() {
    return [...this.decks.keys()];
  }

  start() {
    this.running = true;
    for (const deck of this.decks.values()) deck.player.start();
  }

  stop() {
    this.running = false;
    for (const deck of this.decks.values()) deck.player.stop();
  }

  /**
   * Takes an element already loaded with `item` (the page's first copy, loaded while it joined) as
   * that item's player; `url` is its object URL, revoked with it.
   */
  adopt(item, video, url = null) {
    if (this.decks.has(item)) return;
    const deck = this.attach(item, video, url);
    deck.used = ++this.useCounter;
  }

  /**
   * Makes `item`'s player the one that speaks for the page, shown at once: the page's first item
   * (no transition to wait for).
   */
  show(item) {
    const deck = this.deckFor(item);
    if (deck === null) return false;
    this.activate(deck);
    this.bringToTop(deck);
    return true;
  }

  /** A coordinator command (PlaybackControlDelegate.handle): to the player of its item. */
  handle(command) {
    const item = command.expectedItemIdentifier;
    const deck = this.deckFor(item);
    if (deck === null) {
      this.onevent({
        type: "commandIgnored", realtime: Date.now() / 1000, originator: command.originator,
        originatorName: command.originatorName ?? null, item, revision: command.revision, detail: "no copy of the item",
      });
      return;
    }
    if (this.activeItem !== item) {
      const previous = this.decks.get(this.activeItem) ?? null;
      this.activate(deck);
      const instantMs = Number(command.referenceTime / 1000n) / 1000;
      if (previous !== null) this.stopAt(previous, instantMs);
      deck.player.handle(command);
      // The commands of one state come together (a seek, then the play or pause): once they are in,
      // the schedule says whether the new entry starts playing at the instant.
      queueMicrotask(() => this.revealWhenShowing(deck, instantMs, (deck.player.schedule?.motionAt(instantMs + 1)?.rate ?? 0) > 0));
      return;
    }
    deck.player.handle(command);
  }

  /**
   * The group moved to `item`, which this page has no copy of, at reference ms `atMs`: the group's
   * player stops there (holding its picture; the page says why) and nothing speaks for the page.
   */
  holdForeign(item, atMs) {
    const previous = this.decks.get(this.activeItem) ?? null;
    this.activeItem = null;
    if (previous !== null) this.stopAt(previous, atMs, () => previous.player.holdForeignItem(item));
  }

  /** Loads `item` into a spare element, paused on its first picture, to start on time later. */
  prepare(item) {
    if (item === null || item === undefined || this.decks.has(item) && this.preparedItem === item) return;
    const deck = this.deckFor(item);
    if (deck !== null) this.preparedItem = item;
  }

  // MARK: Private

  deckFor(item) {
    const known = this.decks.get(item);
    if (known !== undefined) {
      known.used = ++this.useCounter;
      return known;
    }
    const copy = this.library.copyFor(item);
    if (copy === null) return null;
    this.trim();
    const video = this.spare.pop() ?? this.createVideo();
    let url = null;
    let src = copy.source;
    if (typeof Blob !== "undefined" && copy.source instanceof Blob) {
      url = this.urls.createObjectURL(copy.source);
      src = url;
    }
    if (copy.crossOrigin) video.crossOrigin = "anonymous";
    else video.removeAttribute?.("crossorigin");
    video.src = src;
    video.load?.();
    const deck = this.attach(item, video, url);
    deck.used = ++this.useCounter;
    return deck;
  }

  attach(item, video, url) {
    const player = this.makePlayer({ video, clock: this.clock, item, grid: this.gridFor(item) });
    const deck = { item, player, video, url, used: 0, reveal: null };
    player.onreadiness = (readiness) => {
      if (this.activeItem === item) this.onreadiness(readiness);
    };
    player.onevent = (event) => {
      if (this.activeItem === item) this.onevent(event);
    };
    player.onnotice = (notice) => {
      if (this.activeItem === item || notice === null) this.onnotice(notice);
    };
    this.decks.set(item, deck);
    if (this.running) player.start();
    return deck;
  }

  activate(deck) {
    this.activeItem = deck.item;
    if (this.preparedItem === deck.item) this.preparedItem = null;
    this.onreadiness(deck.player.readiness);
  }

  bringToTop(deck) {
    this.shownItem = deck.item;
    for (const other of this.decks.values()) other.video.dataset.shown = String(other === deck);
    this.onshown(deck.video);
  }

  /**
   * Brings `deck`'s element on top once it shows a picture of its start: the first frame it presents
   * playing (requestVideoFrameCallback), or at the instant for a paused start; at the latest 400 ms
   * after the instant.
   */
  revealWhenShowing(deck, instantMs, playing) {
    const token = {};
    deck.reveal = token;
    const reveal = () => {
      if (deck.reveal !== token || this.decks.get(deck.item) !== deck) return;
      deck.reveal = null;
      if (this.activeItem === deck.item) this.bringToTop(deck);
    };
    const now = this.clock.nowMs() ?? instantMs;
    const video = deck.video;
    if (playing && typeof video.requestVideoFrameCallback === "function") {
      const watch = () => {
        video.requestVideoFrameCallback(() => {
          if (deck.reveal !== token) return;
          if (!video.paused && !video.seeking && (this.clock.nowMs() ?? Infinity) >= instantMs - 50) reveal();
          else watch();
        });
      };
      watch();
      this.timers.setTimeout(reveal, Math.max(0, instantMs - now) + 400);
    } else {
      this.timers.setTimeout(reveal, Math.max(0, instantMs - now));
    }
  }

  /**
   * Stops `deck`'s player at reference ms `atMs` (a pause at the item time it reaches then, which
   * replaces whatever its schedule held after it), then runs `then`.
   */
  stopAt(deck, atMs, then = null) {
    const motion = deck.player.schedule?.motionAt(atMs) ?? null;
    if (motion !== null && motion.rate > 0) {
      const itemTime = motion.itemTime + ((atMs - motion.referenceMs) / 1000) * motion.rate;
      deck.player.handle({
        kind: "pause", itemTime, referenceTime: msToNs(atMs), originator: motion.originator, expectedItemIdentifier: deck.item,
        revision: motion.revision,
      });
    }
    if (then !== null) {
      const now = this.clock.nowMs() ?? atMs;
      this.timers.setTimeout(() => {
        if (this.activeItem !== deck.item) then();
      }, Math.max(0, atMs - now) + 20);
    }
  }

  /** Keeps at most MAX_PLAYERS - 1 players before a new one: the least recently used goes (never the active or prepared one). */
  trim() {
    while (this.decks.size >= MAX_PLAYERS) {
      let oldest = null;
      for (const deck of this.decks.values()) {
        if (deck.item === this.activeItem || deck.item === this.preparedItem || deck.item === this.shownItem) continue;
        if (oldest === null || deck.used < oldest.used) oldest = deck;
      }
      if (oldest === null) return;
      this.dispose(oldest);
    }
  }

  dispose(deck) {
    deck.player.stop();
    this.decks.delete(deck.item);
    deck.video.removeAttribute?.("src");
    deck.video.load?.();
    deck.video.dataset.shown = "false";
    if (deck.url !== null) this.urls.revokeObjectURL(deck.url);
    this.spare.push(deck.video);
  }
}
