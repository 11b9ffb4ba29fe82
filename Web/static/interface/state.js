// The page's state (interface/, split from app.js): what the page knows (`state`), the person's copies
// (`library`), the parts main() makes as it goes (session, clock, shell, players, chat, roles: live
// bindings the other modules read; only app.js sets them, with `assign`), and the small helpers every
// panel uses (`$`, the element on screen, whether this page's commands count, the clocks).

import { browserLocalNTP } from "../sync/clock.js";
import { MediaLibrary } from "../player/library.js";

export const $ = (id) => document.getElementById(id);
export const video = $("video"); // the page's first element (deck.js adds one per item it plays)
/** The element on screen: the one showing the group's entry. */
export const shownVideo = () => player?.video ?? video;

export const state = {
  phase: "starting", // starting | connecting | syncing | media | checking | joining | joined | reconnecting | mismatch | error | ended | removed | leftBehind
  participantId: null,
  joined: false,
  lastError: null,
  events: [],
  activity: null,
  media: null, // {name, fingerprint, size, source}
  name: null,
  intendedRate: 1,
  trims: 0,
  sawGroupState: false,
  halted: false, // the page gave up before joining: nothing more is loaded
  stopped: false, // the page stopped following its session for good (removed, left behind, the session over): its panels show nothing live
  moving: false, // a host removed someone and the page is joining the successor session (the old one's end is expected)
  missing: null, // {item, entry, suspension (a promise of its id)}: the group plays an entry this page has no copy of
  // The page joined with files none of which is the session's first item (copies.js reviewCoverage):
  // {files (their names), notice (queuepanel.js coverageNotice, once the queue is in), key}; else null.
  coverage: null,
  ownVideoFree: false, // the page's own <video> was not given the first item: deck.js takes it for the first entry it plays
};

/** The person's copies of the group's items (library.js). */
export const library = new MediaLibrary();

export let session = null;
export let syncedClock = null;
export let timeClient = null;
export let shell = null;
export let player = null; // a PlayerDeck (deck.js): one VideoPlayer per item this page plays
export let pollAbort = null;
export let chat = null; // the chat box (chatpanel.js)
export let roles = null; // a RolesGate (roles.js) where only hosts control, else null

/** Whether this page's commands count: always where everyone controls; with the host key or a grant where only hosts do. */
export const mayControl = () => roles === null || roles.controls;

export const localMs = () => performance.timeOrigin + performance.now();
export const offsetMs = () => (syncedClock?.isSynchronized ? syncedClock.correction(browserLocalNTP()) * 1000 : 0);

/**
 * Sets the parts main() makes as it goes (app.js, the only caller): any of `session`, `syncedClock`,
 * `timeClient`, `shell`, `player`, `pollAbort`, `chat`, `roles`. The other modules read them as live bindings.
 */
export function assign(parts) {
  for (const [key, value] of Object.entries(parts)) {
    switch (key) {
      case "session": session = value; break;
      case "syncedClock": syncedClock = value; break;
      case "timeClient": timeClient = value; break;
      case "shell": shell = value; break;
      case "player": player = value; break;
      case "pollAbort": pollAbort = value; break;
      case "chat": chat = value; break;
      case "roles": roles = value; break;
      default: throw new Error(`assign: no part named ${key}`);
    }
  }
}
