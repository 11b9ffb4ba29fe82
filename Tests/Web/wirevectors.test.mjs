// The shared wire vectors (Tests/Vectors/wire/frames.json, written by Swift's WireVectorTests) against
// frame.js: the same frames give the same bytes, the same byte streams the same verdicts, the same
// payloads the same bytes and values, and bytes Swift refuses are refused here too.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { fromHex, toHex } from "../../Web/static/wire/bytes.js";
import {
  FrameDecodingError, PayloadDecodingError, decodeError, decodeFrame, decodeHello, decodePresence, decodeRoute,
  decodeTimeReply, decodeTimeRequest, decodeWelcome, encodeError, encodeFrame, encodeHello, encodePresence, encodeRoute,
  encodeTimeReply, encodeTimeRequest, encodeWelcome, makeFrame,
} from "../../Web/static/wire/frame.js";

const file = join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "wire", "frames.json");
const vector = JSON.parse(readFileSync(file, "utf8"));
const list = (text) => (text === "" ? [] : text.split(",").map(BigInt));

test("frames: the page encodes Swift's frames to the same bytes and decodes the bytes to the same fields", () => {
  assert.ok(vector.frames.length >= 4);
  for (const c of vector.frames) {
    const frame = makeFrame({
      type: c.type, flags: c.flags, session: fromHex(c.session), sender: BigInt(c.sender), sequence: BigInt(c.sequence),
      payload: fromHex(c.payload), version: c.version,
    });
    assert.equal(toHex(encodeFrame(frame)), c.bytes, c.name);
    const decoded = decodeFrame(fromHex(c.bytes));
    assert.equal(decoded.consumed, c.bytes.length / 2, c.name);
    assert.deepEqual(
      [decoded.frame.type, decoded.frame.flags, toHex(decoded.frame.session), decoded.frame.sender, decoded.frame.sequence, toHex(decoded.frame.payload)],
      [c.type, c.flags, c.session, BigInt(c.sender), BigInt(c.sequence), c.payload], c.name);
  }
});

test("byte streams: a frame, more bytes needed, or the same refusal with the same relay error code", () => {
  const outcomes = new Set();
  for (const c of vector.streams) {
    outcomes.add(c.outcome);
    const bytes = fromHex(c.bytes);
    if (c.outcome === "frame") {
      assert.equal(decodeFrame(bytes, c.maximumFrameLength).consumed, c.consumed, c.name);
    } else if (c.outcome === "needMore") {
      assert.equal(decodeFrame(bytes, c.maximumFrameLength), null, c.name);
    } else {
      assert.throws(() => decodeFrame(bytes, c.maximumFrameLength), (error) => {
        assert.ok(error instanceof FrameDecodingError, c.name);
        assert.equal(error.kind, c.outcome, c.name);
        assert.equal(error.relayErrorCode, c.relayErrorCode, c.name);
        return true;
      });
    }
  }
  assert.deepEqual([...outcomes].sort(), ["frame", "needMore", "tooLarge", "tooShort", "unsupportedVersion"]);
});

/** Encodes a payload case's fields with frame.js; the decoded value in the same shape as the fields. */
const codecs = {
  hello: {
    encode: (f) => encodeHello(fromHex(f.token), f.resumeAfter === undefined ? null : BigInt(f.resumeAfter)),
    decode: (bytes) => {
      const { token, resumeAfter } = decodeHello(bytes);
      return resumeAfter === null ? { token: toHex(token) } : { token: toHex(token), resumeAfter: String(resumeAfter) };
    },
  },
  welcome: {
    encode: (f) => encodeWelcome({
      sequence: BigInt(f.sequence), maximumPayload: Number(f.maximumPayload), ratePerSecond: Number(f.ratePerSecond),
      burst: Number(f.burst), members: list(f.members), retainedCount: Number(f.retainedCount),
    }),
    decode: (bytes) => {
      const w = decodeWelcome(bytes);
      return {
        sequence: String(w.sequence), maximumPayload: String(w.maximumPayload), ratePerSecond: String(w.ratePerSecond),
        burst: String(w.burst), members: w.members.join(","), retainedCount: String(w.retainedCount),
      };
    },
  },
  presence: {
    encode: (f) => encodePresence(f.entries.split(";").map((entry) => {
      const [type, participant, sequence] = entry.split(":");
      return { type: Number(type), participant: BigInt(participant), sequence: BigInt(sequence) };
    })),
    decode: (bytes) => ({ entries: decodePresence(bytes).map((e) => `${e.type}:${e.participant}:${e.sequence}`).join(";") }),
  },
  error: {
    encode: (f) => encodeError({ code: Number(f.code), senderSequence: BigInt(f.senderSequence), detail: f.detail }),
    decode: (bytes) => {
      const e = decodeError(bytes);
      return { code: String(e.code), senderSequence: String(e.senderSequence), detail: e.detail };
    },
  },
  route: {
    encode: (f) => encodeRoute({ senderSequence: BigInt(f.senderSequence), recipients: list(f.recipients), retainKey: fromHex(f.retainKey) }),
    decode: (bytes) => {
      const { route, sealed } = decodeRoute(bytes);
      assert.equal(sealed.length, 0);
      return { senderSequence: String(route.senderSequence), recipients: route.recipients.join(","), retainKey: toHex(route.retainKey) };
    },
  },
  timeRequest: {
    encode: (f) => encodeTimeRequest(BigInt(f.t1)),
    decode: (bytes) => ({ t1: String(decodeTimeRequest(bytes)) }),
  },
  timeReply: {
    encode: (f) => encodeTimeReply({ t1: BigInt(f.t1), t2: BigInt(f.t2), t3: BigInt(f.t3) }),
    decode: (bytes) => {
      const { t1, t2, t3 } = decodeTimeReply(bytes);
      return { t1: String(t1), t2: String(t2), t3: String(t3) };
    },
  },
};

test("payloads: the same bytes from the same fields, the same fields from the bytes, and Swift's refusals refused", () => {
  let decodedCount = 0;
  let malformedCount = 0;
  for (const c of vector.payloads) {
    const codec = codecs[c.kind];
    assert.ok(codec, `no codec for ${c.kind}`);
    if (c.outcome === "decoded") {
      decodedCount += 1;
      assert.equal(toHex(codec.encode(c.fields)), c.bytes, c.name);
      assert.deepEqual(codec.decode(fromHex(c.bytes)), c.fields, c.name);
    } else {
      malformedCount += 1;
      assert.throws(() => codec.decode(fromHex(c.bytes)), PayloadDecodingError, c.name);
    }
  }
  assert.ok(decodedCount >= 9 && malformedCount >= 10);
});
