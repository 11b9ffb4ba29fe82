// The interface's logic that needs no page (Web/static/interface/): the words and numbers the page
// writes (words.js: phases, times, signed milliseconds, queue edits and suspension reasons, delays,
// tones, member labels, why a session was refused or ended) and the page's state module (state.js:
// the parts main() assigns are live bindings every panel reads; whether this page's commands count).

import { test } from "node:test";
import assert from "node:assert/strict";

import { RelayErrorCode } from "../../Web/static/wire/frame.js";
import {
  PHASES, avatarColor, clockText, delayText, describeEnd, describeOpenFailure, describeRemoval, errorTone, isParticipantID, memberLabel, preciseTime,
  queueChangeText, reasonText, signedMs,
} from "../../Web/static/interface/words.js";

test("the status pill has words and a tone for every phase the page goes through", () => {
  const phases = ["starting", "connecting", "syncing", "media", "checking", "joining", "joined", "reconnecting", "mismatch", "error", "ended", "removed", "leftBehind"];
  assert.deepEqual(Object.keys(PHASES).sort(), [...phases].sort());
  for (const phase of phases) {
    const [text, tone] = PHASES[phase];
    assert.ok(text.length > 0);
    assert.ok(["busy", "good", "bad"].includes(tone), `${phase}: ${tone}`);
  }
  assert.equal(PHASES.joined[1], "good");
});

test("times as the transport bar and the log write them", () => {
  assert.equal(clockText(0), "0:00");
  assert.equal(clockText(59.99), "0:59");
  assert.equal(clockText(61), "1:01");
  assert.equal(clockText(3600 + 2 * 60 + 3.7), "1:02:03");
  assert.equal(clockText(-5), "0:00");
  assert.equal(clockText(Number.NaN), "0:00");
  assert.equal(clockText(Infinity), "0:00");
  assert.equal(preciseTime(83.46), "1:23.4");
  assert.equal(preciseTime(0), "0:00.0");
  assert.equal(preciseTime(12.999), "0:12.9");
});

test("signed milliseconds: fewer digits as they grow, a real minus, a dash for nothing", () => {
  assert.equal(signedMs(1.234), "+1.23 ms");
  assert.equal(signedMs(-1.234), "−1.23 ms");
  assert.equal(signedMs(0), "+0.00 ms");
  assert.equal(signedMs(-42.26), "−42.3 ms");
  assert.equal(signedMs(1234.5), "+1235 ms");
  assert.equal(signedMs(null), "—");
  assert.equal(signedMs(undefined), "—");
  assert.equal(signedMs(Number.NaN), "—");
});

test("queue edits and suspension reasons as people say them", () => {
  assert.equal(queueChangeText("repeat one"), "set repeat to one");
  assert.equal(queueChangeText("shuffle on"), "turned shuffle on");
  assert.equal(queueChangeText("shuffle off"), "turned shuffle off");
  assert.equal(queueChangeText("added 1 entry"), "added one entry");
  assert.equal(queueChangeText("removed 1"), "removed an entry");
  assert.equal(queueChangeText("removed 3"), "removed 3 entries");
  assert.equal(queueChangeText("added 2 entries"), "added 2 entries");
  assert.equal(queueChangeText(null), "changed the queue");
  assert.equal(reasonText("buffering"), "loading");
  assert.equal(reasonText("stallRecovery"), "stalled");
  assert.equal(reasonText("playingInterstitial"), "playing something else");
  assert.equal(reasonText("coordinatedPlaybackNotPossible"), "not following");
  assert.equal(reasonText("userActionRequired"), "waiting for a click");
  assert.equal(reasonText("custom:making tea"), "making tea");
  assert.equal(reasonText(undefined), "away");
});

test("the people list: delays (none above 2 s: held during a reconnect), avatar colours, error tones", () => {
  assert.equal(delayText(12.345), "delay 12.3 ms");
  assert.equal(delayText(2000), "delay 2000.0 ms");
  assert.equal(delayText(2000.1), "delay — (held during a reconnect)");
  const colour = avatarColor("00000000000000ab");
  assert.match(colour, /^hsl\(\d{1,3} 70% 68%\)$/);
  assert.equal(avatarColor("00000000000000ab"), colour, "the same member, the same colour");
  assert.notEqual(avatarColor("00000000000000ac"), colour);
  // The dead band (4 ms) plus 1 is good; within a 40 ms frame a warning; beyond it bad.
  assert.equal(errorTone(-5, 4, 40), "good");
  assert.equal(errorTone(5.1, 4, 40), "warn");
  assert.equal(errorTone(-40, 4, 40), "warn");
  assert.equal(errorTone(40.1, 4, 40), "bad");
  assert.equal(errorTone(8, 10, 5), "good", "a frame shorter than the band: the band counts");
  assert.equal(errorTone(11.5, 10, 5), "bad");
});

