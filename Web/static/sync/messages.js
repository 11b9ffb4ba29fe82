// CoordinationMessage's JSON, as docs/protocol.md ("Coordination messages") defines it and
// Sources/PlaybackCoordinator/CoordinationMessage+Codable.swift writes it; the shared vectors
// Tests/Vectors/messages/coordination.json pin both.
//
// A message is one object: {"kind": "presence", "v": 1, ...its fields}. Reference times, durations
// (fields ending in `Ns`) and revisions are integers (nanoseconds; BigInt here, as json.js reads
// them exactly), item times, item durations and rates numbers (seconds), participants strings,
// suspension reasons their Swift `description` ("buffering", "custom:NAME"). Absent optionals are
// left out (null reads as absent); fields a reader does not know are ignored.
//
// In JS a message is {state: proposal} | {suspension: notice} | {presence: report} |
// {queueEdit: notice} | {queueRequest: request} | {queueSnapshot: part} (queue.js describes the
// queue's values), or {unsupported: {kind, version}} for a kind this page does not know or a newer version of one: the
// coordinator reports it once per sender and ignores it. Add a kind in KINDS below (and in Swift).

import { fromUTF8, utf8 } from "../wire/bytes.js";
import { parseJSON, stringifyJSON } from "../wire/json.js";

/** The envelope name coordination messages travel under (Swift's unqualified type name). */
export const COORDINATION_MESSAGE_NAME = "CoordinationMessage";

/** A message body that is not a CoordinationMessage (dropped, as Swift's messenger drops it). */
export class MessageDecodingError extends Error {
  constructor(message) {
    super(message);
    this.name = "MessageDecodingError";
  }
}

const TWO_64 = 1n << 64n;

/** A duration field (`…Ns`): integer nanoseconds -> BigInt. */
function nanoseconds(value, what) {
  return int64(value, what);
}

function integer(value, what) {
  if (typeof value === "bigint") return value;
  if (typeof value === "number" && Number.isInteger(value)) return BigInt(value);
  throw new MessageDecodingError(`${what} is not an integer`);
}

function int64(value, what) {
  const v = integer(value, what);
  if (v < -(1n << 63n) || v >= 1n << 63n) throw new MessageDecodingError(`${what} is out of the Int64 range`);
  return v;
}

function uint64(value, what) {
  const v = integer(value, what);
  if (v < 0n || v >= TWO_64) throw new MessageDecodingError(`${what} is out of the UInt64 range`);
  return v;
}

function double(value, what) {
  if (typeof value === "number") return value;
  if (typeof value === "bigint") return Number(value);
  throw new MessageDecodingError(`${what} is not a number`);
}

function string(value, what) {
  if (typeof value !== "string") throw new MessageDecodingError(`${what} is not a string`);
  return value;
}

function bool(value, what) {
  if (typeof value !== "boolean") throw new MessageDecodingError(`${what} is not a Boolean`);
  return value;
}

function object(value, what) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new MessageDecodingError(`${what} is not an object`);
  return value;
}

function optional(value, decode, what) {
  return value === undefined || value === null ? null : decode(value, what);
}

// MARK: SuspensionReason

const NAMED_REASONS = [
  "stallRecovery", "buffering", "userChangingTime", "interruption", "playingInterstitial", "coordinatedPlaybackNotPossible",
  "userActionRequired",
];

/** Reason (its description) -> JSON: the same string. */
export function encodeReason(reason) {
  if (NAMED_REASONS.includes(reason) || reason.startsWith("custom:")) return reason;
  throw new TypeError(`unknown suspension reason ${reason}`);
}

/** JSON -> reason (its description). */
export function decodeReason(value) {
  const name = string(value, "SuspensionReason");
  if (NAMED_REASONS.includes(name) || name.startsWith("custom:")) return name;
  throw new MessageDecodingError(`unknown suspension reason ${name}`);
}

// MARK: Payload types

