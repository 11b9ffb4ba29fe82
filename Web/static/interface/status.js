// The page's status, redrawn every 250 ms and on every event: the status pill (the phase), the
// control bar (enabled where this page controls; the roles' hint where it does not, and grants and
// revocations as they come), the clock and sync figures, the transport bar (transport.js), the people
// list and the queue panel.

import { ONLY_HOSTS } from "../sync/roles.js";
import { parsePosition, shownPosition } from "./transport.js";
import { $, mayControl, player, roles, shell, shownVideo, state } from "./state.js";
import { PHASES, clockText, signedMs } from "./words.js";
import { flushPendingJoins, logLine, renameLogMembers } from "./log.js";
import { notices, showNotice } from "./noticeboard.js";
import { control, setRate, togglePlay } from "./controls.js";
import { updateQueuePanel } from "./queueview.js";
import { syncTone, updatePeople } from "./people.js";

export function setPhase(phase) {
  state.phase = phase;
  const [text, tone] = PHASES[phase] ?? [phase, "busy"];
  $("status-text").textContent = text;
  $("status").dataset.tone = tone;
  updateControls();
}

export function bindControls() {
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

export function updateControls() {
  const live = state.joined && state.phase === "joined" && mayControl();
  $("play").disabled = !live;
  $("seek").disabled = !live;
  $("time").disabled = !live;
  $("rate").disabled = !live;
  // Where only hosts control, a page without control says why its controls are off.
  const viewer = roles !== null && !roles.controls && !state.stopped;
  $("control-hint").hidden = !viewer;
  $("controls").dataset.viewer = String(viewer);
  for (const id of ["play", "seek", "time", "rate"]) {
    const element = $(id);
    element.dataset.title ??= element.title;
    element.title = viewer ? ONLY_HOSTS : element.dataset.title;
  }
  updateQueuePanel();
}

/**
 * A grant or revocation the gate accepted (a `roleChanged` event, as Swift's RoleGate tells it): a log
 * line, a notice once joined (the statements kept by the relay arrive before: not news), the controls.
 */
export function onRole(event) {
  const name = event.own ? `${event.text} (you)` : event.text;
  logLine(event.detail === "grant" ? `${name} may control the session now` : `${name} no longer controls the session`, "info", { ...event, realtime: Date.now() / 1000 });
  if (state.joined) showNotice(event);
  updateControls();
}

export function updateUI() {
  // Once the page stopped following its session for good (removed, left behind, the session over), the
  // panels show nothing live: no clock (it no longer follows the relay), no error, no group, no people.
  const live = !state.stopped;
  $("sync-card").dataset.live = String(live);
  const clock = window.coplayPage.clock;
  $("clock-offset").textContent = clock.synced && live ? `${clock.offsetMs >= 0 ? "+" : "−"}${Math.abs(clock.offsetMs).toFixed(3)} ms` : "—";
  $("clock-error").textContent = clock.synced && live ? `±${clock.errorMs.toFixed(3)} ms` : "—";
  const sync = live ? (player?.status ?? null) : null;
  const errorValue = $("sync-error");
  if (sync !== null && sync.errorMs !== null) {
    errorValue.textContent = signedMs(sync.errorMs);
    errorValue.dataset.tone = syncTone(sync.errorMs);
    $("sync-label").textContent = sync.errorMs >= 0 ? "ahead of the group" : "behind the group";
  } else {
    errorValue.textContent = "—";
    delete errorValue.dataset.tone;
    $("sync-label").textContent = !live ? "not in a session" : state.joined ? "measured while playing" : "error vs the group";
  }
  $("trim").textContent = sync !== null && sync.playing ? `${((sync.trim - 1) * 100).toFixed(2)} %` : "—";
  const group = live ? (shell?.state ?? null) : null;
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
  const position = shownPosition({ position: (live ? shell?.currentItemTime : null) ?? shown.currentTime, duration, atEnd: (player?.status?.ended ?? false) || (state.missing === null && shown.ended) });
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
