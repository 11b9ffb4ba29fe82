// The test and bench hook, `window.coplayPage`: read-only state (phase, clock, sync, group, queue,
// notices, chat, roles, events) and `control.{play,pause,seek,rate,...}`. The Chromium tests
// (Tests/Browser) and the bench's browser driver read the page through it.

import { $, chat, library, offsetMs, player, roles, session, shell, state, syncedClock } from "./state.js";
import { isParticipantID } from "./words.js";
import { noticeBoard } from "./noticeboard.js";
import { control } from "./controls.js";
import { currentQueueView } from "./queueview.js";

window.coplayPage = Object.freeze({
  get phase() { return state.phase; },
  get participantId() { return state.participantId; },
  // The session the page is in now (32 hex digits): a successor's after a host removed someone.
  get sessionId() { return session?.sessionHex ?? null; },
  get joined() { return state.joined; },
  get clock() {
    const synced = syncedClock?.isSynchronized ?? false;
    // replies: time replies received over the current session's connection (the successor's after a move).
    return { offsetMs: synced ? offsetMs() : null, errorMs: synced ? syncedClock.errorBound * 1000 : null, synced, replies: session?.timeReplies ?? 0 };
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
  // A page that joined without the session's first item: what it said about the person's files once
  // the queue was in ({kind: "partial" | "none", have, total, title, text}; null before, or when covered).
  get coverage() {
    return state.coverage === null ? null : { files: [...state.coverage.files], notice: state.coverage.notice === null ? null : { ...state.coverage.notice } };
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