/** PlaybackState -> its fields (flat, as in a `state` message; `revision` only when not 0). */
export function encodeState(s) {
  const json = {
    item: s.item,
    rate: s.rate,
    intendedRate: s.intendedRate,
    anchorItemTime: s.anchorItemTime,
    anchorReferenceTime: s.anchorReferenceTime,
    originator: s.originator,
  };
  if (s.revision !== null && s.revision !== undefined && BigInt(s.revision) !== 0n) json.revision = s.revision;
  if (s.duration !== null && s.duration !== undefined) json.duration = s.duration;
  if (s.entry !== null && s.entry !== undefined) json.entry = s.entry;
  return json;
}

/** Fields -> PlaybackState (a missing `revision` is 0). */
export function decodeState(value) {
  const v = object(value, "PlaybackState");
  return {
    item: string(v.item, "item"),
    rate: double(v.rate, "rate"),
    anchorItemTime: double(v.anchorItemTime, "anchorItemTime"),
    anchorReferenceTime: int64(v.anchorReferenceTime, "anchorReferenceTime"),
    originator: string(v.originator, "originator"),
    revision: optional(v.revision, uint64, "revision") ?? 0n,
    intendedRate: double(v.intendedRate, "intendedRate"),
    duration: optional(v.duration, double, "duration"),
    entry: optional(v.entry, string, "entry"),
  };
}

/** CommandLabel's raw values: the commands, the queue commands, and `advance` and `restate` (nobody's command). */
const COMMAND_LABELS = ["play", "pause", "seek", "rate", "item", "next", "previous", "jump", "advance", "restate"];

/** StateProposal -> its fields: `sentAt`, `command`, `follows` (an `advance`'s) and the state's, flat. */
function encodeProposal(p) {
  const json = { sentAt: p.sentAt, command: p.command };
  if (p.follows !== null && p.follows !== undefined) json.follows = p.follows;
  return { ...json, ...encodeState(p.state) };
}

function decodeProposal(v) {
  const command = string(v.command, "command");
  if (!COMMAND_LABELS.includes(command)) throw new MessageDecodingError(`unknown command ${command}`);
  return { state: decodeState(v), command, sentAt: int64(v.sentAt, "sentAt"), follows: optional(v.follows, string, "follows") };
}

function encodeNotice(n) {
  const json = {
    sentAt: n.sentAt,
    id: n.id,
    phase: n.phase,
    reason: encodeReason(n.reason),
    effectiveAt: n.effectiveAt,
    waits: n.waits,
    timeoutNs: n.timeout,
  };
  if (n.proposedItemTime !== null && n.proposedItemTime !== undefined) json.proposedItemTime = n.proposedItemTime;
  if (n.history !== null && n.history !== undefined) json.history = encodeHistory(n.history);
  return json;
}

// SuspensionHistory: what the sender knew of the group's waits (CoordinationMessage.swift).
function encodeHistory(h) {
  const json = {};
  if (h.revision !== null) json.revision = h.revision;
  if (h.anchorReferenceTime !== null) json.anchorReferenceTime = h.anchorReferenceTime;
  if (h.anchorItemTime !== null) json.anchorItemTime = h.anchorItemTime;
  json.suspensions = h.suspensions.map((e) => {
    const entry = { id: e.id, participant: e.participant, reason: encodeReason(e.reason), begin: e.begin };
    if (e.end !== null) entry.end = e.end;
    entry.timeoutNs = e.timeout;
    entry.waits = e.waits;
    return entry;
  });
  return json;
}

function decodeHistory(value) {
  const v = object(value, "SuspensionHistory");
  if (!Array.isArray(v.suspensions)) throw new MessageDecodingError("suspensions is not an array");
  return {
    revision: optional(v.revision, uint64, "revision"),
    anchorReferenceTime: optional(v.anchorReferenceTime, int64, "anchorReferenceTime"),
    anchorItemTime: optional(v.anchorItemTime, double, "anchorItemTime"),
    suspensions: v.suspensions.map((value) => {
      const e = object(value, "SuspensionHistory.Entry");
      return {
        id: string(e.id, "id"),
        participant: string(e.participant, "participant"),
        reason: decodeReason(e.reason),
        begin: int64(e.begin, "begin"),
        end: optional(e.end, int64, "end"),
        timeout: nanoseconds(e.timeoutNs, "timeoutNs"),
        waits: bool(e.waits, "waits"),
      };
    }),
  };
}

