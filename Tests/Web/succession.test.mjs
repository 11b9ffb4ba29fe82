// Moving to a successor session (docs/protocol.md, "Moving"): the page's player is handed from the old
// session's coordinator to a new one over the successor's channel (shell.js handOver / adopt), and the
// successor's retained `restate` of the same timeline changes nothing the player follows: no seek, and
// the schedule keeps the motion it has (schedule.js), so the <video> is not restarted.

import { test } from "node:test";
import assert from "node:assert/strict";

import { CoordinatorShell } from "../../Web/static/sync/shell.js";
import { CommandSchedule, msToNs } from "../../Web/static/player/schedule.js";
import { ManualTime } from "./fakes.mjs";

function loopback(time, participant) {
  const channel = {
    localParticipant: participant, sequence: 0n, sent: [], onevent: () => {},
    async send(message, retainKey) {
      channel.sent.push({ message, retainKey });
      const sequence = ++channel.sequence;
      time.setTimeout(() => channel.onevent({ type: "message", message, sender: participant, sequence }), 2);
      return sequence;
    },
  };
  return channel;
}

/** A player that keeps the coordinator's commands in a real CommandSchedule, as player.js does. */
function schedulePlayer() {
  const player = { schedule: new CommandSchedule(), commands: [], inserted: [] };
  player.handle = (command) => {
    player.commands.push(command);
    player.inserted.push(player.schedule.insert(command));
  };
  return player;
}

function shellOn(time, participant, player) {
  const channel = loopback(time, participant);
  const shell = new CoordinatorShell({
    channel, reference: { now: () => msToNs(time.now) }, player, localItem: "clip", name: "page", timers: time,
    backlog: [{ type: "joined", member: participant }], realtime: () => time.now / 1000,
  });
  return { channel, shell };
}

async function playingThenRestated({ adopt }) {
  const time = new ManualTime();
  await time.advance(1000);
  const player = schedulePlayer();
  const old = shellOn(time, "000000000000000a", player);
  old.shell.start();
  await old.shell.play();
  await time.advance(2000);
  const motion = player.schedule.motionAt(time.now);
  assert.equal(motion?.rate, 1, "the old session plays");
  const state = old.channel.sent.findLast((s) => s.message.state !== undefined).message.state;

  // The remover restates the group's state in the successor (retained): the same item, anchor and rate.
  const handOver = old.shell.handOver();
  old.shell.stop();
  const next = shellOn(time, "000000000000000b", player);
  if (adopt) next.shell.adopt(handOver);
  const before = player.commands.length;
  const restate = { state: { ...state, command: "restate", sentAt: msToNs(time.now) } };
  next.shell.backlog.push({ type: "message", message: restate, sender: "000000000000000c", sequence: 5n });
  next.shell.start();
  await time.advance(500);
  return { player, motion, after: player.commands.slice(before), shell: next.shell, time };
}

test("the successor's restate of the same timeline leaves the player's motion as it is", async () => {
  const { player, motion, after, shell, time } = await playingThenRestated({ adopt: true });
  assert.ok(after.length > 0, "the new coordinator tells the player the state (under its new revision)");
  assert.ok(!after.some((c) => c.kind === "seek"), `no seek: ${after.map((c) => c.kind)}`);
  assert.ok(player.inserted.slice(-after.length).every((m) => m === null), "nothing new in the schedule");
  assert.equal(player.schedule.motionAt(time.now), motion, "the same motion object: the player does not restart");
  assert.equal(shell.state.rate, 1);
  assert.equal(shell.state.item, "clip");
});

test("without the hand-over the new coordinator would seek the player (the control)", async () => {
  const { after } = await playingThenRestated({ adopt: false });
  assert.ok(after.some((c) => c.kind === "seek"), `a seek: ${after.map((c) => c.kind)}`);
});

test("a later command in the successor changes the motion as any command does", async () => {
  const { player, shell, time, motion } = await playingThenRestated({ adopt: true });
  await shell.pause();
  await time.advance(500);
  const now = player.schedule.motionAt(time.now);
  assert.notEqual(now, motion);
  assert.equal(now.rate, 0);
});
