// The page: wires the JavaScript core (session, channel, clock, coordinator shell) to the <video>
// adapter and the UI. Everything the page needs comes from its URL's fragment (pageurl.js); the
// invite's secret only ever leaves this module as keys derived by crypto.js. Nothing here logs it.
//
// Flow: parse the fragment -> connect to the relay's WebSocket on this origin (hello / welcome,
// retained frames: the session's activity and the group's state) -> synchronize the clock over the
// WebSocket while the person picks their copy of the media (or the `media` URL is fetched) -> check
// its fingerprint against the activity -> join -> coordinate (shell.js + player.js).
//
// Test and bench hook: `window.coplayPage` (read-only state and `control.{play,pause,seek,rate}`).

import { fromUTF8 } from "../wire/bytes.js";
import { GroupSessionCoordinationChannel } from "../sync/channel.js";
import { ChatPanel } from "./chatpanel.js";
import { SyncedClock, TimeClient, TimeExchange, browserLocalNTP, errorBound } from "../sync/clock.js";
import { fingerprintOfBlob, fingerprintOfURL, fingerprintsMatch, parseFingerprint } from "../player/fingerprint.js";
import { RelayErrorCode } from "../wire/frame.js";
import { AEADSuite, onlyHostsControl, parseInvite } from "../wire/invite.js";
import { fileNameOfURL, parseFragment, resolveMediaURL, webSocketURL } from "./pageurl.js";
import { PlayerDeck } from "../player/deck.js";
import { MediaLibrary, isMediaFile } from "../player/library.js";
import {
  dropEdit, durationText, entriesForCopies, entryToPrepare, missingNotice, moveEdit, nextEntryWithCopy, nextRepeatMode, queueView,
} from "./queuepanel.js";
import { FrameGrid, nsToMs } from "../player/schedule.js";
import { GroupSession, openWebSocket } from "../session/session.js";
import { CoordinatorShell } from "../sync/shell.js";
import { NOTICE_LEVELS, Notices } from "../sync/notices.js";
import { ONLY_HOSTS, RolesGate, listenForRoles, uncheckedBodies } from "../sync/roles.js";
import { COORDINATION_MESSAGE_NAME } from "../sync/messages.js";
import { parsePosition, shownPosition } from "./transport.js";

// MARK: State

const $ = (id) => document.getElementById(id);
const video = $("video"); // the page's first element (deck.js adds one per item it plays)
/** The element on screen: the one showing the group's entry. */
const shownVideo = () => player?.video ?? video;

const state = {
  phase: "starting", // starting | connecting | syncing | media | checking | joining | joined | reconnecting | mismatch | error | ended
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
  missing: null, // {item, entry, suspension (a promise of its id)}: the group plays an entry this page has no copy of
};

/** The person's copies of the group's items (library.js). */
const library = new MediaLibrary();

let session = null;
let syncedClock = null;
let timeClient = null;
let shell = null;
let player = null; // a PlayerDeck (deck.js): one VideoPlayer per item this page plays
let pollAbort = null;
let chat = null; // the chat box (chatpanel.js)
let roles = null; // a RolesGate (roles.js) where only hosts control, else null

/** Whether this page's commands count: always where everyone controls; with the host key or a grant where only hosts do. */
const mayControl = () => roles === null || roles.controls;

const localMs = () => performance.timeOrigin + performance.now();
const offsetMs = () => (syncedClock?.isSynchronized ? syncedClock.correction(browserLocalNTP()) * 1000 : 0);

// MARK: The test hook

const control = Object.freeze({
  play: () => act(() => (state.intendedRate !== (shell?.state?.intendedRate ?? 1) ? shell.rate(state.intendedRate) : shell.play())),
  pause: () => act(() => shell.pause()),
  // Seconds, or a time as people type it ("1:30", "1:02:03", "90"; transport.js).
  seek: (t) => {
    const seconds = typeof t === "string" ? parsePosition(t) : Number(t);
    if (seconds === null || !Number.isFinite(seconds)) return Promise.resolve(logLine(`Not a time: ${t}`, "warn"));
    return act(() => shell.seek(Math.max(0, seconds)));
  },
  rate: (r) => setRate(Number(r)),
  next: () => act(() => shell.next()),
  previous: () => act(() => shell.previous()),
  // A 1-based position in the queue's play order, as the panel numbers it.
  jump: (position) => act(() => shell.jump(Number(position))),
  // Sends a chat message as the box does; resolves once the relay confirmed it (rejects with the error it shows).
  chat: (text) => (chat === null ? Promise.reject(new Error("chat: not connected")) : chat.send(text)),
  repeat: (mode) => editQueue({ op: "repeat", mode }),
  shuffle: (on) => editQueue({ op: "shuffle", seed: on ? randomSeed() : null }),
  // Tests: a pause sent past this page's own gate, as a page without control could send it (unsigned,
  // and signed with its member key); members that check roles ignore both.
  forcedPause: () => forcedPause(),
});

window.coplayPage = Object.freeze({
  get phase() { return state.phase; },
  get participantId() { return state.participantId; },
  get joined() { return state.joined; },
  get clock() {
    const synced = syncedClock?.isSynchronized ?? false;
    return { offsetMs: synced ? offsetMs() : null, errorMs: synced ? syncedClock.errorBound * 1000 : null, synced };
  },
  get lastError() { return state.lastError; },
  // Originators by name where the name is known by now (a member's first events carry its id: it
  // announces its name in its first presence report, just after it joined).
  get events() { return state.events.map((e) => ({ ...e, ...(isParticipantID(e.originator) && shell !== null ? { originator: shell.label(e.originator) } : {}) })); },
  get sync() { return player === null ? null : { ...player.status, trims: state.trims }; },
  get group() {
    const s = shell?.state;
    return s ? { item: s.item, rate: s.rate, itemTime: shell.currentItemTime, revision: String(s.revision), waiting: shell.isWaiting } : null;
  },
  get activity() { return state.activity === null ? null : { ...state.activity }; },
  // The queue as the panel shows it (queuepanel.js queueView), the entry the group plays, the entry
  // this page has no copy of (null when it has the group's), the items with a loaded element and
  // the element on top (its item).
  get queue() {
    if (shell === null) return null;
    return {
      ...currentQueueView(), playing: shell.state?.entry ?? null,
      missing: state.missing === null ? null : { item: state.missing.item, title: state.missing.entry?.title ?? null },
      loaded: player?.loadedItems ?? [], shown: player?.shownItem ?? null, copies: library.copies.map((c) => c.name),
    };
  },
  samples: () => (player === null ? [] : player.samples()),
  // The notices over the video now, oldest first, and every notice shown so far.
  get notices() { return { shown: [...$("notices").children].map((li) => li.textContent), all: [...noticeBoard.all] }; },
  // The chat box: entries {who, label, text, key, history, own, sentAtMs}, ignored messages by reason, this page's key tag.
  get chat() { return chat?.view ?? null; },
  // Where only hosts control: whether this page controls (holds the host key), the keys granted, what the gate ignored by reason.
  get roles() {
    return roles === null ? null : { controls: roles.controls, host: roles.isHost, granted: roles.book.granted, ignored: { ...roles.ignored } };
  },
  control,
});

// MARK: Status, banner, log

const PHASES = {
  starting: ["Starting", "busy"],
  connecting: ["Connecting", "busy"],
  syncing: ["Syncing clock", "busy"],
  media: ["Waiting for the video", "busy"],
  checking: ["Checking the video", "busy"],
  joining: ["Joining", "busy"],
  joined: ["Joined", "good"],
  reconnecting: ["Reconnecting", "busy"],
  mismatch: ["Wrong video", "bad"],
  error: ["Not connected", "bad"],
  ended: ["Session over", "bad"],
};

function setPhase(phase) {
  state.phase = phase;
  const [text, tone] = PHASES[phase] ?? [phase, "busy"];
  $("status-text").textContent = text;
  $("status").dataset.tone = tone;
  updateControls();
}

/** Shows the banner; `actions` are [{label, run, primary}]. */
function showBanner(title, text, { tone = "bad", actions = [] } = {}) {
  const banner = $("banner");
  banner.dataset.tone = tone;
  $("banner-title").textContent = title;
  $("banner-text").textContent = text;
  const box = $("banner-actions");
  box.replaceChildren();
  for (const action of actions) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = action.primary ? "button primary" : "button";
    button.textContent = action.label;
    button.addEventListener("click", action.run);
    box.append(button);
  }
  banner.hidden = false;
}

