// Roles where only hosts control (Web/static/sync/roles.js, docs/protocol.md "Roles: who may control"): role
// statements signed by the invite's host key, the book of who controls at a point of the order, the
// `signed` coordination messages, the gate's order (one message after another, as the relay ordered
// them, though WebCrypto verifies asynchronously), the page's own commands wrapped, signed or refused,
// the channel with a gate. The shared vectors (Tests/Vectors/roles/roles.json, written by Swift's
// RoleVectorTests) are run too when the file is there.

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { concatBytes, fromBase64URL, fromHex, toBase64URL, toHex, u64Bytes, utf8 } from "../../Web/static/wire/bytes.js";
import { GroupSessionCoordinationChannel } from "../../Web/static/sync/channel.js";
import { MemberKey } from "../../Web/static/session/chat.js";
import { formatInvite, parseInvite, viewerInvite } from "../../Web/static/wire/invite.js";
import { jsonEqual, parseJSON, stringifyJSON } from "../../Web/static/wire/json.js";
import { STATE_KEY, TRANSITION_KEY, decodeMessageBody, encodeMessageBody } from "../../Web/static/sync/messages.js";
import { Notices } from "../../Web/static/sync/notices.js";
import {
  ONLY_HOSTS, RoleBook, RoleError, RolesGate, commandBytes, isWellFormedRole, listenForRoles, roleBytes, roleFromJSON, roleRetainName, roleToJSON,
  signCommand, signRole, signedFromJSON, signedToJSON, uncheckedBodies,
} from "../../Web/static/sync/roles.js";

const session = Uint8Array.from({ length: 16 }, (_, i) => i);
const seed = (byte) => new Uint8Array(32).fill(byte);
const host = await MemberKey.fromSeed(seed(7));
const bob = await MemberKey.fromSeed(seed(8));
const carol = await MemberKey.fromSeed(seed(9));
const HOST_P = 0x1111n;
const BOB_P = 0x2222n;
const CAROL_P = 0x3333n;
const hex = (p) => p.toString(16).padStart(16, "0");

const body = (json) => utf8(stringifyJSON(json));
const grant = (key, name, issuedAt) => signRole(host, session, { action: "grant", key: key.publicKey, name, issuedAt });
const revoke = (key, name, issuedAt) => signRole(host, session, { action: "revoke", key: key.publicKey, name, issuedAt });
const roleBody = async (statement) => body(roleToJSON(await statement));

function pauseState(originator, sentAt, revision = 1n) {
  return {
    state: {
      state: { item: "clip", rate: 0, anchorItemTime: 12.5, anchorReferenceTime: sentAt + 120_000_000n, originator: hex(originator), revision, intendedRate: 1, duration: 20, entry: null },
      command: "pause", sentAt, follows: null,
    },
  };
}

const presence = (sentAt) => ({ presence: { sentAt, observedDelay: 1_000_000n, preroll: 0n, item: "clip", name: "x", items: null } });

async function signedBody(signer, participant, message) {
  return body(signedToJSON(await signCommand(signer, session, participant, encodeMessageBody(message))));
}

function newGate(options = {}) {
  return new RolesGate({ session, hostKey: host.publicKey, ...options });
}

/** Feeds coordination bodies to a gate without waiting between them; resolves to the outcomes, in order. */
async function feed(gate, frames) {
  return Promise.all(frames.map(([bytes, sender]) => gate.receiveCoordination(bytes, sender)));
}

const outcome = (result) => (result.message !== undefined ? "accepted" : result.ignored ?? "dropped");

// MARK: Statements

