// Frame codec: round trips, total decoding, limits, one frame per WebSocket message, payloads.

import { test } from "node:test";
import assert from "node:assert/strict";

import { equalBytes, fromHex, toHex } from "../../Web/static/wire/bytes.js";
import {
  DEFAULT_MAXIMUM_FRAME_LENGTH, FrameDecodingError, FrameStreamReader, FrameType, PRESENCE_ENTRY_LENGTH, PayloadDecodingError,
  RelayErrorCode, decodeAck, decodeError, decodeFrame, decodeHello, decodeMessage, decodePresence, decodeRoute, decodeTimeReply,
  decodeTimeRequest, decodeWelcome, encodeAck, encodeError, encodeFrame, encodeHello, encodePresence, encodeRoute,
  encodeTimeReply, encodeTimeRequest, encodeWelcome, expandPresence, makeFrame,
} from "../../Web/static/wire/frame.js";
import { xorshift } from "./support.mjs";

const session = fromHex("00112233445566778899aabbccddeeff");

const generator = xorshift;

test("a frame encodes to the documented header layout", () => {
  const frame = makeFrame({ type: FrameType.ping, flags: 0x0102, session, sender: 0x0123456789abcdefn, sequence: 7n, payload: Uint8Array.of(9) });
  assert.equal(
    toHex(encodeFrame(frame)),
    "00000025" + "01" + "0b" + "0102" + "00112233445566778899aabbccddeeff" + "0123456789abcdef" + "0000000000000007" + "09",
  );
});

test("random frames round trip, whole and split at every byte", () => {
  const next = generator(42);
  for (let n = 0; n < 200; n++) {
    const payload = Uint8Array.from({ length: next() % 300 }, () => next() & 0xff);
    const frame = makeFrame({
      type: next() & 0xff, flags: next() & 0xffff, session: Uint8Array.from({ length: 16 }, () => next() & 0xff),
      sender: (BigInt(next()) << 32n) | BigInt(next()), sequence: (BigInt(next()) << 32n) | BigInt(next()), payload,
    });
    const bytes = encodeFrame(frame);
    assert.deepEqual(decodeMessage(bytes), frame);
    for (let cut = 0; cut < bytes.length; cut++) assert.equal(decodeFrame(bytes.subarray(0, cut)), null, `prefix ${cut}`);
    const reader = new FrameStreamReader();
    const split = next() % bytes.length;
    assert.deepEqual([...reader.push(bytes.subarray(0, split)), ...reader.push(bytes.subarray(split))], [frame]);
  }
});

test("decoding is total: arbitrary bytes give a frame, null or a FrameDecodingError", () => {
  const next = generator(7);
  for (let n = 0; n < 2000; n++) {
    const bytes = Uint8Array.from({ length: next() % 64 }, () => next() & 0xff);
    if (bytes.length > 4 && n % 2 === 0) bytes[4] = 1;
    if (bytes.length >= 4 && n % 3 === 0) bytes.set([0, 0, 0, 36 + (next() % 8)], 0);
    try {
      const result = decodeFrame(bytes);
      if (result !== null) assert.ok(result.consumed <= bytes.length);
    } catch (error) {
      assert.ok(error instanceof FrameDecodingError, String(error));
    }
  }
});

test("limits: too short, too large (before the bytes arrive), wrong version (as soon as it arrives)", () => {
  const short = fromHex("00000023" + "01");
  assert.throws(() => decodeFrame(short), (e) => e.kind === "tooShort" && e.relayErrorCode === RelayErrorCode.malformed);
  const large = new Uint8Array(4);
  new DataView(large.buffer).setUint32(0, DEFAULT_MAXIMUM_FRAME_LENGTH + 1);
  assert.throws(() => decodeFrame(large), (e) => e.kind === "tooLarge" && e.relayErrorCode === RelayErrorCode.frameTooLarge);
  const atLimit = new Uint8Array(4);
  new DataView(atLimit.buffer).setUint32(0, DEFAULT_MAXIMUM_FRAME_LENGTH);
  assert.equal(decodeFrame(atLimit), null);
  assert.throws(() => decodeFrame(fromHex("0000002402")), (e) => e.kind === "unsupportedVersion" && e.relayErrorCode === RelayErrorCode.unsupportedVersion);
  assert.throws(() => decodeFrame(fromHex("00000030"), 47), (e) => e.kind === "tooLarge");
});

