// The coordinator shell (Web/static/sync/shell.js) over a loopback channel: proposals become commands to
// the player at the lead, events are stamped, readiness suspends the group.

import { test } from "node:test";
import assert from "node:assert/strict";

import { CoordinatorShell, NotSynchronizedError, withoutOutageDelay } from "../../Web/static/sync/shell.js";
import { ManualTime } from "./fakes.mjs";
import { msToNs, nsToMs } from "../../Web/static/player/schedule.js";
import { GroupSessionCoordinationChannel } from "../../Web/static/sync/channel.js";
import { utf8 } from "../../Web/static/wire/bytes.js";

/** A channel that delivers every message back to its sender (as the relay's ack does), in order. */
function loopback(time, participant = "000000000000000a") {
  const channel = {
    localParticipant: participant,
    sequence: 0n,
    sent: [],
    onevent: () => {},
    async send(message, retainKey) {
      channel.sent.push({ message, retainKey });
      channel.sequence += 1n;
      const sequence = channel.sequence;
      time.setTimeout(() => channel.onevent({ type: "message", message, sender: participant, sequence }), 2);
      return sequence;
    },
  };
  return channel;
}

function setup({ synced = true, items = [] } = {}) {
  const time = new ManualTime();
  const channel = loopback(time);
  const commands = [];
  const events = [];
  const reference = { now: () => (synced ? msToNs(time.now) : null) };
  const shell = new CoordinatorShell({
    channel, reference, player: { handle: (c) => commands.push(c) }, localItem: "clip", name: "Ann", timers: time, items,
    backlog: [{ type: "joined", member: "000000000000000a" }],
    realtime: () => time.now / 1000,
  });
  shell.onevent = (e) => events.push(e);
  shell.start();
  return { time, channel, shell, commands, events };
}

test("play, pause and seek proposals come back as commands at the lead, with this member as originator", async () => {
  const { time, shell, commands, events } = setup();
  await time.advance(10);
  const start = time.now;
  await shell.play();
  await time.advance(5);
  const play = commands.find((c) => c.kind === "play");
  assert.ok(play, "a play command");
  // The originator is this member's id; its name travels beside it.
  assert.equal(play.originator, shell.participant);
  assert.equal(play.originatorName, "Ann");
  assert.equal(play.expectedItemIdentifier, "clip");
  assert.equal(play.rate, 1);
  // The lead is at least 120 ms (GroupPlayback's default for members that present frames).
  assert.ok(nsToMs(play.referenceTime) - start >= 119.99, `lead ${nsToMs(play.referenceTime) - start}`);
  assert.ok(events.some((e) => e.type === "play" && e.originator === shell.participant && e.originatorName === "Ann" && typeof e.realtime === "number"));

  await time.advance(1000);
  await shell.pause();
  await time.advance(5);
  const pause = commands.findLast((c) => c.kind === "pause");
  assert.ok(pause.itemTime > 0.8 && pause.itemTime < 1.2, `paused at ${pause.itemTime}`);

  await shell.seek(10);
  await time.advance(5);
  const seek = commands.findLast((c) => c.kind === "seek");
  assert.equal(seek.itemTime, 10);
  assert.equal(commands.at(-1).kind, "pause");
  assert.equal(commands.at(-1).itemTime, 10);

  await shell.rate(1.5);
  await time.advance(5);
  assert.equal(commands.at(-1).kind, "play");
  assert.equal(commands.at(-1).rate, 1.5);
});

test("presence is sent at once and then on the tick timer", async () => {
  const { time, channel } = setup();
  await time.advance(3000);
  const presences = channel.sent.filter((s) => s.message.presence);
  assert.ok(presences.length >= 5, `${presences.length} presence reports`);
  assert.equal(presences[0].message.presence.name, "Ann");
  assert.equal(presences[0].message.presence.item, "clip");
});

test("nothing can be proposed before the clock is synchronized", async () => {
  const { shell } = setup({ synced: false });
  await assert.rejects(shell.play(), NotSynchronizedError);
});

