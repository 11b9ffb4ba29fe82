// Following a removal (Web/static/session/removal.js, docs/protocol.md "Removing a member"): the page's
// sealingKey statement, removals verified under the invite's host key, the page's sealed invite opened
// (HPKE boxes sealed by Swift's `Sealing`), and the outcome, against the shared vectors
// Tests/Vectors/removal/removal.json written by Swift's RemovalVectorTests.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { fromBase64URL, fromHex, toHex, utf8 } from "../../Web/static/wire/bytes.js";
import { importX25519PrivateKey, sealSingleShot } from "../../Web/static/wire/hpke.js";
import { parseInvite } from "../../Web/static/wire/invite.js";
import { jsonEqual, parseJSON } from "../../Web/static/wire/json.js";
import { MemberKey } from "../../Web/static/session/chat.js";
import {
  RemovalFollower, SealingKey, controllerBytes, isValidRemoval, removalBytes, removalFromJSON, removalToJSON, sealingKeyBytes, sealingKeyToJSON,
  successorInfo,
} from "../../Web/static/session/removal.js";

const vector = parseJSON(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "removal", "removal.json"), "utf8"));
const session = fromHex(vector.session);
const hostSigner = await MemberKey.fromSeed(fromBase64URL(vector.hostSeed));
const members = new Map();
for (const m of vector.members) {
  members.set(m.name, {
    key: await MemberKey.fromSeed(fromBase64URL(m.seed)),
    sealing: new SealingKey(await importX25519PrivateKey(fromBase64URL(m.sealingPrivate)), fromBase64URL(m.sealingKey)),
  });
}

test("the vector's keys are the page's", () => {
  assert.equal(toHex(hostSigner.publicKey), toHex(fromBase64URL(vector.hostKey)));
  for (const m of vector.members) assert.equal(toHex(members.get(m.name).key.publicKey), toHex(fromBase64URL(m.publicKey)), m.name);
});

test("the page's sealingKey statement is Swift's: the same bytes signed, the same JSON", async () => {
  for (const statement of vector.sealingKeys) {
    const { key, sealing } = members.get(statement.name);
    const controller = statement.controllerCanonical !== undefined && statement.controllerCanonical !== null;
    assert.equal(toHex(sealingKeyBytes(session, key.publicKey, sealing.publicKey)), statement.canonical, statement.name);
    if (controller) assert.equal(toHex(controllerBytes(session, key.publicKey)), statement.controllerCanonical, statement.name);
    const made = await sealing.statement(session, key, controller ? hostSigner : null);
    assert.ok(jsonEqual(sealingKeyToJSON(made), parseJSON(statement.body)), `${statement.name}: ${JSON.stringify(sealingKeyToJSON(made))}`);
  }
});

test("the successor invites in the vector are invites the page reads: a controller's and its viewer's", () => {
  const controller = parseInvite(vector.invites.controller);
  const viewer = parseInvite(vector.invites.viewer);
  assert.ok(controller.hostSeed instanceof Uint8Array && controller.hostSeed.length === 32);
  assert.equal(viewer.hostSeed ?? null, null);
  assert.equal(toHex(viewer.hostKey), toHex(controller.hostKey));
});

for (const trace of vector.traces) {
  test(`trace: ${trace.name}`, async () => {
    const { key, sealing } = members.get(trace.member);
    const follower = new RemovalFollower({
      session, hostKey: trace.hostKey ? hostSigner.publicKey : null, memberKey: key, sealingKey: sealing, labelOf: () => "remover",
    });
    const outcomes = await Promise.all(trace.frames.map((frame) => follower.receive(parseJSON(frame.body), 0xc2n)));
    trace.frames.forEach((frame, index) => {
      const removal = removalFromJSON(parseJSON(frame.body));
      assert.notEqual(removal, null, `frame ${index} reads as a removal`);
      assert.equal(toHex(removalBytes(session, removal)), frame.canonical, `frame ${index}: the bytes signed`);
      const outcome = outcomes[index];
      const got = outcome.moved ? `moved ${outcome.moved.invite}` : outcome.removed ? "removed" : outcome.leftBehind ? "leftBehind" : outcome.ignored;
      assert.equal(got, frame.expect, `frame ${index}`);
      if (outcome.moved || outcome.removed || outcome.leftBehind) assert.equal(Object.values(outcome)[0].by, "remover");
    });
    const rejected = trace.frames.filter((f) => ["noHostKey", "badSignature", "repeated"].includes(f.expect)).length;
    assert.equal(Object.values(follower.ignored).reduce((a, b) => a + b, 0), rejected, "every rejection counted");
  });
}

