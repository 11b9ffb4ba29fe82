// Following a host's removal of someone (docs/protocol.md, "Removing a member"; Swift:
// Sources/GroupChat/SealingKey.swift, Removal.swift, ChatChannel.swift; change both together).
// Pure logic over WebCrypto (X25519, Ed25519, HPKE in ../wire/hpke.js), tested in Node with the
// shared vectors Tests/Vectors/removal/removal.json (Tests/Web/removal.test.mjs).
//
// - The page's `sealingKey` statement: a fresh X25519 key per session, bound to its member key (and,
//   with the controller invite, attested by the host key), sent right after its `identity`.
// - A `removal` (member message signed by the invite's host key): the removed member stops, a member
//   with a sealed invite opens it and moves to the successor session, a member without one is left
//   behind. What is ignored is counted by reason (noHostKey, badSignature, repeated), as Swift does.

import { concatBytes, equalBytes, fromBase64URL, toBase64URL, u64Bytes, utf8 } from "../wire/bytes.js";
import { openSingleShot, x25519PublicBytes } from "../wire/hpke.js";
import { AEADSuite, onlyHostsControl, parseInvite } from "../wire/invite.js";
import { CHAT_LIMITS, isClean, textLength, verifySignature } from "./chat.js";

/** The most sealed invites one removal carries (Removal.maximumInvites). */
export const MAXIMUM_INVITES = 1000;