test("role statement: the signed bytes are the design's layout, and its JSON reads back the same", async () => {
  const statement = await grant(bob, "bob", 1790000000950000000n);
  const expected = concatBytes(
    utf8("coplay role v1"), new Uint8Array([0]), session, new Uint8Array([1]), bob.publicKey, u64Bytes(1790000000950000000n),
    new Uint8Array([0, 3]), utf8("bob"),
  );
  assert.equal(toHex(roleBytes(session, statement)), toHex(expected));
  assert.equal(roleBytes(session, { ...statement, action: "revoke" })[15 + session.length], 2, "revoke is action 2");
  const json = roleToJSON(statement);
  assert.deepEqual(Object.keys(json), ["kind", "v", "action", "key", "name", "issuedAt", "signature"]);
  const text = stringifyJSON(json);
  assert.match(text, /"issuedAt":1790000000950000000,/);
  const back = roleFromJSON(parseJSON(text));
  assert.deepEqual(back, statement);
  assert.equal(back.signature.length, 64);
});

test("role statement: what does not read as one is no statement; a name that is not one is malformed", async () => {
  const json = roleToJSON(await grant(bob, "bob", 5n));
  assert.equal(roleFromJSON({ ...json, action: "promote" }), null);
  assert.equal(roleFromJSON({ ...json, v: 2 }), null);
  for (const name of ["bob\u0007", "", "x".repeat(65), " bob"]) assert.ok(!isWellFormedRole(roleFromJSON({ ...json, name })), JSON.stringify(name));
  assert.ok(isWellFormedRole(roleFromJSON(json)));
  assert.equal(roleFromJSON({ ...json, name: 5 }), null);
  assert.equal(roleFromJSON({ ...json, key: json.key.slice(1) }), null);
  assert.equal(roleFromJSON({ ...json, signature: `${json.signature}A` }), null);
  assert.equal(roleFromJSON({ ...json, issuedAt: -1 }), null);
  assert.equal(roleFromJSON({ ...json, kind: "chat" }), null);
});

test("the retained name of a key's statements: coplay.role. and 8 bytes of its SHA-256", async () => {
  const name = await roleRetainName(bob.publicKey);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bob.publicKey));
  assert.equal(name, `coplay.role.${toHex(digest.slice(0, 8))}`);
  assert.match(name, /^coplay\.role\.[0-9a-f]{16}$/);
});

// MARK: The book

test("the book: the host key always controls; a key by its latest accepted statement; older and equal ones change nothing", async () => {
  const book = new RoleBook(host.publicKey);
  assert.ok(book.controls(host.publicKey));
  assert.ok(!book.controls(bob.publicKey));
  assert.equal(book.take(await grant(bob, "bob", 10n)), null);
  assert.ok(book.controls(bob.publicKey));
  assert.ok(!book.controls(carol.publicKey), "a grant is for its key only");
  assert.equal(book.take(await revoke(bob, "bob", 10n)), "stale", "the same issuedAt");
  assert.equal(book.take(await revoke(bob, "bob", 9n)), "stale", "an older statement (a reordering relay)");
  assert.ok(book.controls(bob.publicKey));
  assert.equal(book.take(await revoke(bob, "bob", 11n)), null);
  assert.ok(!book.controls(bob.publicKey));
  assert.equal(book.take(await grant(bob, "bob", 10n)), "stale", "the earlier grant, replayed");
  assert.ok(!book.controls(bob.publicKey));
  assert.equal(book.take(await grant(host, "host", 12n)), "malformed", "the host key is never a statement's subject");
  assert.equal(book.take(await grant(carol, "carol\n", 12n)), "malformed", "a name that is not one");
  assert.deepEqual(book.granted, []);
  book.take(await grant(carol, "carol", 1n));
  assert.deepEqual(book.granted, [{ key: toBase64URL(carol.publicKey), name: "carol" }]);
});

// MARK: Signed messages

test("signed message: the signed bytes, the JSON, and the inner body kept byte for byte", async () => {
  const inner = encodeMessageBody(pauseState(HOST_P, 1790000000000000000n));
  const signed = await signCommand(host, session, HOST_P, inner);
  assert.equal(toHex(commandBytes(session, HOST_P, inner)), toHex(concatBytes(utf8("coplay command v1"), new Uint8Array([0]), session, u64Bytes(HOST_P), inner)));
  const json = signedToJSON(signed);
  assert.deepEqual(Object.keys(json), ["kind", "v", "key", "body", "signature"]);
  assert.equal(json.key, toBase64URL(host.publicKey));
  const back = signedFromJSON(parseJSON(stringifyJSON(json)));
  assert.equal(toHex(back.body), toHex(inner));
  assert.equal(signedFromJSON({ ...json, body: `${json.body}=` }), null, "padded base64url");
  assert.equal(signedFromJSON({ ...json, body: "" }), null);
  assert.equal(signedFromJSON({ ...json, key: "AAAA" }), null);
  assert.equal(signedFromJSON({ ...json, key: 5 }), undefined, "not even a string: not a message");
});

