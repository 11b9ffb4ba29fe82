// The group's queue and this page's copies of its entries (library.js): follow the group's entry
// (or name the one this page has no copy of, hold a suspension and ask for the file), prepare the
// next entry in a second element (deck.js), read files the person gives (fingerprinted, probed for
// their duration; dropped folders walked) into copies or new queue entries.

import { fingerprintOfBlob } from "../player/fingerprint.js";
import { isMediaFile } from "../player/library.js";
import { coverageNotice, entriesForCopies, entryToPrepare, missingNotice, nextEntryWithCopy, nextRepeatMode } from "./queuepanel.js";
import { FrameGrid, nsToMs } from "../player/schedule.js";
import { $, library, mayControl, player, shell, state, video } from "./state.js";
import { entryName, fail, hideBanner, logLine, showBanner } from "./log.js";
import { showNoticeText } from "./noticeboard.js";
import { act, control } from "./controls.js";
import { draggedEntry, hasCopy, updateQueuePanel } from "./queueview.js";
import { setPhase } from "./status.js";

/** The items this page can play go into its presence reports (the others see who has what). */
function refreshItems() {
  shell?.setItems(library.items());
}

/** The queue changed (an edit, or it arrived): learn its items, follow the group, prepare the next entry. */
export function onQueueChanged() {
  if (shell === null) return;
  library.learnEntries(shell.queue.entries);
  refreshItems();
  followEntry();
  reviewCoverage();
  schedulePrepare(300);
}

/**
 * Follows the group's entry: plays it when this page has a copy (ending a missing entry's
 * suspension, so the group's commands come again), else names it and asks for the file.
 */
export function followEntry() {
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
  hideCoverageBanner();
}

function showMissing() {
  const missing = state.missing;
  if (missing === null) return;
  const nextWithCopy = shell.hasQueue && shell.state?.entry ? nextEntryWithCopy(shell.queue, shell.state.entry, hasCopy) : null;
  // A person none of whose files is in the session is told so, not asked for this one entry.
  const none = state.coverage?.notice?.kind === "none";
  const notice = none ? state.coverage.notice : missingNotice(missing.entry, { nextWithCopy });
  askForFiles(notice, none ? "or drop the files or their folder here" : "or drop the file or its folder here");
  $("overlay").hidden = true;
}

/** The picker, asking for the files `notice` names (its title and text), `hint` under its button. */
function askForFiles(notice, hint) {
  const picker = $("picker");
  picker.hidden = false;
  picker.dataset.mode = "missing";
  $("picker-title").textContent = notice.title;
  $("picker-text").textContent = notice.text;
  $("picker-button").textContent = "Choose files…";
  $("picker-hint").textContent = hint;
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

/**
 * A page that joined without the session's first item (`state.coverage`, app.js: several files, none
 * of them the activity's): once the group's queue is in, and again when it changes or the person
 * gives more files, says how many of its entries they have and where they join the group, or that
 * none of their files is in the session (what it plays, what they gave; they can choose again, and
 * the files they give then are checked against the queue as they come).
 */
export function reviewCoverage() {
  const coverage = state.coverage;
  if (coverage === null || shell === null || !shell.hasQueue || !state.joined || state.activity === null) return;
  library.learnEntries(shell.queue.entries);
  const playing = shell.state?.entry ?? null;
  let notice = coverageNotice({
    entries: shell.queue.playOrder, activity: state.activity, playing, hasCopy,
    next: playing === null ? null : nextEntryWithCopy(shell.queue, playing, hasCopy), files: coverage.files,
  });
  // A session without a queue plays its first item: a copy of it given since is not "none".
  if (notice.kind === "none" && library.has(state.activity.item)) notice = null;
  // Said again when it changes: the kind, how many entries they have, the files they gave (not where the group is).
  const key = notice === null ? "covered" : `${notice.kind} ${notice.have}/${notice.total} ${coverage.files.join("\n")}`;
  const before = coverage.notice?.kind ?? null;
  coverage.notice = notice;
  if ($("picker").dataset.mode === "message") $("picker").hidden = true; // "Getting the group's queue…"
  if (coverage.key === key) return;
  coverage.key = key;
  if (notice === null || notice.kind === "partial") {
    if (before === "none") {
      hideBanner();
      state.lastError = null;
      setPhase("joined");
    }
    if (notice !== null) {
      logLine(notice.short, "info");
      showNoticeText(notice.short);
      showBanner(notice.title, notice.text, { tone: "info" });
      // Playing along already: the banner goes after a while (else when the page reaches an entry it has).
      if (state.missing === null) setTimeout(hideCoverageBanner, 12000);
    }
  } else {
    setPhase("mismatch");
    fail(notice.title, notice.text, { actions: [] });
    if (state.missing === null) {
      // The group has no state to follow yet: ask for the files all the same.
      askForFiles(notice, "or drop the files or their folder here");
    }
  }
  showMissing();
}

/** Hides the banner reviewCoverage showed for a partial set of copies, if it is still up. */
function hideCoverageBanner() {
  const notice = state.coverage?.notice;
  if (notice?.kind === "partial" && !$("banner").hidden && $("banner-title").textContent === notice.title) hideBanner();
}

/** An item's frame grid: the activity's, else from its queue entry's frame rate. */
export function gridFor(item) {
  if (item === state.activity?.item) return FrameGrid.fromActivity(state.activity);
  const entry = shell?.queue.entries.find((e) => e.item === item || e.fingerprint === item);
  if (!entry || !(entry.frameRate > 0)) return null;
  return FrameGrid.fromActivity({ frameInterval: 1 / entry.frameRate, firstFrameTime: 0, duration: entry.duration });
}

/** A new element in the screen, under the one on top (deck.js). */
export function createVideo() {
  if (state.ownVideoFree) {
    // The page joined without the session's first item: its own element plays the first entry it has.
    state.ownVideoFree = false;
    video.dataset.shown = "false";
    return video;
  }
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
export async function takeFiles(files, { queue = false } = {}) {
  if (files.length === 0) return;
  const note = $("queue-note");
  note.hidden = false;
  delete note.dataset.tone;
  note.textContent = `Checking ${files.length === 1 ? `“${files[0].name}”` : `${files.length} files`}…`;
  const copies = await readCopies(files);
  note.hidden = true;
  if (state.coverage !== null && copies.length > 0) state.coverage.files = files.filter(isMediaFile).map((file) => file.name);
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
  reviewCoverage();
  schedulePrepare(300);
}

/** The files of a drop, folders walked (at most 2,000 files, 8 levels deep). */
export async function filesOfDrop(dataTransfer) {
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

export function bindQueuePanel() {
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
    // A page that does not control adds nothing to the group's queue: dropped files are its own copies.
    takeFiles(await filesOfDrop(e.dataTransfer), { queue: mayControl() });
  });
}
