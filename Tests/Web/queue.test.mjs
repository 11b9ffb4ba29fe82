// The page's play queue (Web/static/sync/queue.js), mirroring Tests/PlaybackCoordinatorTests/PlayQueueTests.swift,
// and a few of QueueReplica's paths the shared vectors reach only by chance (the retained copy, the
// answer timeout, a joiner whose answerer left).

import { test } from "node:test";
import assert from "node:assert/strict";

import { PlayQueue, QueueReplica, assembleSnapshot, retainedQueue, snapshotParts } from "../../Web/static/sync/queue.js";
import { encodeMessageBody, encodePlayQueue } from "../../Web/static/sync/messages.js";

const entry = (id, item = "clip") => ({ id, item, title: id, duration: 3, frameRate: 25, addedBy: "m1" });
const ids = (queue) => queue.playOrder.map((e) => e.id);
const copy = (queue) => new PlayQueue({ ...queue });
const same = (a, b) => assert.deepEqual(encodePlayQueue(a), encodePlayQueue(b));

test("add, remove and move by entry id", () => {
  const queue = new PlayQueue();
  queue.apply({ op: "add", entries: [entry("a"), entry("b"), entry("c")], at: "end" });
  queue.apply({ op: "add", entries: [entry("x")], at: { after: "a" } });
  assert.deepEqual(ids(queue), ["a", "x", "b", "c"]);
  queue.apply({ op: "add", entries: [entry("s")], at: "start" });
  assert.deepEqual(ids(queue), ["s", "a", "x", "b", "c"]);
  // An entry id already queued is not added twice; the same item under another id is.
  queue.apply({ op: "add", entries: [entry("a"), entry("a2", "clip")], at: "end" });
  assert.deepEqual(ids(queue), ["s", "a", "x", "b", "c", "a2"]);
  queue.apply({ op: "move", id: "c", to: "start" });
  assert.deepEqual(ids(queue), ["c", "s", "a", "x", "b", "a2"]);
  queue.apply({ op: "move", id: "c", to: { after: "b" } });
  assert.deepEqual(ids(queue), ["s", "a", "x", "b", "c", "a2"]);
  queue.apply({ op: "remove", ids: ["x", "nothing"] });
  assert.deepEqual(ids(queue), ["s", "a", "b", "c", "a2"]);
});

test("an edit naming a removed entry changes nothing for it (concurrent remove, then move)", () => {
  const queue = new PlayQueue();
  queue.apply({ op: "add", entries: [entry("a"), entry("b"), entry("c")], at: "end" });
  queue.apply({ op: "remove", ids: ["b"] });
  const before = copy(queue);
  queue.apply({ op: "move", id: "b", to: "start" });
  same(queue, before);
  // Moving after a removed anchor changes nothing either; adding after it appends.
  queue.apply({ op: "move", id: "a", to: { after: "b" } });
  same(queue, before);
  queue.apply({ op: "add", entries: [entry("d")], at: { after: "b" } });
  assert.deepEqual(ids(queue), ["a", "c", "d"]);
  queue.apply({ op: "move", id: "a", to: { after: "a" } });
  assert.deepEqual(ids(queue), ["a", "c", "d"]);
});

test("repeat off, one, all: what plays after an entry, next and previous", () => {
  const queue = new PlayQueue();
  queue.apply({ op: "add", entries: [entry("a"), entry("b"), entry("c")], at: "end" });
  assert.equal(queue.entryAfterEnd("a")?.id, "b");
  assert.equal(queue.entryAfterEnd("c"), null);
  assert.equal(queue.entryForNext("c"), null);
  assert.equal(queue.entryForPrevious("a"), null);
  assert.equal(queue.entryForNext(null)?.id, "a");
  queue.apply({ op: "repeat", mode: "one" });
  assert.equal(queue.entryAfterEnd("b")?.id, "b");
  assert.equal(queue.entryForNext("b")?.id, "c");
  queue.apply({ op: "repeat", mode: "all" });
  assert.equal(queue.entryAfterEnd("c")?.id, "a");
  assert.equal(queue.entryForNext("c")?.id, "a");
  assert.equal(queue.entryForPrevious("a")?.id, "c");
  assert.equal(queue.entryAtPosition(2)?.id, "b");
  assert.equal(queue.entryAtPosition(4), null);
  assert.equal(queue.position("c"), 3);
});

