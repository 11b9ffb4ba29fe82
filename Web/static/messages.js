// CoordinationMessage in the JSON form Swift's synthesized Codable gives it
// (Sources/PlaybackCoordinator/CoordinationMessage.swift, PlaybackState.swift, SuspensionReason.swift).
//
// In JS: reference times and durations are BigInt nanoseconds, sequence numbers BigInt, item
// times and rates Number, participants strings, suspension reasons their Swift `description`
// ("buffering", "custom:NAME"). On the wire (the body of an envelope named "CoordinationMessage"):
//   - an enum case with a payload is {"case": {"_0": payload}}; one without is {"case": {}};
//   - ReferenceTime is its Int64 nanoseconds; ParticipantID its string;
//   - Duration is [high Int64, low UInt64], the two halves of its 128-bit attosecond count
//     (so 20 ms is [0, 20000000000000000] and -1.5 s is [-1, 16946744073709551616]);
//   - nil optionals are left out. Key order does not matter (Swift's own is not stable).
// A JS Duration is whole nanoseconds: sub-nanosecond attoseconds from a peer are truncated
// toward zero, exactly as Swift's `Duration.nanosecondsValue` does wherever the core uses one.

import { fromUTF8, utf8 } from "./bytes.js";
import { parseJSON, stringifyJSON } from "./json.js";

/** The envelope name coordination messages travel under (Swift's unqualified type name). */
export const COORDINATION_MESSAGE_NAME = "CoordinationMessage";

/** A message body that is not a CoordinationMessage (dropped, as Swift's messenger drops it). */
export class MessageDecodingError extends Error {
  constructor(message) {
    super(message);
    this.name = "MessageDecodingError";
  }
}

const ATTOSECONDS_PER_NANOSECOND = 1_000_000_000n;
const TWO_64 = 1n << 64n;

/** Duration (BigInt ns) -> [high, low]. */
export function encodeDuration(nanoseconds) {
  const attoseconds = BigInt(nanoseconds) * ATTOSECONDS_PER_NANOSECOND;
  return [attoseconds >> 64n, BigInt.asUintN(64, attoseconds)];
}

/** [high, low] -> Duration (BigInt ns, truncated toward zero). */
export function decodeDuration(value) {
  if (!Array.isArray(value) || value.length !== 2) throw new MessageDecodingError("a Duration is [high, low]");
  const high = integer(value[0], "Duration high");
  const low = integer(value[1], "Duration low");
  if (low < 0n || low >= TWO_64 || high < -(1n << 63n) || high >= 1n << 63n) throw new MessageDecodingError("Duration out of range");
  return (high * TWO_64 + low) / ATTOSECONDS_PER_NANOSECOND;
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

/** The single case of a Swift enum's JSON object. */
function enumCase(value, what) {
  const keys = Object.keys(object(value, what));
  if (keys.length !== 1) throw new MessageDecodingError(`${what} must have exactly one case`);
  return [keys[0], value[keys[0]]];
}

// MARK: SuspensionReason

const PLAIN_REASONS = [
  "stallRecovery", "buffering", "userChangingTime", "interruption", "playingInterstitial", "coordinatedPlaybackNotPossible",
  "userActionRequired",
];

/** Reason (its description) -> JSON. */
export function encodeReason(reason) {
  if (PLAIN_REASONS.includes(reason)) return { [reason]: {} };
  if (reason.startsWith("custom:")) return { custom: { _0: reason.slice("custom:".length) } };
  throw new TypeError(`unknown suspension reason ${reason}`);
}

/** JSON -> reason (its description). */
export function decodeReason(value) {
  const [name, payload] = enumCase(value, "SuspensionReason");
  if (PLAIN_REASONS.includes(name)) {
    object(payload, "SuspensionReason payload");
    return name;
  }
  if (name === "custom") return "custom:" + string(object(payload, "custom")._0, "custom name");
  throw new MessageDecodingError(`unknown suspension reason ${name}`);
}

// MARK: Payload types

/** PlaybackState -> JSON. */
export function encodeState(s) {
  return {
    item: s.item,
    rate: s.rate,
    anchorItemTime: s.anchorItemTime,
    anchorReferenceTime: s.anchorReferenceTime,
    originator: s.originator,
    revision: s.revision,
    intendedRate: s.intendedRate,
    ...(s.duration !== null && s.duration !== undefined ? { duration: s.duration } : {}),
  };
}

/** JSON -> PlaybackState. */
export function decodeState(value) {
  const v = object(value, "PlaybackState");
  return {
    item: string(v.item, "item"),
    rate: double(v.rate, "rate"),
    anchorItemTime: double(v.anchorItemTime, "anchorItemTime"),
    anchorReferenceTime: int64(v.anchorReferenceTime, "anchorReferenceTime"),
    originator: string(v.originator, "originator"),
    revision: uint64(v.revision, "revision"),
    intendedRate: double(v.intendedRate, "intendedRate"),
    duration: optional(v.duration, double, "duration"),
  };
}

const COMMAND_LABELS = ["play", "pause", "seek", "rate", "item"];

function encodeProposal(p) {
  return { state: encodeState(p.state), command: p.command, sentAt: p.sentAt };
}

function decodeProposal(value) {
  const v = object(value, "StateProposal");
  const command = string(v.command, "command");
  if (!COMMAND_LABELS.includes(command)) throw new MessageDecodingError(`unknown command ${command}`);
  return { state: decodeState(v.state), command, sentAt: int64(v.sentAt, "sentAt") };
}

function encodeNotice(n) {
  const json = {
    id: n.id,
    phase: n.phase,
    reason: encodeReason(n.reason),
    effectiveAt: n.effectiveAt,
    waits: n.waits,
    timeout: encodeDuration(n.timeout),
  };
  if (n.proposedItemTime !== null && n.proposedItemTime !== undefined) json.proposedItemTime = n.proposedItemTime;
  json.sentAt = n.sentAt;
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
    entry.timeout = encodeDuration(e.timeout);
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
        timeout: decodeDuration(e.timeout),
        waits: bool(e.waits, "waits"),
      };
    }),
  };
}

