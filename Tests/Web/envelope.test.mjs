// Envelope, invite, exact-integer JSON and the CoordinationMessage codec (the shared vectors: messages.test.mjs).

import { test } from "node:test";
import assert from "node:assert/strict";

import { fromHex, toHex, utf8 } from "../../Web/static/wire/bytes.js";
import { EnvelopeKind, decodeEnvelope, encodeEnvelope } from "../../Web/static/wire/envelope.js";
import { PayloadDecodingError } from "../../Web/static/wire/frame.js";
import { AEADSuite, InviteError, formatInvite, parseInvite, redactInvite } from "../../Web/static/wire/invite.js";
import { jsonEqual, parseJSON, stringifyJSON } from "../../Web/static/wire/json.js";
import {
  MessageDecodingError, decodeMessage, decodeMessageBody, decodeReason, encodeMessage, encodeMessageBody, encodeReason,
} from "../../Web/static/sync/messages.js";

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

test("suspension reasons are their description", () => {
  assert.equal(encodeReason("buffering"), "buffering");
  assert.equal(encodeReason("custom:ad break"), "custom:ad break");
  assert.equal(decodeReason("custom:x"), "custom:x");
  assert.equal(decodeReason("stallRecovery"), "stallRecovery");
  assert.throws(() => decodeReason("other"), MessageDecodingError);
  assert.throws(() => decodeReason({ buffering: {} }), MessageDecodingError);
  assert.throws(() => encodeReason("other"), TypeError);
});

test("CoordinationMessage JSON as Swift writes it (keys in any order)", () => {
  const swift = '{"waits":true,"sentAt":1790000000950000000,"id":"bob#1","timeoutNs":10000000000,"v":1,"phase":"begin","reason":"buffering","kind":"suspension","effectiveAt":1790000001000000000}';
  const message = decodeMessageBody(utf8(swift));
  assert.deepEqual(message, {
    suspension: { id: "bob#1", phase: "begin", reason: "buffering", effectiveAt: 1790000001000000000n, waits: true, timeout: 10_000_000_000n, proposedItemTime: null, sentAt: 1790000000950000000n, history: null },
  });
  assert.ok(jsonEqual(parseJSON(new TextDecoder().decode(encodeMessageBody(message))), parseJSON(swift)));
  const presence = { presence: { sentAt: 5n, observedDelay: 3_000_000n, preroll: 0n, item: null, name: "alice", items: null } };
  assert.deepEqual(encodeMessage(presence), { kind: "presence", v: 1, sentAt: 5n, observedDelayNs: 3_000_000n, prerollNs: 0n, name: "alice" });
  assert.deepEqual(decodeMessage(parseJSON(stringifyJSON(encodeMessage(presence)))), presence);
  // The state's fields sit beside kind, command and sentAt; a proposal's revision (0) is left out.
  const state = { state: { state: { item: "clip", rate: 1, anchorItemTime: 2.5, anchorReferenceTime: 9n, originator: "a", revision: 0n, intendedRate: 1, duration: null, entry: null }, command: "play", sentAt: 8n, follows: null } };
  assert.deepEqual(encodeMessage(state), { kind: "state", v: 1, sentAt: 8n, command: "play", item: "clip", rate: 1, intendedRate: 1, anchorItemTime: 2.5, anchorReferenceTime: 9n, originator: "a" });
  assert.deepEqual(decodeMessage(parseJSON(stringifyJSON(encodeMessage(state)))), state);
  assert.throws(() => encodeMessage({ nope: {} }), TypeError);
  for (const bad of ['{"kind":"state","v":1}', '{"nope":{"_0":{}}}', "[]"]) {
    assert.throws(() => decodeMessageBody(utf8(bad)), MessageDecodingError, bad);
  }
  assert.deepEqual(decodeMessageBody(utf8('{"kind":"state","v":2}')), { unsupported: { kind: "state", version: 2 } });
  // An older build's unversioned form (Swift's synthesized enum coding) is reported, as version 0.
  assert.deepEqual(decodeMessageBody(utf8('{"presence":{"_0":{"sentAt":1,"observedDelay":[0,0],"preroll":[0,0]}}}')), { unsupported: { kind: "presence", version: 0 } });
});