const domain = (text) => concatBytes(utf8(text), new Uint8Array([0]));
const u16 = (value) => new Uint8Array([(value >> 8) & 0xff, value & 0xff]);
const u32 = (value) => new Uint8Array([(value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff]);

// MARK: Signed bytes

/** "coplay sealing key v1" 0x00 | session (16) | key (32) | sealingKey (32): what the member key signs. */
export const sealingKeyBytes = (session, key, sealingKey) => concatBytes(domain("coplay sealing key v1"), session, key, sealingKey);

/** "coplay controller v1" 0x00 | session (16) | key (32): what the host key signs for a controller. */
export const controllerBytes = (session, key) => concatBytes(domain("coplay controller v1"), session, key);

/** HPKE's info of the invite sealed to `key`: "coplay successor v1" 0x00 | session (16) | key (32). */
export const successorInfo = (session, key) => concatBytes(domain("coplay successor v1"), session, key);

/**
 * "coplay removal v1" 0x00 | session (16) | removed (32) | issuedAt u64 | nameLength u16 | name |
 * count u16 | count × (key (32) | sealingKey (32) | enc (32) | sealedLength u32 | sealed).
 */
export function removalBytes(session, { removed, name, issuedAt, invites }) {
  const nameBytes = utf8(name).slice(0, 0xffff);
  const parts = [domain("coplay removal v1"), session, removed, u64Bytes(issuedAt), u16(nameBytes.length), nameBytes, u16(invites.length)];
  for (const invite of invites) parts.push(invite.key, invite.sealingKey, invite.enc, u32(invite.sealed.length), invite.sealed);
  return concatBytes(...parts);
}

// MARK: Wire JSON

/** Bytes of base64url text of an exact length (any length: null), written as the encoder writes it; else null. */
function base64URL(value, length = null) {
  if (typeof value !== "string") return null;
  const bytes = fromBase64URL(value);
  return bytes !== null && (length === null || bytes.length === length) && toBase64URL(bytes) === value ? bytes : null;
}

function unsignedInteger(value) {
  if (typeof value === "bigint" && value >= 0n && value < 1n << 64n) return value;
  if (Number.isInteger(value) && value >= 0) return BigInt(value);
  return null;
}

/** The JSON object of the page's `sealingKey` statement. */
export function sealingKeyToJSON({ key, sealingKey, signature, controller = null }) {
  const json = { kind: "sealingKey", v: 1, key: toBase64URL(key), sealingKey: toBase64URL(sealingKey), signature: toBase64URL(signature) };
  if (controller !== null) json.controller = toBase64URL(controller);
  return json;
}

/**
 * A removal from its member-message JSON ({"kind": "removal", "v": 1, ...}) with its fields as bytes
 * and BigInt, or null when it does not read as one (dropped, as Swift's MemberMessage decoding drops
 * it: no error counted).
 */
export function removalFromJSON(json) {
  if (json === null || typeof json !== "object" || json.kind !== "removal" || (json.v !== 1 && json.v !== 1n)) return null;
  const removed = base64URL(json.removed, 32);
  const signature = base64URL(json.signature, 64);
  const issuedAt = unsignedInteger(json.issuedAt);
  if (removed === null || signature === null || issuedAt === null || typeof json.name !== "string") return null;
  if (!Array.isArray(json.invites) || json.invites.length > MAXIMUM_INVITES) return null;
  const invites = [];
  for (const entry of json.invites) {
    const invite = {
      key: base64URL(entry?.key, 32), sealingKey: base64URL(entry?.sealingKey, 32), enc: base64URL(entry?.enc, 32), sealed: base64URL(entry?.sealed),
    };
    if (Object.values(invite).includes(null)) return null;
    invites.push(invite);
  }
  return { removed, name: json.name, issuedAt, invites, signature };
}

/** The JSON object of a removal (tests). */
export function removalToJSON({ removed, name, issuedAt, invites, signature }) {
  return {
    kind: "removal", v: 1, removed: toBase64URL(removed), name, issuedAt: BigInt(issuedAt),
    invites: invites.map((i) => ({ key: toBase64URL(i.key), sealingKey: toBase64URL(i.sealingKey), enc: toBase64URL(i.enc), sealed: toBase64URL(i.sealed) })),
    signature: toBase64URL(signature),
  };
}

/**
 * Whether a removal is well formed and signed by `hostKey` in `session` (Removal.isValid): at most
 * 1,000 invites, none for the removed key, one per key, a clean name of at most 64 characters.
 */
export async function isValidRemoval(removal, session, hostKey) {
  const keys = new Set(removal.invites.map((i) => toBase64URL(i.key)));
  const { name } = removal;
  if (removal.invites.length > MAXIMUM_INVITES || keys.has(toBase64URL(removal.removed)) || keys.size !== removal.invites.length) return false;
  if (typeof name !== "string" || !isClean(name) || textLength(name) > CHAT_LIMITS.maximumNameLength) return false;
  return verifySignature(hostKey, removal.signature, removalBytes(session, removal));
}

// MARK: The page's sealing key

/** The page's X25519 key for one session (its private half never leaves WebCrypto). */
export class SealingKey {
  constructor(privateKey, publicKey) {
    this.privateKey = privateKey;
    /** @type {Uint8Array} */
    this.publicKey = publicKey;
  }

  static async generate() {
    const pair = await crypto.subtle.generateKey({ name: "X25519" }, false, ["deriveBits"]);
    return new SealingKey(pair.privateKey, await x25519PublicBytes(pair.publicKey));
  }

  /**
   * The `sealingKey` statement of `memberKey` (a chat.js MemberKey) in `session`, attested by
   * `hostSigner` (the host key, a MemberKey) when the page holds the controller invite.
   */
  async statement(session, memberKey, hostSigner = null) {
    const key = memberKey.publicKey;
    const signature = await memberKey.sign(sealingKeyBytes(session, key, this.publicKey));
    const controller = hostSigner === null ? null : await hostSigner.sign(controllerBytes(session, key));
    return { key, sealingKey: this.publicKey, signature, controller };
  }

  /** Opens the invite sealed to this key for `memberKey` in `session`; its text. @throws {HPKEError} */
  async open(invite, session, memberKey) {
    const plaintext = await openSingleShot({
      privateKey: this.privateKey, publicKey: this.publicKey, enc: invite.enc, ciphertext: invite.sealed, info: successorInfo(session, memberKey),
    });
    return new TextDecoder("utf-8", { fatal: true }).decode(plaintext);
  }
}

// MARK: Following a removal

/**
 * A member's side of removals in one session (ChatChannel's `receive(_ removal:)`): the first valid
 * removal is handled, later ones are `repeated`. `receive` resolves to one outcome:
 * - {removed: {by}}: this page's key is the removed one;
 * - {moved: {invite, removed, by}}: its sealed invite opened (the successor's invite text);
 * - {leftBehind: {removed, by, reason}}: it cannot follow; `reason` says why: "noSealingKey" (the page
 *   announced none: its browser could not make one), "noInvite" (the removal seals it nothing: its
 *   sealing key did not reach the remover in time, or it joined after the removal was prepared),
 *   "unopened" (the box sealed to it does not open);
 * - {ignored: reason}: noHostKey, badSignature, repeated;
 * - {dropped: true}: not a removal.
 * `by` and `removed` are labels (as people see them); `by` is null when the sender said no identity.
 */
export class RemovalFollower {
  /**
   * @param {object} options
   * @param {Uint8Array} options.session the session id.
   * @param {Uint8Array|null} options.hostKey the invite's host key (null: everyone controls).
   * @param {{publicKey: Uint8Array}} options.memberKey the page's member key.
   * @param {SealingKey|null} options.sealingKey the page's sealing key in this session (null: it has none,
   *   its browser could not make one; a removal of someone else then leaves it behind).
   * @param {(participant: bigint) => string|null} [options.labelOf] the label of a sender.
   * @param {(name: string, key: Uint8Array) => string} [options.label] the label of a name and key.
   */
  constructor({ session, hostKey, memberKey, sealingKey, labelOf = () => null, label = (name) => name }) {
    Object.assign(this, { session, hostKey, memberKey, sealingKey, labelOf, label });
    this.handled = false;
    this.ignored = {};
    this.queue = Promise.resolve();
  }

  count(reason) {
    this.ignored[reason] = (this.ignored[reason] ?? 0) + 1;
    return { ignored: reason };
  }

  /** Takes a member message's parsed JSON from `sender` (BigInt), in arrival order. */
  receive(json, sender) {
    const removal = removalFromJSON(json);
    if (removal === null) return Promise.resolve({ dropped: true });
    const result = this.queue.then(() => this.take(removal, sender));
    this.queue = result.catch(() => {});
    return result;
  }

  async take(removal, sender) {
    if (this.hostKey === null) return this.count("noHostKey");
    if (!(await isValidRemoval(removal, this.session, this.hostKey))) return this.count("badSignature");
    if (this.handled) return this.count("repeated");
    this.handled = true;
    const by = this.labelOf(sender);
    const own = this.memberKey.publicKey;
    if (equalBytes(removal.removed, own)) return { removed: { by } };
    const removed = this.label(removal.name, removal.removed);
    if (this.sealingKey === null) return { leftBehind: { removed, by, reason: "noSealingKey" } };
    const sealed = removal.invites.find((invite) => equalBytes(invite.key, own));
    if (sealed === undefined) return { leftBehind: { removed, by, reason: "noInvite" } };
    try {
      return { moved: { invite: await this.sealingKey.open(sealed, this.session, own), removed, by } };
    } catch {
      return { leftBehind: { removed, by, reason: "unopened" } };
    }
  }
}

/**
 * The successor's invite from the text a removal sealed to this page, checked as `coplay` checks it
 * (MemberSessions / openSuccessor): an AES-256-GCM session (the page's suite), and, out of a session
 * where only hosts control, one that names a host key (without it everyone would control there).
 * @throws {Error} saying why the page cannot follow.
 */
export function successorInvite(text, { onlyHosts }) {
  const invite = parseInvite(text);
  if (invite.aead !== AEADSuite.aes256GCM) throw new Error("the successor session is not one browsers can join (its cipher is not AES-256-GCM)");
  if (onlyHosts && !onlyHostsControl(invite)) throw new Error("the successor invite has no host key, out of a session where only hosts control");
  return invite;
}
