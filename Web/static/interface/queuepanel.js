// The queue panel's view model, kept out of the DOM (queueview.js draws it): what each row shows, which
// buttons apply, the edits those buttons send, the entries for files the person adds, and what the
// page says about an entry it has no copy of. Pure: Node tests drive it with plain values.

import { ONLY_HOSTS } from "../sync/roles.js";

/** Seconds as people read a duration: 4:05, 1:02:03; "—" when unknown. */
export function durationText(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return "—";
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** The repeat modes in the order the repeat button cycles through them. */
export const REPEAT_CYCLE = Object.freeze(["off", "all", "one"]);

/** The mode after `mode` in REPEAT_CYCLE. */
export function nextRepeatMode(mode) {
  return REPEAT_CYCLE[(REPEAT_CYCLE.indexOf(mode) + 1) % REPEAT_CYCLE.length];
}

/**
 * What the panel shows.
 *
 * @param {object} input
 * @param {import("../sync/queue.js").PlayQueue} input.queue the group's queue as this page has it.
 * @param {boolean} input.hasQueue whether it arrived (a joiner asks for it).
 * @param {string|null} input.playing the entry the group plays (its id), or null.
 * @param {(id: string) => string} input.label how a member is named (its name, else its id).
 * @param {string} input.me this page's participant id.
 * @param {(entry: object) => boolean} input.hasCopy whether this page has a copy of an entry.
 * @param {boolean} [input.live] whether commands can be sent (joined, not reconnecting, and this page controls).
 * @param {boolean} [input.viewer] where only hosts control, this page does not: nothing in the queue is
 *   its to change (adding, removing, moving, jumping, repeat, shuffle), and `locked` says why; its own
 *   copies of the entries stay its own to choose.
 * @returns {{rows: object[], repeatMode: string, shuffled: boolean, summary: string, canNext: boolean,
 *   canPrevious: boolean, canReorder: boolean, canAdd: boolean, locked: string|null, reorderHint: string|null,
 *   empty: string|null}}
 */
export function queueView({ queue, hasQueue, playing, label, me, hasCopy, live = true, viewer = false }) {
  const locked = viewer ? ONLY_HOSTS : null;
  if (viewer) live = false;
  if (!hasQueue) {
    return {
      rows: [], repeatMode: queue.repeatMode, shuffled: queue.shuffleSeed !== null, summary: "", canNext: false,
      canPrevious: false, canReorder: false, canAdd: false, locked, reorderHint: null,
      empty: live || viewer ? "Getting the group's queue…" : "Not joined yet",
    };
  }
  const order = queue.playOrder;
  const shuffled = queue.shuffleSeed !== null;
  const listIndex = new Map(queue.entries.map((entry, index) => [entry.id, index]));
  const canReorder = live && !shuffled;
  const rows = order.map((entry, index) => {
    const at = listIndex.get(entry.id);
    const addedBy = entry.addedBy === me ? "you" : label(entry.addedBy);
    const copy = hasCopy(entry);
    return {
      id: entry.id,
      position: index + 1,
      title: entry.title,
      duration: durationText(entry.duration ?? NaN),
      addedBy,
      playing: entry.id === playing,
      hasCopy: copy,
      status: entry.id === playing ? (copy ? "playing" : "missing") : copy ? "ready" : "no copy",
      canUp: canReorder && at > 0,
      canDown: canReorder && at < queue.entries.length - 1,
      canJump: live && entry.id !== playing,
      canRemove: live,
    };
  });
  const total = order.reduce((sum, entry) => sum + (Number.isFinite(entry.duration) ? entry.duration : 0), 0);
  const unknown = order.some((entry) => !Number.isFinite(entry.duration));
  const count = `${order.length} ${order.length === 1 ? "entry" : "entries"}`;
  const playingIndex = order.findIndex((entry) => entry.id === playing);
  const wraps = queue.repeatMode === "all" && order.length > 0;
  return {
    rows,
    repeatMode: queue.repeatMode,
    shuffled,
    summary: order.length === 0 ? "" : `${count} · ${durationText(total)}${unknown ? "+" : ""}`,
    canNext: live && order.length > 0 && (playingIndex < 0 || playingIndex + 1 < order.length || wraps),
    canPrevious: live && order.length > 0 && (playingIndex < 0 || playingIndex > 0 || wraps),
    canReorder,
    canAdd: live,
    locked,
    reorderHint: shuffled && !viewer ? "Shuffled: turn shuffle off to reorder" : null,
    empty: order.length === 0 ? (viewer ? "The queue is empty: the hosts add what the group plays" : "The queue is empty: add videos to play them together") : null,
  };
}

/**
 * The edit that moves entry `id` one place up (-1) or down (+1) in the list, or null at an end.
 * Positions name entries (`{after: ID}`, `"start"`), so a concurrent edit cannot make it move another.
 */
export function moveEdit(queue, id, direction) {
  const entries = queue.entries;
  const from = entries.findIndex((entry) => entry.id === id);
  if (from < 0) return null;
  const to = from + direction;
  if (to < 0 || to >= entries.length) return null;
  return dropEdit(queue, id, direction < 0 ? to : to + 1);
}

/**
 * The edit that puts entry `id` before the entry now at list index `before` (entries.length: at the
 * end), as a drag and drop does; null when that changes nothing.
 */
export function dropEdit(queue, id, before) {
  const entries = queue.entries;
  const from = entries.findIndex((entry) => entry.id === id);
  if (from < 0 || before < 0 || before > entries.length || before === from || before === from + 1) return null;
  // The entry that will precede it, not counting itself.
  let previous = before - 1;
  if (previous === from) previous -= 1;
  return { op: "move", id, to: previous < 0 ? "start" : { after: entries[previous].id } };
}

/**
 * Queue entries for copies the person adds (`{fingerprint, name, duration, frameRate}`), as
 * PlaybackCoordinator.makeQueueEntries makes them: ids from this member, the send instant (BigInt ns)
 * and the index. The item is the fingerprint (what every member can compute from its file; coplay's
 * members know their files by it too); the title the file's name, as `coplay host` titles its files.
 */
export function entriesForCopies(copies, { participant, sentAt }) {
  return copies.map((copy, index) => ({
    id: `${participant}.${sentAt}.${index}`,
    item: copy.fingerprint,
    fingerprint: null,
    title: String(copy.name),
    duration: Number.isFinite(copy.duration) ? copy.duration : null,
    frameRate: Number.isFinite(copy.frameRate) ? copy.frameRate : null,
    addedBy: participant,
  }));
}

/**
 * What the page says when the group plays an entry it has no copy of: a title for the picker, and
 * what that means for this viewer.
 */
export function missingNotice(entry, { nextWithCopy = null } = {}) {
  const duration = Number.isFinite(entry.duration) ? ` (${durationText(entry.duration)})` : "";
  const title = `Choose your copy of “${entry.title}”${duration}`;
  const later = nextWithCopy === null
    ? "or when the group reaches an entry you have."
    : `or when the group reaches “${nextWithCopy.title}”, which you have.`;
  return {
    title,
    text: `The group is playing “${entry.title}” and this page has no copy of it. The others go on without waiting; `
      + `this page joins them again, in step, as soon as you choose the file (or drop its folder) ${later}`,
    short: `No copy of “${entry.title}”: the others go on; you rejoin when you add it or the group reaches one you have`,
  };
}

/**
 * The entry the page should prepare next (load into a second element) while the group plays
 * `playing`: the one the queue plays at its end, if the page has a copy of it and it is not the same item.
 */
export function entryToPrepare(queue, playing, hasCopy) {
  if (playing === null || playing === undefined) return null;
  const next = queue.entryAfterEnd(playing);
  if (next === null || !hasCopy(next)) return null;
  return next;
}

/**
 * The first entry after `playing` in play order (wrapping with repeat all) the page has a copy of, or
 * null. It walks the way the queue goes on (queue.js `following`): after an entry removed while it
 * played, from its successor; an entry the queue does not know leads nowhere (the top only with repeat all).
 */
export function nextEntryWithCopy(queue, playing, hasCopy) {
  const wrapping = queue.repeatMode === "all";
  let entry = queue.following(playing, wrapping);
  for (let step = 0; entry !== null && step < queue.entries.length; step += 1) {
    if (entry.id === playing) return null;
    if (hasCopy(entry)) return entry;
    entry = queue.following(entry.id, wrapping);
  }
  return null;
}

/** `items` as a list people read: “a”, “b” and “c”; past `most`, “… and N more”. */
export function titleList(titles, most = 4) {
  const quoted = titles.slice(0, most).map((title) => `“${title}”`);
  const rest = titles.length - quoted.length;
  if (rest > 0) return `${quoted.join(", ")} and ${rest} more`;
  if (quoted.length <= 1) return quoted.join("");
  return `${quoted.slice(0, -1).join(", ")} and ${quoted.at(-1)}`;
}

/**
 * What the page says when it joined with files none of which is the session's first item (the
 * activity's), once it has the group's queue: how many of the entries the person has and where they
 * join the group (`kind: "partial"`), or that none of them is in the session (`kind: "none"`: what
 * the session plays, what the person gave; they can choose again).
 *
 * @param {object} input
 * @param {object[]} input.entries the group's entries in play order (`{id, title, duration}`); empty when the session has no queue.
 * @param {{title: string, duration?: number|null}} input.activity the session's first item: what it plays without a queue.
 * @param {string|null} input.playing the entry the group plays (its id), or null.
 * @param {(entry: object) => boolean} input.hasCopy whether the page has a copy of an entry.
 * @param {object|null} [input.next] the first entry after `playing` the page has (nextEntryWithCopy), or null.
 * @param {string[]} input.files the names of the files the person gave.
 * @returns {{kind: "partial"|"none", have: number, total: number, title: string, text: string, short: string}}
 *   `title` and `text` for a banner (the title says how many), `short` in one line (the log, a notice).
 */
export function coverageNotice({ entries, activity, playing, hasCopy, next = null, files }) {
  const total = entries.length;
  const have = entries.filter((entry) => hasCopy(entry)).length;
  if (have === 0) {
    const plays = total === 0
      ? `“${activity.title}”${Number.isFinite(activity.duration) ? ` (${durationText(activity.duration)})` : ""}`
      : `${total === 1 ? "one entry" : `${total} entries`}: ${titleList(entries.map((entry) => entry.title))}`;
    const gave = files.length === 0 ? "no video files" : `${files.length === 1 ? "" : `${files.length} files: `}${titleList(files)}`;
    return {
      kind: "none", have, total,
      title: "None of these files is in this session",
      text: `The session plays ${plays}; you gave ${gave}. Choose your copies of the session's videos (or drop their folder): `
        + "nothing plays here until one of them is yours.",
      short: `None of your files is in the session (it plays ${plays})`,
    };
  }
  const current = entries.find((entry) => entry.id === playing) ?? null;
  const count = have < total ? `You have ${have} of the ${total} entries` : total === 1 ? "You have the queue's one entry" : `You have all ${total} entries`;
  let where;
  if (current === null) {
    where = "you play along from the entries you have.";
  } else if (hasCopy(current)) {
    where = `the group plays “${current.title}”, which you have: you play along now.`;
  } else if (next !== null) {
    where = `the group plays “${current.title}” now, you join at “${next.title}”.`;
  } else {
    where = `the group plays “${current.title}” now, and none of yours comes after it: you join when the group plays one of yours.`;
  }
  return {
    kind: "partial", have, total,
    title: count,
    // The banner's title is the count: its text says the rest.
    text: `${where.charAt(0).toUpperCase()}${where.slice(1)} The others never wait for the ones you do not have.`,
    short: `${count}; ${where}`,
  };
}
