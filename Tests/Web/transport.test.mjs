// The transport bar's arithmetic (Web/static/interface/transport.js): typed positions, the position shown.

import { test } from "node:test";
import assert from "node:assert/strict";

import { parsePosition, shownPosition } from "../../Web/static/interface/transport.js";

test("parsePosition: seconds, M:SS and H:MM:SS as the CLI's seek takes them", () => {
  assert.equal(parsePosition("90"), 90);
  assert.equal(parsePosition("2.5"), 2.5);
  assert.equal(parsePosition(" 1:30 "), 90);
  assert.equal(parsePosition("1:02:03"), 3723);
  assert.equal(parsePosition("0:06.5"), 6.5);
  assert.equal(parsePosition("01:30"), 90);
  assert.equal(parsePosition("10:00:00"), 36000);
  assert.equal(parsePosition("0"), 0);
  assert.equal(parsePosition("75"), 75, "plain seconds may be 60 and more");
});

test("parsePosition: anything else is null", () => {
  for (const text of ["", " ", "-5", "+5", "1e3", "inf", "NaN", "1:60", "1:75", "1:60:00", "1::30", ":30", "1:", "1:2:3:4", "1.5:30", "1:30:", "a", "1,5", "1.2.3", ".", null, undefined, 90]) {
    assert.equal(parsePosition(text), null, JSON.stringify(text));
  }
});

test("shownPosition: the group's time, the end when the page shows its last picture or the group is past it", () => {
  assert.equal(shownPosition({ position: 6.2, duration: 20 }), 6.2);
  assert.equal(shownPosition({ position: 6.2, duration: 20, atEnd: true }), 20, "the last picture on screen: the end");
  assert.equal(shownPosition({ position: 25, duration: 20 }), 20, "past the end");
  assert.equal(shownPosition({ position: -0.1, duration: 20 }), 0);
  assert.equal(shownPosition({ position: 6.2, duration: NaN }), 6.2, "no duration known");
  assert.equal(shownPosition({ position: 6.2, duration: 0, atEnd: true }), 6.2);
  assert.equal(shownPosition({ position: NaN, duration: 20 }), 0);
});