function hideBanner() {
  $("banner").hidden = true;
}

function fail(title, text, options = {}) {
  state.lastError = { title, text };
  showBanner(title, text, options);
  logLine(`${title}: ${text}`, "bad");
}

const reload = { label: "Try again", run: () => location.reload(), primary: true };

function clockText(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) seconds = 0;
  const whole = Math.floor(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

function preciseTime(seconds) {
  return `${clockText(seconds)}.${String(Math.floor(((seconds % 1) + 1) % 1 * 10))}`;
}

/** Keeps an entry in the hook's events (the last 500). */
function keepEvent(entry) {
  state.events.push(entry);
  if (state.events.length > 500) state.events.splice(0, state.events.length - 500);
}

/**
 * Adds a line to the event log (and to the hook's events when `event` is given). With `subject` (a
 * member's label: its name, or its 16-hex-digit id while its name is not known yet) the line starts
 * with that member, shown by name as soon as the name is known (members announce it just after
 * joining, so their first events name them by id).
 */
function logLine(text, kind = "info", event = null, subject = undefined) {
  const hasSubject = subject !== undefined;
  const fullText = hasSubject ? `${who(subject)} ${text}` : text;
  const entry = { ...(event ?? { type: "note" }), text: fullText, kind, realtime: event?.realtime ?? Date.now() / 1000 };
  keepEvent(entry);
  const li = document.createElement("li");
  li.dataset.kind = kind;
  const time = document.createElement("time");
  time.textContent = new Date(entry.realtime * 1000).toLocaleTimeString([], { hour12: false });
  const span = document.createElement("span");
  if (hasSubject) {
    const name = document.createElement("b");
    name.className = "who";
    name.textContent = who(subject);
    if (isParticipantID(subject)) name.dataset.member = subject;
    span.append(name, " " + text);
  } else {
    span.textContent = text;
  }
  li.append(time, span);
  const log = $("log");
  log.prepend(li);
  while (log.children.length > 200) log.lastChild.remove();
}

const isParticipantID = (label) => typeof label === "string" && /^[0-9a-f]{16}$/.test(label);

function who(label) {
  if (label === undefined || label === null) return "Someone";
  if (label === state.name) return `${label} (you)`;
  return isParticipantID(label) ? `member ${label.slice(-4)}` : label;
}

/** How a log line names an event's originator: its name when the event carries one, else its id. */
function originatorLabel(event) {
  return event.originatorName ?? event.originator;
}

/** Members whose `joined` line waits for their name: id -> {event, since}. */
const pendingJoins = new Map();

/** Prints the waiting `joined` lines whose member is named now, or that waited 3 s. */
function flushPendingJoins() {
  for (const [member, { event, since }] of pendingJoins) {
    const label = shell?.label(member) ?? member;
    if (isParticipantID(label) && performance.now() - since < 3000) continue;
    pendingJoins.delete(member);
    logLine("joined", "member", event, label);
  }
}

/** Log lines that named a member by id: by name once it is known. */
function renameLogMembers() {
  if (shell === null) return;
  for (const element of $("log").querySelectorAll("[data-member]")) {
    const label = shell.label(element.dataset.member);
    if (label === element.dataset.member) continue;
    element.textContent = who(label);
    delete element.dataset.member;
  }
}

// The events of accepted commands, queue commands included (the first of them is the group's state
// as the page found it).
const COMMAND_EVENTS = new Set(["play", "pause", "seek", "rate", "item", "next", "previous", "jump"]);

// MARK: Notices over the video

/** Its words (notices.js, the same as mpv's on-screen notices), and what was shown. */
const notices = new Notices({ level: savedNoticeLevel() });
const noticeBoard = { all: [], duration: 5000, capacity: 4 };

function savedNoticeLevel() {
  try {
    const saved = localStorage.getItem("coplay.notices");
    return NOTICE_LEVELS.includes(saved) ? saved : "all";
  } catch {
    return "all";
  }
}

/** Shows the notice of `event` (if it is one at the chosen level) over the video for a few seconds. */
function showNotice(event) {
  notices.local = state.participantId;
  for (const entry of shell?.queue?.entries ?? []) notices.titles[entry.id] = entry.title;
  if (state.activity !== null) notices.titles[state.activity.item] ??= state.activity.title;
  const text = notices.notice(event);
  if (text === null) return;
  noticeBoard.all.push(text);
  if (noticeBoard.all.length > 200) noticeBoard.all.splice(0, noticeBoard.all.length - 200);
  const list = $("notices");
  const li = document.createElement("li");
  li.textContent = text;
  list.append(li);
  while (list.children.length > noticeBoard.capacity) list.firstChild.remove();
  setTimeout(() => {
    li.classList.add("leaving");
    setTimeout(() => li.remove(), 400);
  }, noticeBoard.duration);
}

/** Coordinator and player events -> log lines (and notices over the video). */
function onPlaybackEvent(event) {
  showNotice(event);
  // This page's player jumped back into step from far off (the computer slept): the others hear of it.
  if (event.type === "correction" && event.detail === "seek" && Math.abs(event.errorMs ?? 0) >= 2000) shell?.noteCaughtUp(event.errorMs / 1000);
  if (COMMAND_EVENTS.has(event.type) && !state.sawGroupState) {
    // The first state is the group's as the page found it (retained at the relay), not something
    // someone just did.
    state.sawGroupState = true;
    const where = preciseTime(event.itemTime);
    logLine(event.rate > 0 ? `The group is playing (from ${where}${event.rate !== 1 ? ` at ${event.rate}×` : ""})` : `The group is paused at ${where}`, "info", event);
    updateUI();
    followEntry();
    return;
  }
  switch (event.type) {
    case "joined":
      // A member names itself in its first presence report, a moment after joining: its line waits for
      // the name (up to 3 s). One that leaves unnamed only sent something (`coplay chat`): no lines.
      if (event.originator !== state.participantId && isParticipantID(shell?.label(event.originator) ?? event.originator)) {
        pendingJoins.set(event.originator, { event, since: performance.now() });
      } else {
        logLine("joined", "member", event, originatorLabel(event));
      }
      break;
    case "left":
      flushPendingJoins();
      if (pendingJoins.delete(event.originator)) break;
      logLine("left", "member", event, originatorLabel(event));
      break;
    case "play":
      logLine(`played from ${preciseTime(event.itemTime)}${event.rate !== 1 ? ` at ${event.rate}×` : ""}`, "command", event, originatorLabel(event));
      break;
    case "pause":
      logLine(`paused at ${preciseTime(event.itemTime)}`, "command", event, originatorLabel(event));
      break;
    case "seek":
      logLine(`moved to ${preciseTime(event.itemTime)}`, "command", event, originatorLabel(event));
      break;
    case "rate":
      logLine(`set the speed to ${event.rate}×`, "command", event, originatorLabel(event));
      break;
    case "item":
      logLine("switched the video", "command", event, originatorLabel(event));
      break;
    case "next":
      logLine(`moved everyone to the next entry, ${entryName(event)}`, "command", event, originatorLabel(event));
      break;
    case "previous":
      logLine(`went back to ${entryName(event)}`, "command", event, originatorLabel(event));
      break;
    case "jump":
      logLine(`jumped to ${entryName(event)}`, "command", event, originatorLabel(event));
      break;
    case "itemChanged":
      if (event.reason === "end") logLine(`Now playing ${entryName(event)}`, "info", event);
      else if (event.detail && event.entry === null) logLine(`The group now plays ${event.item === state.activity?.item ? state.activity?.title ?? "this video" : "another video"}`, "info", event);
      followEntry();
      break;
    case "queueChanged":
      if (event.detail !== "received") logLine(queueChangeText(event.detail), "command", event, event.originator === null ? undefined : originatorLabel(event));
      onQueueChanged();
      break;
    case "itemEnded":
      logLine(`The video ended at ${preciseTime(event.itemTime)}: everyone holds its last frame`, "info", event);
      break;
    case "commandIgnored":
      // The group plays an item this page has no copy of (or not yet: the core names it before the
      // queue arrived): followEntry says which entry and asks for it.
      followEntry();
      break;
    case "suspensionBegan":
      logLine(`is ${reasonText(event.reason)}${event.waits ? " — everyone waits" : ""}`, "warn", event, originatorLabel(event));
      break;
    case "suspensionEnded":
      logLine(event.timedOut ? "took too long; the group goes on" : "is ready again", event.timedOut ? "warn" : "info", event, originatorLabel(event));
      break;
    case "caughtUp":
      {
        const seconds = Math.round(Math.abs(event.errorMs ?? 0) / 1000);
        logLine(event.errorMs < 0 ? `caught up after ${seconds} s away` : `was ${seconds} s ahead and jumped back in step`, "info", event, originatorLabel(event));
      }
      break;
    case "unsupportedMessage":
      // A member runs a newer coplay: say so once (the coordinator reports each sender, kind and version once).
      logLine(`sent a ${event.detail}`, "warn", event, originatorLabel(event));
      break;
    case "correction":
      if (event.detail === "seek" && event.afterStart) {
        // A start's own adjustment, not the page losing the group: with an audio track Chromium's media
        // clock starts with the audio output, tens of ms after play() and differently each time.
        logLine(`Start adjusted with a seek (was ${signedMs(event.errorMs)})`, "info", event);
      } else if (event.detail === "seek") logLine(`Resynchronized with a seek (was ${signedMs(event.errorMs)})`, "warn", event);
      else if (event.detail === "restart") {
        // A start whose first frames were off, done again at once: kept for the hook, not logged.
        keepEvent({ ...event, text: `start redone (was ${signedMs(event.errorMs)})`, kind: "correction" });
      } else {
        state.trims += 1; // speed trims are frequent: counted, kept in the hook's events, not logged
        keepEvent({ ...event, text: "trim", kind: "correction" });
      }
      break;
    case "stopped":
      // The frame this page stopped on (compared with the other members' `stopped` lines): kept for the hook, not logged.
      keepEvent({ ...event, text: `stopped at frame ${event.index ?? "?"}`, kind: "stopped" });
      break;
    default:
      break;
  }
  updateUI();
}

/** An entry as log lines name it: “Title”, from the event's entry id (else its item). */
function entryName(event) {
  const entry = event.entry ? shell?.queue.entry(event.entry) : null;
  if (entry) return `“${entry.title}”`;
  if (event.item === state.activity?.item) return `“${state.activity.title}”`;
  return "another video";
}

/** A queue edit as the log says it (CoordinatorCore.describe's words, as people say them). */
function queueChangeText(detail) {
  const text = String(detail ?? "changed the queue");
  if (text.startsWith("repeat ")) return `set repeat to ${text.slice(7)}`;
  if (text === "shuffle on") return "turned shuffle on";
  if (text === "shuffle off") return "turned shuffle off";
  return text.replace(/^(added|removed) 1 /, "$1 one ").replace(/^removed 1$/, "removed an entry").replace(/^removed (\d+)$/, "removed $1 entries");
}

function reasonText(reason) {
  if (reason === "buffering") return "loading";
  if (reason === "stallRecovery") return "stalled";
  if (reason === "playingInterstitial") return "playing something else";
  if (reason === "coordinatedPlaybackNotPossible") return "not following";
  if (reason === "userActionRequired") return "waiting for a click";
  return String(reason ?? "away").replace(/^custom:/, "");
}

function signedMs(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  const abs = Math.abs(ms);
  const digits = abs < 10 ? 2 : abs < 100 ? 1 : 0;
  return `${ms >= 0 ? "+" : "−"}${abs.toFixed(digits)} ms`;
}

// MARK: Controls

async function act(run) {
  if (shell === null || !state.joined) {
    logLine("Not joined yet", "warn");
    return;
  }
  if (!mayControl()) {
    logLine(`Not sent: ${ONLY_HOSTS}`, "warn");
    return;
  }
  try {
    await run();
  } catch (error) {
    logLine(`Could not send the command: ${error?.message ?? error}`, "bad");
  }
}

async function setRate(rate) {
  if (!(rate > 0) || !Number.isFinite(rate)) return;
  state.intendedRate = rate;
  $("rate").value = String(rate);
  // While the group is paused a rate would start it: keep it for the next play.
  if ((shell?.state?.rate ?? 0) > 0) await act(() => shell.rate(rate));
}

function togglePlay() {
  if ((shell?.state?.rate ?? 0) > 0) control.pause();
  else control.play();
}

function bindControls() {
  $("play").addEventListener("click", togglePlay);
  $("next").addEventListener("click", () => control.next());
  $("previous").addEventListener("click", () => control.previous());
  $("rate").addEventListener("change", (e) => setRate(Number(e.target.value)));
  $("notice-level").value = notices.level;
  $("notice-level").addEventListener("change", (e) => {
    notices.level = e.target.value;
    try {
      localStorage.setItem("coplay.notices", notices.level);
    } catch {
      // A page without storage keeps the choice until it is closed.
    }
  });
  const seek = $("seek");
  seek.addEventListener("input", () => {
    seek.dataset.dragging = "true";
    $("time").value = clockText(Number(seek.value));
    seek.style.setProperty("--progress", `${(Number(seek.value) / Number(seek.max || 1)) * 100}%`);
  });
  seek.addEventListener("change", () => {
    delete seek.dataset.dragging;
    control.seek(Number(seek.value));
  });
  // The time is also a field: type a position (1:30, 1:02:03, 90) and press Enter to take the group there.
  const time = $("time");
  time.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      const seconds = parsePosition(time.value);
      if (seconds === null) {
        time.setAttribute("aria-invalid", "true");
        logLine(`“${time.value}” is not a time: type 1:30, 1:02:03 or seconds`, "warn");
        return;
      }
      time.removeAttribute("aria-invalid");
      time.blur();
      control.seek(seconds);
    } else if (e.key === "Escape") {
      time.removeAttribute("aria-invalid");
      time.blur();
      updateUI();
    }
  });
  time.addEventListener("focus", () => time.select());
  time.addEventListener("blur", () => time.removeAttribute("aria-invalid"));
  $("unmute").addEventListener("click", () => {
    state.unmuted = true;
    for (const element of document.querySelectorAll("#screen video")) element.muted = false;
    $("unmute").hidden = true;
  });
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === " " || e.key === "k") {
      e.preventDefault();
      togglePlay();
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault();
      const now = shell?.currentItemTime ?? shownVideo().currentTime;
      control.seek(Math.max(0, now + (e.key === "ArrowLeft" ? -5 : 5)));
    }
  });
  if ("mediaSession" in navigator) {
    try {
      navigator.mediaSession.setActionHandler("play", () => control.play());
      navigator.mediaSession.setActionHandler("pause", () => control.pause());
    } catch {
      // not supported
    }
  }
}