function decodeNotice(v) {
  const phase = string(v.phase, "phase");
  if (phase !== "begin" && phase !== "end") throw new MessageDecodingError(`unknown phase ${phase}`);
  return {
    id: string(v.id, "id"),
    phase,
    reason: decodeReason(v.reason),
    effectiveAt: int64(v.effectiveAt, "effectiveAt"),
    waits: bool(v.waits, "waits"),
    timeout: nanoseconds(v.timeoutNs, "timeoutNs"),
    proposedItemTime: optional(v.proposedItemTime, double, "proposedItemTime"),
    sentAt: int64(v.sentAt, "sentAt"),
    history: optional(v.history, decodeHistory, "history"),
  };
}

function encodeReport(r) {
  const json = { sentAt: r.sentAt, observedDelayNs: r.observedDelay, prerollNs: r.preroll };
  if (r.item !== null && r.item !== undefined) json.item = r.item;
  if (r.name !== null && r.name !== undefined) json.name = r.name;
  if (r.items !== null && r.items !== undefined) json.items = r.items.map(encodeItemSummary);
  if (r.oneShot !== null && r.oneShot !== undefined) json.oneShot = r.oneShot;
  if (r.caughtUp !== null && r.caughtUp !== undefined && Number.isFinite(r.caughtUp)) json.caughtUp = r.caughtUp;
  return json;
}

/**
 * PresenceReport.ItemSummary -> JSON (duration left out when unknown; frameIdentical only when a
 * member says it plays the item from a near copy, false).
 */
function encodeItemSummary(summary) {
  const json = { item: summary.item };
  if (summary.duration !== null && summary.duration !== undefined) json.duration = summary.duration;
  if (summary.frameIdentical !== null && summary.frameIdentical !== undefined) json.frameIdentical = summary.frameIdentical;
  return json;
}

function decodeItemSummary(value) {
  const v = object(value, "ItemSummary");
  const summary = { item: string(v.item, "item"), duration: optional(v.duration, double, "duration") };
  const frameIdentical = optional(v.frameIdentical, bool, "frameIdentical");
  if (frameIdentical !== null) summary.frameIdentical = frameIdentical;
  return summary;
}

function decodeItemSummaries(value) {
  if (!Array.isArray(value)) throw new MessageDecodingError("items is not an array");
  return value.map(decodeItemSummary);
}

function decodeReport(v) {
  const report = {
    sentAt: int64(v.sentAt, "sentAt"),
    observedDelay: nanoseconds(v.observedDelayNs, "observedDelayNs"),
    preroll: nanoseconds(v.prerollNs, "prerollNs"),
    item: optional(v.item, string, "item"),
    name: optional(v.name, string, "name"),
    items: optional(v.items, decodeItemSummaries, "items"),
  };
  // Only when sent: a one-shot member (`coplay control`), a player that just caught up.
  const oneShot = optional(v.oneShot, bool, "oneShot");
  if (oneShot !== null) report.oneShot = oneShot;
  const caughtUp = optional(v.caughtUp, double, "caughtUp");
  if (caughtUp !== null) report.caughtUp = caughtUp;
  return report;
}

// MARK: The queue's messages (QueueMessages+Codable.swift; PlayQueue's synthesized Codable)

const REPEAT_MODES = ["off", "one", "all"];

function uint32(value, what) {
  const v = integer(value, what);
  if (v < 0n || v > 0xffffffffn) throw new MessageDecodingError(`${what} is out of the UInt32 range`);
  return Number(v);
}

function int(value, what) {
  return Number(int64(value, what));
}

function array(value, decode, what) {
  if (!Array.isArray(value)) throw new MessageDecodingError(`${what} is not an array`);
  return value.map((element) => decode(element, what));
}

