// The relay's frame codec (docs/protocol.md, "Framing" and "Frame types"), byte-identical to
// Sources/GroupSessions/Wire/FrameCodec.swift, plus the payloads a member reads and writes.
//
// A frame is a 4-byte big-endian length L, then a 36-byte header (version, type, flags, session,
// sender, sequence) and L - 36 payload bytes. Over the WebSocket every binary message is exactly
// one frame, length prefix included (docs/protocol.md, "WebSocket transport").

import { ByteReader, ByteWriter, concatBytes, fromUTF8, utf8 } from "./bytes.js";

export const FRAME_VERSION = 1;
export const HEADER_LENGTH = 36;
export const LENGTH_PREFIX = 4;
/** Default upper bound on the length field (header + payload): 1 MiB + header. */
export const DEFAULT_MAXIMUM_FRAME_LENGTH = HEADER_LENGTH + (1 << 20);

/** Frame type bytes. An open set: any byte decodes. */
export const FrameType = Object.freeze({
  hello: 0x01,
  welcome: 0x02,
  join: 0x03,
  joined: 0x04,
  left: 0x05,
  data: 0x06,
  ack: 0x07,
  end: 0x08,
  leave: 0x09,
  error: 0x0a,
  ping: 0x0b,
  pong: 0x0c,
  timeRequest: 0x0d,
  timeReply: 0x0e,
  presence: 0x0f,
});

/** Header flag bits. Unknown bits are carried and ignored. */
export const FrameFlags = Object.freeze({ unreliable: 1 << 0, replayed: 1 << 1, presenceBatches: 1 << 2, evictable: 1 << 3 });

/** Relay error codes (docs/protocol.md, "Error codes"). An open set. */
export const RelayErrorCode = Object.freeze({
  malformed: 1,
  unsupportedVersion: 2,
  frameTooLarge: 3,
  unauthorized: 4,
  notJoined: 5,
  rateLimited: 6,
  tooManyConnections: 7,
  duplicateParticipant: 8,
  sessionEnded: 9,
  unsupportedType: 10,
  quotaExceeded: 11,
  slowConsumer: 12,
  wrongSession: 13,
  cannotResume: 20,
});

/** Why bytes are not a frame; `relayErrorCode` is the code a relay answers it with. */
export class FrameDecodingError extends Error {
  constructor(kind, message, relayErrorCode) {
    super(message);
    this.name = "FrameDecodingError";
    this.kind = kind; // "tooShort" | "tooLarge" | "unsupportedVersion" | "notOneFrame"
    this.relayErrorCode = relayErrorCode;
  }
}

/** Why a payload does not have the layout its frame type requires. */
export class PayloadDecodingError extends Error {
  constructor(message) {
    super(message);
    this.name = "PayloadDecodingError";
  }
}

/**
 * Creates a frame value. `session` is 16 bytes, `sender` and `sequence` BigInt.
 *
 * @returns {{version:number,type:number,flags:number,session:Uint8Array,sender:bigint,sequence:bigint,payload:Uint8Array}}
 */
export function makeFrame({ type, flags = 0, session, sender, sequence = 0n, payload = new Uint8Array(0), version = FRAME_VERSION }) {
  if (!(session instanceof Uint8Array) || session.length !== 16) throw new TypeError("session must be 16 bytes");
  return { version, type, flags, session, sender: BigInt(sender), sequence: BigInt(sequence), payload };
}

/** The wire bytes of a frame, length prefix first. */
export function encodeFrame(frame) {
  return new ByteWriter()
    .u32(HEADER_LENGTH + frame.payload.length)
    .u8(frame.version)
    .u8(frame.type)
    .u16(frame.flags)
    .raw(frame.session)
    .u64(frame.sender)
    .u64(frame.sequence)
    .raw(frame.payload)
    .bytes();
}

/**
 * Decodes one frame from the front of `bytes` (total, like FrameCodec.decode).
 *
 * @returns {{frame: object, consumed: number} | null} the frame and the bytes it took, or null
 *   when `bytes` does not hold a whole frame yet.
 * @throws {FrameDecodingError} when the bytes cannot start a valid frame: the length is below the
 *   header or above the limit (checked before the rest is awaited), or the version byte is not 1
 *   (checked as soon as it is present).
 */