test("a player that stays seeking makes the group wait (buffer command), and ready resumes it", async () => {
  const { time, shell, commands, events, channel } = setup();
  await shell.play();
  await time.advance(500);
  shell.reportReadiness("seeking");
  await time.advance(150);
  const begin = channel.sent.find((s) => s.message.suspension?.phase === "begin");
  assert.equal(begin.message.suspension.reason, "buffering");
  await time.advance(10);
  assert.ok(commands.some((c) => c.kind === "buffer"), "the group waits");
  assert.ok(events.some((e) => e.type === "suspensionBegan"));
  const members = shell.members();
  assert.equal(members[0].local, true);
  assert.equal(members[0].suspended.length, 1);
  shell.reportReadiness("ready");
  await time.advance(10);
  assert.ok(channel.sent.some((s) => s.message.suspension?.phase === "end"));
  assert.equal(commands.at(-1).kind, "play");
});

test("play is refused while the group is on an item nobody has; once a member has it, play goes out", async () => {
  const { time, channel, shell } = setup();
  await time.advance(10);
  const bob = "000000000000000b";
  const at = msToNs(time.now);
  channel.onevent({ type: "joined", member: bob });
  const presence = (items) => ({ presence: { sentAt: at, observedDelay: 0n, preroll: 0n, item: "clip", name: "Bob", items } });
  channel.onevent({ type: "message", message: presence([{ item: "clip", duration: 60 }]), sender: bob, sequence: 100n });
  const state = {
    item: "v2:1:nobody", rate: 0, anchorItemTime: 0, anchorReferenceTime: at + msToNs(50), originator: bob, revision: 0n, intendedRate: 1, duration: null,
  };
  channel.onevent({ type: "message", message: { state: { state, command: "item", sentAt: at } }, sender: bob, sequence: 101n });
  await time.advance(100);
  const sentBefore = channel.sent.filter((s) => s.message.state).length;
  await assert.rejects(shell.play(), (error) => error.code === "itemUnavailable" && /no member has it/.test(error.message));
  assert.equal(channel.sent.filter((s) => s.message.state).length, sentBefore, "nothing was proposed");
  // Bob reports the item: the group can play it.
  channel.onevent({ type: "message", message: presence([{ item: "v2:1:nobody", duration: 30 }]), sender: bob, sequence: 102n });
  await shell.play();
  assert.equal(channel.sent.filter((s) => s.message.state).length, sentBefore + 1);
  assert.equal(channel.sent.at(-1).message.state.state.duration, 30, "the proposal carries Bob's duration");
});

test("presence reports held by a lost connection are no delay samples (the delay the page reports stays the path's)", async () => {
  const other = "000000000000000b";
  const presence = (sentAtMs) => ({ type: "message", sender: other, sequence: 1n, message: { presence: { sentAt: msToNs(sentAtMs), observedDelay: 0n, preroll: 0n, item: "clip", name: "Bob" } } });
  const latestReported = (channel) => Number(channel.sent.filter((s) => s.message.presence).at(-1).message.presence.observedDelay) / 1e6;

  // Without the page's outage, the core itself leaves out a report far above the window's
  // median (its own reports came back within a few ms): CoordinatorCore.observedDelay.
  const plain = setup();
  await plain.time.advance(100);
  plain.channel.onevent(presence(plain.time.now - 5423.3));
  assert.ok(Number(plain.shell.core.observedDelay) / 1e6 < 250);

  const { time, channel, shell } = setup();
  await time.advance(100);
  channel.onevent(presence(time.now - 3)); // a path of 3 ms
  shell.connectionInterrupted(true);
  const lostAt = time.now;
  await time.advance(5000);
  channel.onevent(presence(lostAt - 1)); // sent just before the outage, delivered during the resume
  shell.connectionInterrupted(false);
  const backAt = time.now;
  channel.onevent(presence(lostAt + 100)); // replayed after the resume, sent during the outage
  await time.advance(2200);
  channel.onevent(presence(backAt + 1000)); // held by a member that resumed after this page did
  assert.ok(Math.abs(Number(shell.core.observedDelay) / 1e6 - 3) < 1e-6, `${Number(shell.core.observedDelay) / 1e6} ms`);
  await time.advance(2000);
  channel.onevent(presence(time.now - 4)); // everyone back: a path of 4 ms counts again
  assert.ok(Math.abs(Number(shell.core.observedDelay) / 1e6 - 4) < 1e-6, `${Number(shell.core.observedDelay) / 1e6} ms`);
  assert.equal(shell.core.reports.get(other).name, "Bob", "the report itself is kept");
  await time.advance(1500); // the next presence reports carry the delay
  assert.ok(latestReported(channel) < 10, `reported ${latestReported(channel)} ms`);
});

