// The queue panel's view model and edits (Web/static/interface/queuepanel.js) and the page's copies
// (Web/static/player/library.js): pure, without the DOM.

import { test } from "node:test";
import assert from "node:assert/strict";

import { MediaLibrary, isMediaFile } from "../../Web/static/player/library.js";
import { PlayQueue } from "../../Web/static/sync/queue.js";
import {
  coverageNotice, dropEdit, durationText, entriesForCopies, entryToPrepare, missingNotice, moveEdit, nextEntryWithCopy, nextRepeatMode, queueView, titleList,
} from "../../Web/static/interface/queuepanel.js";

const digest = (c) => c.repeat(64);
const fp = (size, c) => `v2:${size}:${digest(c)}`;
const entry = (id, item, extra = {}) => ({ id, item, fingerprint: null, title: `Episode ${id}`, duration: 60, frameRate: 25, addedBy: "host", ...extra });
const queueOf = (entries, options = {}) => {
  const queue = new PlayQueue();
  queue.apply({ op: "add", entries, at: "end" });
  if (options.repeat) queue.apply({ op: "repeat", mode: options.repeat });
  if (options.seed !== undefined) queue.apply({ op: "shuffle", seed: options.seed });
  return queue;
};
const ids = (queue) => queue.entries.map((e) => e.id);

// MARK: The library

test("library: a copy plays an item named by its fingerprint, or by a stream identity whose fingerprint it learned", () => {
  const library = new MediaLibrary();
  library.add({ fingerprint: fp(1000, "a"), name: "Episode 1.mkv", source: "blob-a" });
  library.add({ fingerprint: fp(2000, "b"), name: "Episode 2.mkv", source: "blob-b", duration: 61 });
  // An entry the page queued: its item is the fingerprint.
  assert.equal(library.copyFor(fp(2000, "b"))?.name, "Episode 2.mkv");
  // The host queues stream identities: unknown until an entry or the activity names the fingerprint.
  assert.equal(library.copyFor("v3:1:x"), null);
  assert.equal(library.copyForEntry(entry("1", "v3:1:x", { fingerprint: fp(1000, "a") }))?.name, "Episode 1.mkv");
  assert.equal(library.has("v3:1:x"), true, "learned from the entry");
  // Another file of the same size is not a copy.
  assert.equal(library.copyForEntry(entry("3", "v3:3:x", { fingerprint: fp(1000, "c") })), null);
  // v1 fingerprints (older sessions) match on size and digest.
  assert.equal(library.copyFor(`v1:2000:-:${digest("b")}`)?.name, "Episode 2.mkv");
  // A copy added twice is kept once.
  library.add({ fingerprint: fp(1000, "a"), name: "again.mkv", source: "other" });
  assert.equal(library.copies.length, 2);
});

test("library: learn says when an item became playable; items lists what the page can play, with durations", () => {
  const library = new MediaLibrary();
  assert.equal(library.learn({ item: "v3:1:x", fingerprint: fp(1000, "a"), duration: 1420.5 }), false, "no copy yet");
  library.add({ fingerprint: fp(1000, "a"), name: "a.mkv", source: "a", duration: 1420.4 });
  assert.equal(library.learn({ item: "v3:1:x", fingerprint: fp(1000, "a") }), false, "already playable");
  assert.equal(library.learn({ item: "v3:2:x", fingerprint: fp(1000, "a") }), true, "a second identity of the same file");
  assert.equal(library.learn({ item: "v3:bad", fingerprint: "not a fingerprint" }), false);
  assert.deepEqual(library.items(), [
    { item: "v3:1:x", duration: 1420.5 },
    { item: "v3:2:x", duration: 1420.4 },
    { item: fp(1000, "a"), duration: 1420.4 },
  ]);
});

test("isMediaFile: by type, else by extension", () => {
  assert.equal(isMediaFile({ name: "x", type: "video/mp4" }), true);
  assert.equal(isMediaFile({ name: "Episode 1.MKV", type: "" }), true);
  assert.equal(isMediaFile({ name: "notes.txt", type: "text/plain" }), false);
  assert.equal(isMediaFile({ name: "cover.jpg", type: "" }), false);
});