// MARK: The gate

test("the gate: commands count only signed by a key that controls, for the frame's sender, once", async () => {
  const gate = newGate();
  const t = 1790000000000000000n;
  const hostPause = await signedBody(host, HOST_P, pauseState(HOST_P, t));
  const bobPause = await signedBody(bob, BOB_P, pauseState(BOB_P, t + 1n));
  const results = await feed(gate, [
    [hostPause, HOST_P], // the host key: accepted
    [hostPause, HOST_P], // the same again (a relay's replay): replay
    [encodeMessageBody(pauseState(BOB_P, t + 2n)), BOB_P], // unsigned: ignored
    [bobPause, BOB_P], // a key without a grant
    [hostPause, BOB_P], // the host's signed message in bob's frame: signed for another sender
    [encodeMessageBody(presence(t)), BOB_P], // presence passes unsigned
    [body({ kind: "signed", v: 1, key: "x", body: "y", signature: "z" }), BOB_P], // malformed
    [utf8("not json"), BOB_P], // not a message at all: dropped without a count
    [body({ kind: "signed", v: 2, key: 1 }), BOB_P], // a newer version: a kind this page does not read, passed on as such
  ]);
  assert.deepEqual(results.map(outcome), ["accepted", "replay", "unsigned", "noControl", "badSignature", "accepted", "malformed", "dropped", "accepted"]);
  assert.deepEqual(results.at(-1).message, { unsupported: { kind: "signed", version: 2 } });
  assert.deepEqual(gate.ignored, { replay: 1, unsigned: 1, noControl: 1, badSignature: 1, malformed: 1 });

  // An altered body: the signature no longer verifies.
  const altered = parseJSON(new TextDecoder().decode(await signedBody(host, HOST_P, pauseState(HOST_P, t + 10n))));
  const inner = new TextDecoder().decode(fromBase64URL(altered.body)).replace('"anchorItemTime":12.5', '"anchorItemTime":99.5');
  altered.body = toBase64URL(utf8(inner));
  assert.equal(outcome(await gate.receiveCoordination(body(altered), HOST_P)), "badSignature");
  // A signature by another key than the one named.
  const swapped = parseJSON(new TextDecoder().decode(await signedBody(bob, HOST_P, pauseState(HOST_P, t + 11n))));
  swapped.key = toBase64URL(host.publicKey);
  assert.equal(outcome(await gate.receiveCoordination(body(swapped), HOST_P)), "badSignature");
  // Copied from another session: does not verify in this one.
  const elsewhere = signedToJSON(await signCommand(host, new Uint8Array(16).fill(9), HOST_P, encodeMessageBody(pauseState(HOST_P, t + 12n))));
  assert.equal(outcome(await gate.receiveCoordination(body(elsewhere), HOST_P)), "badSignature");
  // An inner message that is no command (a signed presence) is malformed.
  assert.equal(outcome(await gate.receiveCoordination(await signedBody(host, HOST_P, presence(t)), HOST_P)), "malformed");
});