function repeatMode(value, what) {
  const mode = string(value, what);
  if (!REPEAT_MODES.includes(mode)) throw new MessageDecodingError(`unknown repeat mode ${mode}`);
  return mode;
}

/** QueueEntry -> JSON (`fingerprint`, `duration`, `frameRate` and `addedByName` left out when unknown). */
export function encodeQueueEntry(e) {
  const json = { id: e.id, item: e.item };
  if (e.fingerprint !== null && e.fingerprint !== undefined) json.fingerprint = e.fingerprint;
  json.title = e.title;
  if (e.duration !== null && e.duration !== undefined) json.duration = e.duration;
  if (e.frameRate !== null && e.frameRate !== undefined) json.frameRate = e.frameRate;
  json.addedBy = e.addedBy;
  if (e.addedByName !== null && e.addedByName !== undefined) json.addedByName = e.addedByName;
  return json;
}

/** JSON -> QueueEntry. */
export function decodeQueueEntry(value) {
  const v = object(value, "QueueEntry");
  return {
    id: string(v.id, "id"),
    item: string(v.item, "item"),
    fingerprint: optional(v.fingerprint, string, "fingerprint"),
    title: string(v.title, "title"),
    duration: optional(v.duration, double, "duration"),
    frameRate: optional(v.frameRate, double, "frameRate"),
    addedBy: string(v.addedBy, "addedBy"),
    addedByName: optional(v.addedByName, string, "addedByName"),
  };
}

/** QueuePosition: `"end"`, `"start"` or `{"after": ENTRY_ID}`, the same in JS. */
function encodePosition(position) {
  return position === "end" || position === "start" ? position : { after: position.after };
}

function decodePosition(value, what) {
  if (typeof value === "string") {
    if (value === "end" || value === "start") return value;
    throw new MessageDecodingError(`unknown queue position ${value}`);
  }
  return { after: string(object(value, what).after, "after") };
}

/** QueueEdit -> JSON: its JS form is the wire form (queue.js), `seed` left out when shuffle is off. */
export function encodeQueueEdit(edit) {
  switch (edit.op) {
    case "add": return { op: "add", entries: edit.entries.map(encodeQueueEntry), at: encodePosition(edit.at) };
    case "remove": return { op: "remove", ids: [...edit.ids] };
    case "move": return { op: "move", id: edit.id, to: encodePosition(edit.to) };
    case "clear": return { op: "clear" };
    case "repeat": return { op: "repeat", mode: edit.mode };
    case "shuffle": return edit.seed === null || edit.seed === undefined ? { op: "shuffle" } : { op: "shuffle", seed: edit.seed };
    default: throw new TypeError(`unknown queue edit ${edit.op}`);
  }
}

/** JSON -> QueueEdit. */
export function decodeQueueEdit(value) {
  const v = object(value, "QueueEdit");
  const op = string(v.op, "op");
  switch (op) {
    case "add": return { op, entries: array(v.entries, decodeQueueEntry, "entries"), at: decodePosition(v.at, "at") };
    case "remove": return { op, ids: array(v.ids, string, "ids") };
    case "move": return { op, id: string(v.id, "id"), to: decodePosition(v.to, "to") };
    case "clear": return { op };
    case "repeat": return { op, mode: repeatMode(v.mode, "mode") };
    case "shuffle": return { op, seed: optional(v.seed, uint32, "seed") };
    default: throw new MessageDecodingError(`unknown queue edit ${op}`);
  }
}

/** PlayQueue.RemovedEntry -> JSON (`successor` left out when none). */
function encodeRemovedEntry(removed) {
  const json = { id: removed.id };
  if (removed.successor !== null && removed.successor !== undefined) json.successor = removed.successor;
  return json;
}

function decodeRemovedEntry(value) {
  const v = object(value, "RemovedEntry");
  return { id: string(v.id, "id"), successor: optional(v.successor, string, "successor") };
}

