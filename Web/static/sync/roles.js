// Who may control a session where only hosts control (docs/protocol.md, "Roles: who may control"; Swift
// implements the same rules, checked by the shared vectors Tests/Vectors/roles/roles.json in
// Tests/Web/roles.test.mjs). Pure logic over WebCrypto's Ed25519; channel.js puts the gate between the
// session and the coordinator, the interface (status.js, controls.js) shows what it decides.
//
// - `role` statements (member messages, signed by the invite's host key) grant or revoke control of a
//   member key; the RoleBook keeps, per key, the latest statement accepted (by `issuedAt`).
// - `signed` coordination messages wrap the commands (`state`, `queueEdit`, `queueSnapshot`): the body
//   is the inner message's bytes, signed with the session, the sender's participant and the body.
// - The RolesGate takes role statements and coordination messages in the relay's order, one after the
//   other (WebCrypto verifies asynchronously), and lets through only what counts; it wraps and signs
//   the page's own commands, and refuses them where the page does not control.

import { concatBytes, equalBytes, fromBase64URL, toBase64URL, toHex, u64Bytes, utf8 } from "../wire/bytes.js";
import { CHAT_LIMITS, MemberKey, isClean, textLength, verifySignature } from "../session/chat.js";
import { parseJSON, stringifyJSON } from "../wire/json.js";
import { TRANSITION_KEY, decodeMessage, encodeMessageBody } from "./messages.js";

/** What a member without control is told when it tries a command (mpv shows the same words). */
export const ONLY_HOSTS = "only hosts control this session";

/** The coordination messages that are commands: signed in a hosts session, sent only with control. */
export const COMMAND_KINDS = Object.freeze(["state", "queueEdit", "queueSnapshot"]);

/** Commands nobody asked for (the advance at an entry's end, the restate, the queue's copies): dropped, not refused. */
const AUTOMATIC_COMMANDS = new Set(["advance", "restate"]);

/**
 * Whether a `state` proposal is a transition at an entry's end: a member without control sends it
 * unsigned, and the coordinator applies only the transition it computes itself (RoleBook.isTransition).
 */
export function isTransition(proposal) {
  return proposal.command === "advance" && (proposal.follows ?? null) !== null;
}

/** Why a command could not be sent, or why an invite's host seed is refused. */
export class RoleError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "RoleError";
    this.code = code;
  }
}

// MARK: Signed bytes

const domain = (text) => concatBytes(utf8(text), new Uint8Array([0]));
const u16 = (value) => new Uint8Array([(value >> 8) & 0xff, value & 0xff]);
const ACTIONS = Object.freeze({ grant: 1, revoke: 2 });

/**
 * "coplay role v1" 0x00 | session (16) | action u8 (1 grant, 2 revoke) | key (32) | issuedAt u64 |
 * nameLength u16 | name (UTF-8).
 * @param {Uint8Array} session @param {{action: string, key: Uint8Array, issuedAt: bigint, name: string}} statement
 */
export function roleBytes(session, { action, key, issuedAt, name }) {
  const nameBytes = utf8(name).slice(0, 0xffff);
  return concatBytes(domain("coplay role v1"), session, new Uint8Array([ACTIONS[action]]), key, u64Bytes(BigInt(issuedAt)), u16(nameBytes.length), nameBytes);
}

/**
 * "coplay command v1" 0x00 | session (16) | sender participant u64 | body bytes.
 * @param {Uint8Array} session @param {bigint} participant @param {Uint8Array} body
 */
export function commandBytes(session, participant, body) {
  return concatBytes(domain("coplay command v1"), session, u64Bytes(participant), body);
}

/** The name a key's latest statement is retained under: `coplay.role.` and 8 bytes of SHA-256(key) in hex. */
export async function roleRetainName(key) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", key));
  return `coplay.role.${toHex(digest.slice(0, 8))}`;
}

// MARK: Wire JSON