// MARK: The view model

test("queueView: rows in play order with title, duration, who added it, which plays and which this page lacks", () => {
  const queue = queueOf([entry("1", "i1", { addedBy: "me" }), entry("2", "i2", { duration: 3723 }), entry("3", "i3", { duration: null })]);
  const view = queueView({
    queue, hasQueue: true, playing: "2", label: (id) => (id === "host" ? "host" : id), me: "me", hasCopy: (e) => e.id !== "2",
  });
  assert.deepEqual(view.rows.map((r) => [r.position, r.title, r.duration, r.addedBy, r.playing, r.status]), [
    [1, "Episode 1", "1:00", "you", false, "ready"],
    [2, "Episode 2", "1:02:03", "host", true, "missing"],
    [3, "Episode 3", "—", "host", false, "ready"],
  ]);
  assert.deepEqual(view.rows.map((r) => [r.canUp, r.canDown, r.canJump]), [[false, true, true], [true, true, false], [true, false, true]]);
  assert.equal(view.summary, "3 entries · 1:03:03+");
  assert.equal(view.canNext, true);
  assert.equal(view.canPrevious, true);
  assert.equal(view.empty, null);
});

test("queueView: next and previous at the ends follow the repeat mode; shuffled queues are not reordered", () => {
  const label = (id) => id;
  const base = { hasQueue: true, label, me: "me", hasCopy: () => true };
  const off = queueView({ ...base, queue: queueOf([entry("1", "a"), entry("2", "b")]), playing: "2" });
  assert.equal(off.canNext, false, "after the last with repeat off");
  assert.equal(off.canPrevious, true);
  const all = queueView({ ...base, queue: queueOf([entry("1", "a"), entry("2", "b")], { repeat: "all" }), playing: "2" });
  assert.equal(all.canNext, true, "repeat all wraps around");
  const shuffled = queueView({ ...base, queue: queueOf([entry("1", "a"), entry("2", "b"), entry("3", "c")], { seed: 7 }), playing: null });
  assert.equal(shuffled.shuffled, true);
  assert.equal(shuffled.canReorder, false);
  assert.ok(shuffled.rows.every((r) => !r.canUp && !r.canDown));
  assert.match(shuffled.reorderHint, /shuffle off/);
  assert.deepEqual(shuffled.rows.map((r) => r.id), new PlayQueue({ ...queueOf([entry("1", "a"), entry("2", "b"), entry("3", "c")], { seed: 7 }) }).playOrder.map((e) => e.id));
  const empty = queueView({ ...base, queue: new PlayQueue(), playing: null });
  assert.match(empty.empty, /empty/);
  assert.equal(empty.canNext, false);
  const waiting = queueView({ ...base, hasQueue: false, queue: new PlayQueue(), playing: null });
  assert.match(waiting.empty, /Getting/);
  const offline = queueView({ ...base, live: false, queue: queueOf([entry("1", "a"), entry("2", "b")]), playing: "1" });
  assert.ok(offline.rows.every((r) => !r.canJump && !r.canUp && !r.canDown));
  assert.equal(offline.canNext, false);
});

test("queueView for a viewer (only hosts control): nothing of the group's queue is its to change, and it says why", () => {
  const base = { hasQueue: true, label: (id) => id, me: "me", hasCopy: (e) => e.id !== "2" };
  const queue = queueOf([entry("1", "a"), entry("2", "b"), entry("3", "c")]);
  const host = queueView({ ...base, queue, playing: "2" });
  assert.equal(host.locked, null);
  assert.equal(host.canAdd, true);
  assert.ok(host.rows.every((r) => r.canRemove));
  // `live` as the page computes it is already false for a viewer; the view is locked even if it is not.
  for (const live of [false, true]) {
    const view = queueView({ ...base, queue, playing: "2", live, viewer: true });
    assert.equal(view.locked, "only hosts control this session");
    assert.equal(view.canAdd, false, "no adding");
    assert.equal(view.canReorder, false, "no drag and drop");
    assert.deepEqual(view.rows.map((r) => [r.canUp, r.canDown, r.canJump, r.canRemove]), [[false, false, false, false], [false, false, false, false], [false, false, false, false]]);
    assert.equal(view.canNext, false);
    assert.equal(view.canPrevious, false);
    // Its own copies are still told apart (it chooses its own for the entry it lacks).
    assert.deepEqual(view.rows.map((r) => r.status), ["ready", "missing", "ready"]);
  }
  const shuffled = queueView({ ...base, queue: queueOf([entry("1", "a"), entry("2", "b")], { seed: 3 }), playing: null, live: false, viewer: true });
  assert.equal(shuffled.reorderHint, null, "no 'turn shuffle off' for someone who cannot");
  const empty = queueView({ ...base, queue: new PlayQueue(), playing: null, live: false, viewer: true });
  assert.doesNotMatch(empty.empty, /add videos/);
  assert.match(empty.empty, /empty/);
  const waiting = queueView({ ...base, hasQueue: false, queue: new PlayQueue(), playing: null, live: false, viewer: true });
  assert.equal(waiting.locked, "only hosts control this session");
  assert.equal(waiting.canAdd, false);
});

