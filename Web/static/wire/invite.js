// Invites: `coplay[s]://HOST:PORT[,HOST:PORT…]/SESSION[?aead=SUITE][&pin=PIN][&host=KEY]#SECRET[.SEED]`
// (Sources/GroupSessions/Crypto/Invite.swift, with the AEAD suite parameter of docs/protocol.md,
// "Cryptography"). Several addresses name the nodes of one relay service; the first is `host`/`port`,
// the others `otherRelays`. A session where only hosts control names its host key (`hostKey`, an
// Ed25519 public key); a controller invite also carries the key's seed after the secret (`hostSeed`),
// a viewer invite does not (docs/protocol.md, "Roles"). Parsing checks their lengths only: whether the
// seed is the key's is checked with WebCrypto (asynchronously) before the seed signs anything.

import { fromBase64URL, fromHex, toBase64URL, toHex } from "./bytes.js";

/** The AEAD suites a session can use. The invite names it; the default is ChaCha20-Poly1305. */
export const AEADSuite = Object.freeze({
  chacha20Poly1305: "chacha20-poly1305",
  aes256GCM: "aes-256-gcm",
});

/** Bytes of the session secret. */
export const SECRET_LENGTH = 32;

/** Why a string is not a valid invite. */
export class InviteError extends Error {
  constructor(message) {
    super(message);
    this.name = "InviteError";
  }
}

const FORM = "expected coplay://HOST:PORT/SESSION#SECRET (coplays:// for a TLS relay)";

/**
 * Parses an invite.
 *
 * @returns {{host: string, port: number, session: Uint8Array, secret: Uint8Array, aead: string}}
 * @throws {InviteError} naming the part that is wrong (never echoing the secret).
 */
export function parseInvite(text) {
  const trimmed = text.trim();
  const usesTLS = trimmed.toLowerCase().startsWith("coplays://");
  if (!usesTLS && !trimmed.toLowerCase().startsWith("coplay://")) {
    throw new InviteError(`invite must start with coplay:// or coplays:// (got "${trimmed.slice(0, 16)}…"); ${FORM}`);
  }
  const rest = trimmed.slice(usesTLS ? "coplays://".length : "coplay://".length);
  const hash = rest.indexOf("#");
  if (hash < 0) throw new InviteError(`invite has no #SECRET fragment; ${FORM}`);
  const beforeFragment = rest.slice(0, hash);
  const [fragment, seedText] = splitOnce(rest.slice(hash + 1), ".");
  const slash = beforeFragment.indexOf("/");
  if (slash < 0) throw new InviteError(`invite has no session after the port; ${FORM}`);
  const authority = beforeFragment.slice(0, slash);
  let sessionText = beforeFragment.slice(slash + 1);
  let query = "";
  const question = sessionText.indexOf("?");
  if (question >= 0) {
    query = sessionText.slice(question + 1);
    sessionText = sessionText.slice(0, question);
  }

  const addresses = authority.split(",").map(parseRelayAddress);
  const { host, port } = addresses[0];
  const otherRelays = addresses.slice(1);
  if (sessionText.length === 0) throw new InviteError(`invite has no session after the port; ${FORM}`);
  const session = sessionText.length === 32 ? fromHex(sessionText) : null;
  if (session === null) throw new InviteError(`invite session "${sessionText}" is not 32 hexadecimal digits`);
  if (fragment.length === 0) throw new InviteError(`invite has no #SECRET fragment; ${FORM}`);
  const secret = fromBase64URL(fragment);
  if (secret === null || secret.length !== SECRET_LENGTH) throw new InviteError("invite secret is not 32 bytes of base64url");

  let aead = AEADSuite.chacha20Poly1305;
  let relayKeyPin = null;
  let hostKey = null;
  for (const parameter of query.split("&")) {
    if (parameter === "") continue;
    const [name, value = ""] = parameter.split("=", 2);
    if (name === "aead") {
      if (value !== AEADSuite.chacha20Poly1305 && value !== AEADSuite.aes256GCM) {
        throw new InviteError(`invite names an unknown AEAD suite "${value}" (known: aes-256-gcm, chacha20-poly1305)`);
      }
      aead = value;
    } else if (name === "pin") {
      // The relay's key pin matters to native members; the page trusts the browser's own TLS check.
      const pin = fromBase64URL(value);
      if (pin === null || pin.length !== 32) throw new InviteError(`invite pin "${value.slice(0, 60)}" is not a SHA-256 in base64url (43 characters)`);
      if (!usesTLS) throw new InviteError("invite pins a certificate key but says coplay://, not coplays:// (TLS)");
      relayKeyPin = pin;
    } else if (name === "host") {
      const key = fromBase64URL(value);
      if (key === null || key.length !== 32) {
        throw new InviteError(`invite host key "${value.slice(0, 60)}" is not an Ed25519 public key in base64url (43 characters)`);
      }
      hostKey = key;
    } // other parameters: reserved, ignored
  }
  let hostSeed = null;
  if (seedText !== null) {
    if (hostKey === null) throw new InviteError("invite carries a host seed after its secret but names no host key (&host=)");
    hostSeed = fromBase64URL(seedText);
    if (hostSeed === null || hostSeed.length !== 32) {
      throw new InviteError("invite host seed (after the secret's dot) is not the seed of the invite's host key");
    }
  }
  const invite = { host, port, session, secret, aead, usesTLS, relayKeyPin };
  // Present only where only hosts control, so other invites parse to the same object as before.
  if (hostKey !== null) invite.hostKey = hostKey;
  if (hostSeed !== null) invite.hostSeed = hostSeed;
  // Present only for a fleet invite, so a one-relay invite parses to the same object as before.
  if (otherRelays.length > 0) invite.otherRelays = otherRelays;
  return invite;
}