/**
 * PlayQueue (queue.js) -> JSON, as Swift's synthesized Codable writes it: `entries`, `repeatMode`,
 * and `shuffleSeed` and `removedPlaying` when set (the coordinator vectors' `queue`).
 */
export function encodePlayQueue(queue) {
  const json = { entries: queue.entries.map(encodeQueueEntry), repeatMode: queue.repeatMode };
  if (queue.shuffleSeed !== null && queue.shuffleSeed !== undefined) json.shuffleSeed = queue.shuffleSeed;
  if (queue.removedPlaying !== null && queue.removedPlaying !== undefined) json.removedPlaying = encodeRemovedEntry(queue.removedPlaying);
  return json;
}

function encodeQueueEditNotice(n) {
  return { sentAt: n.sentAt, edit: encodeQueueEdit(n.edit) };
}

function decodeQueueEditNotice(v) {
  return { edit: decodeQueueEdit(v.edit), sentAt: int64(v.sentAt, "sentAt") };
}

function encodeQueueRequest(r) {
  return { sentAt: r.sentAt };
}

function decodeQueueRequest(v) {
  return { sentAt: int64(v.sentAt, "sentAt") };
}

/** QueueSnapshotPart -> its fields (absent optionals left out; `state` nested, with its revision). */
function encodeSnapshotPart(p) {
  const json = { snapshot: p.snapshot };
  if (p.request !== null && p.request !== undefined) json.request = p.request;
  json.through = p.through;
  json.part = p.part;
  json.parts = p.parts;
  json.entries = p.entries.map(encodeQueueEntry);
  json.repeatMode = p.repeatMode;
  if (p.shuffleSeed !== null && p.shuffleSeed !== undefined) json.shuffleSeed = p.shuffleSeed;
  if (p.removedPlaying !== null && p.removedPlaying !== undefined) json.removedPlaying = encodeRemovedEntry(p.removedPlaying);
  if (p.state !== null && p.state !== undefined) json.state = encodeState(p.state);
  json.sentAt = p.sentAt;
  return json;
}

function decodeSnapshotPart(v) {
  return {
    snapshot: string(v.snapshot, "snapshot"),
    request: optional(v.request, uint64, "request"),
    through: uint64(v.through, "through"),
    part: int(v.part, "part"),
    parts: int(v.parts, "parts"),
    entries: array(v.entries, decodeQueueEntry, "entries"),
    repeatMode: repeatMode(v.repeatMode, "repeatMode"),
    shuffleSeed: optional(v.shuffleSeed, uint32, "shuffleSeed"),
    removedPlaying: optional(v.removedPlaying, decodeRemovedEntry, "removedPlaying"),
    state: optional(v.state, decodeState, "state"),
    sentAt: int64(v.sentAt, "sentAt"),
  };
}

// MARK: CoordinationMessage

/**
 * The kinds this page reads and writes (CoordinationMessage.Kind in Swift): for each, the version it
 * writes and the newest it reads, and its fields' codec. Adding a kind is one entry here (plus
 * Swift, docs/protocol.md and the shared vectors).
 */
export const KINDS = {
  state: { version: 1, encode: encodeProposal, decode: decodeProposal },
  suspension: { version: 1, encode: encodeNotice, decode: decodeNotice },
  presence: { version: 1, encode: encodeReport, decode: decodeReport },
  queueEdit: { version: 1, encode: encodeQueueEditNotice, decode: decodeQueueEditNotice },
  queueRequest: { version: 1, encode: encodeQueueRequest, decode: decodeQueueRequest },
  queueSnapshot: { version: 1, encode: encodeSnapshotPart, decode: decodeSnapshotPart },
};

/** The kind of a JS message ({state} | {suspension} | … | {unsupported}): its key. */
function kindOf(message) {
  const kinds = Object.keys(message).filter((key) => key === "unsupported" || Object.hasOwn(KINDS, key));
  if (kinds.length !== 1 || message[kinds[0]] === null || message[kinds[0]] === undefined) throw new TypeError("not a CoordinationMessage");
  return kinds[0];
}

