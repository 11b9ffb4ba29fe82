// The shared notice vectors (Tests/Vectors/notices/notices.json, also run by Swift's
// PlaybackNoticesTests) against the page's notices.js, and its MembershipAnnouncements.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { MembershipAnnouncements, NOTICE_LEVELS, Notices, noticeNumber, noticePosition } from "../../Web/static/sync/notices.js";

const file = join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "notices", "notices.json");
const vector = JSON.parse(readFileSync(file, "utf8"));

test("the vectors have cases for every level", () => {
  assert.ok(vector.cases.length >= 8);
  assert.deepEqual([...new Set(vector.cases.map((c) => c.level))].sort(), [...NOTICE_LEVELS].sort());
});

for (const { name, level, local, titles, steps } of vector.cases) {
  test(`notices: ${name}`, () => {
    const notices = new Notices({ level, local, titles });
    steps.forEach(({ event, text }, index) => {
      assert.equal(notices.notice(event), text, `step ${index} (${event.type})`);
    });
  });
}

test("positions and rates read as Swift writes them", () => {
  for (const [seconds, text] of [[0, "0:00"], [9.99, "0:09"], [754.6, "12:34"], [3599.9, "59:59"], [3600, "1:00:00"], [3723.5, "1:02:03"], [36000, "10:00:00"], [-3, "0:00"], [NaN, "0:00"]]) {
    assert.equal(noticePosition(seconds), text, `${seconds}`);
  }
  for (const [rate, text] of [[1.25, "1.25"], [2, "2"], [0.5, "0.5"], [0.0625, "0.0625"], [1 / 3, "0.3333"], [16, "16"], [1.1, "1.1"]]) {
    assert.equal(noticeNumber(rate), text, `${rate}`);
  }
});

const joined = (member) => ({ type: "joined", originator: member, referenceTime: 10 });
const left = (member) => ({ type: "left", originator: member, referenceTime: 20 });
const S = 1_000_000_000n;

test("a member's joined waits for its presence report and is told with its name; its left follows", () => {
  const gate = new MembershipAnnouncements();
  const known = new Map();
  const presence = (member) => known.get(member) ?? { reported: false, oneShot: false, name: null };
  assert.deepEqual(gate.pass(joined("d4"), "me", 10n * S, presence), []);
  assert.equal(gate.nextDeadline, 13n * S);
  assert.deepEqual(gate.release(10n * S + 10n, presence), []);
  known.set("d4", { reported: true, oneShot: false, name: "dave" });
  const told = gate.release(10n * S + 20n, presence);
  assert.deepEqual(told.map((e) => [e.type, e.originatorName, e.referenceTime]), [["joined", "dave", 10]]);
  assert.equal(gate.nextDeadline, null);
  assert.deepEqual(gate.pass(left("d4"), "me", 15n * S, presence).map((e) => e.type), ["left"]);
});

test("a one-shot member is announced neither joining nor leaving; its command passes", () => {
  const gate = new MembershipAnnouncements();
  const known = new Map();
  const presence = (member) => known.get(member) ?? { reported: false, oneShot: false, name: null };
  assert.deepEqual(gate.pass(joined("c1"), "me", 10n * S, presence), []);
  known.set("c1", { reported: true, oneShot: true, name: "alice" });
  assert.deepEqual(gate.release(10n * S + 5n, presence), []);
  const pause = { type: "pause", originator: "c1", originatorName: "alice", itemTime: 754, rate: 0 };
  assert.deepEqual(gate.pass(pause, "me", 10n * S + 6n, presence), [pause]);
  assert.deepEqual(gate.pass(left("c1"), "me", 10n * S + 9n, presence), []);
  assert.deepEqual(gate.release(20n * S, presence), []);
});

test("a member silent for the name wait is told by id; one that came and went silent is not told at all", () => {
  const gate = new MembershipAnnouncements(3n * S);
  const nobody = () => ({ reported: false, oneShot: false, name: null });
  assert.deepEqual(gate.pass(joined("s1"), "me", 10n * S, nobody), []);
  assert.deepEqual(gate.release(13n * S - 1n, nobody), []);
  assert.deepEqual(gate.release(13n * S, nobody).map((e) => e.originator), ["s1"]);
  assert.deepEqual(gate.pass(joined("s2"), "me", 10n * S, nobody), []);
  assert.deepEqual(gate.pass(left("s2"), "me", 11n * S, nobody), []);
  assert.deepEqual(gate.release(19n * S, nobody), []);
  assert.equal(gate.pass(joined("me"), "me", 10n * S, nobody).length, 1);
});
