// Envelope, invite, exact-integer JSON and the CoordinationMessage codec.

import { test } from "node:test";
import assert from "node:assert/strict";

import { fromHex, toHex, utf8 } from "../../Web/static/bytes.js";
import { EnvelopeKind, decodeEnvelope, encodeEnvelope } from "../../Web/static/envelope.js";
import { PayloadDecodingError } from "../../Web/static/frame.js";
import { AEADSuite, InviteError, formatInvite, parseInvite, redactInvite } from "../../Web/static/invite.js";
import { jsonEqual, parseJSON, stringifyJSON } from "../../Web/static/json.js";
import {
  MessageDecodingError, decodeDuration, decodeMessage, decodeMessageBody, decodeReason, encodeDuration, encodeMessage,
  encodeMessageBody, encodeReason,
} from "../../Web/static/messages.js";

test("envelope layout, round trip, extension skipped, version 0 and truncation rejected", () => {
  const bytes = encodeEnvelope({ kind: EnvelopeKind.message, name: "CoordinationMessage", body: utf8("{}") });
  assert.equal(toHex(bytes), "01010013" + toHex(utf8("CoordinationMessage")) + "0000" + "7b7d");
  assert.deepEqual(decodeEnvelope(bytes), { version: 1, kind: 1, name: "CoordinationMessage", body: utf8("{}") });
  const withExtension = fromHex("0202" + "0001" + "61" + "0003" + "aabbcc" + "ff");
  assert.deepEqual(decodeEnvelope(withExtension), { version: 2, kind: 2, name: "a", body: Uint8Array.of(0xff) });
  assert.throws(() => decodeEnvelope(fromHex("00010000" + "0000")), PayloadDecodingError);
  assert.throws(() => decodeEnvelope(fromHex("010100")), PayloadDecodingError);
  assert.throws(() => decodeEnvelope(fromHex("01010005" + "6162")), PayloadDecodingError);
  assert.throws(() => decodeEnvelope(fromHex("01010000" + "0005" + "00")), PayloadDecodingError);
});