/** `[before, after]` split at the first `separator`; `after` is null without one. */
function splitOnce(text, separator) {
  const at = text.indexOf(separator);
  return at < 0 ? [text, null] : [text.slice(0, at), text.slice(at + 1)];
}

/** Whether only hosts control the invite's session (it names a host key). */
export function onlyHostsControl(invite) {
  return invite.hostKey != null;
}

/** Whether the invite's holder controls: always where everyone does, with the host seed where only hosts do. */
export function inviteControls(invite) {
  return invite.hostKey == null || invite.hostSeed != null;
}

/** The viewer invite of the same session: without the host key's seed. */
export function viewerInvite(invite) {
  const { hostSeed, ...viewer } = invite;
  return viewer;
}

/** One relay node's `HOST:PORT` (`[IPv6]:PORT`) in an invite. */
function parseRelayAddress(authority) {
  let host;
  let portText;
  if (authority.startsWith("[")) {
    const close = authority.indexOf("]");
    if (close < 0) throw new InviteError(`invite host "${authority}" is not a valid host`);
    host = authority.slice(1, close);
    const after = authority.slice(close + 1);
    if (!after.startsWith(":")) throw new InviteError(`invite has no port after the host; ${FORM}`);
    portText = after.slice(1);
  } else {
    const colon = authority.lastIndexOf(":");
    if (colon < 0) throw new InviteError(`invite has no port after the host; ${FORM}`);
    host = authority.slice(0, colon);
    portText = authority.slice(colon + 1);
  }
  if (host.length === 0 || /[\s/@,]/.test(host)) throw new InviteError(`invite host "${host}" is not a valid host`);
  const port = /^[0-9]+$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 1 && port <= 65535)) throw new InviteError(`invite port "${portText}" is not a number between 1 and 65535`);
  return { host, port };
}

/**
 * The invite's text form; `aead` is written only for a suite other than the default, `pin` and `host`
 * when set, the host seed after the secret when set.
 */
export function formatInvite({
  host, port, session, secret, aead = AEADSuite.chacha20Poly1305, usesTLS = false, relayKeyPin = null, otherRelays = [],
  hostKey = null, hostSeed = null,
}) {
  const hostPart = [{ host, port }, ...otherRelays]
    .map((relay) => `${relay.host.includes(":") ? `[${relay.host}]` : relay.host}:${relay.port}`)
    .join(",");
  const parameters = [];
  if (aead !== AEADSuite.chacha20Poly1305) parameters.push(`aead=${aead}`);
  if (relayKeyPin) parameters.push(`pin=${toBase64URL(relayKeyPin)}`);
  if (hostKey) parameters.push(`host=${toBase64URL(hostKey)}`);
  const query = parameters.length ? `?${parameters.join("&")}` : "";
  const scheme = usesTLS || relayKeyPin ? "coplays" : "coplay";
  const seed = hostSeed ? `.${toBase64URL(hostSeed)}` : "";
  return `${scheme}://${hostPart}/${toHex(session)}${query}#${toBase64URL(secret)}${seed}`;
}

/** The invite without its secret, safe to log. */
export function redactInvite(invite) {
  return formatInvite({ ...invite, secret: new Uint8Array(0) }).replace(/#.*$/, "#…");
}