// MARK: Edits

test("moveEdit and dropEdit name the entry and its new predecessor; applied, they move it where the button or drop said", () => {
  const entries = ["a", "b", "c", "d"].map((id) => entry(id, id));
  const cases = [
    [() => moveEdit(queueOf(entries), "c", -1), ["a", "c", "b", "d"]],
    [() => moveEdit(queueOf(entries), "b", -1), ["b", "a", "c", "d"]],
    [() => moveEdit(queueOf(entries), "b", 1), ["a", "c", "b", "d"]],
    [() => moveEdit(queueOf(entries), "c", 1), ["a", "b", "d", "c"]],
    [() => dropEdit(queueOf(entries), "a", 4), ["b", "c", "d", "a"]],
    [() => dropEdit(queueOf(entries), "d", 0), ["d", "a", "b", "c"]],
    [() => dropEdit(queueOf(entries), "a", 2), ["b", "a", "c", "d"]],
    [() => dropEdit(queueOf(entries), "d", 1), ["a", "d", "b", "c"]],
  ];
  for (const [make, expected] of cases) {
    const queue = queueOf(entries);
    const edit = make();
    assert.notEqual(edit, null);
    queue.apply(edit);
    assert.deepEqual(ids(queue), expected, JSON.stringify(edit));
  }
  assert.equal(moveEdit(queueOf(entries), "a", -1), null, "the first cannot go up");
  assert.equal(moveEdit(queueOf(entries), "d", 1), null, "the last cannot go down");
  assert.equal(dropEdit(queueOf(entries), "b", 1), null, "dropped where it is");
  assert.equal(dropEdit(queueOf(entries), "b", 2), null, "dropped just after itself");
  assert.equal(moveEdit(queueOf(entries), "gone", 1), null);
});

test("a move someone else's edit overtook changes nothing instead of moving the wrong entry", () => {
  const entries = ["a", "b", "c"].map((id) => entry(id, id));
  const queue = queueOf(entries);
  const edit = moveEdit(queue, "c", -1); // after a
  queue.apply({ op: "remove", ids: ["a"] }); // ordered first: its anchor is gone
  queue.apply(edit);
  assert.deepEqual(ids(queue), ["b", "c"]);
});

test("entriesForCopies: ids from the member, the instant and the index; the fingerprint is the item; the file name the title", () => {
  const entries = entriesForCopies(
    [{ fingerprint: fp(10, "a"), name: "Episode 1.mkv", duration: 1420.5 }, { fingerprint: fp(20, "b"), name: "notes", duration: null }],
    { participant: "0123456789abcdef", sentAt: 1790000000950000000n },
  );
  assert.deepEqual(entries, [
    { id: "0123456789abcdef.1790000000950000000.0", item: fp(10, "a"), fingerprint: null, title: "Episode 1.mkv", duration: 1420.5, frameRate: null, addedBy: "0123456789abcdef" },
    { id: "0123456789abcdef.1790000000950000000.1", item: fp(20, "b"), fingerprint: null, title: "notes", duration: null, frameRate: null, addedBy: "0123456789abcdef" },
  ]);
});