test("withoutOutageDelay: only presence reports sent before the connection came back are restamped", () => {
  const report = { type: "message", sender: "b", sequence: 1n, message: { presence: { sentAt: 100n, name: "Bob" } } };
  assert.equal(withoutOutageDelay(report, null, 500n), report, "no outage");
  assert.equal(withoutOutageDelay(report, { since: 50n, until: 90n }, 500n, 0n), report, "sent after it");
  assert.equal(withoutOutageDelay(report, { since: 50n, until: 90n }, 500n, 5n), report, "and after the others' resumes");
  assert.equal(withoutOutageDelay(report, { since: 50n, until: 90n }, 500n, 20n).message.presence.sentAt, 500n, "while the others resume");
  assert.equal(withoutOutageDelay(report, { since: 50n, until: 200n }, 500n).message.presence.sentAt, 500n);
  assert.equal(withoutOutageDelay(report, { since: 50n, until: null }, 500n).message.presence.sentAt, 500n, "while resuming");
  assert.equal(withoutOutageDelay(report, { since: 50n, until: 200n }, 500n).message.presence.name, "Bob");
  const state = { type: "message", sender: "b", sequence: 2n, message: { state: { sentAt: 100n } } };
  assert.equal(withoutOutageDelay(state, { since: 50n, until: null }, 500n), state, "other messages untouched");
});

test("hasEnded: once the group's timeline reaches the item's end, not before, and not after a seek back", async () => {
  const { time, shell, commands } = setup({ items: [{ item: "clip", duration: 2 }] });
  await time.advance(10);
  await shell.seek(1.5);
  await time.advance(5);
  await shell.play();
  await time.advance(200);
  assert.equal(shell.hasEnded, false);
  await time.advance(700);
  assert.equal(shell.hasEnded, true, `at ${shell.currentItemTime}`);
  assert.equal(shell.currentItemTime, 2);
  assert.deepEqual([commands.at(-1).kind, commands.at(-1).itemTime], ["pause", 2], "the player holds the end");
  await shell.seek(0.5);
  await time.advance(200);
  assert.equal(shell.hasEnded, false);
});

test("a message the page cannot read (a newer coplay's) is reported once per sender, kind and version; the group goes on", async () => {
  // The page's receive path: session body -> channel.js (messages.js) -> shell -> core -> event.
  const time = new ManualTime();
  const session = { localName: "000000000000000a", onmessage: null, onpresence: null, sendMessage: async () => 1n };
  const channel = new GroupSessionCoordinationChannel(session);
  const events = [];
  const commands = [];
  const shell = new CoordinatorShell({
    channel, reference: { now: () => msToNs(time.now) }, player: { handle: (c) => commands.push(c) }, localItem: "clip", timers: time,
    backlog: [{ type: "joined", member: "000000000000000a" }], realtime: () => time.now / 1000,
  });
  shell.onevent = (e) => events.push(e);
  shell.start();
  await time.advance(10);
  const newer = 0xbn;
  const body = (json) => utf8(json);
  session.onmessage("CoordinationMessage", body('{"kind":"state","v":2,"sentAt":1,"anchor":{}}'), { sender: newer, sequence: 1n });
  session.onmessage("CoordinationMessage", body('{"kind":"state","v":2,"sentAt":2}'), { sender: newer, sequence: 2n });
  session.onmessage("CoordinationMessage", body('{"kind":"queue","v":1}'), { sender: newer, sequence: 3n });
  const unsupported = events.filter((e) => e.type === "unsupportedMessage");
  assert.deepEqual(unsupported.map((e) => [e.originator, e.detail]), [
    ["000000000000000b", 'coordination message "state" v2, newer than this coplay reads (v1): update coplay'],
    ["000000000000000b", 'coordination message "queue" v1, a kind this coplay does not know: update coplay'],
  ]);
  // The same member's readable state still applies.
  const at = msToNs(time.now + 200);
  session.onmessage("CoordinationMessage", body(`{"kind":"state","v":1,"sentAt":${msToNs(time.now)},"command":"play","item":"clip","rate":1,"intendedRate":1,"anchorItemTime":0,"anchorReferenceTime":${at},"originator":"000000000000000b"}`), { sender: newer, sequence: 4n });
  assert.ok(events.some((e) => e.type === "play" && e.revision === 4n));
  assert.ok(commands.some((c) => c.kind === "play" && c.referenceTime === at));
  assert.equal(channel.dropped, 0);
});