test("removing the playing entry: the queue continues with the entry that followed it", () => {
  const queue = new PlayQueue();
  queue.apply({ op: "add", entries: [entry("a"), entry("b"), entry("c")], at: "end" });
  queue.apply({ op: "remove", ids: ["b"] }, "b");
  assert.equal(queue.entryAfterEnd("b")?.id, "c");
  assert.deepEqual(queue.removedPlaying, { id: "b", successor: "c" });
  queue.apply({ op: "remove", ids: ["c"] }, "b");
  assert.equal(queue.entryAfterEnd("b"), null);
  queue.apply({ op: "repeat", mode: "all" });
  assert.equal(queue.entryAfterEnd("b")?.id, "a");
  // Clearing while an entry plays keeps that it played, with nothing after it.
  queue.apply({ op: "clear" }, "a");
  assert.deepEqual(queue.removedPlaying, { id: "a", successor: null });
  assert.equal(queue.isInitial, false);
});

/** FNV-1a 32 written out with BigInt, independently of queue.js's Math.imul. */
function fnv1a(text) {
  let hash = 0x811c9dc5n;
  for (const byte of new TextEncoder().encode(text)) hash = ((hash ^ BigInt(byte)) * 16_777_619n) & 0xffffffffn;
  return Number(hash);
}

test("shuffle: one order from the seed, the same for every member, entries added later included", () => {
  const entries = Array.from({ length: 20 }, (_, index) => entry(`m1.${index}`));
  const one = new PlayQueue();
  one.apply({ op: "add", entries, at: "end" });
  one.apply({ op: "shuffle", seed: 42 });
  const other = new PlayQueue();
  other.apply({ op: "add", entries: [...entries].reverse(), at: "end" });
  other.apply({ op: "shuffle", seed: 42 });
  // The order depends on the seed and the ids, not on the list order.
  assert.deepEqual(ids(one), ids(other));
  assert.notDeepEqual(ids(one), entries.map((e) => e.id));
  assert.deepEqual([...ids(one)].sort(), entries.map((e) => e.id).sort());
  const reseeded = copy(one);
  reseeded.apply({ op: "shuffle", seed: 43 });
  assert.notDeepEqual(ids(reseeded), ids(one));
  one.apply({ op: "shuffle", seed: null });
  assert.deepEqual(ids(one), entries.map((e) => e.id));
});

test("the shuffle key is FNV-1a 32 over the UTF-8 of \"<seed>:<id>\", as Swift computes it", () => {
  // Published FNV-1a 32 values, then the key against the BigInt reference.
  assert.equal(fnv1a(""), 0x811c9dc5);
  assert.equal(fnv1a("a"), 0xe40c292c);
  assert.equal(fnv1a("foobar"), 0xbf9cf968);
  assert.equal(PlayQueue.shuffleKey(42, "m1.0"), fnv1a("42:m1.0"));
  assert.equal(PlayQueue.shuffleKey(4_294_967_295, "é.ü.1790000000123456789.7"), fnv1a("4294967295:é.ü.1790000000123456789.7"));
  for (let seed = 0; seed < 200; seed += 1) assert.equal(PlayQueue.shuffleKey(seed * 7919, `m${seed}.e${seed}`), fnv1a(`${seed * 7919}:m${seed}.e${seed}`));
  // Equal keys keep list order; the order sorts by key.
  const queue = new PlayQueue({ entries: ["x", "y", "z", "w"].map((id) => entry(id)), shuffleSeed: 7 });
  const keys = queue.playOrder.map((e) => PlayQueue.shuffleKey(7, e.id));
  assert.deepEqual(keys, [...keys].sort((a, b) => a - b));
});

test("a 1,000-entry queue travels in parts inside the message size limit", () => {
  const queue = new PlayQueue();
  const entries = Array.from({ length: 1_000 }, (_, index) => ({
    id: `3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c.1790000000123456789.${index}`,
    item: `v2:1234567890:${"ab".repeat(32)}`, title: `Episode ${index} - A Rather Long Title.mkv`,
    duration: 1_234.5, frameRate: 23.976, addedBy: "3f2a9c1e-5b7d-4e8a-9c0b-1d2e3f4a5b6c",
  }));
  queue.apply({ op: "add", entries, at: "end" });
  const parts = snapshotParts(queue, { snapshot: "s", request: 7n, through: 7n, sentAt: 1n });
  assert.equal(parts.length, 5);
  for (const part of parts) {
    const size = encodeMessageBody({ queueSnapshot: part }).length;
    assert.ok(size < 128 * 1024, `part ${part.part} is ${size} bytes`);
  }
  same(assembleSnapshot([...parts].reverse()), queue);
  assert.equal(assembleSnapshot(parts.slice(0, -1)), null);
  // An empty queue is one part.
  assert.equal(snapshotParts(new PlayQueue(), { snapshot: "e", request: null, through: 1n, sentAt: 1n }).length, 1);
});