function decodeNotice(value) {
  const v = object(value, "SuspensionNotice");
  const phase = string(v.phase, "phase");
  if (phase !== "begin" && phase !== "end") throw new MessageDecodingError(`unknown phase ${phase}`);
  return {
    id: string(v.id, "id"),
    phase,
    reason: decodeReason(v.reason),
    effectiveAt: int64(v.effectiveAt, "effectiveAt"),
    waits: bool(v.waits, "waits"),
    timeout: decodeDuration(v.timeout),
    proposedItemTime: optional(v.proposedItemTime, double, "proposedItemTime"),
    sentAt: int64(v.sentAt, "sentAt"),
    history: optional(v.history, decodeHistory, "history"),
  };
}

function encodeReport(r) {
  const json = { sentAt: r.sentAt, observedDelay: encodeDuration(r.observedDelay), preroll: encodeDuration(r.preroll) };
  if (r.item !== null && r.item !== undefined) json.item = r.item;
  if (r.name !== null && r.name !== undefined) json.name = r.name;
  if (r.items !== null && r.items !== undefined) json.items = r.items.map(encodeItemSummary);
  return json;
}

/** PresenceReport.ItemSummary -> JSON (duration left out when unknown). */
function encodeItemSummary(summary) {
  const json = { item: summary.item };
  if (summary.duration !== null && summary.duration !== undefined) json.duration = summary.duration;
  return json;
}

function decodeItemSummary(value) {
  const v = object(value, "ItemSummary");
  return { item: string(v.item, "item"), duration: optional(v.duration, double, "duration") };
}

function decodeItemSummaries(value) {
  if (!Array.isArray(value)) throw new MessageDecodingError("items is not an array");
  return value.map(decodeItemSummary);
}

function decodeReport(value) {
  const v = object(value, "PresenceReport");
  return {
    sentAt: int64(v.sentAt, "sentAt"),
    observedDelay: decodeDuration(v.observedDelay),
    preroll: decodeDuration(v.preroll),
    item: optional(v.item, string, "item"),
    name: optional(v.name, string, "name"),
    items: optional(v.items, decodeItemSummaries, "items"),
  };
}

// MARK: CoordinationMessage

/** CoordinationMessage ({state} | {suspension} | {presence}) -> its Swift JSON value. */
export function encodeMessage(message) {
  if (message.state) return { state: { _0: encodeProposal(message.state) } };
  if (message.suspension) return { suspension: { _0: encodeNotice(message.suspension) } };
  if (message.presence) return { presence: { _0: encodeReport(message.presence) } };
  throw new TypeError("not a CoordinationMessage");
}

/** Swift JSON value -> CoordinationMessage. */
export function decodeMessage(value) {
  const [name, payload] = enumCase(value, "CoordinationMessage");
  const inner = object(payload, name)._0;
  switch (name) {
    case "state":
      return { state: decodeProposal(inner) };
    case "suspension":
      return { suspension: decodeNotice(inner) };
    case "presence":
      return { presence: decodeReport(inner) };
    default:
      throw new MessageDecodingError(`unknown CoordinationMessage case ${name}`);
  }
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

/** The sender's reference time of any message. */
export function sentAt(message) {
  return (message.state ?? message.suspension ?? message.presence).sentAt;
}

/** The retain key of the playback state. */
export const STATE_KEY = "coplay.playback.state";

/** The retain key of one participant's latest suspension notice. */
export function suspensionKey(participant) {
  return `coplay.playback.suspension.${participant}`;
}
