// A port of the group's play queue: Sources/PlaybackCoordinator/PlayQueue.swift (PlayQueue),
// QueueMessages.swift (QueueSnapshotPart's parts and assembly) and QueueReplica.swift (one member's
// copy of the queue, kept equal to every other member's).
//
// RULE: this file and those change together, like coordinator.js and CoordinatorCore.swift: names,
// order and structure are kept parallel, and the shared vectors (Tests/Vectors/coordinator/model/queue-*)
// must pass on both.
//
// Types in JS:
//   - QueueEntry: {id, item, fingerprint (the file's v2 fingerprint when item is another identity, or null),
//     title, duration (seconds or null), frameRate (or null), addedBy, addedByName (the adder's display name, or null)};
//   - RepeatMode: "off" | "one" | "all";
//   - QueuePosition: "end" | "start" | {after: ENTRY_ID};
//   - QueueEdit: its wire form (messages.js): {op: "add", entries, at} | {op: "remove", ids} |
//     {op: "move", id, to} | {op: "clear"} | {op: "repeat", mode} | {op: "shuffle", seed (UInt32 or null)};
//   - QueueSnapshotPart: {snapshot, request (BigInt or null), through (BigInt), part, parts, entries,
//     repeatMode, shuffleSeed, removedPlaying, state (or null), sentAt};
//   - reference times, durations and channel sequences: BigInt nanoseconds / BigInt, as in coordinator.js.

import { queueSnapshotKey } from "./messages.js";

const NS_PER_MILLISECOND = 1_000_000n;

/** Swift's String `<` (code units here; ids are ASCII). */
const compareStrings = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

const minBig = (a, b) => (a < b ? a : b);
const maxBig = (a, b) => (a > b ? a : b);

const encoder = new TextEncoder();

/**
 * The group's play queue: entries in list order, the repeat mode and the shuffle, and what plays
 * after each entry (PlayQueue.swift).
 *
 * A value edited in place by `apply(edit, playing)`, which is deterministic: members that apply the
 * same edits in the same order hold equal queues. Positions people type are 1-based positions in
 * `playOrder`, which is the list order unless the queue is shuffled.
 *
 * ```js
 * const queue = new PlayQueue();
 * queue.apply({ op: "add", entries: [a, b, c], at: "end" });
 * queue.apply({ op: "repeat", mode: "all" });
 * queue.entryAfterEnd(c.id)?.id;   // a.id: repeat all wraps around
 * ```
 */
export class PlayQueue {
  /**
   * An empty queue, or one with these contents (a snapshot received from another member).
   *
   * @param {object} [contents]
   * @param {object[]} [contents.entries] the entries in list order.
   * @param {"off"|"one"|"all"} [contents.repeatMode] what happens at the end of an entry.
   * @param {number|null} [contents.shuffleSeed] the shuffle's seed, or null for list order.
   * @param {{id: string, successor: string|null}|null} [contents.removedPlaying] the entry that played
   *   when it was removed, and the entry that followed it in play order then.
   */
  constructor({ entries = [], repeatMode = "off", shuffleSeed = null, removedPlaying = null } = {}) {
    this.entries = [...entries];
    this.repeatMode = repeatMode;
    this.shuffleSeed = shuffleSeed;
    this.removedPlaying = removedPlaying;
  }

  /** An entry id unique in the session: the adding member, the reference time (ns) it sent the edit at, the entry's index in it. */
  static entryID(participant, sentAt, index) {
    return `${participant}.${sentAt}.${index}`;
  }

  /** Whether the queue has no entries. */
  get isEmpty() {
    return this.entries.length === 0;
  }

  /** Whether the queue equals an empty PlayQueue (no entries, repeat off, no shuffle, nothing removed while playing). */
  get isInitial() {
    return this.entries.length === 0 && this.repeatMode === "off" && this.shuffleSeed === null && this.removedPlaying === null;
  }

  /** The entry with this id, or null. */
  entry(id) {
    return this.entries.find((entry) => entry.id === id) ?? null;
  }

  /** The entries in the order the group plays them: the list order, or the shuffled order. */
  get playOrder() {
    const seed = this.shuffleSeed;
    if (seed === null) return [...this.entries];
    return this.entries
      .map((entry, index) => ({ key: PlayQueue.shuffleKey(seed, entry.id), index, entry }))
      .sort((a, b) => a.key - b.key || a.index - b.index)
      .map(({ entry }) => entry);
  }

  /** The 1-based position of an entry in `playOrder`, or null. */
  position(id) {
    const index = this.playOrder.findIndex((entry) => entry.id === id);
    return index < 0 ? null : index + 1;
  }

