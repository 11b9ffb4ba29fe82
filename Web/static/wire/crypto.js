// End-to-end encryption of a session (docs/protocol.md, "Cryptography", with its AEAD suites),
// with WebCrypto (`globalThis.crypto.subtle`, in browsers and Node 20 alike).
//
// From the invite's secret, HKDF-SHA256 with the 16-byte session id as salt derives:
//   - the join token ("coplay v1 join token", 32 bytes), sent in hello;
//   - the retain-key HMAC key ("coplay v1 retain key"); retain key = HMAC-SHA256(name)[0..<16];
//   - one payload key per sender: ChaCha20-Poly1305 with info "coplay v1 payload" + sender u64 BE,
//     AES-256-GCM with info "coplay v1 payload aes-256-gcm" + sender u64 BE.
// Nonce = 4 zero bytes + senderSequence u64 BE; sealed box = ciphertext || 16-byte tag.

import { ByteWriter, concatBytes, u64Bytes, utf8 } from "./bytes.js";
import { FrameFlags, FrameType, FRAME_VERSION, decodeRoute, encodeRoute, makeFrame } from "./frame.js";
import { AEADSuite } from "./invite.js";

const subtle = globalThis.crypto.subtle;

/** The AEAD tag length in bytes (both suites). */
export const TAG_LENGTH = 16;

/** A suite this browser cannot run (ChaCha20-Poly1305 where WebCrypto lacks it). */
export class UnsupportedSuiteError extends Error {
  constructor(suite) {
    super(`this browser cannot use the ${suite} suite; ask the host for an invite with ?aead=aes-256-gcm`);
    this.name = "UnsupportedSuiteError";
    this.suite = suite;
  }
}

/** A data frame that does not open: tampered with, sealed under another key, or truncated. */
export class OpenError extends Error {
  constructor(message) {
    super(message);
    this.name = "OpenError";
  }
}

/** HKDF-SHA256 of `secret` with `salt` and `info`, `length` bytes. */
export async function hkdfSHA256(secret, salt, info, length = 32) {
  const key = await subtle.importKey("raw", secret, "HKDF", false, ["deriveBits"]);
  const bits = await subtle.deriveBits({ name: "HKDF", hash: "SHA-256", salt, info }, key, length * 8);
  return new Uint8Array(bits);
}

/** SHA-256 of `bytes`. */
export async function sha256(bytes) {
  return new Uint8Array(await subtle.digest("SHA-256", bytes));
}

/** HMAC-SHA256 of `message` under raw `key` bytes. */
export async function hmacSHA256(key, message) {
  const cryptoKey = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await subtle.sign("HMAC", cryptoKey, message));
}

/**
 * Whether this WebCrypto implements ChaCha20-Poly1305 (Chromium has it only for "raw-secret"
 * keys, behind the WebCrypto "modern algorithms" work; Node 20 does not).
 */
export async function supportsChaCha20Poly1305() {
  try {
    await subtle.importKey("raw-secret", new Uint8Array(32), { name: "ChaCha20-Poly1305" }, false, ["encrypt", "decrypt"]);
    return true;
  } catch {
    return false;
  }
}

/** The HKDF info of a sender's payload key in `suite`. */
export function payloadKeyInfo(suite, sender) {
  const label = suite === AEADSuite.aes256GCM ? "coplay v1 payload aes-256-gcm" : "coplay v1 payload";
  return concatBytes(utf8(label), u64Bytes(sender));
}

/** The 12-byte nonce of a sender sequence: 4 zero bytes + the sequence, big-endian. */
export function payloadNonce(senderSequence) {
  return concatBytes(new Uint8Array(4), u64Bytes(senderSequence));
}

/**
 * The associated data of a data frame: `version | type (0x06) | flags & unreliable (u16) |
 * session (16) | sender u64 | senderSequence u64 | retainKeyLength u8 | retainKey`.
 */
export function associatedData({ version = FRAME_VERSION, flags, session, sender, route }) {
  return new ByteWriter()
    .u8(version)
    .u8(FrameType.data)
    .u16(flags & FrameFlags.unreliable)
    .raw(session)
    .u64(sender)
    .u64(route.senderSequence)
    .u8(route.retainKey.length)
    .raw(route.retainKey)
    .bytes();
}

