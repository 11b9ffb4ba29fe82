// Members' signing keys and the chat (Sources/GroupChat: MemberKey.swift, MemberIdentity.swift,
// ChatMessage.swift, MemberMessage.swift, ChatText.swift, MemberDirectory.swift, ChatRoom.swift;
// change both together). Pure logic over WebCrypto's Ed25519, tested in Node with the shared vectors
// Tests/Vectors/chat/chat.json (Tests/Web/chat.test.mjs); chatpanel.js draws the chat box.
//
// Messages travel as envelopes named "MemberMessage" whose body is JSON: {"kind": "identity" | "chat",
// "v": 1, ...} (docs/protocol.md, "Member messages"). A chat message is retained by the relay under
// "coplay.chat.(n % 50)", so a late joiner receives the last 50.

import { concatBytes, fromBase64URL, toBase64URL, toHex, u64Bytes, utf8 } from "../wire/bytes.js";
import { parseJSON, stringifyJSON } from "../wire/json.js";

/** The envelope name of member messages (Swift's type name). */
export const MEMBER_MESSAGE_NAME = "MemberMessage";

/** The kinds this page reads and writes, with their versions. */
export const MEMBER_KINDS = Object.freeze({ identity: 1, chat: 1 });

/** ChatText and ChatLimits. */
export const CHAT_LIMITS = Object.freeze({
  maximumLength: 500, // Unicode scalars in a text
  maximumNameLength: 64, // Unicode scalars in a name
  sendBurst: 5, // messages of one key…
  sendWindowSeconds: 10, // …in any 10 s (by their sentAt)
  receiveBurst: 10, // a receiver allows each key twice the sender's burst and rate
  receiveRate: 1, // tokens per second
  historySlots: 50n,
  rememberedMessages: 2048,
});

// MARK: Text

const BREAKS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x85, 0x2028, 0x2029]);
const INVISIBLE = new Set([0x061c, 0x180e, 0x200b, 0x200e, 0x200f, 0xfeff, 0xfff9, 0xfffa, 0xfffb]);
for (const [from, to] of [[0x202a, 0x202e], [0x2060, 0x2064], [0x2066, 0x2069]]) for (let c = from; c <= to; c++) INVISIBLE.add(c);
const SPACES = new Set([0x20, 0xa0, 0x1680, 0x202f, 0x205f, 0x3000]);
for (let c = 0x2000; c <= 0x200a; c++) SPACES.add(c);

/**
 * Line breaks and tabs as spaces, other control characters (C0, DEL, C1) and invisible formatting
 * characters (bidi overrides and isolates, zero-width space, word joiner, BOM) removed, spaces
 * trimmed at both ends; everything else (emoji and their joiners, every script) kept.
 */
export function cleanText(text) {
  const out = [];
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (BREAKS.has(c)) out.push(" ");
    else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || INVISIBLE.has(c)) continue;
    else out.push(ch);
  }
  let start = 0;
  let end = out.length;
  while (start < end && SPACES.has(out[start].codePointAt(0))) start++;
  while (end > start && SPACES.has(out[end - 1].codePointAt(0))) end--;
  return out.slice(start, end).join("");
}

/** Whether `text` is what cleanText makes of it. */
export const isClean = (text) => cleanText(text) === text;

/** The length the rules count: Unicode scalars (code points). */
export const textLength = (text) => [...text].length;

/** Why a message could not be sent; `message` as Swift's ChatError says it. */
export class ChatError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "ChatError";
    this.code = code;
  }
}

/** The text a member may send: cleaned, not empty, at most 500 scalars. */
export function sendableText(text) {
  const clean = cleanText(text);
  if (clean === "") throw new ChatError("emptyMessage", "chat: the message is empty");
  const length = textLength(clean);
  if (length > CHAT_LIMITS.maximumLength) {
    throw new ChatError("tooLong", `chat: the message is ${length} characters long, at most ${CHAT_LIMITS.maximumLength} go in one message`);
  }
  return clean;
}

/** A name a member may use: cleaned, 1 to 64 scalars. */
export function sendableName(name) {
  const clean = cleanText(name);
  if (clean === "" || textLength(clean) > CHAT_LIMITS.maximumNameLength) {
    throw new ChatError("badName", `chat: '${name}' cannot be a name (1 to ${CHAT_LIMITS.maximumNameLength} characters, no control characters)`);
  }
  return clean;
}