function updateControls() {
  const live = state.joined && state.phase === "joined" && mayControl();
  $("play").disabled = !live;
  $("seek").disabled = !live;
  $("time").disabled = !live;
  $("rate").disabled = !live;
  // Where only hosts control, a page without control says why its controls are off.
  const viewer = roles !== null && !roles.controls;
  $("control-hint").hidden = !viewer;
  $("controls").dataset.viewer = String(viewer);
  for (const id of ["play", "seek", "time", "rate"]) {
    const element = $(id);
    element.dataset.title ??= element.title;
    element.title = viewer ? ONLY_HOSTS : element.dataset.title;
  }
  updateQueuePanel();
}

// MARK: Roles (roles.js): who may control where only hosts do

/**
 * A grant or revocation the gate accepted (a `roleChanged` event, as Swift's RoleGate tells it): a log
 * line, a notice once joined (the statements kept by the relay arrive before: not news), the controls.
 */
function onRole(event) {
  const name = event.own ? `${event.text} (you)` : event.text;
  logLine(event.detail === "grant" ? `${name} may control the session now` : `${name} no longer controls the session`, "info", { ...event, realtime: Date.now() / 1000 });
  if (state.joined) showNotice(event);
  updateControls();
}

async function forcedPause() {
  if (shell === null || !state.joined) throw new Error("not joined");
  const [action] = shell.core.proposeRate(0, shell.synchronizedNow());
  for (const body of await uncheckedBodies(action.message, chat?.key ?? null, session.invite.session, session.participant)) {
    await session.sendMessage(COORDINATION_MESSAGE_NAME, body);
  }
}