/** Bytes of base64url text of an exact length, written as the encoder writes it; else null. */
function exactBase64URL(value, length) {
  if (typeof value !== "string") return null;
  const bytes = fromBase64URL(value);
  return bytes !== null && bytes.length === length && toBase64URL(bytes) === value ? bytes : null;
}

function unsignedInteger(value) {
  if (typeof value === "bigint" && value >= 0n && value < 1n << 64n) return value;
  if (Number.isInteger(value) && value >= 0) return BigInt(value);
  return null;
}

const wellFormedName = (name) => typeof name === "string" && name !== "" && textLength(name) <= CHAT_LIMITS.maximumNameLength && isClean(name);

/**
 * A role statement from its member-message JSON ({"kind": "role", "v": 1, ...}), or null when it does
 * not read as one (no action, a key or signature of the wrong length: dropped, as Swift's
 * MemberMessage decoding drops it). Its name is checked by the book (`isWellFormedRole`).
 */
export function roleFromJSON(json) {
  if (json === null || typeof json !== "object" || json.kind !== "role") return null;
  if (json.v !== 1 && json.v !== 1n) return null;
  if (!Object.hasOwn(ACTIONS, json.action) || typeof json.name !== "string") return null;
  const key = exactBase64URL(json.key, 32);
  const signature = exactBase64URL(json.signature, 64);
  const issuedAt = unsignedInteger(json.issuedAt);
  if (key === null || signature === null || issuedAt === null) return null;
  return { action: json.action, key, name: json.name, issuedAt, signature };
}

/** Whether a statement's name follows the chat's rules for names (clean, 1 to 64 characters). */
export const isWellFormedRole = (statement) => wellFormedName(statement.name);

/** The JSON object of a role statement. */
export function roleToJSON({ action, key, name, issuedAt, signature }) {
  return { kind: "role", v: 1, action, key: toBase64URL(key), name, issuedAt: BigInt(issuedAt), signature: toBase64URL(signature) };
}

/** A role statement signed by `hostKey` (a MemberKey made from the invite's host seed). */
export async function signRole(hostKey, session, { action, key, name, issuedAt }) {
  const statement = { action, key, name, issuedAt: BigInt(issuedAt) };
  return { ...statement, signature: await hostKey.sign(roleBytes(session, statement)) };
}

/**
 * A `signed` message from its JSON: null when its key, body or signature is not base64url of the right
 * length (`malformed`); undefined when they are not even strings (not a message: dropped).
 */
export function signedFromJSON(json) {
  if (json === null || typeof json !== "object" || json.kind !== "signed") return undefined;
  if (![json.key, json.body, json.signature].every((field) => typeof field === "string")) return undefined;
  const key = exactBase64URL(json.key, 32);
  const signature = exactBase64URL(json.signature, 64);
  const body = typeof json.body === "string" ? fromBase64URL(json.body) : null;
  if (key === null || signature === null || body === null || body.length === 0 || toBase64URL(body) !== json.body) return null;
  return { key, body, signature };
}

/** The JSON object of a `signed` message. */
export function signedToJSON({ key, body, signature }) {
  return { kind: "signed", v: 1, key: toBase64URL(key), body: toBase64URL(body), signature: toBase64URL(signature) };
}

/** The `signed` message of `body` (an inner message's bytes) sent by `participant`, signed with `signer`. */
export async function signCommand(signer, session, participant, body) {
  return { key: signer.publicKey, body, signature: await signer.sign(commandBytes(session, participant, body)) };
}

const jsonBytes = (json) => utf8(stringifyJSON(json));