test("a removal the page seals and signs round-trips through JSON and verifies; its invite opens only for its member", async () => {
  const alice = members.get("alice");
  const bob = members.get("bob");
  const box = await sealSingleShot({ publicKey: alice.sealing.publicKey, plaintext: utf8(vector.invites.viewer), info: successorInfo(session, alice.key.publicKey) });
  const unsigned = { removed: bob.key.publicKey, name: "bob", issuedAt: 5n, invites: [{ key: alice.key.publicKey, sealingKey: alice.sealing.publicKey, enc: box.enc, sealed: box.ciphertext }] };
  const removal = { ...unsigned, signature: await hostSigner.sign(removalBytes(session, unsigned)) };
  const decoded = removalFromJSON(parseJSON(JSON.stringify(removalToJSON(removal), (_, v) => (typeof v === "bigint" ? Number(v) : v))));
  assert.ok(await isValidRemoval(decoded, session, hostSigner.publicKey));
  assert.equal(await alice.sealing.open(decoded.invites[0], session, alice.key.publicKey), vector.invites.viewer);
  await assert.rejects(bob.sealing.open(decoded.invites[0], session, alice.key.publicKey));
  await assert.rejects(alice.sealing.open(decoded.invites[0], session, bob.key.publicKey), "the info binds the member key");
});

test("left behind, and why: no sealing key of its own, no box for it, a box that does not open", async () => {
  // A removal of bob with a box for alice only: the vectors' first trace moves alice.
  const frame = vector.traces.find((t) => t.member === "alice" && t.frames[0].expect.startsWith("moved")).frames[0];
  const json = parseJSON(frame.body);
  const outcome = async (member, sealingKey) => {
    const follower = new RemovalFollower({ session, hostKey: hostSigner.publicKey, memberKey: member.key, sealingKey, labelOf: () => "remover" });
    return follower.receive(json, 1n);
  };
  const alice = members.get("alice");
  const removedName = removalFromJSON(json).name;
  const others = [...members.values()].filter((m) => m !== alice && toHex(m.key.publicKey) !== toHex(removalFromJSON(json).removed));
  assert.ok((await outcome(alice, alice.sealing)).moved, "with its own sealing key alice moves");
  assert.deepEqual(await outcome(alice, null), { leftBehind: { removed: removedName, by: "remover", reason: "noSealingKey" } });
  assert.deepEqual(await outcome(alice, others[0].sealing), { leftBehind: { removed: removedName, by: "remover", reason: "unopened" } });
  const stranger = { key: await MemberKey.generate(), sealing: await SealingKey.generate() };
  assert.deepEqual(await outcome(stranger, stranger.sealing), { leftBehind: { removed: removedName, by: "remover", reason: "noInvite" } });
  // The removed member without a sealing key is still the removed one.
  const removed = [...members.values()].find((m) => toHex(m.key.publicKey) === toHex(removalFromJSON(json).removed));
  assert.deepEqual(await outcome(removed, null), { removed: { by: "remover" } });
});

test("what does not read as a removal is dropped, not counted", async () => {
  const follower = new RemovalFollower({ session, hostKey: hostSigner.publicKey, memberKey: members.get("alice").key, sealingKey: members.get("alice").sealing });
  const body = parseJSON(vector.traces[0].frames[0].body);
  for (const json of [{ ...body, removed: "short" }, { ...body, v: 2 }, { ...body, invites: [{ key: "x" }] }, { kind: "chat", v: 1 }]) {
    assert.deepEqual(await follower.receive(json, 1n), { dropped: true });
  }
  assert.deepEqual(follower.ignored, {});
});

test("a fresh sealing key: 32 public bytes, a statement that verifies", async () => {
  const key = await SealingKey.generate();
  assert.equal(key.publicKey.length, 32);
  const member = await MemberKey.generate();
  const statement = await key.statement(session, member);
  assert.equal(statement.controller, null);
  assert.equal(sealingKeyToJSON(statement).controller, undefined);
});