export function decodeFrame(bytes, maximumFrameLength = DEFAULT_MAXIMUM_FRAME_LENGTH) {
  if (bytes.length < LENGTH_PREFIX) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(0);
  if (length < HEADER_LENGTH) {
    throw new FrameDecodingError("tooShort", `frame length ${length} is shorter than the ${HEADER_LENGTH}-byte header`, RelayErrorCode.malformed);
  }
  if (length > maximumFrameLength) {
    throw new FrameDecodingError("tooLarge", `frame length ${length} exceeds the limit of ${maximumFrameLength} bytes`, RelayErrorCode.frameTooLarge);
  }
  if (bytes.length > LENGTH_PREFIX && bytes[LENGTH_PREFIX] !== FRAME_VERSION) {
    const version = bytes[LENGTH_PREFIX];
    throw new FrameDecodingError("unsupportedVersion", `protocol version ${version} is not supported (this build speaks version ${FRAME_VERSION})`, RelayErrorCode.unsupportedVersion);
  }
  if (bytes.length < LENGTH_PREFIX + length) return null;
  const reader = new ByteReader(bytes.subarray(LENGTH_PREFIX, LENGTH_PREFIX + length));
  const version = reader.u8();
  const type = reader.u8();
  const flags = reader.u16();
  const session = reader.bytes(16);
  const sender = reader.u64();
  const sequence = reader.u64();
  const payload = reader.rest();
  return { frame: { version, type, flags, session, sender, sequence, payload }, consumed: LENGTH_PREFIX + length };
}

/**
 * Decodes a WebSocket binary message, which must hold exactly one frame.
 *
 * @throws {FrameDecodingError} for a framing error, a truncated frame or bytes after the frame
 *   (kind "notOneFrame", answered with `malformed`).
 */
export function decodeMessage(bytes, maximumFrameLength = DEFAULT_MAXIMUM_FRAME_LENGTH) {
  const result = decodeFrame(bytes, maximumFrameLength);
  if (result === null || result.consumed !== bytes.length) {
    throw new FrameDecodingError("notOneFrame", "a WebSocket message must hold exactly one whole frame", RelayErrorCode.malformed);
  }
  return result.frame;
}

/**
 * Splits a byte stream into frames (for a TCP-like stream; a WebSocket uses decodeMessage).
 * After a FrameDecodingError the stream is out of step and must be closed.
 */
export class FrameStreamReader {
  constructor(maximumFrameLength = DEFAULT_MAXIMUM_FRAME_LENGTH) {
    this.maximumFrameLength = maximumFrameLength;
    this.buffer = new Uint8Array(0);
  }
  /** Appends bytes and returns every whole frame now available. */
  push(bytes) {
    this.buffer = concatBytes(this.buffer, bytes);
    const frames = [];
    for (;;) {
      const result = decodeFrame(this.buffer, this.maximumFrameLength);
      if (result === null) break;
      frames.push(result.frame);
      this.buffer = this.buffer.slice(result.consumed);
    }
    return frames;
  }
}

// MARK: Payloads

/** `token(32) [resumeAfter u64]`. */
export function encodeHello(token, resumeAfter = null) {
  const w = new ByteWriter().raw(token);
  if (resumeAfter !== null && resumeAfter !== undefined) w.u64(resumeAfter);
  return w.bytes();
}

/** Parses a hello payload: `{token, resumeAfter}` (resumeAfter null for a new admission). */
export function decodeHello(payload) {
  const r = new ByteReader(payload);
  const token = r.bytes(32);
  if (token === null) throw new PayloadDecodingError("hello payload is truncated at token");
  return { token, resumeAfter: r.u64() };
}

/** `sequence u64, maxPayload u32, ratePerSecond u32, burst u32, count u16, members u64..., retainedCount u32`. */
export function encodeWelcome({ sequence, maximumPayload, ratePerSecond, burst, members, retainedCount = 0 }) {
  const w = new ByteWriter().u64(sequence).u32(maximumPayload).u32(ratePerSecond).u32(burst).u16(members.length);
  for (const member of members) w.u64(member);
  return w.u32(retainedCount).bytes();
}

/** Parses a welcome payload (trailing bytes ignored). */
export function decodeWelcome(payload) {
  const r = new ByteReader(payload);
  const sequence = r.u64();
  const maximumPayload = r.u32();
  const ratePerSecond = r.u32();
  const burst = r.u32();
  const count = r.u16();
  if (count === null) throw new PayloadDecodingError("welcome payload is truncated at fixed fields");
  if (r.remaining < count * 8) throw new PayloadDecodingError("welcome payload is truncated at members");
  const members = [];
  for (let i = 0; i < count; i++) members.push(r.u64());
  const retainedCount = r.u32();
  if (retainedCount === null) throw new PayloadDecodingError("welcome payload is truncated at retained count");
  return { sequence, maximumPayload, ratePerSecond, burst, members, retainedCount };
}

/** Bytes of one presence entry: `type u8 | participant u64 | sequence u64`. */
export const PRESENCE_ENTRY_LENGTH = 17;

/** `count u16 | count × (type u8 | participant u64 | sequence u64)`; entries `{type, participant, sequence}`. */
export function encodePresence(entries) {
  const w = new ByteWriter().u16(entries.length);
  for (const { type, participant, sequence } of entries) w.u8(type).u64(participant).u64(sequence);
  return w.bytes();
}