function parseBody(bytes) {
  try {
    return parseJSON(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
}

// MARK: The book

const keyText = (key) => toBase64URL(key);
const participantHex = (id) => BigInt.asUintN(64, id).toString(16).padStart(16, "0");

/**
 * Who controls at a point of the order: the host key always; another key when the latest statement
 * about it accepted so far is a grant. A statement is accepted when its `issuedAt` is above the last
 * accepted one for the same key (a replayed or older statement changes nothing). Signatures are the
 * caller's to check (RolesGate).
 */
export class RoleBook {
  /** @param {Uint8Array} hostKey the invite's host key. */
  constructor(hostKey) {
    this.hostKey = hostKey;
    /** key text -> {action, name, issuedAt, key} */
    this.latest = new Map();
  }

  /** Whether `key` (bytes) controls now. */
  controls(key) {
    if (key === null || key === undefined) return false;
    if (equalBytes(key, this.hostKey)) return true;
    return this.latest.get(keyText(key))?.action === "grant";
  }

  /**
   * Takes a statement whose signature verified: null when accepted, else why not ("malformed": a name
   * that is not one, or about the host key; "stale": not newer than the last accepted one for its key).
   */
  take(statement) {
    if (!isWellFormedRole(statement) || equalBytes(statement.key, this.hostKey)) return "malformed";
    const known = this.latest.get(keyText(statement.key));
    if (known !== undefined && !(statement.issuedAt > known.issuedAt)) return "stale";
    this.latest.set(keyText(statement.key), { action: statement.action, name: statement.name, issuedAt: statement.issuedAt, key: statement.key });
    return null;
  }

  /** The keys granted control now: [{key (text), name}]. */
  get granted() {
    return [...this.latest.entries()].filter(([, s]) => s.action === "grant").map(([key, s]) => ({ key, name: s.name }));
  }
}

// MARK: The gate

/**
 * The rules of a hosts session between the session and the coordinator, and its signer.
 *
 * Receiving: `receiveRole` (a member message's body) and `receiveCoordination` (a coordination
 * message's body) are taken one after the other in the order they were called (the relay's order),
 * each verified before the next is looked at; what counts is passed to the `deliver` callback inside
 * that order. Commands (`state`, `queueEdit`, `queueSnapshot`) count only `signed` by a key that
 * controls at that point, for the frame's sender, and not seen before (an inner `sentAt` not below the
 * last accepted one of the same key and sender, and when equal another body: the parts of one queue
 * copy); other coordination messages pass as they are. What is ignored is counted by reason
 * (`ignored`: unsigned, malformed, badSignature, noControl, replay, stale; RoleBook.Rejection in Swift).
 *
 * Sending: `outgoing(message, participant)` wraps a command in a `signed` message, signed with the host
 * key (a controller invite) or the page's member key (while granted); without control it throws
 * RoleError(ONLY_HOSTS) for a person's command and answers null (drop it) for an automatic one.
 */
export class RolesGate {
  /**
   * @param {object} options
   * @param {Uint8Array} options.session the session id (16 bytes).
   * @param {Uint8Array} options.hostKey the invite's host key.
   * @param {MemberKey|null} [options.hostSigner] the host key's private half (a controller invite), checked by `forInvite`.
   */
  constructor({ session, hostKey, hostSigner = null }) {
    this.session = session;
    this.book = new RoleBook(hostKey);
    this.hostSigner = hostSigner;
    /** The page's own member key (chatpanel.js), once it has one: it signs while granted. */
    this.memberKey = null;
    this.ignored = {};
    this.lastCommands = new Map(); // `${key} ${participant}` -> {sentAt: bigint, bodies: Set of body texts}
    this.lastSigned = null; // the latest sentAt this page signed
    this.queue = Promise.resolve();
    /** Called with each accepted statement as an event: {type: "roleChanged", originator, detail (action), text (name), key, own}. */
    this.onrole = () => {};
  }

  /**
   * The gate of an invite that names a host key; with a host seed, only after WebCrypto made the seed's
   * public key and it is the named one.
   * @throws {RoleError} "badSeed" when the seed is not the host key's.
   */
  static async forInvite(invite) {
    let hostSigner = null;
    if (invite.hostSeed != null) {
      hostSigner = await MemberKey.fromSeed(invite.hostSeed);
      if (!equalBytes(hostSigner.publicKey, invite.hostKey)) {
        throw new RoleError("badSeed", "the invite's host seed is not the seed of its host key (&host=): ask the host for the invite again");
      }
    }
    return new RolesGate({ session: invite.session, hostKey: invite.hostKey, hostSigner });
  }

  /** The key this page signs its commands with now, or null when it does not control. */
  get signer() {
    if (this.hostSigner !== null) return this.hostSigner;
    if (this.memberKey !== null && this.book.controls(this.memberKey.publicKey)) return this.memberKey;
    return null;
  }

  /** Whether this page's commands count now (at the point of the order the gate has reached). */
  get controls() {
    return this.signer !== null;
  }

  /** Whether this page holds the host key (a controller invite). */
  get isHost() {
    return this.hostSigner !== null;
  }

  serial(work) {
    const result = this.queue.then(work);
    this.queue = result.catch(() => {});
    return result;
  }

  count(reason) {
    this.ignored[reason] = (this.ignored[reason] ?? 0) + 1;
    return { ignored: reason };
  }

  /**
   * Takes a member message's body (bytes) from `sender`: a `role` statement is checked and, when it
   * verifies under the host key and is newer than the last for its key, recorded. Resolves to
   * {accepted: statement} | {ignored: reason} | {other: true} (not a role statement: not the gate's).
   */
  receiveRole(body, sender = null) {
    const json = parseBody(body);
    if (json === undefined || json === null || typeof json !== "object" || json.kind !== "role") return Promise.resolve({ other: true });
    const statement = roleFromJSON(json);
    if (statement === null) return Promise.resolve({ dropped: true });
    return this.serial(() => this.takeRole(statement, sender));
  }

  async takeRole(statement, sender) {
    if (!isWellFormedRole(statement) || equalBytes(statement.key, this.book.hostKey)) return this.count("malformed");
    if (!(await verifySignature(this.book.hostKey, statement.signature, roleBytes(this.session, statement)))) return this.count("badSignature");
    const refused = this.book.take(statement);
    if (refused !== null) return this.count(refused);
    const own = this.memberKey !== null && equalBytes(this.memberKey.publicKey, statement.key);
    this.onrole({
      type: "roleChanged", originator: sender === null ? null : participantHex(sender), detail: statement.action, text: statement.name,
      key: keyText(statement.key), own,
    });
    return { accepted: statement };
  }

  /**
   * Takes a coordination message's body (bytes) from `sender` (the frame's participant, BigInt);
   * `deliver(message)` is called, in order, with what counts. Resolves to {message} | {ignored: reason}
   * | {dropped: true} (not a coordination message at all).
   */
  receiveCoordination(body, sender, deliver = () => {}) {
    return this.serial(async () => {
      const outcome = await this.check(body, sender);
      if (outcome.message !== undefined) deliver(outcome.message);
      return outcome;
    });
  }

  async check(body, sender) {
    const json = parseBody(body);
    if (json === undefined) return { dropped: true };
    // A newer version of `signed` is a kind this page does not read: it passes as unsupported (reported).
    if (json !== null && typeof json === "object" && json.kind === "signed" && (json.v === 1 || json.v === 1n)) return this.checkSigned(json, sender);
    let message;
    try {
      message = decodeMessage(json);
    } catch {
      return { dropped: true }; // not a message: dropped without a word, as everywhere
    }
    const kind = Object.keys(message)[0];
    // A transition needs no authority: marked, the coordinator checks it against its own.
    if (kind === "state" && isTransition(message.state)) return { message: { state: { ...message.state, unauthenticated: true } } };
    if (COMMAND_KINDS.includes(kind)) return this.count("unsigned");
    return { message };
  }

  async checkSigned(json, sender) {
    const signed = signedFromJSON(json);
    if (signed === undefined) return { dropped: true };
    if (signed === null) return this.count("malformed");
    let message;
    try {
      message = decodeMessage(parseBody(signed.body));
    } catch {
      return this.count("malformed");
    }
    // Only a command is signed (a newer version of one, which this page cannot read, is not a command it knows).
    const kind = Object.keys(message)[0];
    if (!COMMAND_KINDS.includes(kind)) return this.count("malformed");
    // The signature covers the frame's sender: a command copied into another member's frame, altered,
    // or from another session does not verify.
    if (!(await verifySignature(signed.key, signed.signature, commandBytes(this.session, sender, signed.body)))) return this.count("badSignature");
    if (!this.book.controls(signed.key)) return this.count("noControl");
    const { sentAt } = message[kind];
    const signer = `${keyText(signed.key)} ${sender}`;
    const bodyText = toBase64URL(signed.body);
    let last = this.lastCommands.get(signer) ?? null;
    if (last !== null && (sentAt < last.sentAt || (sentAt === last.sentAt && last.bodies.has(bodyText)))) return this.count("replay");
    if (last === null || sentAt > last.sentAt) last = { sentAt, bodies: new Set() };
    last.bodies.add(bodyText);
    this.lastCommands.set(signer, last);
    return { message };
  }

  /**
   * The body (bytes) to send for `message` from `participant` (BigInt): a command wrapped and signed,
   * another message as it is; null to drop an automatic command this page may not send.
   * @throws {RoleError} ONLY_HOSTS for a person's command without control.
   */
  async outgoing(message, participant) {
    return (await this.seal(message, participant))?.body ?? null;
  }

  /**
   * What to send for `message` (retained under `retainName`, if any): {body, retainName}, or null to
   * drop it. As `outgoing`; a transition the page sends without control goes unsigned, retained under
   * TRANSITION_KEY (GroupSessionCoordinationChannel in Swift).
   * @throws {RoleError} ONLY_HOSTS for a person's command without control.
   */
  async seal(message, participant, retainName = null) {
    const kind = Object.keys(message)[0];
    if (!COMMAND_KINDS.includes(kind)) return { body: encodeMessageBody(message), retainName };
    const signer = this.signer;
    if (signer === null) {
      if (kind === "state" && isTransition(message.state)) return { body: encodeMessageBody(message), retainName: TRANSITION_KEY };
      if (kind === "queueSnapshot" || (kind === "state" && AUTOMATIC_COMMANDS.has(message.state.command))) return null;
      throw new RoleError("onlyHosts", ONLY_HOSTS);
    }
    // Never below the last one signed, which receivers would take as a replay (a queue answer is made
    // when asked for and sent a moment later, after other commands).
    let sending = message;
    const { sentAt } = message[kind];
    if (this.lastSigned !== null && sentAt < this.lastSigned) sending = { [kind]: { ...message[kind], sentAt: this.lastSigned } };
    else this.lastSigned = sentAt;
    return { body: jsonBytes(signedToJSON(await signCommand(signer, this.session, participant, encodeMessageBody(sending)))), retainName };
  }
}


/**
 * Routes the role statements among a session's member messages to `gate`, in arrival order with the
 * coordination messages (install it after the channel and the chat: it wraps their `onmessage`; the
 * chat ignores the statements, a kind it does not read).
 */
export function listenForRoles(session, gate, memberMessageName = "MemberMessage") {
  const inner = session.onmessage;
  session.onmessage = (name, body, context) => {
    if (name === memberMessageName) gate.receiveRole(body, context.sender);
    inner(name, body, context);
  };
}

/**
 * Tests: the bodies a member without control could send for `message` past its own gate (unsigned,
 * and signed with its own `memberKey` when it has one). Members that check roles ignore both.
 */
export async function uncheckedBodies(message, memberKey, session, participant) {
  const body = encodeMessageBody(message);
  const bodies = [body];
  if (memberKey !== null) bodies.push(jsonBytes(signedToJSON(await signCommand(memberKey, session, participant, body))));
  return bodies;
}