// MARK: Periodic UI

function avatarColor(id) {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) % 360;
  return `hsl(${h} 70% 68%)`;
}

/**
 * How good a sync error is: "good" within the player's dead band (+1 ms: what rVFC shows of the media
 * clock moves in 3.3 ms steps, so a few ms is as good as a browser gets), "warn" within a frame, else "bad".
 */
function syncTone(errorMs) {
  const abs = Math.abs(errorMs);
  const band = player?.thresholds?.deadbandMs ?? 4;
  const frameMs = (FrameGrid.fromActivity(state.activity)?.interval ?? 0.04) * 1000;
  if (abs <= band + 1) return "good";
  return abs <= Math.max(frameMs, band + 1) ? "warn" : "bad";
}

/**
 * A member's reported delay for the people list. The report is the largest one-way delay the member saw
 * over its last 64 presence reports (about a minute); across a relay restart that includes messages held
 * during the outage (seconds), which is not the path's delay. Above the coordinator's largest lead (2 s)
 * no delay can be a path's, so the list says what it is instead of showing "delay 5423.3 ms" for a minute.
 */
function delayText(delayMs) {
  if (delayMs > 2000) return "delay — (held during a reconnect)";
  return `delay ${delayMs.toFixed(1)} ms`;
}

function updatePeople() {
  const list = $("people");
  if (shell === null) return;
  const group = shell.state;
  const members = shell.members().filter((m) => m.joined || m.local);
  $("people-count").textContent = members.length > 0 ? String(members.length) : "";
  const items = members.map((m) => {
    const li = document.createElement("li");
    const label = m.name ?? `member ${m.id.slice(-4)}`;
    const avatar = document.createElement("span");
    avatar.className = "avatar";
    avatar.style.background = avatarColor(m.id);
    avatar.textContent = label.slice(0, 1).toUpperCase();
    const person = document.createElement("div");
    person.className = "person";
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = label;
    if (m.local) {
      const small = document.createElement("small");
      small.textContent = " (you)";
      name.append(small);
    }
    const detail = document.createElement("span");
    detail.className = "detail";
    const badge = document.createElement("span");
    badge.className = "badge";
    let badgeText = "in sync";
    let tone = "good";
    const details = [];
    if (m.suspended.length > 0) {
      badgeText = reasonText(m.suspended[0].reason);
      tone = "warn";
      details.push(m.suspended[0].waits ? "the group waits" : "not waited for");
    } else if (group !== null && m.item !== null && m.item !== group.item) {
      badgeText = "other video";
      tone = "warn";
    } else if (m.local) {
      const sync = player?.status;
      if (sync?.foreignItem) {
        badgeText = "other video";
        tone = "warn";
      } else if (sync?.ended) {
        badgeText = "at the end";
        tone = "";
      } else if (sync?.errorMs !== null && sync?.errorMs !== undefined) {
        badgeText = signedMs(sync.errorMs);
        tone = syncTone(sync.errorMs);
      } else {
        badgeText = group !== null && group.rate > 0 ? "starting" : "paused";
        tone = "";
      }
    } else if (group === null || group.rate === 0) {
      badgeText = "paused";
      tone = "";
    }
    if (m.delayMs !== null && !m.local) details.push(delayText(m.delayMs));
    if (m.local) details.push(state.missing !== null ? `no copy of “${state.missing.entry?.title ?? "this video"}”` : (library.copyFor(group?.item ?? "")?.name ?? state.media?.name ?? ""));
    detail.textContent = details.filter(Boolean).join(" · ") || (m.local ? "this browser" : "member");
    person.append(name, detail);
    badge.textContent = badgeText;
    if (tone) badge.dataset.tone = tone;
    li.append(avatar, person, badge);
    return li;
  });
  list.replaceChildren(...items);
}

function updateUI() {
  const clock = window.coplayPage.clock;
  $("clock-offset").textContent = clock.synced ? `${clock.offsetMs >= 0 ? "+" : "−"}${Math.abs(clock.offsetMs).toFixed(3)} ms` : "—";
  $("clock-error").textContent = clock.synced ? `±${clock.errorMs.toFixed(3)} ms` : "—";
  const sync = player?.status ?? null;
  const errorValue = $("sync-error");
  if (sync !== null && sync.errorMs !== null) {
    errorValue.textContent = signedMs(sync.errorMs);
    errorValue.dataset.tone = syncTone(sync.errorMs);
    $("sync-label").textContent = sync.errorMs >= 0 ? "ahead of the group" : "behind the group";
  } else {
    errorValue.textContent = "—";
    delete errorValue.dataset.tone;
    $("sync-label").textContent = state.joined ? "measured while playing" : "error vs the group";
  }
  $("trim").textContent = sync !== null && sync.playing ? `${((sync.trim - 1) * 100).toFixed(2)} %` : "—";
  const group = shell?.state ?? null;
  const waiting = shell?.isWaiting ?? false;
  const ended = shell?.hasEnded ?? false;
  $("group-state").textContent = group === null ? "—" : ended ? "at the end" : waiting ? "waiting" : group.rate > 0 ? `playing ${group.rate}×` : "paused";
  const playing = group !== null && group.rate > 0 && !ended;
  $("play").dataset.playing = String(playing);
  $("play").setAttribute("aria-label", playing ? "Pause" : "Play");
  if (group !== null && group.rate > 0 && String(group.rate) !== $("rate").value) {
    state.intendedRate = group.rate;
    $("rate").value = String(group.rate);
  }

  const shown = shownVideo();
  const entryTitle = shell?.currentEntry?.title ?? null;
  if (state.joined && state.activity !== null) $("title").textContent = entryTitle ?? state.activity.title ?? state.media?.name ?? "Watch together";
  const groupDuration = shell?.state?.duration ?? null;
  const duration = Number.isFinite(groupDuration) && groupDuration > 0 ? groupDuration
    : Number.isFinite(shown.duration) ? shown.duration : Number(state.activity?.duration) || 0;
  const seek = $("seek");
  // The group's time, but the end while the page shows the media's last picture (transport.js).
  const position = shownPosition({ position: shell?.currentItemTime ?? shown.currentTime, duration, atEnd: (player?.status?.ended ?? false) || (state.missing === null && shown.ended) });
  if (seek.dataset.dragging !== "true") {
    seek.max = String(duration || 1);
    seek.value = String(duration > 0 ? Math.min(position, duration) : position);
    seek.style.setProperty("--progress", `${duration > 0 ? Math.min(100, (position / duration) * 100) : 0}%`);
    // Not while the person types into it.
    if (document.activeElement !== $("time")) $("time").value = clockText(position);
  }
  $("duration").textContent = clockText(duration);
  updatePeople();
  updateQueuePanel();
  flushPendingJoins();
  renameLogMembers();
}

// MARK: The queue and this page's copies

