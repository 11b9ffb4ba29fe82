// Runs the shared coordinator vectors (Tests/Vectors/coordinator/*.json, expected outputs from
// Swift's CoordinatorCore via CoordinatorVectorTests.swift) against the JavaScript port.
// The runner mirrors CoordinatorVectorTests.run(_:) step for step.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { CoordinatorCore, PlaybackCoordinatorError, defaultConfiguration } from "../../Web/static/sync/coordinator.js";
import { decodeMessage, decodeQueueEdit, decodeReason, encodeMessage, encodePlayQueue } from "../../Web/static/sync/messages.js";
import { jsonEqual, parseJSON, stringifyJSON } from "../../Web/static/wire/json.js";

const directory = join(dirname(fileURLToPath(import.meta.url)), "..", "Vectors", "coordinator");
// The hand-written vectors, then model/: the group model's regression seeds, one file per member.
const files = [
  ...readdirSync(directory).filter((name) => name.endsWith(".json")).sort(),
  ...readdirSync(join(directory, "model")).filter((name) => name.endsWith(".json")).sort().map((name) => `model/${name}`),
];

const big = (value) => (value === undefined || value === null ? null : BigInt(value));

/**
 * How a vector names an error (CoordinatorVectorTests.code(of:step:)): the constructor's name for
 * these, the error's description for the others (itemUnavailable, queueNotReceived, noEntry).
 */
const NAMED_CODES = new Set(["noItem", "invalidRate", "invalidItemTime", "unknownSuspension", "seekPastEnd"]);
const errorCode = (failure) => (NAMED_CODES.has(failure.code) ? failure.code : failure.message);

/** Runs a vector; returns one expectation-shaped value per step. */
function run(vector) {
  const configuration = defaultConfiguration();
  const c = vector.configuration ?? {};
  for (const key of ["margin", "minimumLead", "maximumLead", "preroll", "presenceInterval", "suspensionTimeout"]) {
    if (c[key] !== undefined) configuration[key] = BigInt(c[key]);
  }
  if (c.delayWindow !== undefined) configuration.delayWindow = c.delayWindow;
  if (c.holdsCommandsUntilJoined !== undefined) configuration.holdsCommandsUntilJoined = c.holdsCommandsUntilJoined;
  if (c.suspendsWhileEntryMissing !== undefined) configuration.suspendsWhileEntryMissing = c.suspendsWhileEntryMissing;
  if (c.maximumWaitingParticipants !== undefined) configuration.maximumWaitingParticipants = c.maximumWaitingParticipants;
  if (c.waitingReasons !== undefined) configuration.waitingReasons = new Set(c.waitingReasons.map(decodeReason));
  for (const { reason, limit } of c.participantLimits ?? []) configuration.participantLimits.set(decodeReason(reason), limit);
  const canPresent = vector.canPresent ? (item) => vector.canPresent.includes(item) : null;
  const core = new CoordinatorCore({
    participant: vector.participant, configuration, localItem: vector.localItem ?? null, canPresent, name: vector.name ?? null,
    items: (vector.items ?? []).map((summary) => ({ item: summary.item, duration: summary.duration ?? null })),
  });
  const outbox = [];
  return vector.steps.map((step) => {
    const now = big(step.now) ?? 0n;
    let actions = [];
    let error;
    let id;
    try {
      switch (step.op) {
        case "receive": {
          const e = step.event;
          const event = e.joined !== undefined ? { type: "joined", member: e.joined }
            : e.left !== undefined ? { type: "left", member: e.left }
            : { type: "message", message: decodeMessage(e.message), sender: e.sender, sequence: BigInt(e.sequence) };
          // A state the gate let through unsigned (roles.js marks it so).
          if (e.unauthenticated === true) event.message = { state: { ...event.message.state, unauthenticated: true } };
          actions = core.receive(event, now);
          break;
        }
        case "deliver":
          assert.ok(step.outbox < outbox.length, `outbox ${step.outbox} was not sent yet`);
          actions = core.receive({ type: "message", message: outbox[step.outbox], sender: step.sender ?? vector.participant, sequence: BigInt(step.sequence) }, now);
          break;
        case "tick":
          actions = core.tick(now);
          break;
        case "proposeRate":
          actions = core.proposeRate(step.rate, now);
          break;
        case "proposePlay":
          actions = core.proposePlay(now);
          break;
        case "proposeSeek":
          actions = core.proposeSeek(step.itemTime, now);
          break;
        case "proposeItem":
          actions = core.proposeItem(step.item, step.itemTime ?? 0, now);
          break;
        case "proposeQueueEdit":
          actions = core.proposeQueueEdit(decodeQueueEdit(step.edit), now);
          break;
        case "proposeNext":
          actions = core.proposeNext(now);
          break;
        case "proposePrevious":
          actions = core.proposePrevious(now);
          break;
        case "proposeJump":
          actions = core.proposeJump(step.position, now);
          break;
        case "setLocalItem":
          actions = core.setLocalItem(step.item ?? null);
          break;
        case "reapplyCurrentState":
          actions = core.reapplyCurrentState();
          break;
        case "beginSuspension": {
          const begun = core.beginSuspension(decodeReason(step.reason), now);
          id = begun.id;
          actions = begun.actions;
          break;
        }
        case "endSuspension":
          actions = core.endSuspension(step.id, step.itemTime ?? null, now);
          break;
        default:
          assert.fail(`unknown op ${step.op}`);
      }
    } catch (failure) {
      if (!(failure instanceof PlaybackCoordinatorError)) throw failure;
      error = errorCode(failure);
    }
    for (const action of actions) if (action.type === "send") outbox.push(action.message);
    return {
      actions: actions.map(actionJSON),
      error,
      id,
      lead: core.lead,
      nextTickDeadline: core.nextTickDeadline ?? undefined,
      segments: core.segments().map((s) => ({ start: s.start, itemTime: s.itemTime, rate: s.rate, waiting: s.waiting, waitEnd: s.waitEnd ?? undefined, ended: s.ended ? true : undefined })),
      participants: core.otherParticipants.length === 0 ? undefined : core.otherParticipants.map((p) => ({
        id: p.id, name: p.name, suspensions: p.suspensions.map((s) => `${s.id} ${s.reason}`),
      })),
      suspensionReasons: core.suspensionReasons.length === 0 ? undefined : core.suspensionReasons,
      // Absent while the queue equals an empty PlayQueue, as Swift writes it.
      queue: core.queue.isInitial ? undefined : encodePlayQueue(core.queue),
    };
  });
}