test("the gate: grant, the next command counts; revoke, the next does not; an older statement changes nothing", async () => {
  const gate = newGate();
  const roles = [];
  const notices = new Notices();
  gate.onrole = (event) => roles.push(notices.notice(event));
  const t = 1790000000000000000n;
  const pause = (n) => signedBody(bob, BOB_P, pauseState(BOB_P, t + BigInt(n)));
  assert.equal(outcome(await gate.receiveCoordination(await pause(1), BOB_P)), "noControl");
  assert.deepEqual(await gate.receiveRole(await roleBody(grant(bob, "bob", 100n)), HOST_P), { accepted: await grant(bob, "bob", 100n) });
  assert.equal(outcome(await gate.receiveCoordination(await pause(2), BOB_P)), "accepted");
  assert.equal(outcome(await gate.receiveCoordination(await pause(1), BOB_P)), "replay", "the command from before the grant, re-sent: older");
  assert.ok(!(await gate.receiveRole(await roleBody(revoke(bob, "bob", 99n)))).accepted, "an older revocation");
  assert.equal(outcome(await gate.receiveCoordination(await pause(3), BOB_P)), "accepted");
  await gate.receiveRole(await roleBody(revoke(bob, "bob", 101n)));
  assert.equal(outcome(await gate.receiveCoordination(await pause(4), BOB_P)), "noControl");
  // A statement not signed by the host key, and the grant replayed.
  const forged = roleToJSON(await signRole(carol, session, { action: "grant", key: bob.publicKey, name: "bob", issuedAt: 200n }));
  assert.deepEqual(await gate.receiveRole(body(forged)), { ignored: "badSignature" });
  assert.deepEqual(await gate.receiveRole(await roleBody(grant(bob, "bob", 100n))), { ignored: "stale" });
  assert.deepEqual(await gate.receiveRole(body({ ...forged, name: "b\u0000b" })), { ignored: "malformed" });
  assert.deepEqual(await gate.receiveRole(body({ ...forged, key: "short" })), { dropped: true });
  assert.deepEqual(await gate.receiveRole(body({ kind: "chat", v: 1 })), { other: true });
  assert.equal(outcome(await gate.receiveCoordination(await pause(5), BOB_P)), "noControl");
  assert.deepEqual(roles, ["bob may control the session now", "bob no longer controls the session"]);
  assert.deepEqual(gate.ignored, { noControl: 3, replay: 1, stale: 2, badSignature: 1, malformed: 1 });
});

test("the gate's order: each message is decided where the relay put it, though verifying takes time", async () => {
  const gate = newGate();
  const t = 1790000000000000000n;
  const delivered = [];
  const deliver = (label) => () => delivered.push(label);
  const before = await signedBody(bob, BOB_P, pauseState(BOB_P, t + 1n));
  const after = await signedBody(bob, BOB_P, pauseState(BOB_P, t + 2n));
  const afterRevoke = await signedBody(bob, BOB_P, pauseState(BOB_P, t + 3n));
  const grantBody = await roleBody(grant(bob, "bob", 10n));
  const revokeBody = await roleBody(revoke(bob, "bob", 11n));
  // All handed over at once, as frames arrive; nothing awaited in between.
  const results = await Promise.all([
    gate.receiveCoordination(before, BOB_P, deliver("before")),
    gate.receiveCoordination(encodeMessageBody(presence(t)), CAROL_P, deliver("presence 1")),
    gate.receiveRole(grantBody),
    gate.receiveCoordination(after, BOB_P, deliver("after")),
    gate.receiveCoordination(encodeMessageBody(presence(t + 1n)), CAROL_P, deliver("presence 2")),
    gate.receiveRole(revokeBody),
    gate.receiveCoordination(afterRevoke, BOB_P, deliver("after revoke")),
    gate.receiveCoordination(encodeMessageBody(presence(t + 2n)), CAROL_P, deliver("presence 3")),
  ]);
  assert.deepEqual(results.map((r) => (r.accepted ? `role ${r.accepted.action}` : outcome(r))),
    ["noControl", "accepted", "role grant", "accepted", "accepted", "role revoke", "noControl", "accepted"]);
  // Unsigned messages do not overtake the signed ones still being verified.
  assert.deepEqual(delivered, ["presence 1", "after", "presence 2", "presence 3"]);
});