/** A fresh 32-bit shuffle seed. */
function randomSeed() {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

function editQueue(edit) {
  return act(() => shell.editQueue(edit));
}

/** Whether this page has a copy of a queue entry. */
const hasCopy = (entry) => library.copyForEntry(entry) !== null;

function currentQueueView() {
  return queueView({
    queue: shell.queue, hasQueue: shell.hasQueue, playing: shell.state?.entry ?? null,
    label: (id) => who(shell.label(id)), me: state.participantId, hasCopy, live: state.joined && state.phase === "joined" && mayControl(),
  });
}

/** The items this page can play go into its presence reports (the others see who has what). */
function refreshItems() {
  shell?.setItems(library.items());
}

/** The queue changed (an edit, or it arrived): learn its items, follow the group, prepare the next entry. */
function onQueueChanged() {
  if (shell === null) return;
  library.learnEntries(shell.queue.entries);
  refreshItems();
  followEntry();
  schedulePrepare(300);
}

/**
 * Follows the group's entry: plays it when this page has a copy (ending a missing entry's
 * suspension, so the group's commands come again), else names it and asks for the file.
 */
function followEntry() {
  if (shell === null || !state.joined) return;
  const group = shell.state;
  if (group === null) return;
  if (shell.hasQueue) library.learnEntries(shell.queue.entries);
  if (library.has(group.item)) {
    if (shell.core.localItem !== group.item) shell.setLocalItem(group.item);
    endMissing();
    schedulePrepare();
  } else {
    const entry = shell.currentEntry;
    // Before the queue arrived the core cannot say which entry it is: the queue names it soon.
    if (entry === null && (group.entry ?? null) !== null && !shell.hasQueue) return;
    beginMissing(group, entry ?? { title: group.item === state.activity?.item ? state.activity.title : "the group's video", duration: group.duration ?? null });
    schedulePrepare();
  }
  updateQueuePanel();
}

/**
 * The group plays an entry this page has no copy of: its player stops at the state's instant, the
 * page holds a coordinatedPlaybackNotPossible suspension (not a waiting reason: the others go on) and
 * asks for the file.
 */
function beginMissing(group, entry) {
  if (state.missing !== null && state.missing.item === group.item) {
    state.missing.entry = entry;
    showMissing();
    return;
  }
  const suspension = state.missing?.suspension
    ?? shell.beginSuspension("coordinatedPlaybackNotPossible").catch((error) => {
      logLine(`Could not tell the group: ${error?.message ?? error}`, "bad");
      return null;
    });
  state.missing = { item: group.item, entry, suspension };
  player?.holdForeign(group.item, Math.max(nsToMs(group.anchorReferenceTime), Date.now() - 1000));
  showMissing();
  logLine(missingNotice(entry).short, "warn");
}

/** The group's entry is playable here again: end the suspension (the coordinator then gives the player the group's state). */
function endMissing() {
  const missing = state.missing;
  if (missing === null) return;
  state.missing = null;
  if ($("picker").dataset.mode === "missing") {
    $("picker").hidden = true;
    delete $("picker").dataset.mode;
  }
  missing.suspension
    .then((id) => (id === null ? null : shell.endSuspension(id)))
    .catch((error) => logLine(`Could not tell the group: ${error?.message ?? error}`, "bad"));
  logLine(`Back in step with the group: ${entryName({ entry: shell.state?.entry ?? null, item: shell.state?.item })}`, "info");
}

function showMissing() {
  const missing = state.missing;
  if (missing === null) return;
  const nextWithCopy = shell.hasQueue && shell.state?.entry ? nextEntryWithCopy(shell.queue, shell.state.entry, hasCopy) : null;
  const notice = missingNotice(missing.entry, { nextWithCopy });
  const picker = $("picker");
  picker.hidden = false;
  picker.dataset.mode = "missing";
  $("picker-title").textContent = notice.title;
  $("picker-text").textContent = notice.text;
  $("picker-button").textContent = "Choose files…";
  $("picker-hint").textContent = "or drop the file or its folder here";
  $("overlay").hidden = true;
}

let prepareTimer = null;

/**
 * Loads the entry the group plays next into a second element, a moment after a change (not while
 * the new entry starts): the transition then starts it like any scheduled start.
 */
function schedulePrepare(delayMs = 1500) {
  if (prepareTimer !== null) clearTimeout(prepareTimer);
  prepareTimer = setTimeout(() => {
    prepareTimer = null;
    const group = shell?.state;
    if (!group || !shell.hasQueue || player === null) return;
    const playing = group.entry ?? null;
    const next = state.missing !== null ? nextEntryWithCopy(shell.queue, playing, hasCopy) : entryToPrepare(shell.queue, playing, hasCopy);
    if (next !== null && next.item !== group.item) player.prepare(next.item);
  }, delayMs);
}

/** An item's frame grid: the activity's, else from its queue entry's frame rate. */
function gridFor(item) {
  if (item === state.activity?.item) return FrameGrid.fromActivity(state.activity);
  const entry = shell?.queue.entries.find((e) => e.item === item || e.fingerprint === item);
  if (!entry || !(entry.frameRate > 0)) return null;
  return FrameGrid.fromActivity({ frameInterval: 1 / entry.frameRate, firstFrameTime: 0, duration: entry.duration });
}

/** A new element in the screen, under the one on top (deck.js). */
function createVideo() {
  const element = document.createElement("video");
  element.className = "deck";
  element.playsInline = true;
  element.preload = "auto";
  element.disablePictureInPicture = true;
  element.muted = video.muted && !state.unmuted;
  element.dataset.shown = "false";
  $("screen").insertBefore(element, $("picker"));
  return element;
}

/** The duration of a media file (its metadata, in a probe element), or null. */
function probeDuration(blob) {
  return new Promise((resolve) => {
    const probe = document.createElement("video");
    probe.preload = "metadata";
    probe.muted = true;
    const url = URL.createObjectURL(blob);
    let timer = null;
    const done = (value) => {
      clearTimeout(timer);
      probe.onloadedmetadata = null;
      probe.onerror = null;
      probe.removeAttribute("src");
      probe.load();
      URL.revokeObjectURL(url);
      resolve(value);
    };
    timer = setTimeout(() => done(null), 5000);
    probe.onloadedmetadata = () => done(Number.isFinite(probe.duration) && probe.duration > 0 ? probe.duration : null);
    probe.onerror = () => done(null);
    probe.src = url;
  });
}

/** Fingerprints and probes media files into the library; returns their copies (others are skipped). */
async function readCopies(files) {
  const copies = [];
  for (const file of files) {
    if (!isMediaFile(file)) continue;
    try {
      const fingerprint = await fingerprintOfBlob(file);
      const duration = await probeDuration(file);
      copies.push(library.add({ fingerprint, name: file.name, size: file.size, source: file, duration }));
    } catch (error) {
      logLine(`Cannot read “${file.name}”: ${error?.message ?? error}`, "warn");
    }
  }
  return copies;
}

/**
 * Files the person gave after joining: copies for the group's entries (a missing one, later ones),
 * and with `queue` also new entries at the end of the queue.
 */
async function takeFiles(files, { queue = false } = {}) {
  if (files.length === 0) return;
  const note = $("queue-note");
  note.hidden = false;
  delete note.dataset.tone;
  note.textContent = `Checking ${files.length === 1 ? `“${files[0].name}”` : `${files.length} files`}…`;
  const copies = await readCopies(files);
  note.hidden = true;
  if (copies.length === 0) {
    logLine("None of those files is a video this page can play", "warn");
    return;
  }
  refreshItems();
  if (queue) {
    await act(async () => {
      const entries = entriesForCopies(copies, { participant: state.participantId, sentAt: shell.entryStamp() });
      await shell.editQueue({ op: "add", entries, at: "end" });
    });
  } else {
    const known = shell?.hasQueue ? copies.filter((copy) => shell.queue.entries.some((e) => library.copyForEntry(e) === copy)) : [];
    logLine(known.length > 0
      ? `Your copies of ${known.map((c) => `“${c.name}”`).join(", ")} are ready`
      : `${copies.map((c) => `“${c.name}”`).join(", ")} ${copies.length === 1 ? "is" : "are"} not in the queue: add ${copies.length === 1 ? "it" : "them"} with “Add videos…”`, known.length > 0 ? "info" : "warn");
  }
  followEntry();
  schedulePrepare(300);
}

/** The files of a drop, folders walked (at most 2,000 files, 8 levels deep). */
async function filesOfDrop(dataTransfer) {
  // The entries must be taken while the drop event runs.
  const roots = [...(dataTransfer?.items ?? [])].map((item) => item.webkitGetAsEntry?.() ?? null).filter(Boolean);
  if (roots.length === 0) return [...(dataTransfer?.files ?? [])];
  const files = [];
  const walk = async (entry, depth) => {
    if (files.length >= 2000) return;
    if (entry.isFile) {
      files.push(await new Promise((resolve, reject) => entry.file(resolve, reject)));
    } else if (entry.isDirectory && depth < 8) {
      const reader = entry.createReader();
      for (let batch = 0; batch < 200; batch += 1) {
        const entries = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
        if (entries.length === 0) break;
        for (const child of entries) await walk(child, depth + 1);
      }
    }
  };
  for (const root of roots) {
    try {
      await walk(root, 0);
    } catch (error) {
      logLine(`Cannot read the dropped files: ${error?.message ?? error}`, "warn");
    }
  }
  return files;
}

// MARK: The queue panel

let drawnQueue = null; // the view last drawn (JSON), so a periodic update redraws only on changes
let draggedEntry = null;

function svgIcon(path, viewBox = "0 0 24 24") {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", viewBox);
  svg.setAttribute("aria-hidden", "true");
  const p = document.createElementNS(ns, "path");
  p.setAttribute("d", path);
  svg.append(p);
  return svg;
}

function miniButton(className, label, path, enabled, run) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = `mini ${className}`;
  button.title = label;
  button.setAttribute("aria-label", label);
  button.disabled = !enabled;
  button.append(svgIcon(path));
  button.addEventListener("click", (e) => {
    e.stopPropagation();
    run();
  });
  return button;
}