test("member labels: by name, this page's own marked, ids shortened", () => {
  assert.ok(isParticipantID("0123456789abcdef"));
  assert.ok(!isParticipantID("0123456789ABCDEF"));
  assert.ok(!isParticipantID("ana"));
  assert.ok(!isParticipantID(42));
  assert.equal(memberLabel("ana", "bo"), "ana");
  assert.equal(memberLabel("bo", "bo"), "bo (you)");
  assert.equal(memberLabel("0123456789abcdef", "bo"), "member cdef");
  assert.equal(memberLabel(null, "bo"), "Someone");
  assert.equal(memberLabel(undefined, null), "Someone");
});

test("why the relay refused or ended a session, in the banner's words", () => {
  assert.equal(describeOpenFailure({ code: RelayErrorCode.unauthorized }, "ws://h/ws")[0], "Wrong secret");
  assert.deepEqual(describeOpenFailure({ code: RelayErrorCode.sessionEnded }, "ws://h/ws"), ["Session over", "This session has ended."]);
  const other = Object.values(RelayErrorCode).find((code) => code !== RelayErrorCode.unauthorized && code !== RelayErrorCode.sessionEnded);
  assert.deepEqual(describeOpenFailure({ code: other, message: "too many" }, "ws://h/ws"), ["The relay refused to connect", "too many"]);
  const [title, text] = describeOpenFailure(new Error("closed"), "ws://h:1/ws");
  assert.equal(title, "Cannot reach the relay");
  assert.ok(text.includes("ws://h:1/ws"));
  assert.deepEqual(describeEnd("ended", true), ["Session over", "The host ended the session."]);
  assert.deepEqual(describeEnd("left", true), ["You left", "This page left the session."]);
  assert.match(describeEnd("connectionLost", false)[1], /before this page joined\. Reload/);
  assert.match(describeEnd("connectionLost: gone", true)[1], /could not be resumed\. gone$/);
  assert.deepEqual(describeEnd("refused: full", true), ["The relay refused this member", "full"]);
  assert.deepEqual(describeEnd("something else", true), ["Session over", "something else"]);
});

test("the page's state: the parts main() assigns are live bindings; commands count unless a gate says no", async () => {
  // state.js finds the page's first <video> when it loads: a stand-in document for Node.
  const element = { id: "video", duration: 12 };
  const saved = globalThis.document;
  globalThis.document = { getElementById: (id) => (id === "video" ? element : null) };
  try {
    const page = await import("../../Web/static/interface/state.js");
    assert.equal(page.video, element);
    assert.equal(page.shownVideo(), element, "the first element until a player shows another");
    assert.equal(page.shell, null);
    assert.ok(page.mayControl(), "everyone controls without a gate");
    const shown = { id: "deck" };
    page.assign({ player: { video: shown }, roles: { controls: false } });
    assert.equal(page.shownVideo(), shown);
    assert.ok(!page.mayControl(), "a viewer's gate");
    page.assign({ roles: { controls: true } });
    assert.ok(page.mayControl(), "granted");
    assert.equal(page.offsetMs(), 0, "no clock yet");
    page.assign({ syncedClock: { isSynchronized: true, correction: () => 0.0025 } });
    assert.equal(page.offsetMs(), 2.5);
    assert.throws(() => page.assign({ nothing: 1 }), /no part named nothing/);
    page.assign({ player: null, roles: null, syncedClock: null });
    assert.equal(page.shownVideo(), element);
  } finally {
    globalThis.document = saved;
  }
});

test("what the page says about a removal: the removed page, a move, a page left behind", () => {
  const [notice, title, text] = describeRemoval({ removed: { by: "host" } });
  assert.equal(notice, "you were removed from this session by host");
  assert.equal(title, "You were removed");
  assert.match(text, /^You were removed from this session by host\./);
  assert.equal(describeRemoval({ removed: { by: null } })[0], "you were removed from this session by a host");
  assert.deepEqual(describeRemoval({ moved: { invite: "coplay://…", removed: "bob", by: "host" } }), ["bob was removed; moved to a new session", null, null]);
  const [behind, behindTitle, behindText] = describeRemoval({ leftBehind: { removed: "bob#3f9a2c", by: "host" } });
  assert.equal(behind, "bob#3f9a2c was removed; this page was left behind");
  assert.equal(behindTitle, "Left behind");
  assert.match(behindText, /not given its invite/);
  // Why, by removal.js's reason; every one says what to do, none promises the page plays on.
  const because = (reason) => describeRemoval({ leftBehind: { removed: "bob", by: "host", reason } })[2];
  assert.match(because("noSealingKey"), /no X25519/);
  assert.match(because("noInvite"), /not given its invite .*joined after the removal was prepared/);
  assert.match(because("unopened"), /sealed to this page did not open/);
  for (const reason of ["noSealingKey", "noInvite", "unopened", undefined]) {
    assert.match(because(reason), /^A host removed bob and moved everyone else to a new session, but /);
    assert.match(because(reason), /Playback stopped here and this page no longer follows the group; ask a host for a new link to watch again\.$/);
  }
  assert.equal(PHASES.leftBehind[0], "Left behind");
});
