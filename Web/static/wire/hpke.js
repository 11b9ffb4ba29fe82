// HPKE (RFC 9180), base mode, single shot, on WebCrypto: DHKEM(X25519, HKDF-SHA256) (KEM 0x0020),
// HKDF-SHA256 (KDF 0x0001) and AES-GCM (AEAD 0x0002 AES-256-GCM, the suite coplay seals successor
// invites with; 0x0001 AES-128-GCM for RFC 9180's Appendix A.1 vector). swift-crypto's `HPKE`
// seals on the Swift side (Sources/GroupChat/SealingKey.swift, `Sealing`).
//
// WebCrypto's HKDF runs Extract and Expand together; HPKE's labeled steps need them apart, so both
// are HMAC-SHA256 here (RFC 5869). X25519 is WebCrypto's `deriveBits`. Tested against the RFC's
// vectors and a box sealed by Swift (Tests/Web/hpke.test.mjs).

import { concatBytes, utf8 } from "./bytes.js";

const KEM_ID = 0x0020;
const KDF_ID = 0x0001;
/** The AEADs: RFC 9180 id -> key length. */
export const HPKE_AEAD = Object.freeze({ aes128GCM: 0x0001, aes256GCM: 0x0002 });
const KEY_LENGTH = { [HPKE_AEAD.aes128GCM]: 16, [HPKE_AEAD.aes256GCM]: 32 };
const NONCE_LENGTH = 12;
const HASH_LENGTH = 32;
const X25519 = { name: "X25519" };
// PKCS #8 of an X25519 private key: this prefix, then the 32 bytes (RFC 8410).
const PKCS8_PREFIX = new Uint8Array([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20]);

/** Why a box did not open (another key, another info, altered). */
export class HPKEError extends Error {
  constructor(message) {
    super(message);
    this.name = "HPKEError";
  }
}

const i2osp = (value, length) => Uint8Array.from({ length }, (_, i) => (value >> (8 * (length - 1 - i))) & 0xff);

async function hmac(key, data) {
  const hmacKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", hmacKey, data));
}

// An empty salt is HashLen zero bytes (RFC 5869 2.2; WebCrypto refuses an empty HMAC key).
const extract = (salt, ikm) => hmac(salt.length === 0 ? new Uint8Array(HASH_LENGTH) : salt, ikm);

async function expand(prk, info, length) {
  const out = [];
  let block = new Uint8Array(0);
  for (let i = 1; out.length * HASH_LENGTH < length; i++) {
    block = await hmac(prk, concatBytes(block, info, new Uint8Array([i])));
    out.push(block);
  }
  return concatBytes(...out).slice(0, length);
}

const labeledExtract = (suite, salt, label, ikm) => extract(salt, concatBytes(utf8("HPKE-v1"), suite, utf8(label), ikm));
const labeledExpand = (suite, prk, label, info, length) =>
  expand(prk, concatBytes(i2osp(length, 2), utf8("HPKE-v1"), suite, utf8(label), info), length);

/** An X25519 private key (WebCrypto) from its 32 bytes (tests and vectors). */
export function importX25519PrivateKey(bytes, extractable = false) {
  return crypto.subtle.importKey("pkcs8", concatBytes(PKCS8_PREFIX, bytes), X25519, extractable, ["deriveBits"]);
}

/** The 32 raw bytes of an X25519 public key (WebCrypto). */
export async function x25519PublicBytes(publicKey) {
  return new Uint8Array(await crypto.subtle.exportKey("raw", publicKey));
}

async function dh(privateKey, publicBytes) {
  const publicKey = await crypto.subtle.importKey("raw", publicBytes, X25519, false, []);
  return new Uint8Array(await crypto.subtle.deriveBits({ name: "X25519", public: publicKey }, privateKey, 256));
}