test("the gate: a command not below the last of its key and sender, and when equal another body (a queue copy's parts)", async () => {
  const gate = newGate();
  const t = 1790000000000000000n;
  const part = (index, snapshot = "p.1") => ({
    queueSnapshot: {
      snapshot, request: null, through: 5n, part: index, parts: 2, entries: [], repeatMode: "off", shuffleSeed: null, removedPlaying: null,
      state: null, sentAt: t,
    },
  });
  const edit = { queueEdit: { edit: { op: "repeat", mode: "all" }, sentAt: t } };
  const results = await feed(gate, [
    [await signedBody(host, HOST_P, part(0)), HOST_P],
    [await signedBody(host, HOST_P, part(1)), HOST_P],
    [await signedBody(host, HOST_P, part(1)), HOST_P],
    [await signedBody(host, HOST_P, part(0, "p.2")), HOST_P],
    [await signedBody(host, HOST_P, edit), HOST_P],
    [await signedBody(host, HOST_P, pauseState(HOST_P, t)), HOST_P],
    [await signedBody(host, HOST_P, edit), HOST_P],
    [await signedBody(host, HOST_P, pauseState(HOST_P, t + 1n)), HOST_P],
    [await signedBody(host, HOST_P, part(0, "p.3")), HOST_P], // made before the pause, sent after it
    [await signedBody(host, CAROL_P, part(0, "p.3")), CAROL_P], // the same key from another participant: its own count
  ]);
  assert.deepEqual(results.map(outcome), ["accepted", "accepted", "replay", "accepted", "accepted", "accepted", "replay", "accepted", "replay", "accepted"]);
});

test("signing: a command made before the last one signed goes out at that one's sentAt, so that it counts", async () => {
  const gate = newGate({ hostSigner: host });
  const t = 1790000000000000000n;
  const copy = { queueSnapshot: { snapshot: "h.1", request: 3n, through: 3n, part: 0, parts: 1, entries: [], repeatMode: "off", shuffleSeed: null, removedPlaying: null, state: null, sentAt: t } };
  const first = await gate.outgoing(pauseState(HOST_P, t + 5n), HOST_P);
  const late = await gate.outgoing(copy, HOST_P);
  const inner = decodeMessageBody(fromBase64URL(parseJSON(new TextDecoder().decode(late)).body));
  assert.equal(inner.queueSnapshot.sentAt, t + 5n);
  assert.deepEqual({ ...inner.queueSnapshot, sentAt: t }, copy.queueSnapshot);
  const other = newGate();
  assert.deepEqual((await feed(other, [[first, HOST_P], [late, HOST_P]])).map(outcome), ["accepted", "accepted"]);
});

// MARK: Sending

test("sending: a viewer's commands are refused, its automatic ones dropped, the rest passes unsigned", async () => {
  const gate = newGate();
  assert.ok(!gate.controls);
  const t = 1790000000000000000n;
  await assert.rejects(gate.outgoing(pauseState(BOB_P, t), BOB_P), (error) => error instanceof RoleError && error.message === ONLY_HOSTS);
  await assert.rejects(gate.outgoing({ queueEdit: { edit: { op: "repeat", mode: "all" }, sentAt: t } }, BOB_P), /only hosts control this session/);
  const advance = pauseState(BOB_P, t);
  advance.state.command = "advance";
  assert.equal(await gate.outgoing(advance, BOB_P), null);
  // A transition at an entry's end (it names the entry it follows) goes unsigned, retained apart.
  const transition = { state: { ...advance.state, follows: "e1" } };
  const sealed = await gate.seal(transition, BOB_P, STATE_KEY);
  const sent = decodeMessageBody(sealed.body).state;
  assert.deepEqual([sent.command, sent.follows, sent.state.entry], ["advance", "e1", null]);
  assert.equal(sealed.retainName, TRANSITION_KEY);
  assert.deepEqual(await gate.seal(presence(t), BOB_P, "k").then((s) => s.retainName), "k");
  const restate = pauseState(BOB_P, t);
  restate.state.command = "restate";
  assert.equal(await gate.outgoing(restate, BOB_P), null);
  const copy = { queueSnapshot: { snapshot: "b.1", request: null, through: 1n, part: 0, parts: 1, entries: [], repeatMode: "off", shuffleSeed: null, removedPlaying: null, state: null, sentAt: t } };
  assert.equal(await gate.outgoing(copy, BOB_P), null);
  assert.deepEqual(decodeMessageBody(await gate.outgoing(presence(t), BOB_P)), presence(t));
  const suspension = { suspension: { id: "s", phase: "begin", reason: "buffering", effectiveAt: t, waits: true, timeout: 1n, proposedItemTime: null, sentAt: t, history: null } };
  assert.deepEqual(decodeMessageBody(await gate.outgoing(suspension, BOB_P)), suspension);
});