// MARK: QueueReplica

const ms = (n) => BigInt(n) * 1_000_000n;
const sent = (actions) => actions.map((action) => action.message);

test("a member alone starts from the retained copy, applying only the edits after it", () => {
  const replica = new QueueReplica("b");
  const retained = new PlayQueue({ entries: [entry("a")], repeatMode: "all" });
  // The relay's replay: the retained copy (through 5), then an edit ordered after it, and one before.
  replica.receiveEdit({ op: "add", entries: [entry("old")], at: "end" }, "a", 4n, null, ms(1));
  for (const part of snapshotParts(retained, { snapshot: "a.1", request: null, through: 5n, sentAt: 0n })) replica.receivePart(part, "a", 6n);
  replica.receiveEdit({ op: "add", entries: [entry("b")], at: "end" }, "a", 7n, null, ms(2));
  assert.equal(replica.isComplete, false);
  assert.deepEqual(replica.joinedSelf(new Set(), ms(3)), []);
  assert.equal(replica.isComplete, true);
  assert.deepEqual(ids(replica.queue), ["a", "b"]);
  assert.equal(replica.queue.repeatMode, "all");
});

test("retainedQueue: the latest whole retained copy among a page's events before joining", () => {
  const older = new PlayQueue({ entries: [entry("a")] });
  const newer = new PlayQueue({ entries: [entry("a"), entry("b", "later")] });
  const events = (queue, snapshot, through, request = null) =>
    snapshotParts(queue, { snapshot, request, through, sentAt: 0n }).map((part) => ({ type: "message", message: { queueSnapshot: part }, sender: "a" }));
  assert.equal(retainedQueue([]), null);
  assert.equal(retainedQueue([{ type: "joined", member: "a" }]), null);
  // Newest by place in the order, whatever order they are replayed in; answers to requests are not retained copies.
  const replay = [...events(newer, "a.2", 9n), ...events(older, "a.1", 5n), ...events(new PlayQueue(), "c.1", 12n, 11n)];
  assert.deepEqual(ids(retainedQueue(replay)), ["a", "b"]);
  assert.equal(retainedQueue(replay).entries[1].item, "later");
  // A copy missing a part is not whole.
  const big = new PlayQueue({ entries: Array.from({ length: 1200 }, (_, i) => entry(`e${i}`)) });
  const parts = events(big, "a.3", 20n);
  assert.ok(parts.length > 1, "a 1,200-entry copy comes in several parts");
  assert.deepEqual(ids(retainedQueue([...events(older, "a.1", 5n), ...parts.slice(1)])), ["a"]);
  assert.equal(retainedQueue([...events(older, "a.1", 5n), ...parts]).entries.length, 1200);
});

test("a joiner asks, buffers edits, and takes the answer with the state at its request", () => {
  const joiner = new QueueReplica("b");
  const [request] = sent(joiner.joinedSelf(new Set(["a"]), ms(0)));
  assert.deepEqual(request, { queueRequest: { sentAt: ms(0) } });
  // The wait for an answer counts from the request's place in the order, not from sending (a
  // relay outage holds the request).
  assert.equal(joiner.nextDeadline, null);
  joiner.receiveRequest("b", 10n, new Set(["a", "b"]), null, ms(10));
  assert.equal(joiner.nextDeadline, ms(10) + QueueReplica.ANSWER_TIMEOUT);
  joiner.receiveEdit({ op: "add", entries: [entry("later")], at: "end" }, "a", 11n, null, ms(11));

  // The answering member, first by id: answers at once (rank 0), with the queue as of sequence 10.
  const member = new QueueReplica("a");
  member.joinedSelf(new Set(), ms(0));
  member.receiveEdit({ op: "add", entries: [entry("first")], at: "end" }, "a", 3n, null, ms(3));
  const state = { item: "clip", rate: 1, anchorItemTime: 0, anchorReferenceTime: ms(5), originator: "a", revision: 9n, intendedRate: 1, duration: 3, entry: "first" };
  member.receiveRequest("b", 10n, new Set(["a", "b"]), state, ms(10));
  const out = member.tick(ms(10), new Set(["a", "b"]));
  // The answer, and the retained copy its own edit owes (no request, retained under a key).
  assert.deepEqual(out.map((action) => [action.message.queueSnapshot.request, action.retainKey]), [[10n, null], [null, "coplay.queue.snapshot.0"]]);
  const answer = sent(out.slice(0, 1));
  assert.equal(answer[0].queueSnapshot.through, 10n);
  assert.deepEqual(answer[0].queueSnapshot.state, state);

  joiner.receivePart(answer[0].queueSnapshot, "a", 12n);
  assert.equal(joiner.isComplete, true);
  // The edit after the request waits for the core, which applies it in its turn among the
  // proposals it replays on the answer's state (it knows then which entry played).
  assert.deepEqual(ids(joiner.queue), ["first"]);
  const taken = joiner.takeAnsweredState();
  assert.deepEqual(taken, { state, through: 10n, edits: [{ sequence: 11n, edit: { op: "add", entries: [entry("later")], at: "end" }, playing: null }] });
  assert.equal(joiner.takeAnsweredState(), null);
  joiner.applyAnswered(taken.edits[0].edit, "first");
  assert.deepEqual(ids(joiner.queue), ["first", "later"]);
});

