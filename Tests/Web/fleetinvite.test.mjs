// Invites naming several nodes of one relay service (Web/static/wire/invite.js, docs/scaling.md).

import { test } from "node:test";
import assert from "node:assert/strict";

import { InviteError, formatInvite, parseInvite } from "../../Web/static/wire/invite.js";

const SECRET = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";
const SESSION = "00112233445566778899aabbccddeeff";

test("a fleet invite lists every node, the first as host and port, and formats back the same", () => {
  const text = `coplays://10.0.0.1:7000,relay-b.example:7001,[::1]:7002/${SESSION}?aead=aes-256-gcm#${SECRET}`;
  const invite = parseInvite(text);
  assert.equal(invite.host, "10.0.0.1");
  assert.equal(invite.port, 7000);
  assert.deepEqual(invite.otherRelays, [{ host: "relay-b.example", port: 7001 }, { host: "::1", port: 7002 }]);
  assert.equal(invite.usesTLS, true);
  assert.equal(formatInvite(invite), text);
});

test("a one-address invite has no other relays and formats as before", () => {
  const text = `coplay://127.0.0.1:7000/${SESSION}#${SECRET}`;
  const invite = parseInvite(text);
  assert.equal(invite.otherRelays, undefined);
  assert.equal(formatInvite(invite), text);
});

test("a bad address anywhere in the list is refused by name", () => {
  assert.throws(() => parseInvite(`coplay://127.0.0.1:7000,/${SESSION}#${SECRET}`), InviteError);
  assert.throws(() => parseInvite(`coplay://127.0.0.1:7000,h:0/${SESSION}#${SECRET}`), /port "0"/);
  assert.throws(() => parseInvite(`coplay://127.0.0.1:7000,nohost/${SESSION}#${SECRET}`), /no port/);
});