function queueRow(row, view) {
  const li = document.createElement("li");
  li.className = "queue-row";
  li.dataset.id = row.id;
  li.dataset.status = row.status;
  li.dataset.playing = String(row.playing);
  if (view.canReorder) li.draggable = true;

  const position = document.createElement("button");
  position.type = "button";
  position.className = "queue-pos";
  position.disabled = !row.canJump;
  position.title = row.playing ? "Playing now" : `Play “${row.title}” for everyone`;
  position.setAttribute("aria-label", row.playing ? `Entry ${row.position}, playing` : `Play entry ${row.position}`);
  if (row.playing) position.append(svgIcon("M8 5.5v13l10.5-6.5z"));
  else position.textContent = String(row.position);
  position.addEventListener("click", () => control.jump(row.position));

  const text = document.createElement("div");
  text.className = "queue-text";
  const title = document.createElement("span");
  title.className = "queue-title";
  title.textContent = row.title;
  title.title = row.title;
  const meta = document.createElement("span");
  meta.className = "queue-meta";
  const time = document.createElement("time");
  time.textContent = row.duration;
  meta.append(time, ` · added by ${row.addedBy}`);
  if (!row.hasCopy) {
    const missing = document.createElement("span");
    missing.className = "missing";
    missing.textContent = " · no copy";
    meta.append(missing);
  }
  text.append(title, meta);

  const actions = document.createElement("div");
  actions.className = "queue-actions";
  actions.append(
    miniButton("up", "Move up", "M12 19V5M6 11l6-6 6 6", row.canUp, () => editQueue(moveEdit(shell.queue, row.id, -1))),
    miniButton("down", "Move down", "M12 5v14M6 13l6 6 6-6", row.canDown, () => editQueue(moveEdit(shell.queue, row.id, 1))),
    miniButton("remove", "Remove from the queue", "M6 6l12 12M18 6 6 18", state.joined && mayControl(), () => editQueue({ op: "remove", ids: [row.id] })),
  );
  li.append(position, text, actions);
  li.addEventListener("dblclick", () => {
    if (row.canJump) control.jump(row.position);
  });
  li.addEventListener("dragstart", (e) => {
    draggedEntry = row.id;
    li.classList.add("dragging");
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/x-coplay-entry", row.id);
  });
  li.addEventListener("dragend", () => {
    draggedEntry = null;
    li.classList.remove("dragging");
  });
  const below = (e) => e.clientY > li.getBoundingClientRect().top + li.offsetHeight / 2;
  li.addEventListener("dragover", (e) => {
    if (draggedEntry === null) return;
    e.preventDefault();
    li.classList.toggle("drag-over", !below(e));
    li.classList.toggle("drag-over-end", below(e));
  });
  li.addEventListener("dragleave", () => li.classList.remove("drag-over", "drag-over-end"));
  li.addEventListener("drop", (e) => {
    if (draggedEntry === null) return;
    e.preventDefault();
    e.stopPropagation();
    li.classList.remove("drag-over", "drag-over-end");
    const index = shell.queue.entries.findIndex((entry) => entry.id === row.id);
    const edit = dropEdit(shell.queue, draggedEntry, index + (below(e) ? 1 : 0));
    draggedEntry = null;
    if (edit !== null) editQueue(edit);
  });
  return li;
}

function updateQueuePanel() {
  const card = $("queue-card");
  if (shell === null || !state.joined) {
    card.hidden = true;
    return;
  }
  card.hidden = false;
  const commands = mayControl();
  $("queue-repeat").disabled = !commands;
  $("queue-shuffle").disabled = !commands;
  $("queue-file").disabled = !commands;
  $("queue-card").dataset.viewer = String(!commands);
  const view = currentQueueView();
  const hasEntries = view.rows.length > 0;
  $("next").hidden = !hasEntries;
  $("previous").hidden = !hasEntries;
  $("next").disabled = !view.canNext;
  $("previous").disabled = !view.canPrevious;
  const key = JSON.stringify(view);
  if (key === drawnQueue) return;
  drawnQueue = key;
  $("queue-summary").textContent = view.summary;
  const repeat = $("queue-repeat");
  repeat.dataset.mode = view.repeatMode;
  const repeatLabel = `Repeat: ${view.repeatMode === "one" ? "this entry" : view.repeatMode === "all" ? "the whole queue" : "off"}`;
  repeat.title = `${repeatLabel} (click: ${nextRepeatMode(view.repeatMode) === "one" ? "repeat this entry" : nextRepeatMode(view.repeatMode) === "all" ? "repeat the queue" : "repeat off"})`;
  $("queue-repeat-label").textContent = repeatLabel;
  const shuffle = $("queue-shuffle");
  shuffle.setAttribute("aria-pressed", String(view.shuffled));
  shuffle.title = view.shuffled ? "Shuffle is on: one shuffled order, the same for everyone (click: off)" : "Shuffle: one shuffled order, the same for everyone";
  const list = $("queue");
  if (view.empty !== null) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = view.empty;
    list.replaceChildren(li);
  } else {
    list.replaceChildren(...view.rows.map((row) => queueRow(row, view)));
  }
  const note = $("queue-note");
  if (note.textContent.startsWith("Checking")) return;
  if (state.missing !== null) {
    note.hidden = false;
    note.dataset.tone = "warn";
    note.textContent = missingNotice(state.missing.entry).short;
  } else if (view.reorderHint !== null && hasEntries) {
    note.hidden = false;
    delete note.dataset.tone;
    note.textContent = view.reorderHint;
  } else {
    note.hidden = true;
  }
}

function bindQueuePanel() {
  $("queue-repeat").addEventListener("click", () => control.repeat(nextRepeatMode(shell?.queue.repeatMode ?? "off")));
  $("queue-shuffle").addEventListener("click", () => control.shuffle(shell?.queue.shuffleSeed === null));
  $("queue-file").addEventListener("change", (e) => {
    const files = [...(e.target.files ?? [])];
    e.target.value = "";
    takeFiles(files, { queue: true });
  });
  const card = $("queue-card");
  card.addEventListener("dragover", (e) => {
    if (draggedEntry !== null || !e.dataTransfer?.types?.includes("Files")) return;
    e.preventDefault();
    card.classList.add("drop-target");
  });
  card.addEventListener("dragleave", (e) => {
    if (!card.contains(e.relatedTarget)) card.classList.remove("drop-target");
  });
  card.addEventListener("drop", async (e) => {
    if (draggedEntry !== null || !e.dataTransfer?.types?.includes("Files")) return;
    e.preventDefault();
    card.classList.remove("drop-target");
    takeFiles(await filesOfDrop(e.dataTransfer), { queue: true });
  });
}

// MARK: Notices from the player

function onPlayerNotice(notice) {
  const overlay = $("overlay");
  if (notice === null) {
    overlay.hidden = true;
    return;
  }
  switch (notice.kind) {
    case "autoplay":
      $("unmute").hidden = false;
      logLine("The browser allowed playback only without sound: press Unmute", "warn");
      break;
    case "foreignItem":
      $("overlay-text").textContent = "The group is watching another video — this page only has yours. Waiting for the group to come back to it.";
      overlay.hidden = false;
      break;
    case "ended":
      $("overlay-text").textContent = "End of the video";
      overlay.hidden = false;
      break;
    case "error":
      logLine(notice.detail, "bad");
      break;
    default:
      break;
  }
}

// MARK: Media

let mediaChosen = null; // resolve function for the file picker

