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

import { fromUTF8 } from "./bytes.js";
import { GroupSessionCoordinationChannel } from "./channel.js";
import { SyncedClock, TimeClient, TimeExchange, browserLocalNTP, errorBound } from "./clock.js";
import { fingerprintOfBlob, fingerprintOfURL, fingerprintsMatch, parseFingerprint } from "./fingerprint.js";
import { RelayErrorCode } from "./frame.js";
import { AEADSuite, parseInvite } from "./invite.js";
import { fileNameOfURL, parseFragment, resolveMediaURL, webSocketURL } from "./pageurl.js";
import { VideoPlayer } from "./player.js";
import { FrameGrid } from "./schedule.js";
import { GroupSession, openWebSocket } from "./session.js";
import { CoordinatorShell } from "./shell.js";
import { parsePosition, shownPosition } from "./transport.js";

// MARK: State

const $ = (id) => document.getElementById(id);
const video = $("video");

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
};

let session = null;
let syncedClock = null;
let timeClient = null;
let shell = null;
let player = null;
let pollAbort = null;

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
  samples: () => (player === null ? [] : player.samples()),
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

// The events of accepted commands, queue commands included (the page shows no queue yet: those are
// not logged, but the first of them is the group's state as the page found it).
const COMMAND_EVENTS = new Set(["play", "pause", "seek", "rate", "item", "next", "previous", "jump"]);

/** Coordinator and player events -> log lines. */
function onPlaybackEvent(event) {
  if (COMMAND_EVENTS.has(event.type) && !state.sawGroupState) {
    // The first state is the group's as the page found it (retained at the relay), not something
    // someone just did.
    state.sawGroupState = true;
    const where = preciseTime(event.itemTime);
    logLine(event.rate > 0 ? `The group is playing (from ${where}${event.rate !== 1 ? ` at ${event.rate}×` : ""})` : `The group is paused at ${where}`, "info", event);
    updateUI();
    return;
  }
  switch (event.type) {
    case "joined":
      logLine("joined", "member", event, originatorLabel(event));
      break;
    case "left":
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
    case "itemChanged":
      if (event.detail) logLine(`The group now plays ${event.item === state.activity?.item ? state.activity?.title ?? "this video" : "another video"}`, "info", event);
      break;
    case "itemEnded":
      logLine(`The video ended at ${preciseTime(event.itemTime)}: everyone holds its last frame`, "info", event);
      break;
    case "commandIgnored":
      if (event.item !== state.activity?.item) {
        player?.holdForeignItem(event.item);
        logLine(`The group plays another video; this page only has ${state.activity?.title ?? "its own"}`, "warn", event);
      }
      break;
    case "suspensionBegan":
      logLine(`is ${reasonText(event.reason)}${event.waits ? " — everyone waits" : ""}`, "warn", event, originatorLabel(event));
      break;
    case "suspensionEnded":
      logLine(event.timedOut ? "took too long; the group goes on" : "is ready again", event.timedOut ? "warn" : "info", event, originatorLabel(event));
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

function reasonText(reason) {
  if (reason === "buffering") return "loading";
  if (reason === "stallRecovery") return "stalled";
  if (reason === "playingInterstitial") return "playing something else";
  if (reason === "coordinatedPlaybackNotPossible") return "unable to follow";
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
  $("rate").addEventListener("change", (e) => setRate(Number(e.target.value)));
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
    video.muted = false;
    $("unmute").hidden = true;
  });
  document.addEventListener("keydown", (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === " " || e.key === "k") {
      e.preventDefault();
      togglePlay();
    } else if (e.key === "ArrowLeft" || e.key === "ArrowRight") {
      e.preventDefault();
      const now = shell?.currentItemTime ?? video.currentTime;
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
  const live = state.joined && state.phase === "joined";
  $("play").disabled = !live;
  $("seek").disabled = !live;
  $("time").disabled = !live;
  $("rate").disabled = !live;
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
    if (m.local) details.push(state.media?.name ?? "");
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

  const duration = Number.isFinite(video.duration) ? video.duration : Number(state.activity?.duration) || 0;
  const seek = $("seek");
  // The group's time, but the end while the page shows the media's last picture (transport.js).
  const position = shownPosition({ position: shell?.currentItemTime ?? video.currentTime, duration, atEnd: (player?.status.ended ?? false) || video.ended });
  if (seek.dataset.dragging !== "true") {
    seek.max = String(duration || 1);
    seek.value = String(duration > 0 ? Math.min(position, duration) : position);
    seek.style.setProperty("--progress", `${duration > 0 ? Math.min(100, (position / duration) * 100) : 0}%`);
    // Not while the person types into it.
    if (document.activeElement !== $("time")) $("time").value = clockText(position);
  }
  $("duration").textContent = clockText(duration);
  updatePeople();
  renameLogMembers();
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
  const take = (file) => {
    if (!file) return;
    mediaChosen?.(file);
  };
  $("file").addEventListener("change", (e) => take(e.target.files?.[0]));
  const screen = $("screen");
  let depth = 0;
  screen.addEventListener("dragenter", (e) => {
    if (state.joined || !e.dataTransfer?.types?.includes("Files")) return;
    e.preventDefault();
    depth += 1;
    screen.classList.add("dragging");
    $("drop-hint").hidden = false;
  });
  screen.addEventListener("dragover", (e) => {
    if (!state.joined) e.preventDefault();
  });
  screen.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) {
      screen.classList.remove("dragging");
      $("drop-hint").hidden = true;
    }
  });
  screen.addEventListener("drop", (e) => {
    e.preventDefault();
    depth = 0;
    screen.classList.remove("dragging");
    $("drop-hint").hidden = true;
    if (!state.joined) take(e.dataTransfer?.files?.[0]);
  });
}

/** A message in place of the video (no file to choose): the page cannot join. */
function screenMessage(title, text) {
  $("picker").hidden = false;
  $("picker").dataset.mode = "message";
  $("picker-title").textContent = title;
  $("picker-text").textContent = text;
}

/** Waits for a file from the picker or a drop. */
function pickFile(title) {
  showPicker(title);
  return new Promise((resolve) => {
    mediaChosen = (file) => {
      mediaChosen = null;
      resolve(file);
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
      return { name, fingerprint: result.fingerprint, size: result.size, source: "url" };
    } catch (error) {
      fail("Cannot read the video", `${name}: ${error?.message ?? error}. You can choose your own copy instead.`, { tone: "warn" });
    }
  }
  const file = await pickFile(title);
  hideBanner();
  setPhase("checking");
  $("picker-title").textContent = `Checking “${file.name}”…`;
  const fingerprint = await fingerprintOfBlob(file);
  return { name: file.name, fingerprint, size: file.size, source: "file", file };
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
  const channel = new GroupSessionCoordinationChannel(session);
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
    const media = outcome.media;
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
  player = new VideoPlayer({ video, clock, item: state.activity.item, grid: FrameGrid.fromActivity(state.activity) });
  shell = new CoordinatorShell({
    channel, reference: { now: () => syncedClock.now() }, player, localItem: state.activity.item, name: state.name, backlog,
    // The page's file is the session's item (its fingerprint was checked): the activity says how long it is.
    items: [{ item: state.activity.item, duration: Number.isFinite(state.activity.duration) ? state.activity.duration : null }],
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
  timeClient.run(pollAbort).catch(() => {});
  setPhase("joined");
  updateUI();
}

main().catch((error) => {
  setPhase("error");
  fail("Something went wrong", error?.message ?? String(error), { actions: [reload] });
});