  /** The entry at a 1-based position of `playOrder`, or null. */
  entryAtPosition(position) {
    const order = this.playOrder;
    return position >= 1 && position <= order.length ? order[position - 1] : null;
  }

  /**
   * The shuffle's sort key of an entry: 32-bit FNV-1a over the UTF-8 of `"<seed>:<id>"` (Swift
   * computes the same; equal keys keep list order).
   */
  static shuffleKey(seed, id) {
    let hash = 0x811c9dc5;
    for (const byte of encoder.encode(`${seed}:${id}`)) {
      hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
    }
    return hash;
  }

  // MARK: What plays next

  /**
   * What the group plays when entry `id` reaches its end, by the repeat mode: the same entry
   * (`one`), the next in play order, the first after the last (`all`), or nothing (null).
   */
  entryAfterEnd(id) {
    if (this.repeatMode === "one") {
      const same = this.entry(id);
      if (same !== null) return same;
    }
    return this.following(id, this.repeatMode === "all");
  }

  /** The entry a `next` command moves to (the first when `id` is null), or null after the last unless repeat is `all`. */
  entryForNext(id) {
    if (id === null || id === undefined) return this.playOrder[0] ?? null;
    return this.following(id, this.repeatMode === "all");
  }

  /** The entry a `previous` command moves to, or null before the first unless repeat is `all`. */
  entryForPrevious(id) {
    const order = this.playOrder;
    const index = id === null || id === undefined ? -1 : order.findIndex((entry) => entry.id === id);
    if (index < 0) return order[order.length - 1] ?? null;
    if (index > 0) return order[index - 1];
    return this.repeatMode === "all" ? (order[order.length - 1] ?? null) : null;
  }

  /**
   * The entry after `id` in play order (the first after the last when `wrapping`); after an entry
   * removed while it played, its successor then (`removedPlaying`); after an unknown entry, the first
   * when `wrapping`, else null.
   */
  following(id, wrapping) {
    const order = this.playOrder;
    const first = order[0] ?? null;
    const index = order.findIndex((entry) => entry.id === id);
    if (index >= 0) {
      if (index + 1 < order.length) return order[index + 1];
      return wrapping ? first : null;
    }
    // The entry was removed while it played: continue where it was.
    const removed = this.removedPlaying;
    if (removed !== null && removed.id === id) {
      if (removed.successor !== null) {
        const next = this.entry(removed.successor);
        if (next !== null) return next;
      }
      return wrapping ? first : null;
    }
    return wrapping ? first : null;
  }

  // MARK: Edits

  /**
   * Applies an edit. `playing` is the entry the group plays at this point of the channel's order:
   * removing it records where the queue continues after it.
   */
  apply(edit, playing = null) {
    switch (edit.op) {
      case "add": {
        const fresh = [];
        for (const candidate of edit.entries) {
          if (this.entry(candidate.id) === null && !fresh.some((entry) => entry.id === candidate.id)) fresh.push(candidate);
        }
        this.entries.splice(this.insertionIndex(edit.at, this.entries.length), 0, ...fresh);
        break;
      }
      case "remove": {
        const removing = new Set(edit.ids);
        if (playing !== null && playing !== undefined && removing.has(playing) && this.entry(playing) !== null) {
          const order = this.playOrder;
          const index = order.findIndex((entry) => entry.id === playing);
          const successor = order.slice(index + 1).find((entry) => !removing.has(entry.id))?.id ?? null;
          this.removedPlaying = { id: playing, successor };
        }
        this.entries = this.entries.filter((entry) => !removing.has(entry.id));
        break;
      }
      case "move": {
        const from = this.entries.findIndex((entry) => entry.id === edit.id);
        if (from < 0) return;
        const to = edit.to;
        if (typeof to === "object" && to !== null && (to.after === edit.id || this.entry(to.after) === null)) return;
        const [moving] = this.entries.splice(from, 1);
        this.entries.splice(this.insertionIndex(to, this.entries.length), 0, moving);
        break;
      }
      case "clear":
        if (playing !== null && playing !== undefined && this.entry(playing) !== null) this.removedPlaying = { id: playing, successor: null };
        this.entries = [];
        break;
      case "repeat":
        this.repeatMode = edit.mode;
        break;
      case "shuffle":
        this.shuffleSeed = edit.seed ?? null;
        break;
      default:
        throw new TypeError(`unknown queue edit ${edit.op}`);
    }
  }