function showPicker(title) {
  $("picker").hidden = false;
  delete $("picker").dataset.mode;
  if (title) $("picker-title").textContent = `Choose your copy of “${title}”`;
}

function bindPicker() {
  // Before joining the files are for the session's video; after, copies of the group's entries.
  const take = (files) => {
    if (files.length === 0) return;
    if (state.joined) takeFiles(files);
    else mediaChosen?.(files);
  };
  $("file").addEventListener("change", (e) => {
    const files = [...(e.target.files ?? [])];
    e.target.value = "";
    take(files);
  });
  const screen = $("screen");
  let depth = 0;
  screen.addEventListener("dragenter", (e) => {
    if (!e.dataTransfer?.types?.includes("Files")) return;
    e.preventDefault();
    depth += 1;
    screen.classList.add("dragging");
    $("drop-hint").hidden = false;
  });
  screen.addEventListener("dragover", (e) => {
    if (e.dataTransfer?.types?.includes("Files")) e.preventDefault();
  });
  screen.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) {
      screen.classList.remove("dragging");
      $("drop-hint").hidden = true;
    }
  });
  screen.addEventListener("drop", async (e) => {
    e.preventDefault();
    depth = 0;
    screen.classList.remove("dragging");
    $("drop-hint").hidden = true;
    take(await filesOfDrop(e.dataTransfer));
  });
}

/** A message in place of the video (no file to choose): the page cannot join. */
function screenMessage(title, text) {
  $("picker").hidden = false;
  $("picker").dataset.mode = "message";
  $("picker-title").textContent = title;
  $("picker-text").textContent = text;
}

/** Waits for files from the picker or a drop (a dropped folder's files). */
function pickFiles(title) {
  showPicker(title);
  return new Promise((resolve) => {
    mediaChosen = (files) => {
      mediaChosen = null;
      resolve(files);
    };
  });
}

let objectURL = null;

function loadVideo(source, crossOrigin = false) {
  if (state.halted) return; // the page gave up (a media URL still being checked finishes later)
  if (objectURL !== null) URL.revokeObjectURL(objectURL);
  objectURL = null;
  let src = source;
  if (source instanceof Blob) {
    objectURL = URL.createObjectURL(source);
    src = objectURL;
  }
  if (crossOrigin) video.crossOrigin = "anonymous";
  else video.removeAttribute("crossorigin");
  video.src = src;
  video.load();
}

/** The media: a fingerprinted File or URL, `{name, fingerprint, size}`, loaded into the video. */
async function obtainMedia(mediaParameter, title) {
  if (mediaParameter !== null) {
    const url = resolveMediaURL(mediaParameter, location.href);
    const name = fileNameOfURL(url);
    setPhase("checking");
    try {
      const result = await fingerprintOfURL(url);
      const crossOrigin = new URL(url).origin !== location.origin;
      loadVideo(result.blob ?? url, result.blob === null && crossOrigin);
      library.add({ fingerprint: result.fingerprint, name, size: result.size, source: result.blob ?? url, crossOrigin: result.blob === null && crossOrigin });
      return { name, fingerprint: result.fingerprint, size: result.size, source: "url", copies: [] };
    } catch (error) {
      fail("Cannot read the video", `${name}: ${error?.message ?? error}. You can choose your own copy instead.`, { tone: "warn" });
    }
  }
  let files = await pickFiles(title);
  // A folder (or several files): its media files; one file is taken as it is.
  if (files.length > 1) files = files.filter(isMediaFile);
  if (files.length === 0) return obtainMedia(null, title);
  hideBanner();
  setPhase("checking");
  $("picker-title").textContent = files.length === 1 ? `Checking “${files[0].name}”…` : `Checking ${files.length} files…`;
  const copies = [];
  for (const file of files) {
    const fingerprint = await fingerprintOfBlob(file);
    copies.push({ file, copy: library.add({ fingerprint, name: file.name, size: file.size, source: file }) });
  }
  // The session's video if it is among them (the activity may not be known yet: main() looks again).
  const first = copies.find(({ copy }) => state.activity !== null && fingerprintsMatch(copy.fingerprint, state.activity.fingerprint)) ?? copies[0];
  return { name: first.file.name, fingerprint: first.copy.fingerprint, size: first.file.size, source: "file", file: first.file, copies };
}

// MARK: Session

/** The status pill and banner follow the session's resumes after a lost connection. */
function onReconnecting(reconnecting) {
  shell?.connectionInterrupted(reconnecting);
  if (reconnecting) {
    if (!state.joined) return;
    setPhase("reconnecting");
    showBanner("Reconnecting", "The connection to the relay dropped; coplay is resuming the session (it gives up after 30 s).", { tone: "warn" });
    logLine("Lost the connection to the relay; resuming", "warn");
  } else if (state.phase === "reconnecting") {
    setPhase("joined");
    hideBanner();
    logLine("Reconnected to the relay", "info");
  }
}

function describeOpenFailure(error, wsURL) {
  if (error?.code === RelayErrorCode.unauthorized) {
    return ["Wrong secret", "The relay refused this invite: its secret does not match the session. Ask the host for the link again."];
  }
  if (error?.code === RelayErrorCode.sessionEnded) return ["Session over", "This session has ended."];
  if (error?.code !== undefined) return ["The relay refused to connect", error.message];
  return ["Cannot reach the relay", `No connection to ${wsURL}. Is \`coplay serve\` running, and is this the address it printed?`];
}

function describeEnd(reason, wasJoined) {
  if (reason === "ended") return ["Session over", "The host ended the session."];
  if (reason === "left") return ["You left", "This page left the session."];
  if (reason.startsWith("connectionLost")) {
    const detail = reason.replace(/^connectionLost:?\s*/, "");
    if (!wasJoined) return ["Relay closed", `The relay closed the connection before this page joined. ${detail || "Reload the page once `coplay serve` runs again."}`.trim()];
    return ["Relay closed", `The connection to the relay was lost and could not be resumed. ${detail || "Playback stopped here; reload the page once `coplay serve` runs again."}`.trim()];
  }
  if (reason.startsWith("refused")) return ["The relay refused this member", reason.replace(/^refused:\s*/, "")];
  return ["Session over", reason];
}

function waitForActivity(timeoutMs) {
  if (state.activity !== null) return Promise.resolve(state.activity);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs);
    activityWaiters.push((activity) => {
      clearTimeout(timer);
      resolve(activity);
    });
  });
}
const activityWaiters = [];

function receiveActivity(name, body) {
  let activity;
  try {
    activity = JSON.parse(fromUTF8(body));
  } catch {
    return;
  }
  if (typeof activity?.item !== "string" || typeof activity?.fingerprint !== "string") return;
  state.activity = activity;
  $("title").textContent = activity.title || "Watch together";
  for (const waiter of activityWaiters.splice(0)) waiter(activity);
}

