// The versioned plaintext inside every sealed data frame (Sources/GroupSessions/Session/Envelope.swift):
// `version u8 (1) | kind u8 | nameLength u16 | name (UTF-8) | extensionLength u16 | extension | body`.

import { ByteReader, ByteWriter, fromUTF8, utf8 } from "./bytes.js";
import { PayloadDecodingError } from "./frame.js";

export const ENVELOPE_VERSION = 1;

/** Envelope kinds. Readers ignore kinds they do not know. */
export const EnvelopeKind = Object.freeze({ message: 1, activity: 2 });

/** The name of raw-bytes messages. */
export const RAW_DATA_NAME = "coplay.data";

/** Encodes an envelope (no extension bytes). Names longer than 65535 UTF-8 bytes are cut. */
export function encodeEnvelope({ kind, name, body }) {
  const nameBytes = utf8(name).slice(0, 0xffff);
  return new ByteWriter().u8(ENVELOPE_VERSION).u8(kind).u16(nameBytes.length).raw(nameBytes).u16(0).raw(body).bytes();
}

/**
 * Decodes an envelope, skipping its extension bytes.
 *
 * @returns {{version: number, kind: number, name: string, body: Uint8Array}}
 * @throws {PayloadDecodingError} when truncated or of version 0.
 */
export function decodeEnvelope(bytes) {
  const r = new ByteReader(bytes);
  const version = r.u8();
  const kind = r.u8();
  const nameLength = r.u16();
  if (nameLength === null) throw new PayloadDecodingError("data payload is truncated at envelope header");
  if (version < 1) throw new PayloadDecodingError("data payload is invalid: envelope version 0");
  const name = r.bytes(nameLength);
  if (name === null) throw new PayloadDecodingError("data payload is truncated at envelope name");
  const extensionLength = r.u16();
  if (extensionLength === null || r.bytes(extensionLength) === null) throw new PayloadDecodingError("data payload is truncated at envelope extension");
  return { version, kind, name: fromUTF8(name), body: r.rest() };
}