/** Keys derived from an invite's secret (the counterpart of SessionKeys.swift). Create with `derive`. */
export class SessionKeys {
  /**
   * Derives the keys of a session.
   *
   * @param {{secret: Uint8Array, session: Uint8Array, aead?: string}} invite
   */
  static async derive({ secret, session, aead = AEADSuite.chacha20Poly1305 }) {
    const keys = new SessionKeys();
    keys.session = session;
    keys.aead = aead;
    keys.secret = secret;
    keys.joinToken = await hkdfSHA256(secret, session, utf8("coplay v1 join token"));
    keys.retainKeyBytes = await hkdfSHA256(secret, session, utf8("coplay v1 retain key"));
    return keys;
  }

  /** The SHA-256 of the join token: all the relay keeps. */
  async joinTokenHash() {
    return sha256(this.joinToken);
  }

  /** The raw 32-byte payload key of `sender` (BigInt) in this session's suite. */
  async payloadKeyBytes(sender) {
    return hkdfSHA256(this.secret, this.session, payloadKeyInfo(this.aead, sender));
  }

  /** The opaque 16-byte relay key of a retained-message name. */
  async retainKey(name) {
    return (await hmacSHA256(this.retainKeyBytes, utf8(name))).slice(0, 16);
  }
}

/**
 * Seals and opens data-frame payloads (the counterpart of PayloadCipher.swift), caching one
 * WebCrypto key per sender. Only AES-256-GCM is implemented; a ChaCha20-Poly1305 session throws
 * UnsupportedSuiteError from `create`.
 */
export class PayloadCipher {
  static async create(keys) {
    if (keys.aead !== AEADSuite.aes256GCM) throw new UnsupportedSuiteError(keys.aead);
    const cipher = new PayloadCipher();
    cipher.keys = keys;
    cipher.cache = new Map();
    return cipher;
  }

  async key(sender) {
    let key = this.cache.get(sender);
    if (key === undefined) {
      if (this.cache.size > 4096) this.cache.clear();
      const bytes = await this.keys.payloadKeyBytes(sender);
      key = await subtle.importKey("raw", bytes, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
      this.cache.set(sender, key);
    }
    return key;
  }

  /**
   * Builds a sealed data frame.
   *
   * @param {Uint8Array} plaintext the envelope bytes.
   * @param {{senderSequence: bigint, recipients?: bigint[], retainKey?: Uint8Array}} route
   * @param {number} flags header flags (only `unreliable` is bound).
   * @param {bigint} sender the local participant.
   */
  async seal(plaintext, route, flags, sender) {
    const fullRoute = { recipients: [], retainKey: new Uint8Array(0), ...route };
    const aad = associatedData({ flags, session: this.keys.session, sender, route: fullRoute });
    const sealed = await subtle.encrypt(
      { name: "AES-GCM", iv: payloadNonce(fullRoute.senderSequence), additionalData: aad, tagLength: 128 },
      await this.key(sender),
      plaintext,
    );
    const payload = concatBytes(encodeRoute(fullRoute), new Uint8Array(sealed));
    return makeFrame({ type: FrameType.data, flags, session: this.keys.session, sender, payload });
  }

  /**
   * Opens a data frame received from the relay.
   *
   * @returns {Promise<{route: object, plaintext: Uint8Array}>}
   * @throws {PayloadDecodingError} for a malformed route, OpenError when the box does not open.
   */
  async open(frame) {
    const { route, sealed } = decodeRoute(frame.payload);
    if (sealed.length < TAG_LENGTH) throw new OpenError("data payload is truncated at sealed box");
    const aad = associatedData({ version: frame.version, flags: frame.flags, session: frame.session, sender: frame.sender, route });
    try {
      const plaintext = await subtle.decrypt(
        { name: "AES-GCM", iv: payloadNonce(route.senderSequence), additionalData: aad, tagLength: 128 },
        await this.key(frame.sender),
        sealed,
      );
      return { route, plaintext: new Uint8Array(plaintext) };
    } catch {
      throw new OpenError("a data frame did not open (tampered with, or sealed under another key)");
    }
  }
}