async function main() {
  bindControls();
  bindPicker();
  bindQueuePanel();
  setInterval(updateUI, 250);

  let fragment;
  try {
    fragment = parseFragment(location.hash);
  } catch (error) {
    setPhase("error");
    screenMessage("This link is damaged", "Ask the host for the link again.");
    return fail("This link is damaged", error.message, { actions: [] });
  }
  if (fragment.invite === null) {
    setPhase("error");
    screenMessage("No session to join", "This page plays in step with a coplay session. Open the link that `coplay host` printed.");
    return fail("No invite in this link", "Open the page address that `coplay host` printed (it ends in #invite=…).", { tone: "info" });
  }
  let invite;
  try {
    invite = parseInvite(fragment.invite);
  } catch (error) {
    setPhase("error");
    screenMessage("This invite is not valid", "Ask the host for the link again.");
    return fail("This invite is not valid", error.message);
  }
  if (invite.aead !== AEADSuite.aes256GCM) {
    setPhase("error");
    screenMessage("Not a browser session", "The host made this session for native players only.");
    return fail(
      "This invite is not for browsers",
      "It uses ChaCha20-Poly1305, which browsers cannot run. Ask the host for a browser invite (one with ?aead=aes-256-gcm).",
    );
  }
  if (globalThis.crypto?.subtle === undefined) {
    setPhase("error");
    screenMessage("Needs a secure connection", "Open the page over https:// (or on this machine, as localhost).");
    return fail("This page needs a secure connection", "Browsers allow encryption only on https:// pages or on localhost. Open the page over https.");
  }
  if (onlyHostsControl(invite)) {
    // Where only hosts control: a controller invite's seed must be its host key's before it signs anything.
    try {
      roles = await RolesGate.forInvite(invite);
    } catch (error) {
      setPhase("error");
      screenMessage("This invite is not valid", "Ask the host for the link again.");
      return fail("This invite is not valid", error.message);
    }
    roles.onrole = onRole;
  }

  const wsURL = webSocketURL(location);
  $("subtitle").textContent = `${invite.host}:${invite.port} · session ${Array.from(invite.session.slice(0, 4), (b) => b.toString(16).padStart(2, "0")).join("")}…`;

  // Start on the media at once: the person can pick a file while the page connects.
  const mediaPromise = obtainMedia(fragment.media, null).then(
    (media) => ({ media }),
    (error) => ({ error }),
  );

  setPhase("connecting");
  const exchange = new TimeExchange({ send: (t1) => session.requestTime(t1), timeout: 1000 });
  session = await GroupSession.create({ invite, connect: () => openWebSocket(wsURL), localNow: browserLocalNTP });
  state.participantId = session.localName;
  state.name = fragment.name ?? `web-${state.participantId.slice(-4)}`;
  const channel = new GroupSessionCoordinationChannel(session, { gate: roles });
  // After the channel: it wraps the session's callbacks, so the chat kept by the relay arrives as history.
  chat = new ChatPanel({ session, document });
  // After both: role statements reach the gate in the relay's order with the coordination messages.
  if (roles !== null) listenForRoles(session, roles);
  const backlog = [];
  channel.onevent = (event) => backlog.push(event);
  session.onactivity = receiveActivity;
  session.ontimereply = (reply, t4) => exchange.receive(reply, t4);
  session.onreconnecting = onReconnecting;
  session.onend = (reason) => {
    if (!opened) return; // session.open() fails too: its handler says why, once
    const wasJoined = state.joined;
    state.joined = false;
    player?.stop();
    shell?.stop();
    pollAbort && (pollAbort.aborted = true);
    if (state.phase === "mismatch") return;
    setPhase(reason === "left" ? "ended" : "error");
    const [title, text] = describeEnd(reason, wasJoined);
    fail(title, text, { actions: [reload] });
  };

  let opened = false;
  try {
    await session.open();
    opened = true;
  } catch (error) {
    setPhase("error");
    const [title, text] = describeOpenFailure(error, wsURL);
    mediaChosen = null;
    state.halted = true;
    video.removeAttribute("src"); // nothing plays for a session the page cannot join
    video.load();
    screenMessage(title, "This page is not connected to the session.");
    return fail(title, text, { actions: [reload] });
  }

  // The clock: a burst over the WebSocket until the estimate is good, then polling.
  setPhase("syncing");
  syncedClock = new SyncedClock({ localNow: browserLocalNTP });
  timeClient = new TimeClient({ transport: exchange, syncedClock });
  const clockReady = timeClient.converge().then(
    () => null,
    (error) => error,
  );

  const activity = await waitForActivity(4000);
  if (activity === null) {
    showBanner("Waiting for the host", "The session has not said what it plays yet. Is the invite right, and is the host still there?", { tone: "warn" });
    await waitForActivity(Infinity);
    hideBanner();
  }
  if (parseFingerprint(state.activity.fingerprint) === null) {
    setPhase("error");
    return fail("Unknown video fingerprint", `The session identifies its video as “${state.activity.fingerprint}”, which this page cannot check.`);
  }
  if (!$("picker").hidden) $("picker-title").textContent = `Choose your copy of “${state.activity.title}”`;

  const clockError = await clockReady;
  if (clockError !== null) {
    setPhase("error");
    return fail("The relay's clock did not answer", `${clockError.message}. The relay must answer time requests over the WebSocket.`, { actions: [reload] });
  }
  if (state.phase === "syncing") setPhase("media");

  // The media, checked against the session's fingerprint until it matches.
  let outcome = await mediaPromise;
  for (;;) {
    if (outcome.error) {
      setPhase("error");
      return fail("Cannot read the video", outcome.error?.message ?? String(outcome.error));
    }
    let media = outcome.media;
    const match = (media.copies ?? []).find(({ copy }) => fingerprintsMatch(copy.fingerprint, state.activity.fingerprint));
    if (match !== undefined) media = { ...media, name: match.file.name, fingerprint: match.copy.fingerprint, size: match.file.size, file: match.file };
    if (fingerprintsMatch(media.fingerprint, state.activity.fingerprint)) {
      state.media = media;
      if (media.file) loadVideo(media.file);
      break;
    }
    const expected = parseFingerprint(state.activity.fingerprint);
    setPhase("mismatch");
    video.removeAttribute("src"); // do not show the wrong video
    video.load();
    const sizes = expected.size === media.size ? "the same size but different content" : `${media.size.toLocaleString()} bytes, the session's has ${expected.size.toLocaleString()}`;
    state.lastError = { title: "Wrong video", text: `${media.name} is not the session's media` };
    logLine(`“${media.name}” is not the session's media (${state.activity.title})`, "bad");
    showBanner(
      "This is not the session's media",
      `“${media.name}” is not “${state.activity.title}”, the video this session plays (${sizes}). The page will not join with it.`,
      { actions: media.source === "file" ? [] : [reload] },
    );
    if (media.source !== "file") return;
    $("picker-title").textContent = `Choose your copy of “${state.activity.title}”`;
    outcome = await obtainMedia(null, state.activity.title).then((m) => ({ media: m }), (error) => ({ error }));
  }
  hideBanner();
  $("picker").hidden = true;
  $("title").textContent = state.activity.title || state.media.name;

  // Join and coordinate.
  setPhase("joining");
  try {
    await session.join();
  } catch (error) {
    setPhase("error");
    const [title, text] = describeOpenFailure(error, wsURL);
    return fail(title, text, { actions: [reload] });
  }
  state.joined = true;
  const clock = {
    nowMs: () => (syncedClock.isSynchronized ? localMs() + offsetMs() : null),
    offsetMs,
  };
  // The page's file is the session's item (its fingerprint was checked): the activity says how long it is.
  library.learn({ item: state.activity.item, fingerprint: state.activity.fingerprint, duration: Number(state.activity.duration) });
  if (state.media.source === "file") library.add({ fingerprint: state.media.fingerprint, name: state.media.name, size: state.media.size, source: state.media.file });
  player = new PlayerDeck({ createVideo, library, clock, gridFor });
  player.adopt(state.activity.item, video, objectURL);
  player.show(state.activity.item);
  shell = new CoordinatorShell({
    channel, reference: { now: () => syncedClock.now() }, player, localItem: state.activity.item, name: state.name, backlog,
    // Any item of the group this page has a copy of (library.js): the core follows the group to it.
    canPresent: (item) => {
      if (!library.has(item) && shell?.hasQueue) library.learnEntries(shell.queue.entries);
      return library.has(item);
    },
    items: library.items(),
    log: (message, error) => console.warn(`coplay: ${message}`, error?.message ?? ""),
  });
  player.onreadiness = (readiness) => shell.reportReadiness(readiness);
  player.onevent = onPlaybackEvent;
  player.onnotice = onPlayerNotice;
  shell.onevent = onPlaybackEvent;
  player.start();
  shell.start();
  shell.reportReadiness(player.readiness);
  pollAbort = { aborted: false };
  timeClient.run(pollAbort).catch((error) => logLine(`The clock stopped following the relay: ${error?.message ?? error}`, "warn"));
  // A name from the link is the person's: its key is kept in this browser; a made-up one gets a fresh key.
  chat.start(state.name, { persistentKey: fragment.name != null }).then(
    () => {
      // A grant names this key (`coplay control … grant NAME`, resolved through the identity the chat announced).
      if (roles !== null) roles.memberKey = chat.key;
      updateControls();
    },
    (error) => logLine(`Chat unavailable: ${error?.message ?? error}`, "warn"),
  );
  setPhase("joined");
  updateUI();
}

main().catch((error) => {
  setPhase("error");
  fail("Something went wrong", error?.message ?? String(error), { actions: [reload] });
});