test("sending: granted, the page signs with its member key; revoked, it is refused again", async () => {
  const gate = newGate();
  gate.memberKey = bob;
  const t = 1790000000000000000n;
  await gate.receiveRole(await roleBody(grant(bob, "bob", 1n)));
  assert.ok(gate.controls && !gate.isHost);
  const wrapped = await gate.outgoing(pauseState(BOB_P, t), BOB_P);
  const json = parseJSON(new TextDecoder().decode(wrapped));
  assert.equal(json.key, toBase64URL(bob.publicKey));
  assert.deepEqual(decodeMessageBody(fromBase64URL(json.body)), pauseState(BOB_P, t));
  // Another member's gate takes it from bob's frame.
  const other = newGate();
  await other.receiveRole(await roleBody(grant(bob, "bob", 1n)));
  assert.equal(outcome(await other.receiveCoordination(wrapped, BOB_P)), "accepted");
  const events = [];
  gate.onrole = (event) => events.push(event);
  await gate.receiveRole(await roleBody(revoke(bob, "bob", 2n)), HOST_P);
  assert.deepEqual(events, [{ type: "roleChanged", originator: hex(HOST_P), detail: "revoke", text: "bob", key: toBase64URL(bob.publicKey), own: true }]);
  assert.ok(!gate.controls);
  await assert.rejects(gate.outgoing(pauseState(BOB_P, t + 1n), BOB_P), /only hosts control/);
});

const CONTROLLER =
  "coplay://127.0.0.1:7000/000102030405060708090a0b0c0d0e0f?aead=aes-256-gcm&host=6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
  + "#AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE.BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc";

test("the invite: a controller invite signs with its host key once WebCrypto says the seed is the key's; a viewer invite does not control", async () => {
  const controller = await RolesGate.forInvite(parseInvite(CONTROLLER));
  assert.ok(controller.isHost && controller.controls);
  assert.equal(toBase64URL(controller.signer.publicKey), toBase64URL(host.publicKey));
  const viewer = await RolesGate.forInvite(viewerInvite(parseInvite(CONTROLLER)));
  assert.ok(!viewer.isHost && !viewer.controls);
  // A seed of another key under this host key: refused before it signs anything.
  const wrong = formatInvite({ ...parseInvite(CONTROLLER), hostSeed: seed(8) });
  await assert.rejects(RolesGate.forInvite(parseInvite(wrong)), (error) => error instanceof RoleError && error.code === "badSeed");
  // The controller's signed command counts at a viewer's gate.
  const wrapped = await controller.outgoing(pauseState(HOST_P, 5n), HOST_P);
  assert.equal(outcome(await viewer.receiveCoordination(wrapped, HOST_P)), "accepted");
});

test("a forced pause of a page without control (the test hook): unsigned and self-signed, both ignored by members", async () => {
  const [unsigned, selfSigned] = await uncheckedBodies(pauseState(BOB_P, 9n), bob, session, BOB_P);
  const gate = newGate();
  assert.deepEqual((await feed(gate, [[unsigned, BOB_P], [selfSigned, BOB_P]])).map(outcome), ["unsigned", "noControl"]);
});

// MARK: The channel with a gate

/** A joined GroupSession as the channel sees it: it records what is sent and acks on request. */
class FakeSession {
  constructor(participant) {
    this.participant = participant;
    this.localName = hex(participant);
    this.sent = [];
    this.onmessage = () => {};
    this.onpresence = () => {};
  }

  sendMessage(name, body, { retainName = null, onAck = null } = {}) {
    this.sent.push({ name, body, retainName, onAck });
    return Promise.resolve(BigInt(this.sent.length));
  }
}