  insertionIndex(position, fallback) {
    if (position === "end") return this.entries.length;
    if (position === "start") return 0;
    const index = this.entries.findIndex((entry) => entry.id === position.after);
    return index < 0 ? fallback : index + 1;
  }
}

// MARK: QueueSnapshotPart

/** The most entries one part of a copy of the queue carries (QueueSnapshotPart.maximumEntries). */
export const MAXIMUM_SNAPSHOT_ENTRIES = 200;

/** A queue in parts (QueueSnapshotPart.parts(of:…)): at least one, the state in the first only. */
export function snapshotParts(queue, { snapshot, request, through, state = null, sentAt }) {
  const chunks = [];
  for (let start = 0; start < Math.max(queue.entries.length, 1); start += MAXIMUM_SNAPSHOT_ENTRIES) {
    chunks.push(queue.entries.slice(start, Math.min(start + MAXIMUM_SNAPSHOT_ENTRIES, queue.entries.length)));
  }
  return chunks.map((entries, index) => ({
    snapshot, request, through, part: index, parts: chunks.length, entries,
    repeatMode: queue.repeatMode, shuffleSeed: queue.shuffleSeed, removedPlaying: queue.removedPlaying,
    state: index === 0 ? state : null, sentAt,
  }));
}

/** The queue the parts of one copy make, if every part is there (QueueSnapshotPart.assemble); else null. */
export function assembleSnapshot(parts) {
  const first = parts[0];
  if (first === undefined || parts.length !== first.parts) return null;
  const indexes = new Set(parts.map((part) => part.part));
  if (indexes.size !== first.parts) return null;
  for (let index = 0; index < first.parts; index += 1) if (!indexes.has(index)) return null;
  const ordered = [...parts].sort((a, b) => a.part - b.part);
  return new PlayQueue({
    entries: ordered.flatMap((part) => part.entries), repeatMode: first.repeatMode, shuffleSeed: first.shuffleSeed,
    removedPlaying: first.removedPlaying,
  });
}

// MARK: QueueReplica

/**
 * One member's copy of the group's queue, kept equal to every other member's (QueueReplica.swift;
 * sans-IO, held by the CoordinatorCore).
 *
 * Edits are applied in the channel's total order. A joiner asks for the queue after its own
 * `joined`, buffers the edits that follow and takes the first complete answer (the queue as of the
 * request's place in the order); the member first by id among those that have the queue answers at
 * once, the others a step per rank later unless they see an answer. A joiner alone starts from the
 * retained copy, which a member publishes after its own edits (at most once a second), as does one
 * whose request nobody answered within ANSWER_TIMEOUT.
 */
export class QueueReplica {
  /** How long each rank waits before answering a request (BigInt ns). */
  static ANSWER_STEP = 250n * NS_PER_MILLISECOND;
  /** The least time between two retained copies from one member. */
  static PUBLISH_INTERVAL = 1000n * NS_PER_MILLISECOND;
  /** How long a joiner waits for an answer before it starts from the retained copy. */
  static ANSWER_TIMEOUT = 3000n * NS_PER_MILLISECOND;

  /** @param {string} participant the local participant. */
  constructor(participant) {
    /** The queue, once this member has it. */
    this.queue = new PlayQueue();
    /** Whether this member has the queue (it joined an empty session, or an answer came). */
    this.isComplete = false;
    this.participant = participant;
    this.buffered = []; // {sequence, edit, playing}: edits before the queue came, in the channel's order
    this.ownRequests = []; // this member's requests, by channel sequence once delivered
    this.requestInFlight = false; // a request of this member is sent, not yet delivered
    this.answers = new Map(); // snapshot -> parts of answers to this member's requests
    this.answerers = new Map(); // snapshot -> the answer's sender
    this.retained = new Map(); // snapshot -> retained parts from the replay
    this.scheduledAnswers = []; // {request, requester, due, parts}: sent unless another member answers first
    this.lastPublished = null; // when this member last published the retained copy
    this.publishDue = null; // a publication it owes
    this.lastSequence = 0n; // the highest channel sequence this member processed
    this.copies = 0;
    this.answerDeadline = null; // when this member stops waiting for an answer
    /** The state and place in the order of the answer this member completed with ({state, through, edits}), until the core took it. */
    this.answeredState = null;
  }

  /**
   * Hands the answer's state ({state, through, edits}) to the core, once; null when there is none.
   * `edits` ({sequence, edit, playing}) are the edits ordered after the request, which the core
   * applies in their turn among the proposals it replays (applyAnswered); `playing` is the entry
   * this member believed played when the edit came.
   */
  takeAnsweredState() {
    const answered = this.answeredState;
    this.answeredState = null;
    return answered;
  }

