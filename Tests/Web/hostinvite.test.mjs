// Invites of sessions where only hosts control: the host key in the query, its seed after the secret
// in a controller invite (Sources/GroupSessions/Crypto/Invite.swift; docs/protocol.md, "Roles").

import { test } from "node:test";
import assert from "node:assert/strict";

import { InviteError, formatInvite, inviteControls, onlyHostsControl, parseInvite, viewerInvite } from "../../Web/static/wire/invite.js";

// The same text as Tests/GroupSessionsTests/InviteTests.swift: seed 32 × 0x07, secret 32 × 0x01.
const CONTROLLER =
  "coplay://127.0.0.1:7000/000102030405060708090a0b0c0d0e0f?aead=aes-256-gcm&host=6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
  + "#AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE.BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc";
const VIEWER = CONTROLLER.slice(0, CONTROLLER.lastIndexOf("."));

test("a controller invite carries the host key and its seed, and formats back the same", async () => {
  const invite = parseInvite(CONTROLLER);
  assert.deepEqual([...invite.hostSeed], new Array(32).fill(7));
  assert.deepEqual([...invite.secret], new Array(32).fill(1));
  assert.equal(invite.hostKey.length, 32);
  assert.ok(onlyHostsControl(invite) && inviteControls(invite));
  assert.equal(formatInvite(invite), CONTROLLER);
  // The seed is the named key's (WebCrypto, as the page checks it before signing).
  const pkcs8 = new Uint8Array([...Buffer.from("302e020100300506032b657004220420", "hex"), ...invite.hostSeed]);
  const privateKey = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, true, ["sign"]);
  const jwk = await crypto.subtle.exportKey("jwk", privateKey);
  assert.equal(jwk.x, CONTROLLER.match(/host=([^#&]+)/)[1]);
});

test("the viewer invite is the same without the seed; its holder does not control", () => {
  const viewer = viewerInvite(parseInvite(CONTROLLER));
  assert.equal(formatInvite(viewer), VIEWER);
  assert.deepEqual(parseInvite(VIEWER), viewer);
  assert.ok(onlyHostsControl(viewer) && !inviteControls(viewer));
  const everyone = parseInvite(VIEWER.replace(/&host=[^#]+/, ""));
  assert.ok(!onlyHostsControl(everyone) && inviteControls(everyone));
  assert.equal("hostKey" in everyone, false);
});

test("a seed without a host key, a short seed and a malformed host key are refused", () => {
  const noKey = CONTROLLER.replace(/&host=[^#]+/, "");
  assert.throws(() => parseInvite(noKey), (error) => error instanceof InviteError && /names no host key/.test(error.message));
  assert.throws(() => parseInvite(`${VIEWER}.AAAA`), /host seed/);
  assert.throws(() => parseInvite(CONTROLLER.replace("host=", "host=AA")), /host key/);
});