const wellFormedName = (name) => typeof name === "string" && name !== "" && textLength(name) <= CHAT_LIMITS.maximumNameLength && isClean(name);

/** Whether a chat message's name and text follow the rules. */
export function isWellFormed(message) {
  const { text, name } = message;
  return typeof text === "string" && text !== "" && textLength(text) <= CHAT_LIMITS.maximumLength && isClean(text) && wellFormedName(name);
}

// MARK: Signed bytes

function u16(value) {
  return new Uint8Array([(value >> 8) & 0xff, value & 0xff]);
}

function u32(value) {
  return new Uint8Array([(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]);
}

const domain = (text) => concatBytes(utf8(text), new Uint8Array([0]));

/**
 * "coplay identity v1" 0x00 | session (16) | participant u64 | key (32) | nameLength u16 | name.
 * @param {Uint8Array} session @param {{participant: bigint, key: Uint8Array, name: string}} identity
 */
export function identityBytes(session, { participant, key, name }) {
  const nameBytes = utf8(name).slice(0, 0xffff);
  return concatBytes(domain("coplay identity v1"), session, u64Bytes(participant), key, u16(nameBytes.length), nameBytes);
}

/**
 * "coplay chat v1" 0x00 | session (16) | key (32) | sentAt u64 | nameLength u16 | name | textLength u32 | text.
 * @param {Uint8Array} session @param {{key: Uint8Array, sentAt: bigint, name: string, text: string}} message
 */
export function chatBytes(session, { key, sentAt, name, text }) {
  const nameBytes = utf8(name).slice(0, 0xffff);
  const textBytes = utf8(text);
  return concatBytes(domain("coplay chat v1"), session, key, u64Bytes(sentAt), u16(nameBytes.length), nameBytes, u32(textBytes.length), textBytes);
}

/** The retained-message name of a chat message's history slot. */
export const retainName = (ordinal) => `coplay.chat.${BigInt(ordinal) % CHAT_LIMITS.historySlots}`;

// MARK: Wire JSON

export class MemberMessageError extends Error {}

const participantHex = (id) => BigInt.asUintN(64, id).toString(16).padStart(16, "0");

/**
 * A MemberMessage's JSON object from its body bytes: {identity: {participant, name, key, signature}},
 * {chat: {name, key, sentAt, text, ordinal, signature}} (keys and signatures as bytes, participant,
 * sentAt and ordinal as BigInt), or {unsupported: {kind, version}}.
 * @throws {MemberMessageError} when it is not a member message.
 */
export function decodeMemberMessage(body) {
  let json;
  try {
    json = parseJSON(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch (error) {
    throw new MemberMessageError(`not JSON: ${error.message}`);
  }
  return memberMessageFromJSON(json);
}

export function memberMessageFromJSON(json) {
  if (json === null || typeof json !== "object" || typeof json.kind !== "string") throw new MemberMessageError("no kind");
  const version = typeof json.v === "bigint" ? json.v : Number.isInteger(json.v) ? BigInt(json.v) : null;
  if (version === null || version < 1n) throw new MemberMessageError("no version");
  const known = MEMBER_KINDS[json.kind];
  if (!Object.hasOwn(MEMBER_KINDS, json.kind) || version > BigInt(known)) return { unsupported: { kind: json.kind, version: Number(version) } };
  const string = (field) => {
    if (typeof json[field] !== "string") throw new MemberMessageError(`${field} is not a string`);
    return json[field];
  };
  const integer = (field) => {
    const value = json[field];
    if (typeof value === "bigint" && value >= 0n && value < 1n << 64n) return value;
    if (Number.isInteger(value) && value >= 0) return BigInt(value);
    throw new MemberMessageError(`${field} is not an unsigned integer`);
  };
  const name = string("name");
  const key = fromBase64URL(string("key"));
  if (key === null || key.length !== 32 || toBase64URL(key) !== json.key) throw new MemberMessageError("key is not 32 bytes of base64url");
  const signature = fromBase64URL(string("signature"));
  if (signature === null || signature.length !== 64 || toBase64URL(signature) !== json.signature) throw new MemberMessageError("signature is not 64 bytes of base64url");
  if (json.kind === "identity") {
    const participant = string("participant");
    if (!/^[0-9a-f]{16}$/i.test(participant)) throw new MemberMessageError("participant is not 16 hex digits");
    return { identity: { participant: BigInt(`0x${participant}`), name, key, signature } };
  }
  return { chat: { name, key, sentAt: integer("sentAt"), text: string("text"), ordinal: integer("n"), signature } };
}

/** The JSON object of a member message (the inverse of memberMessageFromJSON). */
export function memberMessageToJSON(message) {
  if (message.identity) {
    const { participant, name, key, signature } = message.identity;
    return { kind: "identity", v: 1, participant: participantHex(participant), name, key: toBase64URL(key), signature: toBase64URL(signature) };
  }
  if (message.chat) {
    const { name, key, sentAt, text, ordinal, signature } = message.chat;
    return { kind: "chat", v: 1, name, key: toBase64URL(key), sentAt: BigInt(sentAt), text, n: BigInt(ordinal), signature: toBase64URL(signature) };
  }
  const { kind, version } = message.unsupported;
  return { kind, v: version };
}

/** The body bytes of a member message. */
export const encodeMemberMessage = (message) => utf8(stringifyJSON(memberMessageToJSON(message)));

// MARK: Keys

const ED25519 = { name: "Ed25519" };
const PKCS8_PREFIX = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);

/** The short tag people see beside a shared name: the first 6 hex digits of SHA-256(key). */
export async function keyTag(key) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", key));
  return toHex(digest.slice(0, 3));
}

/** Whether `signature` is a valid Ed25519 signature of `data` by the 32-byte public `key`. */
export async function verifySignature(key, signature, data) {
  if (key.length !== 32 || signature.length !== 64) return false;
  try {
    const publicKey = await crypto.subtle.importKey("raw", key, ED25519, false, ["verify"]);
    return await crypto.subtle.verify(ED25519, publicKey, signature, data);
  } catch {
    return false;
  }
}

/** A member's signing key: a WebCrypto Ed25519 private key (non-extractable) and its public bytes. */
export class MemberKey {
  constructor(privateKey, publicKey, tag) {
    this.privateKey = privateKey;
    /** @type {Uint8Array} */
    this.publicKey = publicKey;
    this.tag = tag;
  }

  /** A fresh key whose private half cannot be exported. */
  static async generate() {
    const pair = await crypto.subtle.generateKey(ED25519, false, ["sign", "verify"]);
    return MemberKey.fromKeyPair(pair);
  }

  /** From a stored CryptoKeyPair (IndexedDB keeps non-extractable keys). */
  static async fromKeyPair(pair) {
    const publicKey = new Uint8Array(await crypto.subtle.exportKey("raw", pair.publicKey));
    return new MemberKey(pair.privateKey, publicKey, await keyTag(publicKey));
  }

  /** From a 32-byte RFC 8032 seed (tests and vectors). */
  static async fromSeed(seed) {
    const pkcs8 = concatBytes(PKCS8_PREFIX, seed);
    const extractable = await crypto.subtle.importKey("pkcs8", pkcs8, ED25519, true, ["sign"]);
    const jwk = await crypto.subtle.exportKey("jwk", extractable);
    const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, ED25519, false, ["sign"]);
    const publicKey = fromBase64URL(jwk.x);
    return new MemberKey(privateKey, publicKey, await keyTag(publicKey));
  }

  /** The Ed25519 signature of `data`. */
  async sign(data) {
    return new Uint8Array(await crypto.subtle.sign(ED25519, this.privateKey, data));
  }

  /** The member's signed identity in `session` as `participant` (BigInt) named `name`. */
  async identity(session, participant, name) {
    const identity = { participant, name, key: this.publicKey };
    return { ...identity, signature: await this.sign(identityBytes(session, identity)) };
  }
}