test("missingNotice names the entry and its duration, and says the others go on", () => {
  const notice = missingNotice({ title: "Episode 2", duration: 723 }, { nextWithCopy: { title: "Episode 3" } });
  assert.equal(notice.title, "Choose your copy of “Episode 2” (12:03)");
  assert.match(notice.text, /others go on without waiting/);
  assert.match(notice.text, /“Episode 3”, which you have/);
  assert.equal(missingNotice({ title: "X", duration: null }).title, "Choose your copy of “X”");
  assert.match(missingNotice({ title: "X", duration: null }).text, /an entry you have/);
});

test("entryToPrepare and nextEntryWithCopy: what the page loads ahead", () => {
  const queue = queueOf(["1", "2", "3"].map((id) => entry(id, `i${id}`)));
  const all = () => true;
  assert.equal(entryToPrepare(queue, "1", all)?.id, "2");
  assert.equal(entryToPrepare(queue, "3", all), null, "nothing after the last with repeat off");
  assert.equal(entryToPrepare(queue, "1", (e) => e.id !== "2"), null, "no copy of the next: nothing to load");
  assert.equal(entryToPrepare(queue, null, all), null);
  assert.equal(nextEntryWithCopy(queue, "1", (e) => e.id === "3")?.id, "3");
  assert.equal(nextEntryWithCopy(queue, "2", (e) => e.id === "1"), null, "no wrap with repeat off");
  queue.apply({ op: "repeat", mode: "all" });
  assert.equal(entryToPrepare(queue, "3", all)?.id, "1", "repeat all wraps");
  assert.equal(nextEntryWithCopy(queue, "2", (e) => e.id === "1")?.id, "1");
  assert.equal(nextEntryWithCopy(queue, "2", () => false), null);
});

test("nextEntryWithCopy after a playing entry that was removed: where the queue goes on, not its top", () => {
  // The group plays 2 and 2 is removed: the queue goes on at 3 (its successor), so a page with copies
  // of 1 and 4 and none of 2 or 3 joins at 4; 1 played before and comes again only with repeat all.
  const hasCopy = (e) => e.id === "1" || e.id === "4";
  const queue = queueOf(["1", "2", "3", "4"].map((id) => entry(id, `i${id}`)));
  queue.apply({ op: "remove", ids: ["2"] }, "2");
  assert.equal(queue.entryAfterEnd("2")?.id, "3", "the queue goes on at the removed entry's successor");
  assert.equal(nextEntryWithCopy(queue, "2", hasCopy)?.id, "4");
  assert.match(missingNotice({ title: "Episode 2" }, { nextWithCopy: nextEntryWithCopy(queue, "2", hasCopy) }).text, /reaches “Episode 4”, which you have/);
  assert.equal(nextEntryWithCopy(queue, "2", (e) => e.id === "1"), null, "1 does not come again with repeat off");
  // The last entry removed while it played: nothing follows it with repeat off; repeat all goes on at the top.
  const last = queueOf(["1", "2", "3"].map((id) => entry(id, `i${id}`)));
  last.apply({ op: "remove", ids: ["3"] }, "3");
  assert.equal(nextEntryWithCopy(last, "3", (e) => e.id === "1"), null);
  last.apply({ op: "repeat", mode: "all" });
  assert.equal(nextEntryWithCopy(last, "3", (e) => e.id === "2")?.id, "2");
  assert.equal(nextEntryWithCopy(last, "3", () => false), null);
  // An entry the queue does not know (not the removed one): the page cannot say where the group goes.
  assert.equal(nextEntryWithCopy(queueOf([entry("1", "i1"), entry("2", "i2")]), "9", () => true), null);
});

test("the missing prompt of a page with the later entries of a queue names the first of them, not the playing one", () => {
  // test_first_file's page: `coplay host fa fb fc`, the page has fb and fc and the group plays fa.
  const queue = queueOf([entry("a", "ia", { title: "fa.mp4" }), entry("b", "ib", { title: "fb.mp4" }), entry("c", "ic", { title: "fc.mp4" })]);
  const hasCopy = (e) => e.id !== "a";
  const text = missingNotice(queue.entry("a"), { nextWithCopy: nextEntryWithCopy(queue, "a", hasCopy) }).text;
  assert.match(text, /The group is playing “fa\.mp4” and this page has no copy of it/);
  assert.match(text, /reaches “fb\.mp4”, which you have\.$/);
  assert.doesNotMatch(text, /“fa\.mp4”, which you have/);
});