test("the channel in a hosts session: incoming messages through the gate in order, own commands signed and delivered at their ack", async () => {
  const fake = new FakeSession(BOB_P);
  const gate = newGate();
  gate.memberKey = bob;
  const channel = new GroupSessionCoordinationChannel(fake, { gate });
  listenForRoles(fake, gate);
  const events = [];
  channel.onevent = (event) => events.push(event);
  const t = 1790000000000000000n;
  fake.onmessage("CoordinationMessage", await signedBody(host, HOST_P, pauseState(HOST_P, t)), { sender: HOST_P, sequence: 1n });
  fake.onmessage("CoordinationMessage", encodeMessageBody(pauseState(CAROL_P, t + 1n)), { sender: CAROL_P, sequence: 2n });
  fake.onmessage("MemberMessage", await roleBody(grant(bob, "bob", 1n)), { sender: HOST_P, sequence: 3n });
  fake.onmessage("CoordinationMessage", encodeMessageBody(presence(t)), { sender: CAROL_P, sequence: 4n });
  await gate.queue;
  assert.deepEqual(events.map((e) => [e.sender, Object.keys(e.message)[0], e.sequence]), [[hex(HOST_P), "state", 1n], [hex(CAROL_P), "presence", 4n]]);
  assert.ok(gate.controls);

  // Bob's own pause goes out signed with his key, retained under the state's name; at its ack it reaches his coordinator.
  await channel.send(pauseState(BOB_P, t + 5n), "coplay.playback.state");
  const [sent] = fake.sent;
  assert.equal(sent.retainName, "coplay.playback.state");
  assert.equal(parseJSON(new TextDecoder().decode(sent.body)).kind, "signed");
  sent.onAck(5n);
  await gate.queue;
  assert.deepEqual(events.at(-1), { type: "message", message: pauseState(BOB_P, t + 5n), sender: hex(BOB_P), sequence: 5n });

  // Revoked: the next pause is refused with the hint; the coordinator's automatic advance is dropped, not sent.
  fake.onmessage("MemberMessage", await roleBody(revoke(bob, "bob", 2n)), { sender: HOST_P, sequence: 6n });
  await gate.queue;
  await assert.rejects(channel.send(pauseState(BOB_P, t + 6n), "coplay.playback.state"), /only hosts control this session/);
  const advance = pauseState(BOB_P, t + 7n);
  advance.state.command = "advance";
  assert.equal(await channel.send(advance, "coplay.playback.state"), null);
  await channel.send(presence(t + 8n));
  assert.deepEqual(fake.sent.map((s) => parseJSON(new TextDecoder().decode(s.body)).kind), ["signed", "presence"]);
});

// MARK: The shared vectors

const vectorFile = join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "roles", "roles.json");
const vector = existsSync(vectorFile) ? parseJSON(readFileSync(vectorFile, "utf8")) : null;
const vectorTest = (name, run) => test(`vectors: ${name}`, { skip: vector === null ? "Tests/Vectors/roles/roles.json not written yet (Swift's RoleVectorTests)" : false }, run);
const vectorKeys = async () => {
  const keys = [await MemberKey.fromSeed(fromBase64URL(vector.hostSeed)), ...(await Promise.all(vector.members.map((m) => MemberKey.fromSeed(fromBase64URL(m.seed)))))];
  return new Map(keys.map((key) => [toBase64URL(key.publicKey), key]));
};
const vectorGate = () => new RolesGate({ session: fromHex(vector.session), hostKey: fromBase64URL(vector.hostKey) });
const text = (bytes) => new TextDecoder().decode(bytes);

vectorTest("keys from the seeds are the vectors' host key and members' keys", async () => {
  assert.equal(toBase64URL((await MemberKey.fromSeed(fromBase64URL(vector.hostSeed))).publicKey), vector.hostKey);
  for (const member of vector.members) assert.equal(toBase64URL((await MemberKey.fromSeed(fromBase64URL(member.seed))).publicKey), member.publicKey, member.name);
});