/** DHKEM's ExtractAndExpand (RFC 9180 4.1). */
async function kemSharedSecret(dhBytes, enc, recipientPublic) {
  const suite = concatBytes(utf8("KEM"), i2osp(KEM_ID, 2));
  const prk = await labeledExtract(suite, new Uint8Array(0), "eae_prk", dhBytes);
  return labeledExpand(suite, prk, "shared_secret", concatBytes(enc, recipientPublic), HASH_LENGTH);
}

/** The base mode's key schedule (RFC 9180 5.1): {key, nonce} of the single-shot context (sequence 0). */
async function keySchedule(sharedSecret, info, aead) {
  const suite = concatBytes(utf8("HPKE"), i2osp(KEM_ID, 2), i2osp(KDF_ID, 2), i2osp(aead, 2));
  const none = new Uint8Array(0);
  const pskIDHash = await labeledExtract(suite, none, "psk_id_hash", none);
  const infoHash = await labeledExtract(suite, none, "info_hash", info);
  const context = concatBytes(new Uint8Array([0]), pskIDHash, infoHash);
  const secret = await labeledExtract(suite, sharedSecret, "secret", none);
  const key = await labeledExpand(suite, secret, "key", context, KEY_LENGTH[aead]);
  const nonce = await labeledExpand(suite, secret, "base_nonce", context, NONCE_LENGTH);
  return { key, nonce };
}

const aesKey = (key, usage) => crypto.subtle.importKey("raw", key, { name: "AES-GCM" }, false, [usage]);

/**
 * Opens a single-shot box (RFC 9180 base mode, `Open` at sequence 0).
 * @param {object} box
 * @param {CryptoKey} box.privateKey the recipient's X25519 private key.
 * @param {Uint8Array} box.publicKey the recipient's public key (32 bytes: DHKEM's kem_context).
 * @param {Uint8Array} box.enc the sender's encapsulated key (32 bytes).
 * @param {Uint8Array} box.ciphertext the ciphertext with its 16-byte tag.
 * @param {Uint8Array} box.info the context both sides bind the box to.
 * @param {Uint8Array} [box.aad] associated data (coplay uses none).
 * @param {number} [box.aead] HPKE_AEAD (AES-256-GCM by default).
 * @returns {Promise<Uint8Array>} the plaintext.
 * @throws {HPKEError} sealed to another key, with another info, or altered.
 */
export async function openSingleShot({ privateKey, publicKey, enc, ciphertext, info, aad = new Uint8Array(0), aead = HPKE_AEAD.aes256GCM }) {
  if (enc.length !== 32) throw new HPKEError("the encapsulated key is not 32 bytes");
  let shared;
  try {
    shared = await kemSharedSecret(await dh(privateKey, enc), enc, publicKey);
  } catch (error) {
    throw new HPKEError(`the encapsulated key is not an X25519 key: ${error?.message ?? error}`);
  }
  const { key, nonce } = await keySchedule(shared, info, aead);
  try {
    return new Uint8Array(await crypto.subtle.decrypt({ name: "AES-GCM", iv: nonce, additionalData: aad }, await aesKey(key, "decrypt"), ciphertext));
  } catch {
    throw new HPKEError("the box does not open with this key and info");
  }
}

/**
 * Seals a single-shot box to `publicKey` (tests; the page only opens). `ephemeral` is the sender's
 * X25519 key pair (fresh by default; RFC vectors give one).
 * @returns {Promise<{enc: Uint8Array, ciphertext: Uint8Array}>}
 */
export async function sealSingleShot({ publicKey, plaintext, info, aad = new Uint8Array(0), aead = HPKE_AEAD.aes256GCM, ephemeral = null }) {
  const pair = ephemeral ?? (await crypto.subtle.generateKey(X25519, true, ["deriveBits"]));
  const enc = await x25519PublicBytes(pair.publicKey);
  const shared = await kemSharedSecret(await dh(pair.privateKey, publicKey), enc, publicKey);
  const { key, nonce } = await keySchedule(shared, info, aead);
  const ciphertext = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv: nonce, additionalData: aad }, await aesKey(key, "encrypt"), plaintext));
  return { enc, ciphertext };
}