// MARK: Who is who

const keyText = (key) => toBase64URL(key);

/**
 * Names bound to keys, and labels (MemberDirectory.swift): a participant's verified identity binds
 * it to one key and name; every key seen with a name counts for it; a name used by several keys, or
 * containing "#", is shown as name#tag for each. Names compare in NFC (Swift compares by canonical
 * equivalence).
 */
export class MemberDirectory {
  constructor() {
    /** participant (BigInt) -> identity */
    this.identities = new Map();
    this.keysByName = new Map();
    this.tags = new Map();
  }

  /** Binds a verified identity; false when its participant is bound already to another key or name. */
  bind(identity, tag) {
    const known = this.identities.get(identity.participant);
    if (known !== undefined) return keyText(known.key) === keyText(identity.key) && known.name === identity.name;
    this.identities.set(identity.participant, identity);
    this.record(identity.name, identity.key, tag);
    return true;
  }

  record(name, key, tag) {
    const normal = name.normalize("NFC");
    const keys = this.keysByName.get(normal) ?? [];
    const text = keyText(key);
    if (!keys.includes(text)) keys.push(text);
    this.keysByName.set(normal, keys);
    this.tags.set(text, tag);
  }

  label(name, key) {
    const shared = (this.keysByName.get(name.normalize("NFC"))?.length ?? 0) > 1 || name.includes("#");
    return shared ? `${name}#${this.tags.get(keyText(key))}` : name;
  }