vectorTest("statements: the bytes signed, the host key's signature, the JSON", async () => {
  const keys = await vectorKeys();
  const sessionID = fromHex(vector.session);
  for (const signed of vector.statements) {
    const json = parseJSON(signed.body);
    const statement = roleFromJSON(json);
    assert.ok(statement !== null && isWellFormedRole(statement), signed.name);
    assert.equal(toHex(roleBytes(sessionID, statement)), signed.canonical, signed.name);
    assert.equal(toBase64URL(statement.signature), signed.signature, signed.name);
    // Ed25519 is deterministic: the host key signs the same bytes to the same signature.
    const again = await signRole(keys.get(vector.hostKey), sessionID, statement);
    assert.equal(toBase64URL(again.signature), signed.signature, signed.name);
    assert.ok(jsonEqual(roleToJSON(again), json), signed.name);
  }
});

vectorTest("signed commands: the inner body as sent, the bytes signed, the signature, the JSON", async () => {
  const keys = await vectorKeys();
  const sessionID = fromHex(vector.session);
  for (const command of vector.commands) {
    const json = parseJSON(command.body);
    const signed = signedFromJSON(json);
    assert.equal(text(signed.body), command.inner, command.name);
    const participant = BigInt(`0x${command.participant}`);
    assert.equal(toHex(commandBytes(sessionID, participant, signed.body)), command.canonical, command.name);
    const again = await signCommand(keys.get(json.key), sessionID, participant, signed.body);
    assert.equal(toBase64URL(again.signature), command.signature, command.name);
    assert.ok(jsonEqual(signedToJSON(again), json), command.name);
    // The inner message reads as a command this page knows.
    assert.ok(["state", "queueEdit", "queueSnapshot"].includes(Object.keys(decodeMessageBody(signed.body))[0]), command.name);
  }
});

/** What a gate does with one frame of a trace: "accepted" or the reason. */
async function traceOutcome(gate, frame) {
  const bytes = utf8(frame.body);
  const sender = BigInt(`0x${frame.participant}`);
  const result = parseJSON(frame.body).kind === "role" ? await gate.receiveRole(bytes, sender) : await gate.receiveCoordination(bytes, sender);
  if (result.message?.state?.unauthenticated === true) return "transition";
  return result.accepted !== undefined || result.message !== undefined ? "accepted" : result.ignored ?? "dropped";
}

for (const trace of vector?.traces ?? []) {
  vectorTest(`trace: ${trace.name}`, async () => {
    const gate = vectorGate();
    for (const [index, frame] of trace.frames.entries()) assert.equal(await traceOutcome(gate, frame), frame.expect, `frame ${index}`);
    const ignored = Object.values(gate.ignored).reduce((a, b) => a + b, 0);
    assert.equal(ignored, trace.frames.filter((f) => !["accepted", "transition"].includes(f.expect)).length, "every rejection counted");
  });
  vectorTest(`trace, every frame handed over at once (as they arrive): ${trace.name}`, async () => {
    const gate = vectorGate();
    const outcomes = await Promise.all(trace.frames.map((frame) => traceOutcome(gate, frame)));
    assert.deepEqual(outcomes, trace.frames.map((f) => f.expect));
  });
}

vectorTest("every reason occurs in the traces", () => {
  const reasons = new Set(vector.traces.flatMap((t) => t.frames.map((f) => f.expect)));
  for (const reason of ["accepted", "unsigned", "malformed", "badSignature", "noControl", "replay", "stale"]) assert.ok(reasons.has(reason), reason);
});

test("notices of role changes: Swift's words, shown at the level `all` only (as PlaybackNotices)", () => {
  const event = { type: "roleChanged", originator: hex(HOST_P), detail: "grant", text: "bob", key: "k" };
  assert.equal(new Notices({ level: "all" }).notice(event), "bob may control the session now");
  assert.equal(new Notices({ level: "all" }).notice({ ...event, detail: "revoke" }), "bob no longer controls the session");
  assert.equal(new Notices({ level: "commands" }).notice(event), null);
  assert.equal(new Notices({ level: "off" }).notice(event), null);
});
