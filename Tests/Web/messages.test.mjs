// The shared coordination-message vectors (Tests/Vectors/messages/coordination.json, written by
// Swift's CoordinationMessageVectorTests) against the page's codec, messages.js.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { jsonEqual, parseJSON, stringifyJSON } from "../../Web/static/wire/json.js";
import { KINDS, MessageDecodingError, decodeMessage, decodeMessageBody, encodeMessage, sentAt, unsupportedDescription } from "../../Web/static/sync/messages.js";
import { utf8 } from "../../Web/static/wire/bytes.js";

const file = join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "messages", "coordination.json");
const vector = parseJSON(readFileSync(file, "utf8"));

test("every kind the page reads has a canonical message in the vectors, and only those", () => {
  assert.deepEqual([...new Set(vector.messages.map((m) => m.json.kind))].sort(), Object.keys(KINDS).sort());
  for (const [kind, { version }] of Object.entries(KINDS)) {
    assert.ok(vector.messages.filter((m) => m.json.kind === kind).every((m) => m.json.v === version), kind);
  }
});

for (const { name, json } of vector.messages) {
  test(`canonical message decodes and encodes back: ${name}`, () => {
    // Through text, as on the wire: the body bytes, then back.
    const message = decodeMessageBody(utf8(stringifyJSON(json)));
    assert.equal(typeof sentAt(message), "bigint");
    const encoded = parseJSON(stringifyJSON(encodeMessage(message)));
    if (!jsonEqual(encoded, json)) assert.deepEqual(encoded, json, name);
  });
}

for (const { name, json, kind, version, detail } of vector.unsupported) {
  test(`unsupported message: ${name}`, () => {
    const message = decodeMessage(json);
    assert.deepEqual(message, { unsupported: { kind, version: Number(version) } });
    assert.equal(unsupportedDescription(message.unsupported), detail);
    assert.equal(sentAt(message), null);
    assert.deepEqual(encodeMessage(message), { kind, v: Number(version) });
  });
}

for (const { name, json, same } of vector.lenient) {
  test(`lenient message: ${name}`, () => {
    assert.deepEqual(decodeMessage(json), decodeMessage(same));
  });
}

for (const { name, json } of vector.malformed) {
  test(`malformed message is refused: ${name}`, () => {
    assert.throws(() => decodeMessage(json), MessageDecodingError);
  });
}

test("decoded values carry their units: durations BigInt nanoseconds, item times seconds", () => {
  const presence = vector.messages.find((m) => m.json.kind === "presence" && m.json.items !== undefined);
  const report = decodeMessage(presence.json).presence;
  assert.equal(report.observedDelay, 12_000_000n);
  assert.equal(report.preroll, 40_000_000n);
  assert.deepEqual(report.items, [{ item: "clip", duration: 60 }, { item: "other", duration: null }, { item: "v3:ab12", duration: 40, frameIdentical: false }]);
  const withHistory = vector.messages.find((m) => m.json.kind === "suspension" && m.json.history?.suspensions?.length > 0);
  const notice = decodeMessage(withHistory.json).suspension;
  assert.equal(notice.timeout, 2_500_000_000n);
  assert.equal(notice.proposedItemTime, 42.25);
  assert.deepEqual(notice.history.suspensions.map((e) => e.reason), [
    "stallRecovery", "interruption", "playingInterstitial", "coordinatedPlaybackNotPossible", "userActionRequired", "custom:ad break",
  ]);
  const play = decodeMessage(vector.messages.find((m) => m.json.kind === "state").json).state;
  assert.equal(play.state.revision, 0n); // not on the wire: receivers take the channel's sequence
  assert.equal(play.state.anchorItemTime, 12.5);
});