/** Parses a presence payload; an entry that is not `joined` / `left` is invalid. */
export function decodePresence(payload) {
  const r = new ByteReader(payload);
  const count = r.u16();
  if (count === null) throw new PayloadDecodingError("presence payload is truncated at count");
  if (r.remaining < count * PRESENCE_ENTRY_LENGTH) throw new PayloadDecodingError("presence payload is truncated at entries");
  const entries = [];
  for (let i = 0; i < count; i++) {
    const type = r.u8();
    if (type !== FrameType.joined && type !== FrameType.left) {
      throw new PayloadDecodingError(`presence payload is invalid: entry of type ${type}`);
    }
    entries.push({ type, participant: r.u64(), sequence: r.u64() });
  }
  return entries;
}

/**
 * The `joined` / `left` frames a `presence` frame stands for, in order (the frame itself when it
 * is of another type): reading them is reading the presence frame.
 */
export function expandPresence(frame) {
  if (frame.type !== FrameType.presence) return [frame];
  return decodePresence(frame.payload).map(({ type, participant, sequence }) =>
    makeFrame({ type, session: frame.session, sender: participant, sequence }),
  );
}

/** `senderSequence u64` (the ack's header sequence is the stamp). */
export function encodeAck(senderSequence) {
  return new ByteWriter().u64(senderSequence).bytes();
}

/** Parses an ack payload: the acknowledged sender sequence. */
export function decodeAck(payload) {
  const value = new ByteReader(payload).u64();
  if (value === null) throw new PayloadDecodingError("ack payload is truncated at sender sequence");
  return value;
}

/** `code u16 | senderSequence u64 | detail (UTF-8)`. */
export function encodeError({ code, senderSequence = 0n, detail = "" }) {
  return new ByteWriter().u16(code).u64(senderSequence).raw(utf8(detail)).bytes();
}

/** Parses an error payload; invalid UTF-8 in the detail is repaired, not rejected. */
export function decodeError(payload) {
  const r = new ByteReader(payload);
  const code = r.u16();
  const senderSequence = r.u64();
  if (senderSequence === null) throw new PayloadDecodingError("error payload is truncated at code");
  return { code, senderSequence, detail: fromUTF8(r.rest()) };
}

/** The largest retain key in a data route. */
export const MAXIMUM_RETAIN_KEY_LENGTH = 32;

/** Bytes a data route occupies. */
export function routeLength(route) {
  return 8 + 2 + 8 * route.recipients.length + 1 + route.retainKey.length;
}

/** `senderSequence u64 | recipientCount u16 | recipients u64... | retainKeyLength u8 | retainKey`. */
export function encodeRoute({ senderSequence, recipients = [], retainKey = new Uint8Array(0) }) {
  const w = new ByteWriter().u64(senderSequence).u16(recipients.length);
  for (const recipient of recipients) w.u64(recipient);
  return w.u8(retainKey.length).raw(retainKey).bytes();
}

/**
 * Parses the route at the front of a data payload.
 *
 * @returns {{route: {senderSequence: bigint, recipients: bigint[], retainKey: Uint8Array}, sealed: Uint8Array}}
 */
export function decodeRoute(payload) {
  const r = new ByteReader(payload);
  const senderSequence = r.u64();
  const count = r.u16();
  if (count === null) throw new PayloadDecodingError("data payload is truncated at route");
  if (r.remaining < count * 8) throw new PayloadDecodingError("data payload is truncated at recipients");
  const recipients = [];
  for (let i = 0; i < count; i++) recipients.push(r.u64());
  const keyLength = r.u8();
  if (keyLength === null) throw new PayloadDecodingError("data payload is truncated at retain key");
  if (keyLength > MAXIMUM_RETAIN_KEY_LENGTH) throw new PayloadDecodingError("data payload is invalid: retain key longer than 32 bytes");
  const retainKey = r.bytes(keyLength);
  if (retainKey === null) throw new PayloadDecodingError("data payload is truncated at retain key");
  return { route: { senderSequence, recipients, retainKey }, sealed: r.rest() };
}

/** timeRequest (0x0D): `t1 u64`, the client's transmit time (NTP timestamp). */
export function encodeTimeRequest(t1) {
  return new ByteWriter().u64(t1).bytes();
}

/** Parses a timeRequest payload. */
export function decodeTimeRequest(payload) {
  const t1 = new ByteReader(payload).u64();
  if (t1 === null) throw new PayloadDecodingError("timeRequest payload is truncated at t1");
  return t1;
}

/** timeReply (0x0E): `t1 u64 (echoed) | t2 u64 (relay receive) | t3 u64 (relay transmit)`. */
export function encodeTimeReply({ t1, t2, t3 }) {
  return new ByteWriter().u64(t1).u64(t2).u64(t3).bytes();
}

/** Parses a timeReply payload (trailing bytes ignored). */
export function decodeTimeReply(payload) {
  const r = new ByteReader(payload);
  const t1 = r.u64();
  const t2 = r.u64();
  const t3 = r.u64();
  if (t3 === null) throw new PayloadDecodingError("timeReply payload is truncated");
  return { t1, t2, t3 };
}