/** CoordinationMessage -> its JSON value. An unsupported message writes only its kind and version. */
export function encodeMessage(message) {
  const kind = kindOf(message);
  if (kind === "unsupported") return { kind: message.unsupported.kind, v: message.unsupported.version };
  return { kind, v: KINDS[kind].version, ...KINDS[kind].encode(message[kind]) };
}

/**
 * JSON value -> CoordinationMessage; {unsupported: {kind, version}} for a kind this page does not
 * know, a version above the one it reads, or (version 0) the unversioned form of older builds.
 *
 * @throws {MessageDecodingError} for anything else that is not a message.
 */
export function decodeMessage(value) {
  const v = object(value, "CoordinationMessage");
  if (v.kind === undefined) {
    const unversioned = unversionedKind(v);
    if (unversioned !== null) return { unsupported: { kind: unversioned, version: 0 } };
  }
  const kind = string(v.kind, "kind");
  const version = int64(v.v, "v");
  if (version < 1n) throw new MessageDecodingError(`version ${version} is below 1`);
  if (!Object.hasOwn(KINDS, kind) || version > BigInt(KINDS[kind].version)) return { unsupported: { kind, version: Number(version) } };
  return { [kind]: KINDS[kind].decode(v) };
}

/** The kind of a message in the unversioned form of older builds ({"presence": {"_0": …}}), or null. */
function unversionedKind(v) {
  const keys = Object.keys(v);
  if (keys.length !== 1 || !["state", "suspension", "presence"].includes(keys[0])) return null;
  const payload = v[keys[0]];
  return payload !== null && typeof payload === "object" && !Array.isArray(payload) && Object.hasOwn(payload, "_0") ? keys[0] : null;
}

/**
 * What a person reads about an unsupported message (CoordinationMessage.unsupportedDescription).
 *
 * @param {{kind: string, version: number}} unsupported
 */
export function unsupportedDescription({ kind, version }) {
  if (version < 1) return `coordination message "${kind}" in the unversioned form of older coplay builds: that member should update coplay`;
  if (Object.hasOwn(KINDS, kind)) {
    return `coordination message "${kind}" v${version}, newer than this coplay reads (v${KINDS[kind].version}): update coplay`;
  }
  return `coordination message "${kind}" v${version}, a kind this coplay does not know: update coplay`;
}

/** The envelope body of a message (UTF-8 JSON). */
export function encodeMessageBody(message) {
  return utf8(stringifyJSON(encodeMessage(message)));
}

/**
 * A message from an envelope body.
 *
 * @throws {MessageDecodingError|SyntaxError} for a body that is not a CoordinationMessage.
 */
export function decodeMessageBody(bytes) {
  return decodeMessage(parseJSON(fromUTF8(bytes)));
}

/** The sender's reference time of a message (null for an unsupported one). */
export function sentAt(message) {
  const kind = kindOf(message);
  return kind === "unsupported" ? null : message[kind].sentAt;
}

/** The retain key of the playback state. */
export const STATE_KEY = "coplay.playback.state";

/**
 * Where only hosts control, the retain key of the latest transition sent by a member without control
 * (unsigned): kept apart from STATE_KEY so that a joiner still receives the last signed state.
 */
export const TRANSITION_KEY = "coplay.playback.transition";

/** The retain key of one participant's latest suspension notice. */
export function suspensionKey(participant) {
  return `coplay.playback.suspension.${participant}`;
}

/**
 * Whether the relay may drop this message's retained slot to make room for a new key once the session holds
 * its most (FrameFlags.evictable; CoordinationMessage.retainedSlotIsEvictable): a suspension notice, whose
 * slot is its member's own and stays after the member leaves.
 */
export function retainedSlotIsEvictable(message) {
  return message.suspension !== undefined;
}

/** The retain key of part `part` of the retained copy of the queue (CoordinationMessage.queueSnapshotKey(part:)). */
export function queueSnapshotKey(part) {
  return `coplay.queue.snapshot.${part}`;
}
