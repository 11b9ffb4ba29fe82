// The browser's WebCrypto code against Tests/Vectors/crypto/session.json (written by Swift:
// SessionCryptoVectorTests in CoordinatorVectorTests.swift) and a fixed AES-GCM test vector.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { fromBase64URL, fromHex, toHex, u64Bytes } from "../../Web/static/wire/bytes.js";
import {
  OpenError, PayloadCipher, SessionKeys, UnsupportedSuiteError, associatedData, hkdfSHA256, payloadKeyInfo, payloadNonce,
  supportsChaCha20Poly1305,
} from "../../Web/static/wire/crypto.js";
import { FrameFlags, decodeMessage, decodeRoute, encodeFrame } from "../../Web/static/wire/frame.js";
import { AEADSuite } from "../../Web/static/wire/invite.js";
import { parseJSON } from "../../Web/static/wire/json.js";

const vector = parseJSON(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "crypto", "session.json"), "utf8"));
const secret = fromBase64URL(vector.secret);
const session = fromHex(vector.session);
const sender = BigInt("0x" + vector.sender);

test("join token, its hash and retain keys match Swift's SessionKeys", async () => {
  const keys = await SessionKeys.derive({ secret, session });
  assert.equal(toHex(keys.joinToken), vector.joinToken);
  assert.equal(toHex(await keys.joinTokenHash()), vector.joinTokenHash);
  for (const [name, key] of Object.entries(vector.retainKeys)) assert.equal(toHex(await keys.retainKey(name)), key, name);
});

test("payload keys: ChaCha20-Poly1305 as Swift derives it, AES-256-GCM with its own info", async () => {
  const chacha = await SessionKeys.derive({ secret, session, aead: AEADSuite.chacha20Poly1305 });
  assert.equal(toHex(await chacha.payloadKeyBytes(sender)), vector.chachaPayloadKey);
  const aes = await SessionKeys.derive({ secret, session, aead: AEADSuite.aes256GCM });
  assert.equal(toHex(await aes.payloadKeyBytes(sender)), vector.aesPayloadKey);
  assert.notEqual(vector.aesPayloadKey, vector.chachaPayloadKey);
  assert.equal(new TextDecoder().decode(payloadKeyInfo(AEADSuite.aes256GCM, sender).slice(0, -8)), "coplay v1 payload aes-256-gcm");
});

test("AES-256-GCM seals the vector's frame byte for byte and opens it", async () => {
  const keys = await SessionKeys.derive({ secret, session, aead: AEADSuite.aes256GCM });
  const cipher = await PayloadCipher.create(keys);
  const retainKey = await keys.retainKey(vector.retainName);
  const route = { senderSequence: BigInt(vector.senderSequence), recipients: [], retainKey };
  assert.equal(toHex(associatedData({ flags: vector.flags, session, sender, route })), vector.associatedData);
  const frame = await cipher.seal(fromHex(vector.plaintext), route, vector.flags, sender);
  assert.equal(toHex(encodeFrame(frame)), vector.aesFrame);

  const received = decodeMessage(fromHex(vector.aesFrame));
  received.sequence = 99n; // relay-stamped, not authenticated
  received.flags |= FrameFlags.replayed; // not authenticated either
  const opened = await cipher.open(received);
  assert.equal(toHex(opened.plaintext), vector.plaintext);
  assert.equal(opened.route.senderSequence, route.senderSequence);
});

test("a tampered AES-256-GCM frame, another sender or the unreliable flag does not open", async () => {
  const keys = await SessionKeys.derive({ secret, session, aead: AEADSuite.aes256GCM });
  const cipher = await PayloadCipher.create(keys);
  const bytes = fromHex(vector.aesFrame);
  const cases = [
    (f) => { f.payload[f.payload.length - 1] ^= 1; },
    (f) => { f.sender += 1n; },
    (f) => { f.flags |= FrameFlags.unreliable; },
    (f) => { f.session = session.map((b, i) => (i === 0 ? b ^ 1 : b)); },
    (f) => { f.payload[7] ^= 1; }, // sender sequence: nonce and associated data
  ];
  for (const mutate of cases) {
    const frame = decodeMessage(bytes);
    mutate(frame);
    await assert.rejects(cipher.open(frame), OpenError);
  }
  // A box shorter than a tag.
  const frame = decodeMessage(bytes);
  const { route } = decodeRoute(frame.payload);
  frame.payload = frame.payload.slice(0, 8 + 2 + 1 + route.retainKey.length + 15);
  await assert.rejects(cipher.open(frame), OpenError);
});

test("AES-256-GCM with the NIST-style test case (key, nonce, AAD fixed)", async () => {
  // Test Case 16 of the GCM specification (McGrew & Viega), 256-bit key, 96-bit IV, with AAD.
  const key = fromHex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308");
  const iv = fromHex("cafebabefacedbaddecaf888");
  const plaintext = fromHex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39");
  const aad = fromHex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
  const cryptoKey = await crypto.subtle.importKey("raw", key, "AES-GCM", false, ["encrypt"]);
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: aad }, cryptoKey, plaintext));
  assert.equal(toHex(sealed.slice(0, -16)), "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662");
  assert.equal(toHex(sealed.slice(-16)), "76fc6ece0f4e1768cddf8853bb2d551b");
});

test("HKDF-SHA256 matches RFC 5869 test case 1", async () => {
  const okm = await hkdfSHA256(fromHex("0b".repeat(22)), fromHex("000102030405060708090a0b0c"), fromHex("f0f1f2f3f4f5f6f7f8f9"), 42);
  assert.equal(toHex(okm), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865");
});

test("nonce is 4 zero bytes and the sender sequence", () => {
  assert.equal(toHex(payloadNonce(0x0102030405060708n)), "000000000102030405060708");
  assert.deepEqual(u64Bytes(1n), Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 1));
});

test("ChaCha20-Poly1305 sessions: detection, and a clear refusal where WebCrypto lacks it", async () => {
  const supported = await supportsChaCha20Poly1305();
  assert.equal(typeof supported, "boolean");
  const keys = await SessionKeys.derive({ secret, session });
  await assert.rejects(PayloadCipher.create(keys), UnsupportedSuiteError);
});