/** The fields of an event a vector records (VectorEvent in CoordinatorVectorTests.swift). */
const VECTOR_EVENT_FIELDS = [
  "type", "player", "originator", "originatorName", "item", "itemTime", "rate", "referenceTime", "revision", "reason", "suspension",
  "waits", "timedOut", "detail",
];

/** An action in the vectors' JSON shape. */
function actionJSON(action) {
  switch (action.type) {
    case "send":
      return { send: { message: encodeMessage(action.message), retainKey: action.retainKey ?? undefined } };
    case "command":
      return { command: action.command };
    case "event": {
      // VectorEvent's fields only (CoordinatorVectorTests.swift): the vectors do not record `entry`.
      const event = {};
      for (const key of VECTOR_EVENT_FIELDS) if (action.event[key] !== undefined) event[key] = action.event[key];
      return { event };
    }
  }
}

for (const file of files) {
  test(`coordinator vector ${file}`, () => {
    const vector = parseJSON(readFileSync(join(directory, file), "utf8"));
    const results = run(vector);
    vector.steps.forEach((step, index) => {
      assert.ok(step.expect, `${file} step ${index} has no expected output (COPLAY_WRITE_VECTORS=1 swift test --filter CoordinatorVectorTests)`);
      // Through text and back, so BigInt/Number and omitted fields compare as they would on the wire.
      const actual = parseJSON(stringifyJSON(results[index]));
      if (!jsonEqual(actual, step.expect)) {
        assert.deepEqual(actual, step.expect, `${file} step ${index} (${step.op})`);
        assert.fail(`${file} step ${index} (${step.op}): values differ numerically`);
      }
    });
  });
}

test("the shared vectors are present", () => {
  assert.ok(files.length >= 10, `expected coordinator vectors in ${directory}`);
});
