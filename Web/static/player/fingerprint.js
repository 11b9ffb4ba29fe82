// Content fingerprints of media, as MediaProbe's ContentFingerprint writes them:
//
//   v2:<size>:<sha256 hex>                         (computable in a browser: size and bytes only)
//   v1:<size>:<duration µs or ->:<sha256 hex>      (older: also libavformat's duration)
//
// The digest is SHA-256 over the first min(size, 65536) bytes followed by the last min(size, 65536)
// bytes (the two ranges overlap for files under 128 KiB, exactly as Swift hashes them). Two
// fingerprints match when their size and digest agree; v1's duration is ignored, because a browser
// cannot compute libavformat's duration.

import { toHex } from "../wire/bytes.js";

/** Bytes hashed at each end of the file (ContentFingerprint.chunkSize). */
export const CHUNK_SIZE = 64 * 1024;

const subtle = () => globalThis.crypto.subtle;

/**
 * Parses a fingerprint's text form.
 *
 * @returns {{version: 1|2, size: number, durationMicroseconds: number|null, digest: string}|null}
 */
export function parseFingerprint(text) {
  if (typeof text !== "string") return null;
  const parts = text.trim().split(":");
  const sizeOf = (s) => (/^[0-9]+$/.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : null);
  const digestOf = (s) => (/^[0-9a-fA-F]{64}$/.test(s) ? s.toLowerCase() : null);
  if (parts.length === 3 && parts[0] === "v2") {
    const size = sizeOf(parts[1]);
    const digest = digestOf(parts[2]);
    if (size === null || digest === null) return null;
    return { version: 2, size, durationMicroseconds: null, digest };
  }
  if (parts.length === 4 && parts[0] === "v1") {
    const size = sizeOf(parts[1]);
    const digest = digestOf(parts[3]);
    const duration = parts[2] === "-" ? null : /^-?[0-9]+$/.test(parts[2]) ? Number(parts[2]) : undefined;
    if (size === null || digest === null || duration === undefined) return null;
    return { version: 1, size, durationMicroseconds: duration, digest };
  }
  return null;
}

/** The v2 text form. */
export function formatFingerprint({ size, digest }) {
  return `v2:${size}:${digest}`;
}

/** Whether two fingerprints (text or parsed) name the same content: size and digest agree. */
export function fingerprintsMatch(a, b) {
  const x = typeof a === "string" ? parseFingerprint(a) : a;
  const y = typeof b === "string" ? parseFingerprint(b) : b;
  if (x === null || y === null || x === undefined || y === undefined) return false;
  return x.size === y.size && x.digest === y.digest;
}

/** The digest of a file of `size` bytes from its head and tail chunks (Uint8Arrays). */
export async function digestOf(head, tail) {
  const joined = new Uint8Array(head.length + tail.length);
  joined.set(head, 0);
  joined.set(tail, head.length);
  return toHex(new Uint8Array(await subtle().digest("SHA-256", joined)));
}

/** The byte ranges hashed for a file of `size` bytes: [start, end) of the head and of the tail. */
export function chunkRanges(size) {
  const n = Math.min(size, CHUNK_SIZE);
  return { head: [0, n], tail: [size - n, size] };
}

/** The v2 fingerprint of bytes in memory (a Uint8Array). */
export async function fingerprintOfBytes(bytes) {
  const { head, tail } = chunkRanges(bytes.length);
  const digest = await digestOf(bytes.subarray(...head), bytes.subarray(...tail));
  return formatFingerprint({ size: bytes.length, digest });
}

/** The v2 fingerprint of a Blob or File, reading only its two ends. */
export async function fingerprintOfBlob(blob) {
  const { head, tail } = chunkRanges(blob.size);
  const read = async (range) => new Uint8Array(await blob.slice(...range).arrayBuffer());
  const digest = await digestOf(await read(head), await read(tail));
  return formatFingerprint({ size: blob.size, digest });
}

/** Why a media URL could not be fingerprinted. */
export class MediaFetchError extends Error {
  constructor(message) {
    super(message);
    this.name = "MediaFetchError";
  }
}

/** `bytes START-END/TOTAL` -> TOTAL, or null. */
export function totalFromContentRange(header) {
  const match = /^\s*bytes\s+(?:\d+-\d+|\*)\/(\d+)\s*$/i.exec(header ?? "");
  return match === null ? null : Number(match[1]);
}

/**
 * The v2 fingerprint of the media at `url`, with as little transfer as the server allows:
 * `Range: bytes=0-65535` first; when the server answers 206 with the total size, the tail with
 * `bytes=(size-65536)-` (a CORS-safelisted form, so no preflight is needed); otherwise the whole body.
 *
 * Cross-origin servers must allow CORS (`Access-Control-Allow-Origin`, and
 * `Access-Control-Expose-Headers: Content-Range` for the ranged path).
 *
 * @param {string} url
 * @param {object} [options]
 * @param {typeof fetch} [options.fetch]
 * @returns {Promise<{fingerprint: string, size: number, blob: Blob|null}>} `blob` is the whole body
 *   when it had to be downloaded (play it from memory instead of fetching it again).
 */
export async function fingerprintOfURL(url, { fetch: fetcher = globalThis.fetch } = {}) {
  const get = async (range) => {
    let response;
    try {
      response = await fetcher(url, { headers: range === null ? {} : { Range: range }, cache: "no-store", credentials: "omit" });
    } catch (error) {
      throw new MediaFetchError(`could not fetch the media (${error?.message ?? error}); a server on another origin must allow CORS`);
    }
    if (!response.ok) throw new MediaFetchError(`the media server answered ${response.status} ${response.statusText ?? ""}`.trim());
    return response;
  };
  const first = await get(`bytes=0-${CHUNK_SIZE - 1}`);
  const total = first.status === 206 ? totalFromContentRange(first.headers.get("Content-Range")) : null;
  if (total === null) {
    // The whole body: a 200, or a 206 whose size we cannot read (then fetch everything).
    const whole = first.status === 206 ? await get(null) : first;
    const blob = await whole.blob();
    return { fingerprint: await fingerprintOfBlob(blob), size: blob.size, blob };
  }
  const head = new Uint8Array(await first.arrayBuffer());
  const ranges = chunkRanges(total);
  if (head.length !== ranges.head[1]) throw new MediaFetchError(`the media server sent ${head.length} bytes for the first ${ranges.head[1]}`);
  let tail;
  if (ranges.tail[0] === 0) {
    tail = head;
  } else {
    const second = await get(`bytes=${ranges.tail[0]}-`);
    if (second.status === 206) {
      tail = new Uint8Array(await second.arrayBuffer());
    } else {
      const all = new Uint8Array(await second.arrayBuffer());
      tail = all.subarray(ranges.tail[0]);
    }
    if (tail.length !== ranges.tail[1] - ranges.tail[0]) throw new MediaFetchError("the media server sent a short tail range");
  }
  return { fingerprint: formatFingerprint({ size: total, digest: await digestOf(head, tail) }), size: total, blob: null };
}