  /** The label of a participant (BigInt) with a verified identity, or null. */
  labelOf(participant) {
    const identity = this.identities.get(participant);
    return identity === undefined ? null : this.label(identity.name, identity.key);
  }
}

// MARK: The room

class Bucket {
  constructor(capacity, rate, nowMs) {
    this.capacity = capacity;
    this.rate = rate;
    this.tokens = capacity;
    this.updated = nowMs;
  }

  refill(nowMs) {
    if (nowMs <= this.updated) return;
    this.tokens = Math.min(this.capacity, this.tokens + ((nowMs - this.updated) / 1000) * this.rate);
    this.updated = nowMs;
  }

  take(nowMs) {
    this.refill(nowMs);
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * The chat's rules (ChatRoom.swift): receive (ignore malformed, badly signed, not the sender's key,
 * replays, flooding) and compose (clean, limit, sign, number after the highest seen). Receiving is
 * asynchronous (WebCrypto); calls are handled one after the other in the order they were made.
 */
export class ChatRoom {
  /** @param {Uint8Array} session the session id (16 bytes). */
  constructor(session) {
    this.session = session;
    this.directory = new MemberDirectory();
    this.highestOrdinal = null;
    this.seen = new Set();
    this.seenOrder = [];
    this.receiveBuckets = new Map();
    this.recent = new Map(); // key text -> the latest sentAt values (at most sendBurst)
    this.lastSentAt = 0n;
    this.queue = Promise.resolve();
  }

  serial(work) {
    const result = this.queue.then(work);
    this.queue = result.catch(() => {});
    return result;
  }

  /** Takes an identity statement from `sender` (BigInt); resolves to whether it was bound. */
  receiveIdentity(identity, sender) {
    return this.serial(async () => {
      if (identity.participant !== sender || !wellFormedName(identity.name)) return false;
      if (!(await verifySignature(identity.key, identity.signature, identityBytes(this.session, identity)))) return false;
      return this.directory.bind(identity, await keyTag(identity.key));
    });
  }

  /**
   * Takes a chat message carried by `sender`'s frame; resolves to {entry} or {ignored: reason}
   * ("malformed", "badSignature", "notTheSendersKey", "replay", "flooding").
   */
  receive(message, sender, { history = false, nowMs = 0 } = {}) {
    return this.serial(async () => {
      if (!isWellFormed(message)) return { ignored: "malformed" };
      if (!(await verifySignature(message.key, message.signature, chatBytes(this.session, message)))) return { ignored: "badSignature" };
      const identity = this.directory.identities.get(sender);
      if (identity !== undefined && (keyText(identity.key) !== keyText(message.key) || identity.name !== message.name)) return { ignored: "notTheSendersKey" };
      const seenKey = `${keyText(message.key)} ${message.sentAt}`;
      if (this.seen.has(seenKey)) return { ignored: "replay" };
      if (!history) {
        const text = keyText(message.key);
        let bucket = this.receiveBuckets.get(text);
        if (bucket === undefined) {
          bucket = new Bucket(CHAT_LIMITS.receiveBurst, CHAT_LIMITS.receiveRate, nowMs);
          this.receiveBuckets.set(text, bucket);
        }
        if (!bucket.take(nowMs)) return { ignored: "flooding" };
      }
      this.remember(seenKey);
      return { entry: await this.accept(message, sender, { history, own: false }) };
    });
  }

