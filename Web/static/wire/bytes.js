// Byte helpers shared by the browser participant's modules: big-endian readers and writers,
// hex, unpadded base64url and UTF-8. Integers of 64 bits are BigInt everywhere.

const encoder = new TextEncoder();
const decoder = new TextDecoder(); // replaces invalid UTF-8 with U+FFFD, as Swift's String(decoding:) does

/** UTF-8 bytes of a string. */
export function utf8(text) {
  return encoder.encode(text);
}

/** The string of UTF-8 bytes (invalid sequences repaired, never rejected). */
export function fromUTF8(bytes) {
  return decoder.decode(bytes);
}

/** One Uint8Array holding all the given byte arrays, in order. */
export function concatBytes(...parts) {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const result = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    result.set(part, offset);
    offset += part.length;
  }
  return result;
}

/** Whether two byte arrays hold the same bytes. */
export function equalBytes(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Lowercase hexadecimal digits of `bytes`. */
export function toHex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The bytes of an even number of hexadecimal digits (either case), or null. */
export function fromHex(text) {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return null;
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** Unpadded base64url (RFC 4648 section 5). */
export function toBase64URL(bytes) {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The bytes of unpadded base64url text, or null when it is not base64url. */
export function fromBase64URL(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  let base64 = text.replace(/-/g, "+").replace(/_/g, "/");
  while (base64.length % 4 !== 0) base64 += "=";
  try {
    return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** The 8 big-endian bytes of an unsigned 64-bit BigInt. */
export function u64Bytes(value) {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setBigUint64(0, BigInt.asUintN(64, value));
  return bytes;
}

/** Appends big-endian integers and bytes; `bytes()` returns what was written. */
export class ByteWriter {
  constructor() {
    this.parts = [];
  }
  u8(value) {
    this.parts.push(Uint8Array.of(value & 0xff));
    return this;
  }
  u16(value) {
    const b = new Uint8Array(2);
    new DataView(b.buffer).setUint16(0, value);
    this.parts.push(b);
    return this;
  }
  u32(value) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, value);
    this.parts.push(b);
    return this;
  }
  u64(value) {
    this.parts.push(u64Bytes(value));
    return this;
  }
  raw(bytes) {
    this.parts.push(Uint8Array.from(bytes));
    return this;
  }
  bytes() {
    return concatBytes(...this.parts);
  }
}

/**
 * Reads big-endian integers and bytes from the front of a byte array. Every read returns null
 * when too few bytes remain (and then consumes nothing), so parsers stay total.
 */
export class ByteReader {
  constructor(bytes) {
    this.data = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.offset = 0;
  }
  get remaining() {
    return this.data.length - this.offset;
  }
  u8() {
    if (this.remaining < 1) return null;
    return this.view.getUint8(this.offset++);
  }
  u16() {
    if (this.remaining < 2) return null;
    const v = this.view.getUint16(this.offset);
    this.offset += 2;
    return v;
  }
  u32() {
    if (this.remaining < 4) return null;
    const v = this.view.getUint32(this.offset);
    this.offset += 4;
    return v;
  }
  u64() {
    if (this.remaining < 8) return null;
    const v = this.view.getBigUint64(this.offset);
    this.offset += 8;
    return v;
  }
  bytes(length) {
    if (this.remaining < length) return null;
    const v = this.data.slice(this.offset, this.offset + length);
    this.offset += length;
    return v;
  }
  rest() {
    return this.bytes(this.remaining);
  }
}
