// The page's players for a queue (Web/static/player/deck.js): commands go to the player of their item, a
// change of item starts the new player at its instant while the previous one stops there, only the
// group's player speaks for the page, and at most MAX_PLAYERS elements are kept.

import { test } from "node:test";
import assert from "node:assert/strict";

import { MAX_PLAYERS, PlayerDeck } from "../../Web/static/player/deck.js";
import { MediaLibrary } from "../../Web/static/player/library.js";
import { CommandSchedule, msToNs } from "../../Web/static/player/schedule.js";
import { ManualTime } from "./fakes.mjs";

const fp = (size, c) => `v2:${size}:${c.repeat(64)}`;

class FakeElement {
  constructor(name) {
    this.name = name;
    this.dataset = {};
    this.src = null;
    this.loads = 0;
  }
  load() { this.loads += 1; }
  removeAttribute(name) { if (name === "src") this.src = null; }
}

class FakePlayer {
  constructor({ video, item }) {
    this.video = video;
    this.item = item;
    this.schedule = new CommandSchedule();
    this.commands = [];
    this.readiness = "loading";
    this.started = false;
    this.held = null;
    this.onreadiness = () => {};
    this.onevent = () => {};
    this.onnotice = () => {};
  }
  start() { this.started = true; }
  stop() { this.started = false; }
  handle(command) {
    this.commands.push(command);
    this.schedule.insert(command);
  }
  holdForeignItem(item) { this.held = item; }
  samples() { return [this.item]; }
  get status() { return { item: this.item }; }
}

function setup() {
  const time = new ManualTime(1_000_000);
  const library = new MediaLibrary();
  for (const [item, c] of [["A", "a"], ["B", "b"], ["C", "c"], ["D", "d"]]) {
    library.learn({ item, fingerprint: fp(100, c) });
    library.add({ fingerprint: fp(100, c), name: `${item}.mp4`, source: `file-${item}` });
  }
  const elements = [];
  const deck = new PlayerDeck({
    createVideo: () => {
      const element = new FakeElement(`v${elements.length}`);
      elements.push(element);
      return element;
    },
    library, clock: { nowMs: () => time.now, offsetMs: () => 0 }, gridFor: () => null,
    makePlayer: (options) => new FakePlayer(options), timers: time, urls: { createObjectURL: () => "blob:x", revokeObjectURL: () => {} },
  });
  const readiness = [];
  const events = [];
  deck.onreadiness = (r) => readiness.push(r);
  deck.onevent = (e) => events.push(e);
  deck.start();
  return { time, library, deck, elements, readiness, events };
}

const command = (kind, item, atMs, { itemTime = 0, rate = 1, revision = 1n } = {}) => ({
  kind, item, itemTime, referenceTime: msToNs(atMs), rate, originator: "host", expectedItemIdentifier: item, revision,
});

test("commands go to the player of their item; a new item starts at its instant while the previous stops there", async () => {
  const { time, deck, elements, readiness } = setup();
  deck.show("A");
  deck.handle(command("play", "A", time.now, { itemTime: 0, rate: 1 }));
  deck.handle(command("pause", "A", time.now + 10_000, { itemTime: 10, rate: 0 })); // the entry's end: its last picture
  assert.equal(deck.active.item, "A");
  assert.equal(deck.video, elements[0]);
  assert.equal(elements[0].src, "file-A");

  // Prepared ahead: loaded, but it does not speak for the page.
  deck.prepare("B");
  assert.deepEqual(deck.loadedItems, ["A", "B"]);
  assert.equal(elements[1].src, "file-B");
  deck.decks.get("B").player.onreadiness("seeking");
  assert.deepEqual(readiness, ["loading"], "a preloading element's readiness is not the page's");

  // The transition at the end instant (the state's anchor, 10 s after A started).
  const end = time.now + 10_000;
  deck.handle(command("seek", "B", end, { itemTime: 0 }));
  deck.handle(command("play", "B", end, { itemTime: 0, rate: 1 }));
  assert.equal(deck.active.item, "B");
  assert.equal(deck.video, elements[0], "A stays on top until B shows a picture");
  assert.deepEqual(deck.decks.get("B").player.commands.map((c) => c.kind), ["seek", "play"]);
  // A already held its last picture at the end: nothing added.
  assert.deepEqual(deck.decks.get("A").player.commands.map((c) => c.kind), ["play", "pause"]);
  await time.advance(10_000 + 400);
  assert.equal(deck.video, elements[1], "B on top (no frame callback here: at the latest 400 ms after the instant)");
  assert.equal(elements[1].dataset.shown, "true");
  assert.equal(elements[0].dataset.shown, "false");
});

test("a jump while playing stops the previous player at the new state's instant", () => {
  const { time, deck } = setup();
  deck.show("A");
  deck.handle(command("play", "A", time.now, { itemTime: 5, rate: 1 }));
  const at = time.now + 2000;
  deck.handle(command("seek", "C", at));
  deck.handle(command("play", "C", at));
  const stops = deck.decks.get("A").player.commands.filter((c) => c.kind === "pause");
  assert.equal(stops.length, 1);
  assert.equal(stops[0].referenceTime, msToNs(at));
  assert.ok(Math.abs(stops[0].itemTime - 7) < 1e-9, `A stops at the item time it reaches then (${stops[0].itemTime})`);
});

test("an item without a copy: commandIgnored; holdForeign stops the group's player at the instant and holds it", async () => {
  const { time, deck, events } = setup();
  deck.show("A");
  deck.handle(command("play", "A", time.now, { itemTime: 0 }));
  deck.handle(command("play", "Z", time.now + 100));
  assert.equal(events.at(-1).type, "commandIgnored");
  assert.equal(events.at(-1).item, "Z");
  deck.holdForeign("Z", time.now + 1000);
  assert.equal(deck.active, null, "nothing speaks for the page");
  assert.equal(deck.decks.get("A").player.commands.at(-1).kind, "pause");
  await time.advance(1100);
  assert.equal(deck.decks.get("A").player.held, "Z");
  // The group comes back to A: A speaks again.
  deck.handle(command("play", "A", time.now + 500, { itemTime: 0, revision: 2n }));
  assert.equal(deck.active.item, "A");
});

test("at most MAX_PLAYERS players: the least recently used goes, never the group's, the prepared or the shown one", () => {
  const { time, deck, elements } = setup();
  deck.show("A");
  deck.prepare("B");
  deck.handle(command("play", "B", time.now + 100));
  deck.prepare("C");
  assert.equal(deck.loadedItems.length, MAX_PLAYERS);
  deck.prepare("D");
  assert.ok(deck.loadedItems.includes("B") && deck.loadedItems.includes("C") && deck.loadedItems.includes("D"), deck.loadedItems.join());
  assert.ok(!deck.loadedItems.includes("A") || deck.shownItem === "A", "A went unless it is still on top");
  assert.ok(deck.loadedItems.length <= MAX_PLAYERS + 1);
  // Elements are reused, not piled up.
  assert.ok(elements.length <= MAX_PLAYERS + 1, `${elements.length} elements`);
});
