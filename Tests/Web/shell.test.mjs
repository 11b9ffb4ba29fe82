// The coordinator shell (Web/static/shell.js) over a loopback channel: proposals become commands to
// the player at the lead, events are stamped, readiness suspends the group.

import { test } from "node:test";
import assert from "node:assert/strict";

import { CoordinatorShell, NotSynchronizedError } from "../../Web/static/shell.js";
import { ManualTime } from "./fakes.mjs";
import { msToNs, nsToMs } from "../../Web/static/schedule.js";

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

function setup({ synced = true } = {}) {
  const time = new ManualTime();
  const channel = loopback(time);
  const commands = [];
  const events = [];
  const reference = { now: () => (synced ? msToNs(time.now) : null) };
  const shell = new CoordinatorShell({
    channel, reference, player: { handle: (c) => commands.push(c) }, localItem: "clip", name: "Ann", timers: time,
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
