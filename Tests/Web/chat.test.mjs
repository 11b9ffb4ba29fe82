// The shared chat vectors (Tests/Vectors/chat/chat.json, written by Swift's ChatVectorTests) against
// the page's chat.js: keys from seeds, signed bytes, Ed25519 signatures, cleaning, and what a member
// does with each message of the scenario (bound names, labels, forgeries, replays, flooding).

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { fromBase64URL, fromHex, toBase64URL, toHex, utf8 } from "../../Web/static/wire/bytes.js";
import { jsonEqual, parseJSON } from "../../Web/static/wire/json.js";
import {
  CHAT_LIMITS, ChatError, ChatRoom, MemberKey, chatBytes, chatLines, cleanText, decodeMemberMessage, draftStatus, encodeMemberMessage,
  identityBytes, isClean, memberMessageToJSON, retainName, textLength, verifySignature,
} from "../../Web/static/session/chat.js";

const file = join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "chat", "chat.json");
const vector = parseJSON(readFileSync(file, "utf8"));
const session = fromHex(vector.session);
const keys = await Promise.all(vector.keys.map(({ seed }) => MemberKey.fromSeed(fromBase64URL(seed))));

test("keys from the vectors' seeds have the vectors' public keys and tags", () => {
  vector.keys.forEach((expected, index) => {
    assert.equal(toBase64URL(keys[index].publicKey), expected.publicKey, expected.name);
    assert.equal(keys[index].tag, expected.tag, expected.name);
  });
});

for (const signed of vector.identities) {
  test(`identity: signed bytes, signature and JSON: ${signed.name}`, async () => {
    const { identity } = decodeMemberMessage(utf8(signed.body));
    assert.equal(toHex(identityBytes(session, identity)), signed.canonical);
    assert.equal(toBase64URL(identity.signature), signed.signature);
    assert.ok(await verifySignature(identity.key, identity.signature, identityBytes(session, identity)));
    // Ed25519 is deterministic: the page signs the same bytes to the same signature.
    assert.equal(toBase64URL(await keys[signed.key].sign(fromHex(signed.canonical))), signed.signature);
    assert.ok(jsonEqual(parseJSON(new TextDecoder().decode(encodeMemberMessage({ identity }))), parseJSON(signed.body)));
  });
}

for (const signed of vector.messages) {
  test(`chat message: signed bytes, signature and JSON: ${signed.name}`, async () => {
    const { chat } = decodeMemberMessage(utf8(signed.body));
    assert.equal(toHex(chatBytes(session, chat)), signed.canonical);
    assert.ok(await verifySignature(chat.key, chat.signature, chatBytes(session, chat)));
    assert.equal(toBase64URL(await keys[signed.key].sign(fromHex(signed.canonical))), signed.signature);
    assert.ok(jsonEqual(memberMessageToJSON({ chat }), parseJSON(signed.body)));
  });
}

test("cleaning: the same text, the same verdict and length as Swift", () => {
  for (const { input, cleaned, clean, length } of vector.cleaning) {
    assert.equal(cleanText(input), cleaned, JSON.stringify(input));
    assert.equal(isClean(input), clean, JSON.stringify(input));
    assert.equal(textLength(input), Number(length), JSON.stringify(input));
  }
});

test("the scenario: every message accepted under the same label or ignored for the same reason", async () => {
  const room = new ChatRoom(session);
  for (const step of vector.scenario) {
    const message = decodeMemberMessage(utf8(step.body));
    const from = BigInt(`0x${step.from}`);
    let got;
    if (message.identity) {
      got = (await room.receiveIdentity(message.identity, from)) ? "bound" : "ignored";
    } else {
      const result = await room.receive(message.chat, from, { history: step.history, nowMs: Number(step.nowMs) });
      got = result.entry ? `accepted ${result.entry.label}` : `ignored ${result.ignored}`;
    }
    assert.equal(got, step.expect, step.name);
  }
});