  /**
   * A message to send (cleaned, checked, signed, numbered after the highest seen). At most 5
   * messages of the key in any 10 s, by sentAt, history included.
   * @param {MemberKey} key @param {bigint} wallClockNs nanoseconds since the Unix epoch
   * @throws {ChatError} empty, too long, beyond the rate limit, or a bad name.
   */
  compose(text, key, name, wallClockNs) {
    const clean = sendableText(text);
    const cleanName = sendableName(name);
    const sentAt = wallClockNs > this.lastSentAt ? wallClockNs : this.lastSentAt + 1n;
    const window = BigInt(CHAT_LIMITS.sendWindowSeconds) * 1000000000n;
    const inWindow = (this.recent.get(keyText(key.publicKey)) ?? []).filter((t) => t + window > sentAt);
    if (inWindow.length >= CHAT_LIMITS.sendBurst) {
      const oldest = inWindow.reduce((a, b) => (a < b ? a : b));
      const wait = Number(oldest + window - sentAt) / 1e9;
      throw new ChatError("rateLimited", `chat: at most ${CHAT_LIMITS.sendBurst} messages in ${CHAT_LIMITS.sendWindowSeconds} s: wait ${wait.toFixed(1)} s`);
    }
    this.lastSentAt = sentAt;
    this.note(sentAt, key.publicKey);
    const ordinal = this.highestOrdinal === null ? 0n : this.highestOrdinal + 1n;
    const message = { name: cleanName, key: key.publicKey, sentAt, text: clean, ordinal };
    return key.sign(chatBytes(this.session, message)).then((signature) => ({ ...message, signature }));
  }

  /** Records the member's own message once the relay confirmed it; resolves to its entry. */
  sent(message, sender) {
    return this.serial(async () => {
      this.remember(`${keyText(message.key)} ${message.sentAt}`);
      return this.accept(message, sender, { history: false, own: true });
    });
  }

  async accept(message, sender, { history, own }) {
    const ordinal = BigInt(message.ordinal);
    if (this.highestOrdinal === null || ordinal > this.highestOrdinal) this.highestOrdinal = ordinal;
    this.note(BigInt(message.sentAt), message.key);
    this.directory.record(message.name, message.key, await keyTag(message.key));
    return {
      sender, name: message.name, label: this.directory.label(message.name, message.key), key: keyText(message.key),
      text: message.text, sentAtMs: Number(BigInt(message.sentAt) / 1000000n), history, own,
    };
  }

  /** Counts a message of `key` sent at `sentAt` for the sending limit (once). */
  note(sentAt, key) {
    const text = keyText(key);
    const times = this.recent.get(text) ?? [];
    if (times.includes(sentAt)) return;
    times.push(sentAt);
    times.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.recent.set(text, times.slice(-CHAT_LIMITS.sendBurst));
  }

  remember(key) {
    this.seen.add(key);
    this.seenOrder.push(key);
    if (this.seenOrder.length > CHAT_LIMITS.rememberedMessages) this.seen.delete(this.seenOrder.shift());
  }
}

// MARK: The chat box's view (pure)

/** The lines the chat box shows: the last `limit` entries, each {who, text, time, own, history}. */
export function chatLines(entries, { limit = 200, formatTime = (ms) => new Date(ms).toLocaleTimeString() } = {}) {
  return entries.slice(-limit).map((entry) => ({
    who: entry.own ? "you" : entry.label, text: entry.text, time: formatTime(entry.sentAtMs), own: entry.own, history: entry.history,
  }));
}

/** What the text field says about what is typed: {count: "12 / 500", over: bool}. */
export function draftStatus(text) {
  const length = textLength(cleanText(text));
  return { count: `${length} / ${CHAT_LIMITS.maximumLength}`, over: length > CHAT_LIMITS.maximumLength };
}