  /** Applies an edit of the answered state's, in its turn (`playing`: the entry the group played then). */
  applyAnswered(edit, playing) {
    this.queue.apply(edit, playing);
  }

  // MARK: Channel

  /**
   * The local member's own `joined` arrived (the retained messages are in): ask the others for the
   * queue, or start from the retained copy when nobody else is here.
   *
   * @param {Set<string>} others the other members.
   */
  joinedSelf(others, now) {
    if (this.isComplete) return [];
    if (others.size === 0) {
      this.adoptRetained();
      return [];
    }
    this.requestInFlight = true;
    return [send({ queueRequest: { sentAt: now } }, null)];
  }

  /** A member left: a joiner whose answerers are all gone asks again, or starts from the retained copy when it is alone now. */
  left(member, others, now) {
    this.scheduledAnswers = this.scheduledAnswers.filter((answer) => answer.requester !== member);
    if (this.isComplete || !(this.ownRequests.length > 0 || this.requestInFlight)) return [];
    if (others.size === 0) {
      this.adoptRetained();
      return [];
    }
    const answering = [...this.answers.entries()].some(([snapshot, parts]) =>
      parts[0] !== undefined && this.ownRequests.includes(parts[0].request) && others.has(this.answerers.get(snapshot)));
    if (answering || this.requestInFlight) return [];
    this.requestInFlight = true;
    return [send({ queueRequest: { sentAt: now } }, null)];
  }

  /** An edit, in the channel's order. `playing` is the entry the group plays at this point. */
  receiveEdit(edit, sender, sequence, playing, now) {
    this.lastSequence = maxBig(this.lastSequence, sequence);
    if (!this.isComplete) {
      this.buffered.push({ sequence, edit, playing });
      return;
    }
    this.queue.apply(edit, playing);
    if (sender === this.participant) {
      // Keep the retained copy current for a member that joins an empty session later.
      const earliest = this.lastPublished === null ? now : this.lastPublished + QueueReplica.PUBLISH_INTERVAL;
      this.publishDue = minBig(this.publishDue ?? earliest, maxBig(earliest, now));
    }
  }

  /** A request for the queue, in the channel's order. */
  receiveRequest(sender, sequence, members, state, now) {
    this.lastSequence = maxBig(this.lastSequence, sequence);
    if (sender === this.participant) {
      this.requestInFlight = false;
      this.ownRequests.push(sequence);
      // The wait for an answer counts from the request's place in the order (the members present
      // then answer it), not from sending: a relay outage must not make the joiner take the
      // retained copy, which lacks the edits since it was published.
      this.answerDeadline = now + QueueReplica.ANSWER_TIMEOUT;
      this.completeIfAnswered();
      return;
    }
    // Only a member that has the queue answers (one that waits for its own answer does not know
    // the state at this point for sure: it may have started from a retained one).
    if (!this.isComplete) return;
    this.scheduleAnswer(sequence, sender, members, state, now);
  }

  /** A part of a copy of the queue. */
  receivePart(part, sender, sequence) {
    this.lastSequence = maxBig(this.lastSequence, sequence);
    const request = part.request;
    if (request === null || request === undefined) {
      if (!this.isComplete) appendTo(this.retained, part.snapshot, part);
      return;
    }
    // Somebody answered: nobody else needs to.
    this.scheduledAnswers = this.scheduledAnswers.filter((answer) => answer.request !== request);
    if (this.isComplete) return;
    // Kept whoever asked: the answer to this member's request can arrive before the channel has
    // handed its own request back to it.
    appendTo(this.answers, part.snapshot, part);
    this.answerers.set(part.snapshot, sender);
    this.completeIfAnswered();
  }

  /** Completes with the first whole answer to one of this member's requests, if there is one. */
  completeIfAnswered() {
    for (const snapshot of [...this.answers.keys()].sort(compareStrings)) {
      const parts = this.answers.get(snapshot);
      if (parts[0] === undefined || !this.ownRequests.includes(parts[0].request)) continue;
      const copy = assembleSnapshot(parts);
      if (copy === null) continue;
      this.queue = copy;
      const through = parts[0].through;
      const state = parts.find((p) => p.part === 0)?.state ?? null;
      // With the group's state at the request, the edits after it wait for the core (the entry
      // each found playing is known once the core replays the proposals on that state).
      const edits = state === null ? [] : this.buffered.filter((entry) => entry.sequence > through).map(({ sequence, edit, playing }) => ({ sequence, edit, playing }));
      if (state !== null) this.buffered = [];
      this.answeredState = { state, through, edits };
      this.finish(through);
      return;
    }
  }