test("compose: cleans, signs a message that verifies, numbers it after the highest seen, and limits the rate", async () => {
  const room = new ChatRoom(session);
  const key = keys[0];
  const first = await room.compose("  hi\nthere\u0007 ", key, "alice", 5n);
  assert.equal(first.text, "hi there");
  assert.equal(first.ordinal, 0n);
  assert.ok(await verifySignature(first.key, first.signature, chatBytes(session, first)));
  await room.sent(first, 1n);
  const second = await room.compose("again", key, "alice", 1n);
  assert.equal(second.ordinal, 1n);
  assert.equal(second.sentAt, 6n, "sentAt stays unique per key");
  assert.equal(retainName(second.ordinal), "coplay.chat.1");
  assert.equal(retainName(50n), "coplay.chat.0");
  for (let i = 0; i < 3; i++) await room.compose(`m${i}`, key, "alice", 1n);
  assert.throws(() => room.compose("one too many", key, "alice", 1n), (error) => error instanceof ChatError && error.message === "chat: at most 5 messages in 10 s: wait 10.0 s");
  await room.compose("later", key, "alice", 10_000_000_006n);
  assert.throws(() => room.compose(" \n\u200b ", key, "alice", 20_000_000_000n), /chat: the message is empty/);
  assert.throws(() => room.compose("🍕".repeat(501), key, "alice", 20_000_000_000n), /501 characters long, at most 500/);
});

test("the rate limit counts the key's messages in the history (a one-shot sender's earlier runs)", async () => {
  const room = new ChatRoom(session);
  const key = keys[1];
  const start = 1_790_000_000_000_000_000n;
  const sender = new ChatRoom(session);
  for (let i = 0n; i < 5n; i++) {
    const earlier = await sender.compose(`m${i}`, key, "bob", start + i * 1_000_000_000n);
    assert.ok((await room.receive(earlier, 9n, { history: true })).entry);
  }
  assert.throws(() => room.compose("sixth", key, "bob", start + 6_000_000_000n), /wait 4\.0 s$/);
  await room.compose("sixth", key, "bob", start + 10_000_000_001n);
});

test("a fresh key signs what another member verifies, and its private half cannot be exported", async () => {
  const key = await MemberKey.generate();
  const room = new ChatRoom(session);
  const message = await room.compose("hello", key, "web-1234", 1n);
  const other = new ChatRoom(session);
  const result = await other.receive(message, 7n, { nowMs: 0 });
  assert.equal(result.entry?.label, "web-1234");
  await assert.rejects(crypto.subtle.exportKey("pkcs8", key.privateKey));
});

test("the chat box's lines and the draft counter", () => {
  const lines = chatLines(
    [{ label: "alice", text: "hi", sentAtMs: 0, own: false, history: true }, { label: "me", text: "yo", sentAtMs: 1000, own: true, history: false }],
    { formatTime: (ms) => `t${ms}` },
  );
  assert.deepEqual(lines, [
    { who: "alice", text: "hi", time: "t0", own: false, history: true },
    { who: "you", text: "yo", time: "t1000", own: true, history: false },
  ]);
  assert.deepEqual(draftStatus(" hello "), { count: "5 / 500", over: false });
  assert.equal(draftStatus("x".repeat(CHAT_LIMITS.maximumLength + 1)).over, true);
});

test("unknown kinds and newer versions are unsupported; malformed bodies are refused", () => {
  assert.deepEqual(decodeMemberMessage(utf8('{"kind":"grant","v":1}')), { unsupported: { kind: "grant", version: 1 } });
  assert.deepEqual(decodeMemberMessage(utf8('{"kind":"chat","v":2}')), { unsupported: { kind: "chat", version: 2 } });
  assert.throws(() => decodeMemberMessage(utf8('{"kind":"chat","v":0}')));
  assert.throws(() => decodeMemberMessage(utf8('{"kind":"chat","v":1,"name":"a","key":"AAAA","sentAt":1,"text":"b","n":0,"signature":"AAAA"}')));
  assert.throws(() => decodeMemberMessage(utf8("not json")));
});
