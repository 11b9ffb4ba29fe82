// The page URL's fragment (Web/static/interface/pageurl.js).

import { test } from "node:test";
import assert from "node:assert/strict";

import { PageURLError, fileNameOfURL, pageURL, parseFragment, resolveMediaURL, webSocketURL, withInvite } from "../../Web/static/interface/pageurl.js";
import { parseInvite } from "../../Web/static/wire/invite.js";

const INVITE = "coplay://127.0.0.1:7000/00112233445566778899aabbccddeeff?aead=aes-256-gcm#AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

test("a percent-encoded invite, media and name round-trip through the fragment", () => {
  const url = pageURL("http://127.0.0.1:7000/", { invite: INVITE, media: "http://127.0.0.1:8000/a b.mp4?x=1&y=2", name: "Zoë & co" });
  assert.ok(url.startsWith("http://127.0.0.1:7000/#invite=coplay%3A%2F%2F"));
  assert.ok(!url.slice(url.indexOf("#") + 1).includes("#"), "the invite's # is encoded");
  const parsed = parseFragment(new URL(url).hash);
  assert.deepEqual(parsed, { invite: INVITE, media: "http://127.0.0.1:8000/a b.mp4?x=1&y=2", name: "Zoë & co" });
  assert.equal(parseInvite(parsed.invite).aead, "aes-256-gcm");
});

test("a raw (unencoded) invite with its # and query is tolerated", () => {
  const parsed = parseFragment(`#invite=${INVITE}&name=bob`);
  assert.equal(parsed.invite, INVITE);
  assert.equal(parsed.name, "bob");
  assert.equal(parsed.media, null);
});

test("a raw media URL with a query keeps its & parts", () => {
  const parsed = parseFragment("invite=x&media=http://h/m.mp4?a=1&b=2&name=n");
  assert.equal(parsed.media, "http://h/m.mp4?a=1&b=2");
  assert.equal(parsed.name, "n");
});

test("an empty fragment, unknown parameters, empty values", () => {
  assert.deepEqual(parseFragment(""), { invite: null, media: null, name: null });
  assert.deepEqual(parseFragment("#"), { invite: null, media: null, name: null });
  assert.deepEqual(parseFragment("#foo=1&invite=&name=%20"), { invite: null, media: null, name: null });
  assert.equal(parseFragment("#name=" + "x".repeat(100)).name.length, 64);
});

test("bad percent-encoding is a PageURLError", () => {
  assert.throws(() => parseFragment("#invite=%E0%A4%A"), PageURLError);
});

test("the WebSocket goes to the page's own origin, wss for https", () => {
  assert.equal(webSocketURL({ protocol: "http:", host: "127.0.0.1:7000" }), "ws://127.0.0.1:7000/ws");
  assert.equal(webSocketURL({ protocol: "https:", host: "relay.example:7443" }), "wss://relay.example:7443/ws");
});

test("media URLs resolve against the page; file names for display", () => {
  assert.equal(resolveMediaURL("/m/clip.mp4", "http://h:1/"), "http://h:1/m/clip.mp4");
  assert.equal(fileNameOfURL("http://h:1/m/my%20clip.mp4?x=1"), "my clip.mp4");
  assert.throws(() => resolveMediaURL("http://[bad", "http://h/"), PageURLError);
});

test("the link of a viewer invite (host key, no seed) and of a controller invite, encoded or raw, give back the invite", () => {
  const controller = "coplay://127.0.0.1:7000/000102030405060708090a0b0c0d0e0f?aead=aes-256-gcm&host=6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw"
    + "#AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE.BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc";
  const viewer = controller.slice(0, controller.lastIndexOf("."));
  for (const invite of [viewer, controller]) {
    for (const hash of [`#invite=${encodeURIComponent(invite)}&name=bob`, `#invite=${invite}&name=bob`, pageURL("http://127.0.0.1:7000/", { invite, name: "bob" }).slice("http://127.0.0.1:7000/".length)]) {
      const fragment = parseFragment(hash);
      assert.equal(fragment.invite, invite, hash);
      assert.equal(fragment.name, "bob", hash);
      const parsed = parseInvite(fragment.invite);
      assert.equal(parsed.hostKey.length, 32);
      assert.equal(parsed.hostSeed !== undefined, invite === controller);
    }
  }
});

test("a move replaces the fragment's invite and keeps its media and name", () => {
  const successor = "coplay://127.0.0.1:7000/ffeeddccbbaa99887766554433221100?aead=aes-256-gcm&host=x#secret.seed";
  const hash = new URL(pageURL("http://127.0.0.1:7000/", { invite: INVITE, media: "clip.mp4?a=1&b=2", name: "Zoë" })).hash;
  const moved = withInvite(hash, successor);
  assert.ok(moved.startsWith("#invite="));
  assert.deepEqual(parseFragment(moved), { invite: successor, media: "clip.mp4?a=1&b=2", name: "Zoë" });
  assert.deepEqual(parseFragment(withInvite(`#invite=${encodeURIComponent(INVITE)}`, successor)), { invite: successor, media: null, name: null });
});
