// Content fingerprints in the browser (Web/static/player/fingerprint.js), against MediaProbe's definition:
// SHA-256 of the first min(size, 64 KiB) bytes followed by the last min(size, 64 KiB) bytes.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";

import {
  CHUNK_SIZE, fingerprintOfBlob, fingerprintOfBytes, fingerprintOfURL, fingerprintsMatch, parseFingerprint, totalFromContentRange,
} from "../../Web/static/player/fingerprint.js";
import { xorshift } from "./support.mjs";

function bytesOf(size, seed) {
  const next = xorshift(seed);
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = next() & 0xff;
  return bytes;
}

/** The reference definition, with Node's hash. */
function reference(bytes) {
  const n = Math.min(bytes.length, CHUNK_SIZE);
  const hash = createHash("sha256");
  hash.update(bytes.subarray(0, n));
  hash.update(bytes.subarray(bytes.length - n));
  return `v2:${bytes.length}:${hash.digest("hex")}`;
}

for (const size of [0, 1, 1000, CHUNK_SIZE - 1, CHUNK_SIZE, CHUNK_SIZE + 1, 2 * CHUNK_SIZE - 1, 2 * CHUNK_SIZE, 3 * CHUNK_SIZE + 17]) {
  test(`v2 fingerprint of ${size} bytes (Uint8Array and Blob) matches the definition`, async () => {
    const bytes = bytesOf(size, size + 7);
    const expected = reference(bytes);
    assert.equal(await fingerprintOfBytes(bytes), expected);
    assert.equal(await fingerprintOfBlob(new Blob([bytes])), expected);
  });
}

test("a known vector: 3 bytes 'abc' hash as 'abcabc'", async () => {
  const bytes = new TextEncoder().encode("abc");
  const hash = createHash("sha256").update("abcabc").digest("hex");
  assert.equal(await fingerprintOfBytes(bytes), `v2:3:${hash}`);
});

test("parsing: v2, v1 with and without duration, and garbage", () => {
  const digest = "ab".repeat(32);
  assert.deepEqual(parseFingerprint(`v2:123:${digest}`), { version: 2, size: 123, durationMicroseconds: null, digest });
  assert.deepEqual(parseFingerprint(`v1:123:4000000:${digest.toUpperCase()}`), { version: 1, size: 123, durationMicroseconds: 4000000, digest });
  assert.deepEqual(parseFingerprint(`v1:123:-:${digest}`), { version: 1, size: 123, durationMicroseconds: null, digest });
  for (const bad of ["", "v2", `v2:-1:${digest}`, `v2:1:${digest.slice(1)}`, `v3:1:${digest}`, `v1:1:${digest}`, `v1:1:x:${digest}`, null]) {
    assert.equal(parseFingerprint(bad), null, String(bad));
  }
});

test("v1 and v2 match on size and digest only", () => {
  const digest = "cd".repeat(32);
  assert.ok(fingerprintsMatch(`v2:10:${digest}`, `v1:10:123456:${digest}`));
  assert.ok(fingerprintsMatch(`v1:10:-:${digest}`, `v1:10:99:${digest}`));
  assert.ok(!fingerprintsMatch(`v2:11:${digest}`, `v1:10:123456:${digest}`));
  assert.ok(!fingerprintsMatch(`v2:10:${"ce".repeat(32)}`, `v2:10:${digest}`));
  assert.ok(!fingerprintsMatch("nonsense", `v2:10:${digest}`));
});

test("Content-Range totals", () => {
  assert.equal(totalFromContentRange("bytes 0-65535/2719789"), 2719789);
  assert.equal(totalFromContentRange("bytes */100"), 100);
  assert.equal(totalFromContentRange("bytes 0-1/*"), null);
  assert.equal(totalFromContentRange(null), null);
});

/** A fake fetch over `bytes`: ranges when `ranges`, else 200 with everything. */
function fakeFetch(bytes, { ranges = true, exposeRange = true, status = 200 } = {}) {
  const requests = [];
  const fetch = async (url, init) => {
    const range = init?.headers?.Range ?? null;
    requests.push(range);
    if (status !== 200) return new Response("no", { status });
    if (ranges && range !== null) {
      const match = /^bytes=(\d+)-(\d*)$/.exec(range);
      const start = Number(match[1]);
      const end = match[2] === "" ? bytes.length - 1 : Math.min(Number(match[2]), bytes.length - 1);
      const headers = exposeRange ? { "Content-Range": `bytes ${start}-${end}/${bytes.length}` } : {};
      return new Response(bytes.slice(start, end + 1), { status: 206, headers });
    }
    return new Response(bytes, { status: 200 });
  };
  return { fetch, requests };
}

test("a media URL with range support: head and tail ranges only", async () => {
  const bytes = bytesOf(5 * CHUNK_SIZE + 3, 11);
  const { fetch, requests } = fakeFetch(bytes);
  const result = await fingerprintOfURL("http://h/m.mp4", { fetch });
  assert.equal(result.fingerprint, reference(bytes));
  assert.equal(result.blob, null);
  assert.deepEqual(requests, ["bytes=0-65535", `bytes=${bytes.length - CHUNK_SIZE}-`]);
});

test("a small file with range support needs one request", async () => {
  const bytes = bytesOf(1000, 12);
  const { fetch, requests } = fakeFetch(bytes);
  assert.equal((await fingerprintOfURL("http://h/m.mp4", { fetch })).fingerprint, reference(bytes));
  assert.equal(requests.length, 1);
});

test("a server without ranges: the whole body, kept for playing", async () => {
  const bytes = bytesOf(3 * CHUNK_SIZE, 13);
  const { fetch } = fakeFetch(bytes, { ranges: false });
  const result = await fingerprintOfURL("http://h/m.mp4", { fetch });
  assert.equal(result.fingerprint, reference(bytes));
  assert.equal(result.blob.size, bytes.length);
});

test("a 206 without a readable Content-Range falls back to the whole body", async () => {
  const bytes = bytesOf(3 * CHUNK_SIZE, 14);
  const { fetch, requests } = fakeFetch(bytes, { exposeRange: false });
  const result = await fingerprintOfURL("http://h/m.mp4", { fetch });
  assert.equal(result.fingerprint, reference(bytes));
  assert.equal(requests[1], null);
});

test("HTTP errors and network failures are MediaFetchErrors", async () => {
  await assert.rejects(fingerprintOfURL("http://h/m.mp4", { fetch: fakeFetch(new Uint8Array(1), { status: 404 }).fetch }), { name: "MediaFetchError" });
  await assert.rejects(fingerprintOfURL("http://h/m.mp4", { fetch: async () => { throw new TypeError("Failed to fetch"); } }), /CORS/);
});