  /** Any other message's sequence (the order this member has processed through). */
  processed(sequence) {
    this.lastSequence = maxBig(this.lastSequence, sequence);
  }

  // MARK: Time

  /** Sends answers and the retained copy when due. */
  tick(now, members) {
    const actions = [];
    if (!this.isComplete && this.answerDeadline !== null && now >= this.answerDeadline) {
      // Nobody answered (those who could left): start from the retained copy.
      this.adoptRetained();
    }
    const due = this.scheduledAnswers.filter((answer) => answer.due <= now);
    this.scheduledAnswers = this.scheduledAnswers.filter((answer) => !(answer.due <= now));
    for (const answer of due) for (const part of answer.parts) actions.push(send({ queueSnapshot: part }, null));
    if (this.publishDue !== null && this.publishDue <= now && this.isComplete) {
      this.publishDue = null;
      this.lastPublished = now;
      this.copies += 1;
      const parts = snapshotParts(this.queue, {
        snapshot: `${this.participant}.${this.copies}`, request: null, through: this.lastSequence, sentAt: now,
      });
      for (const part of parts) actions.push(send({ queueSnapshot: part }, queueSnapshotKey(part.part)));
    }
    return actions;
  }

  /** The next instant tick() has something to do, or null. */
  get nextDeadline() {
    let deadline = null;
    const candidates = [...this.scheduledAnswers.map((answer) => answer.due), this.publishDue, this.isComplete ? null : this.answerDeadline];
    for (const candidate of candidates) if (candidate !== null) deadline = deadline === null ? candidate : minBig(deadline, candidate);
    return deadline;
  }

  // MARK: Local edits

  /** The message for a local edit (applied when the channel delivers it back). */
  send(edit, now) {
    return [send({ queueEdit: { edit, sentAt: now } }, null)];
  }

  // MARK: Private

  scheduleAnswer(request, requester, members, state, now) {
    const ranked = [...members].filter((member) => member !== requester).sort(compareStrings);
    const index = ranked.indexOf(this.participant);
    const rank = index < 0 ? ranked.length : index;
    this.copies += 1;
    const parts = snapshotParts(this.queue, {
      snapshot: `${this.participant}.${this.copies}`, request, through: request, state, sentAt: now,
    });
    this.scheduledAnswers.push({ request, requester, due: now + QueueReplica.ANSWER_STEP * BigInt(rank), parts });
  }

  adoptRetained() {
    const latest = latestWholeCopy(this.retained);
    this.queue = latest?.queue ?? new PlayQueue();
    this.finish(latest?.through ?? 0n);
  }

  /** Takes the queue as complete through `through` and applies the edits buffered after it. */
  finish(through) {
    this.isComplete = true;
    this.answerDeadline = null;
    for (const entry of this.buffered) if (entry.sequence > through) this.queue.apply(entry.edit, entry.playing);
    this.buffered = [];
    this.answers = new Map();
    this.answerers = new Map();
    this.retained = new Map();
    this.ownRequests = [];
  }
}

/** The whole copy with the highest `through` (the first of equals) among parts by snapshot: `{through, queue}`, or null. */
function latestWholeCopy(partsBySnapshot) {
  let latest = null;
  for (const parts of partsBySnapshot.values()) {
    const queue = assembleSnapshot(parts);
    if (queue !== null && (latest === null || latest.through < parts[0].through)) latest = { through: parts[0].through, queue };
  }
  return latest;
}

/**
 * The queue's latest retained copy among channel events, or null when none is whole. A page reads it
 * before joining, from the retained messages the relay replays at the welcome: whether a file that is
 * not the session's first item is one of its entries (the copy may lag the last edits by up to
 * PUBLISH_INTERVAL).
 *
 * @param {Array<{type: string, message?: object}>} events the channel's events, in order.
 */
export function retainedQueue(events) {
  const parts = new Map();
  for (const event of events) {
    const part = event.type === "message" ? event.message?.queueSnapshot : undefined;
    if (part === undefined || part === null || (part.request ?? null) !== null) continue;
    appendTo(parts, part.snapshot, part);
  }
  return latestWholeCopy(parts)?.queue ?? null;
}

function appendTo(map, key, value) {
  if (!map.has(key)) map.set(key, []);
  map.get(key).push(value);
}

const send = (message, retainKey) => ({ type: "send", message, retainKey });