test("a member second by id answers a step later, and not at all once it saw an answer", () => {
  const member = new QueueReplica("c");
  member.joinedSelf(new Set(), ms(0));
  member.receiveRequest("b", 10n, new Set(["a", "b", "c"]), null, ms(100));
  assert.equal(member.nextDeadline, ms(100) + QueueReplica.ANSWER_STEP);
  assert.deepEqual(member.tick(ms(200), new Set(["a", "b", "c"])), []);
  member.receivePart({ ...snapshotParts(new PlayQueue(), { snapshot: "a.1", request: 10n, through: 10n, sentAt: 0n })[0] }, "a", 11n);
  assert.equal(member.nextDeadline, null);
  assert.deepEqual(member.tick(ms(400), new Set(["a", "b", "c"])), []);
});

test("a joiner whose answerers left asks again, and starts from the retained copy when alone or after the timeout", () => {
  const joiner = new QueueReplica("b");
  joiner.joinedSelf(new Set(["a", "c"]), ms(0));
  joiner.receiveRequest("b", 10n, new Set(["a", "b", "c"]), null, ms(10));
  const again = sent(joiner.left("a", new Set(["c"]), ms(20)));
  assert.deepEqual(again, [{ queueRequest: { sentAt: ms(20) } }]);
  joiner.receiveRequest("b", 12n, new Set(["b", "c"]), null, ms(25));
  assert.equal(joiner.nextDeadline, ms(25) + QueueReplica.ANSWER_TIMEOUT);
  // Nobody answers in time: the retained copy (here none: an empty queue).
  assert.deepEqual(joiner.tick(ms(25) + QueueReplica.ANSWER_TIMEOUT - 1n, new Set(["b", "c"])), []);
  assert.equal(joiner.isComplete, false);
  assert.deepEqual(joiner.tick(ms(25) + QueueReplica.ANSWER_TIMEOUT, new Set(["b", "c"])), []);
  assert.equal(joiner.isComplete, true);
  assert.equal(joiner.queue.isInitial, true);

  const alone = new QueueReplica("b");
  alone.joinedSelf(new Set(["a"]), ms(0));
  assert.deepEqual(alone.left("a", new Set(), ms(5)), []);
  assert.equal(alone.isComplete, true);
});

test("own edits publish the retained copy at most once a second", () => {
  const member = new QueueReplica("a");
  member.joinedSelf(new Set(), ms(0));
  const members = new Set(["a"]);
  member.receiveEdit({ op: "add", entries: [entry("x")], at: "end" }, "a", 1n, null, ms(100));
  const first = member.tick(ms(100), members);
  assert.deepEqual(first.map((action) => action.retainKey), ["coplay.queue.snapshot.0"]);
  assert.equal(first[0].message.queueSnapshot.request, null);
  member.receiveEdit({ op: "add", entries: [entry("y")], at: "end" }, "a", 2n, null, ms(300));
  assert.equal(member.nextDeadline, ms(1100));
  assert.deepEqual(member.tick(ms(600), members), []);
  const second = member.tick(ms(1100), members);
  assert.deepEqual(second[0].message.queueSnapshot.entries.map((e) => e.id), ["x", "y"]);
  assert.equal(second[0].message.queueSnapshot.through, 2n);
  // Another member's edit owes nothing.
  member.receiveEdit({ op: "clear" }, "b", 3n, null, ms(3000));
  assert.equal(member.nextDeadline, null);
});