test("durationText and the repeat cycle", () => {
  assert.equal(durationText(0), "0:00");
  assert.equal(durationText(59.6), "1:00");
  assert.equal(durationText(3723), "1:02:03");
  assert.equal(durationText(null), "—");
  assert.deepEqual(["off", "all", "one"].map(nextRepeatMode), ["all", "one", "off"]);
});

test("titleList: quoted titles joined as people read them, the rest counted", () => {
  assert.equal(titleList([]), "");
  assert.equal(titleList(["A"]), "“A”");
  assert.equal(titleList(["A", "B"]), "“A” and “B”");
  assert.equal(titleList(["A", "B", "C"]), "“A”, “B” and “C”");
  assert.equal(titleList(["1", "2", "3", "4", "5", "6"]), "“1”, “2”, “3”, “4” and 2 more");
});

test("coverageNotice: a page without the first item says how many entries it has and where it joins", () => {
  const queue = queueOf(["1", "2", "3"].map((id) => entry(id, `i${id}`)));
  const activity = { title: "Episode 1", duration: 60 };
  const laterOnes = (e) => e.id !== "1";
  const files = ["Episode 2.mkv", "Episode 3.mkv"];
  const joining = coverageNotice({ entries: queue.playOrder, activity, playing: "1", hasCopy: laterOnes, next: nextEntryWithCopy(queue, "1", laterOnes), files });
  assert.equal(joining.kind, "partial");
  assert.equal(joining.have, 2);
  assert.equal(joining.total, 3);
  assert.equal(joining.title, "You have 2 of the 3 entries");
  assert.equal(joining.short, "You have 2 of the 3 entries; the group plays “Episode 1” now, you join at “Episode 2”.");
  assert.equal(joining.text, "The group plays “Episode 1” now, you join at “Episode 2”. The others never wait for the ones you do not have.");
  // The group already plays one the page has.
  const along = coverageNotice({ entries: queue.playOrder, activity, playing: "2", hasCopy: laterOnes, next: null, files });
  assert.match(along.short, /plays “Episode 2”, which you have: you play along now/);
  // Nothing of the page's after the playing entry (repeat off).
  const onlyFirst = (e) => e.id === "2";
  const after = coverageNotice({ entries: queue.playOrder, activity, playing: "3", hasCopy: onlyFirst, next: nextEntryWithCopy(queue, "3", onlyFirst), files });
  assert.equal(after.kind, "partial");
  assert.match(after.short, /You have 1 of the 3 entries; the group plays “Episode 3” now, and none of yours comes after it/);
  // Every entry; a group with no state yet.
  const all = coverageNotice({ entries: queue.playOrder, activity, playing: null, hasCopy: () => true, files });
  assert.equal(all.title, "You have all 3 entries");
  assert.match(all.short, /you play along from the entries you have/);
});

test("coverageNotice: none of the files is in the session: what it plays and what the person gave", () => {
  const queue = queueOf(["1", "2", "3"].map((id) => entry(id, `i${id}`)));
  const activity = { title: "Episode 1", duration: 60 };
  const none = coverageNotice({ entries: queue.playOrder, activity, playing: "1", hasCopy: () => false, files: ["x.mp4", "y.mp4"] });
  assert.equal(none.kind, "none");
  assert.equal(none.have, 0);
  assert.equal(none.title, "None of these files is in this session");
  assert.match(none.text, /^The session plays 3 entries: “Episode 1”, “Episode 2” and “Episode 3”; you gave 2 files: “x.mp4” and “y.mp4”\. Choose your copies/);
  // A session without a queue plays its first item.
  const single = coverageNotice({ entries: [], activity: { title: "Film", duration: 5423 }, playing: null, hasCopy: () => false, files: ["a.mkv"] });
  assert.equal(single.kind, "none");
  assert.match(single.text, /^The session plays “Film” \(1:30:23\); you gave “a\.mkv”\./);
});