test("invites: the default suite, ?aead=aes-256-gcm, IPv6 and errors", () => {
  const secret = Uint8Array.from({ length: 32 }, (_, i) => i);
  const session = fromHex("000102030405060708090a0b0c0d0e0f");
  const plain = formatInvite({ host: "127.0.0.1", port: 7000, session, secret });
  assert.equal(plain, "coplay://127.0.0.1:7000/000102030405060708090a0b0c0d0e0f#AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8");
  assert.deepEqual(parseInvite(plain), {
    host: "127.0.0.1", port: 7000, session, secret, aead: AEADSuite.chacha20Poly1305, usesTLS: false, relayKeyPin: null,
  });
  const aes = formatInvite({ host: "::1", port: 443, session, secret, aead: AEADSuite.aes256GCM });
  assert.equal(aes, "coplay://[::1]:443/000102030405060708090a0b0c0d0e0f?aead=aes-256-gcm#AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8");
  assert.deepEqual(parseInvite(`  ${aes}\n`), {
    host: "::1", port: 443, session, secret, aead: AEADSuite.aes256GCM, usesTLS: false, relayKeyPin: null,
  });
  assert.equal(parseInvite(plain.replace("#", "?x=1&aead=chacha20-poly1305#")).aead, AEADSuite.chacha20Poly1305);
  assert.equal(redactInvite(parseInvite(aes)), "coplay://[::1]:443/000102030405060708090a0b0c0d0e0f?aead=aes-256-gcm#…");
  // coplays:// (a TLS relay) and a pin of its key, as Swift's Invite writes them.
  const pin = Uint8Array.from({ length: 32 }, () => 0xab);
  const tls = formatInvite({ host: "relay.example", port: 443, session, secret, aead: AEADSuite.aes256GCM, relayKeyPin: pin });
  assert.equal(tls, `coplays://relay.example:443/000102030405060708090a0b0c0d0e0f?aead=aes-256-gcm&pin=${"q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s"}#AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8`);
  assert.deepEqual(parseInvite(tls).relayKeyPin, pin);
  assert.equal(parseInvite(tls).usesTLS, true);
  assert.equal(parseInvite(tls.replace(/\?.*#/, "#")).usesTLS, true);
  for (const bad of [
    tls.replace("coplays://", "coplay://"), tls.replace(/pin=[^#]*/, "pin=short"),
    "http://h:1/00#AA", plain.replace(":7000", ""), plain.replace(":7000", ":0"), plain.replace("000102", "00010"),
    plain.split("#")[0], plain.slice(0, -2), plain.replace("#", "?aead=aes-128-gcm#"), "coplay://h:1/#x",
  ]) {
    assert.throws(() => parseInvite(bad), InviteError, bad);
  }
});

test("JSON keeps 64-bit integers exact", () => {
  const text = '{"t":1790000000123456789,"d":[-1,16946744073709551616],"x":0.1,"n":-3,"s":"a\\"b","e":1e-05}';
  const value = parseJSON(text);
  assert.equal(value.t, 1790000000123456789n);
  assert.equal(value.d[1], 16946744073709551616n);
  assert.equal(value.n, -3);
  assert.equal(value.e, 1e-5);
  assert.equal(stringifyJSON(value), '{"t":1790000000123456789,"d":[-1,16946744073709551616],"x":0.1,"n":-3,"s":"a\\"b","e":0.00001}');
  assert.ok(jsonEqual(parseJSON("1e+16"), parseJSON("10000000000000000")));
  assert.ok(!jsonEqual(parseJSON("1790000000123456789"), parseJSON("1790000000123456788")));
  assert.throws(() => parseJSON("{} x"), SyntaxError);
  assert.throws(() => parseJSON("[1,]"), SyntaxError);
});

test("Duration is Swift's [high, low] attoseconds", () => {
  assert.deepEqual(encodeDuration(20_000_000n), [0n, 20_000_000_000_000_000n]);
  assert.deepEqual(encodeDuration(-1_500_000_000n), [-1n, 16946744073709551616n]);
  assert.deepEqual(encodeDuration(10_000_000_000n), [0n, 10_000_000_000_000_000_000n]);
  for (const ns of [0n, 1n, -1n, 7_812_500n, 10n ** 15n, -(10n ** 15n)]) assert.equal(decodeDuration(encodeDuration(ns)), ns);
  // Swift's values for 1/3 s: sub-nanosecond attoseconds truncate.
  assert.equal(decodeDuration([0, 333333333333333333n]), 333_333_333n);
  assert.throws(() => decodeDuration([0]), MessageDecodingError);
});

test("suspension reasons use Swift's enum encoding", () => {
  assert.deepEqual(encodeReason("buffering"), { buffering: {} });
  assert.deepEqual(encodeReason("custom:ad break"), { custom: { _0: "ad break" } });
  assert.equal(decodeReason({ custom: { _0: "x" } }), "custom:x");
  assert.equal(decodeReason({ stallRecovery: {} }), "stallRecovery");
  assert.throws(() => decodeReason({ other: {} }), MessageDecodingError);
  assert.throws(() => decodeReason({ buffering: {}, interruption: {} }), MessageDecodingError);
});

test("CoordinationMessage JSON as Swift writes it (keys in any order)", () => {
  const swift = '{"suspension":{"_0":{"waits":true,"sentAt":1790000000950000000,"id":"bob#1","timeout":[0,10000000000000000000],"phase":"begin","reason":{"buffering":{}},"effectiveAt":1790000001000000000}}}';
  const message = decodeMessageBody(utf8(swift));
  assert.deepEqual(message, {
    suspension: { id: "bob#1", phase: "begin", reason: "buffering", effectiveAt: 1790000001000000000n, waits: true, timeout: 10_000_000_000n, proposedItemTime: null, sentAt: 1790000000950000000n, history: null },
  });
  assert.ok(jsonEqual(parseJSON(new TextDecoder().decode(encodeMessageBody(message))), parseJSON(swift)));
  // A notice with the sender's history (SuspensionHistory: optional fields left out when nil).
  const withHistory = '{"suspension":{"_0":{"waits":true,"sentAt":5,"id":"bob#2","timeout":[0,10000000000000000000],"phase":"end","reason":{"buffering":{}},"effectiveAt":7,' +
    '"history":{"revision":4,"anchorReferenceTime":3,"anchorItemTime":1.5,"suspensions":[{"id":"bob#2","participant":"bob","reason":{"buffering":{}},"begin":4,"timeout":[0,10000000000000000000],"waits":true},' +
    '{"id":"amy#1","participant":"amy","reason":{"custom":{"_0":"ad"}},"begin":2,"end":6,"timeout":[0,5000000000000000000],"waits":false}]}}}}';
  const decoded = decodeMessageBody(utf8(withHistory));
  assert.deepEqual(decoded.suspension.history, {
    revision: 4n, anchorReferenceTime: 3n, anchorItemTime: 1.5,
    suspensions: [
      { id: "bob#2", participant: "bob", reason: "buffering", begin: 4n, end: null, timeout: 10_000_000_000n, waits: true },
      { id: "amy#1", participant: "amy", reason: "custom:ad", begin: 2n, end: 6n, timeout: 5_000_000_000n, waits: false },
    ],
  });
  assert.ok(jsonEqual(parseJSON(new TextDecoder().decode(encodeMessageBody(decoded))), parseJSON(withHistory)));
  assert.throws(() => decodeMessageBody(utf8(withHistory.replace('"suspensions":[', '"suspensions":{"x":[').replace("]}}}}", "]}}}}}"))), MessageDecodingError);
  const presence = { presence: { sentAt: 5n, observedDelay: 3_000_000n, preroll: 0n, item: null, name: "alice", items: null } };
  assert.deepEqual(encodeMessage(presence), { presence: { _0: { sentAt: 5n, observedDelay: [0n, 3_000_000_000_000_000n], preroll: [0n, 0n], name: "alice" } } });
  assert.deepEqual(decodeMessage(parseJSON(stringifyJSON(encodeMessage(presence)))), presence);
  // A member's items with their durations (PresenceReport.ItemSummary: a nil duration left out).
  const withItems = { presence: { sentAt: 5n, observedDelay: 0n, preroll: 0n, item: "a", name: null, items: [{ item: "a", duration: 60 }, { item: "b", duration: null }] } };
  assert.deepEqual(encodeMessage(withItems).presence._0.items, [{ item: "a", duration: 60 }, { item: "b" }]);
  assert.deepEqual(decodeMessage(parseJSON(stringifyJSON(encodeMessage(withItems)))), withItems);
  assert.throws(() => decodeMessage(parseJSON('{"presence":{"_0":{"sentAt":1,"observedDelay":[0,0],"preroll":[0,0],"items":{"a":1}}}}')));
  for (const bad of ['{"state":{"_0":{}}}', '{"nope":{"_0":{}}}', '{"presence":{"_0":{"sentAt":1.5,"observedDelay":[0,0],"preroll":[0,0]}}}', "[]"]) {
    assert.throws(() => decodeMessageBody(utf8(bad)), MessageDecodingError, bad);
  }
});