test("a WebSocket message must be exactly one whole frame", () => {
  const bytes = encodeFrame(makeFrame({ type: FrameType.join, session, sender: 5n }));
  assert.equal(decodeMessage(bytes).type, FrameType.join);
  const twoFrames = new Uint8Array([...bytes, ...bytes]);
  assert.throws(() => decodeMessage(twoFrames), (e) => e.kind === "notOneFrame" && e.relayErrorCode === RelayErrorCode.malformed);
  assert.throws(() => decodeMessage(bytes.subarray(0, bytes.length - 1)), (e) => e.kind === "notOneFrame");
  assert.throws(() => decodeMessage(new Uint8Array(0)), (e) => e.kind === "notOneFrame");
});

test("payloads round trip and ignore trailing bytes", () => {
  const token = Uint8Array.from({ length: 32 }, (_, i) => i);
  assert.deepEqual(decodeHello(encodeHello(token)), { token, resumeAfter: null });
  assert.deepEqual(decodeHello(encodeHello(token, 2n ** 64n - 1n)), { token, resumeAfter: 2n ** 64n - 1n });
  assert.throws(() => decodeHello(token.subarray(0, 31)), PayloadDecodingError);

  const welcome = { sequence: 12n, maximumPayload: 307200, ratePerSecond: 2000, burst: 20000, members: [1n, 2n ** 63n], retainedCount: 3 };
  assert.deepEqual(decodeWelcome(encodeWelcome(welcome)), welcome);
  assert.deepEqual(decodeWelcome(new Uint8Array([...encodeWelcome(welcome), 1, 2, 3])), welcome);
  assert.throws(() => decodeWelcome(encodeWelcome(welcome).subarray(0, 30)), PayloadDecodingError);

  assert.equal(decodeAck(encodeAck(77n)), 77n);
  assert.deepEqual(decodeError(encodeError({ code: 6, senderSequence: 9n, detail: "rate limited ✓" })), { code: 6, senderSequence: 9n, detail: "rate limited ✓" });
  assert.equal(decodeError(Uint8Array.of(0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0xff)).detail, "\ufffd");

  const route = { senderSequence: 3n, recipients: [10n, 11n], retainKey: Uint8Array.of(1, 2, 3) };
  const sealed = Uint8Array.of(9, 9);
  assert.deepEqual(decodeRoute(new Uint8Array([...encodeRoute(route), ...sealed])), { route, sealed });
  const tooLong = encodeRoute({ senderSequence: 1n, recipients: [], retainKey: new Uint8Array(33) });
  assert.throws(() => decodeRoute(tooLong), /longer than 32/);
  assert.throws(() => decodeRoute(Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 1, 0, 1)), PayloadDecodingError);
});

test("timeRequest (0x0D) and timeReply (0x0E) payloads", () => {
  assert.equal(toHex(encodeTimeRequest(0x0102030405060708n)), "0102030405060708");
  assert.equal(decodeTimeRequest(encodeTimeRequest(5n)), 5n);
  const reply = { t1: 1n, t2: 2n ** 63n, t3: 2n ** 64n - 1n };
  assert.deepEqual(decodeTimeReply(encodeTimeReply(reply)), reply);
  assert.deepEqual(decodeTimeReply(new Uint8Array([...encodeTimeReply(reply), 0])), reply);
  assert.throws(() => decodeTimeReply(new Uint8Array(23)), PayloadDecodingError);
  assert.equal(FrameType.timeRequest, 0x0d);
  assert.equal(FrameType.timeReply, 0x0e);
});

test("presence payloads: round trip, expansion into joined/left frames, malformed ones refused", () => {
  const session = Uint8Array.from({ length: 16 }, (_, i) => i);
  const entries = [
    { type: FrameType.joined, participant: 7n, sequence: 10n },
    { type: FrameType.left, participant: 8n, sequence: 11n },
  ];
  const payload = encodePresence(entries);
  assert.equal(payload.length, 2 + 2 * PRESENCE_ENTRY_LENGTH);
  assert.deepEqual(decodePresence(payload), entries);
  const frame = makeFrame({ type: FrameType.presence, session, sender: 0n, sequence: 11n, payload });
  const expanded = expandPresence(frame);
  assert.deepEqual(expanded.map((f) => [f.type, f.sender, f.sequence]), [[FrameType.joined, 7n, 10n], [FrameType.left, 8n, 11n]]);
  assert.ok(expanded.every((f) => equalBytes(f.session, session)));
  const data = makeFrame({ type: FrameType.data, session, sender: 3n });
  assert.deepEqual(expandPresence(data), [data]);
  assert.throws(() => decodePresence(new Uint8Array(0)), /truncated at count/);
  assert.throws(() => decodePresence(payload.subarray(0, payload.length - 1)), /truncated at entries/);
  const wrongType = encodePresence([{ type: FrameType.data, participant: 1n, sequence: 1n }]);
  assert.throws(() => decodePresence(wrongType), /entry of type 6/);
});
