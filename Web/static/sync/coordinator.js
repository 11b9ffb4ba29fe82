// A port of Sources/PlaybackCoordinator/CoordinatorCore.swift and CoordinatorCore+Queue.swift (with
// the small value types they use: CoordinatorConfiguration, PlaybackState, TimelineSegment,
// PlaybackCommand, PlaybackEvent; the queue itself is in queue.js).
//
// RULE: this file and CoordinatorCore.swift change together. Names, order and structure are kept
// parallel so the two can be read side by side, and the shared vectors in
// Tests/Vectors/coordinator/*.json (run by Tests/PlaybackCoordinatorTests/CoordinatorVectorTests.swift
// and Tests/Web/coordinator.test.mjs) must pass on both. Regenerate their expected outputs from
// Swift (COPLAY_WRITE_VECTORS=1) after a deliberate behaviour change, then make this port match.
//
// Types in JS:
//   - ReferenceTime and Duration: BigInt nanoseconds (Unix time on the relay's NTP timescale);
//   - item times and rates: Number (seconds, Double in Swift);
//   - ParticipantID: string; revisions and sequence numbers: BigInt;
//   - SuspensionReason: its Swift description ("buffering", "custom:NAME");
//   - messages: see messages.js ({state}, {suspension}, {presence}, {queueEdit}, {queueRequest},
//     {queueSnapshot}, {unsupported: {kind, version}}); a state proposal is {state, command, sentAt, follows};
//   - the queue's values (entries, edits, positions): see queue.js;
//   - channel events: {type: "joined"|"left", member} or {type: "message", message, sender, sequence};
//   - actions: {type: "send", message, retainKey} | {type: "command", command} | {type: "event", event};
//   - commands: {kind: "play"|"pause"|"seek"|"buffer", itemTime, referenceTime, rate?, completionDueDate?,
//     originator (the id), originatorName?, expectedItemIdentifier, revision};
//   - events: PlaybackEvent's fields without `realtime` (the shell stamps it), nulls left out.

import { STATE_KEY, suspensionKey, unsupportedDescription } from "./messages.js";
import { PlayQueue, QueueReplica } from "./queue.js";

// MARK: Time arithmetic (ReferenceTime / Duration as BigInt nanoseconds)

const NS_PER_SECOND = 1_000_000_000n;

/** Duration.milliseconds(n) / .seconds(n) as BigInt nanoseconds. */
export const milliseconds = (n) => BigInt(n) * 1_000_000n;
export const seconds = (n) => BigInt(n) * NS_PER_SECOND;

/** `ReferenceTime.seconds`: Double(nanoseconds) / 1e9. */
export function referenceSeconds(t) {
  return Number(t) / 1e9;
}

/** `Duration.secondsValue`: Double(seconds) + Double(attoseconds) / 1e18, components truncated toward zero. */
export function secondsValue(d) {
  return Number(d / NS_PER_SECOND) + Number((d % NS_PER_SECOND) * NS_PER_SECOND) / 1e18;
}

const maxBig = (a, b) => (a > b ? a : b);
const minBig = (a, b) => (a < b ? a : b);

// MARK: Value types

/** Tuning of a coordinator (CoordinatorConfiguration.swift); durations in BigInt nanoseconds. */
export function defaultConfiguration() {
  return {
    margin: milliseconds(20),
    minimumLead: milliseconds(40),
    maximumLead: seconds(2),
    preroll: 0n,
    presenceInterval: seconds(1),
    delayWindow: 64,
    waitingReasons: new Set(["stallRecovery", "buffering"]),
    participantLimits: new Map(), // reason -> largest group that still waits
    maximumWaitingParticipants: 3,
    suspensionTimeout: seconds(10),
    readinessGrace: milliseconds(100),
    // No command before the local member's own `joined` (after the relay's retained replay).
    holdsCommandsUntilJoined: false,
    // Sit out a queue entry this member has no copy of (CoordinatorConfiguration.suspendsWhileEntryMissing):
    // a `missingEntry` event and a coordinatedPlaybackNotPossible suspension until the group plays an item it has.
    suspendsWhileEntryMissing: false,
  };
}

/** PlaybackState.init: intendedRate defaults to `rate`, or 1 when paused; revision to 0; `entry` (the queue entry's id) to null. */
export function makeState({ item, rate, anchorItemTime, anchorReferenceTime, originator, revision = 0n, intendedRate = null, duration = null, entry = null }) {
  return {
    item,
    rate,
    anchorItemTime,
    anchorReferenceTime,
    originator,
    revision,
    intendedRate: intendedRate ?? (rate > 0 ? rate : 1),
    duration,
    entry,
  };
}

/**
 * PlaybackState.sameTimeline(as:): whether both states put the group on the same timeline (the same
 * item and entry, anchor, rate, intended rate and duration), whoever proposed them, whatever their revisions.
 */
export function sameTimeline(a, b) {
  return a.item === b.item && (a.entry ?? null) === (b.entry ?? null) && a.rate === b.rate && a.anchorItemTime === b.anchorItemTime
    && a.anchorReferenceTime === b.anchorReferenceTime && a.intendedRate === b.intendedRate && (a.duration ?? null) === (b.duration ?? null);
}

/** TimelineSegment.init (`ended`: the item's end, held at rate 0). */
export function makeSegment(start, itemTime, rate, waiting, waitEnd = null, ended = false) {
  return { start, itemTime, rate, waiting, waitEnd, ended };
}

/** TimelineSegment.sameMotion(as:): ignoring when a wait ends at the latest. */
export function sameMotion(a, b) {
  return a.start === b.start && a.itemTime === b.itemTime && a.rate === b.rate && a.waiting === b.waiting && a.ended === b.ended;
}

/** `Duration.secondsRounded(_:)`: nanoseconds rounded half away from zero (Swift's `rounded()`). */
function secondsRounded(value) {
  const ns = value * 1e9;
  return BigInt(Math.sign(ns) * Math.round(Math.abs(ns)));
}

/** The command kind that puts a player on `segment`'s motion from `instant` on. */
function commandKind(segment, instant) {
  if (segment.waiting) return { kind: "buffer", itemTime: segment.itemTime, referenceTime: instant, completionDueDate: segment.waitEnd ?? instant };
  if (segment.rate > 0) return { kind: "play", itemTime: segmentItemTime(segment, instant), referenceTime: instant, rate: segment.rate };
  return { kind: "pause", itemTime: segment.itemTime, referenceTime: instant };
}

/** The index of the segment in force at `now` (0 without `now`). */
function segmentInForce(segments, now) {
  if (now === null || now === undefined) return 0;
  let index = 0;
  while (index + 1 < segments.length && segments[index + 1].start <= now) index += 1;
  return index;
}

/** Segment arrays equal field by field (Swift's `==` on [TimelineSegment]). */
export function sameSegments(a, b) {
  return a.length === b.length && a.every((x, i) => sameMotion(x, b[i]) && x.waitEnd === b[i].waitEnd);
}

/** TimelineSegment.itemTime(at:). */
export function segmentItemTime(segment, t) {
  return segment.itemTime + segment.rate * secondsValue(t - segment.start);
}

/** SuspensionReason.detachingReasons: while the local member has one open, commands are withheld. */
export const DETACHING_REASONS = new Set(["playingInterstitial", "coordinatedPlaybackNotPossible", "userActionRequired"]);

/** Swift's String `<` (code units here; ids are ASCII). */
const compareStrings = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

/** PlaybackEvent with `realtime` left out and nil fields dropped, in Swift's field order. */
function playbackEvent(type, fields) {
  const event = { type };
  for (const key of ["player", "originator", "originatorName", "item", "itemTime", "rate", "referenceTime", "revision", "reason", "suspension", "waits", "timedOut", "index", "pts", "errorMs", "detail", "entry"]) {
    const value = fields[key];
    if (value !== null && value !== undefined) event[key] = value;
  }
  return event;
}

/** PlaybackCoordinatorError: `code` is the Swift static constructor's name. */
/** The playing rates a group may be set to besides 0 (CoordinatorCore.playingRates). */
export const PLAYING_RATES = Object.freeze({ lower: 0.0625, upper: 16 });

export class PlaybackCoordinatorError extends Error {
  constructor(code, message) {
    super(message);
    this.name = "PlaybackCoordinatorError";
    // "invalidRate" | "invalidItemTime" | "noItem" | "unknownSuspension" | "seekPastEnd" | "itemUnavailable"
    // | "queueNotReceived" | "noEntry"
    this.code = code;
  }
  static seekPastEnd(time, duration) {
    return new PlaybackCoordinatorError("seekPastEnd", `cannot seek to ${time} s: the item is ${duration} s long (seek between 0 and ${duration})`);
  }
  static itemUnavailable(item, detail) {
    return new PlaybackCoordinatorError(
      "itemUnavailable",
      `nobody could follow a change to item ${item}: ${detail} (members play the items they have files for; \`coplay people\` lists them)`,
    );
  }
  static invalidRate(rate) {
    return new PlaybackCoordinatorError("invalidRate", `invalid rate ${rate}: a rate is 0 (paused) or between 0.0625 and 16`);
  }
  static invalidItemTime(time) {
    return new PlaybackCoordinatorError("invalidItemTime", `invalid item time ${time}: must be finite and not negative`);
  }
  static noItem() {
    return new PlaybackCoordinatorError("noItem", "no item: load an item (transitionToItem) or wait for the group's state first");
  }
  static unknownSuspension(id) {
    return new PlaybackCoordinatorError("unknownSuspension", `unknown or already ended suspension ${id}`);
  }
  /** A queue command before this member received the group's queue (it asked on joining). */
  static queueNotReceived() {
    return new PlaybackCoordinatorError("queueNotReceived", "the group's queue has not arrived yet (it is asked for on joining)");
  }
  /** A queue command with nothing to move to; `detail` says what is missing, for people. */
  static noEntry(detail) {
    return new PlaybackCoordinatorError("noEntry", detail);
  }
}

const send = (message, retainKey) => ({ type: "send", message, retainKey });
const commandAction = (command) => ({ type: "command", command });
const eventAction = (event) => ({ type: "event", event });

/**
 * The coordinator's deterministic, sans-IO state machine (see CoordinatorCore.swift for the model).
 *
 * ```js
 * const core = new CoordinatorCore({ participant: "alice", localItem: "clip" });
 * const actions = core.proposeRate(1, now);     // [{type: "send", message: {state: ...}, retainKey: ...}]
 * const applied = core.receive({ type: "message", message, sender: "alice", sequence: 1n }, later);
 * ```
 */
export class CoordinatorCore {
  /**
   * @param {object} options
   * @param {string} options.participant the local participant.
   * @param {object} [options.configuration] tuning (defaultConfiguration()).
   * @param {string|null} [options.localItem] the item the local player has loaded.
   * @param {((item: string) => boolean)|null} [options.canPresent] when given, the core switches the
   *   local item by itself to any group item for which it returns true.
   * @param {string|null} [options.name] the local participant's display name.
   * @param {{item: string, duration: number|null}[]} [options.items] the items the local member can
   *   play, with their durations (the timeline ends at an item's duration; presence reports carry them).
   */
  constructor({ participant, configuration = defaultConfiguration(), localItem = null, canPresent = null, name = null, items = [] }) {
    this.participant = participant;
    this.items = items;
    // The end this member last reported with an itemEnded event, {key, at}: the state's (revision, item,
    // entry, CoordinatorCore.endKey) and the instant. An end is reported once, though each wait while the
    // group is held there starts the timeline's last segment anew (CoordinatorCore.reportedEnd).
    this.reportedEnd = null;
    this.name = name;
    this.names = new Map();
    if (name !== null) this.names.set(participant, name);
    this.configuration = configuration;
    this.localItem = localItem;
    this.canPresent = canPresent;
    /** The suspension held while the group plays an entry this member has no copy of: {suspension, entry}. */
    this.missingEntry = null;
    /** The group's accepted state (highest sequence), or null. */
    this.state = null;
    /** Current members of the group, as the channel reported them. */
    this.members = new Set();

    this.suspensions = new Map(); // id -> SuspensionRecord
    this.suspensionOrder = [];
    this.reports = new Map(); // participant -> PresenceReport
    this.delays = [];
    this.pathDelay = 0n; // observedDelay, recomputed with each sample
    this.delayCursor = 0;
    this.announced = [];
    this.announcedRevision = null;
    this.ignoredRevision = null;
    this.nextPresence = null;
    this.suspensionCounter = 0;
    this.joinedSelf = false; // the channel reported the local member's own `joined`
    this.oneShotMembers = new Set(); // members whose presence said they only send a command (not announced)
    this.pendingCaughtUp = null; // seconds the local player was off when it last jumped back into step, for the next report
    this.behalfEnds = []; // {id, end}: ends sent for members that left, until an end for that id is delivered
    // Own suspensions as sent (SuspensionHistory entries), until the channel delivered what was sent.
    this.ownPending = [];
    this.presenceCount = 0;
    this.reportedUnsupported = new Set(); // "SENDER KIND VERSION" of unsupported messages already reported
    this.localSuspensions = []; // {id, reason, waits}, in the order they began
    this.openSuspensionsByMember = new Map(); // member -> [{id, reason}] delivered, not ended
    /** This member's copy of the group's queue (queue.js). */
    this.queueReplica = new QueueReplica(participant);
    // The state proposals received before this member had the queue (and the answer's state):
    // {proposal, sender, sequence}, replayed on that state if it differs from the retained one it started from.
    this.joinLog = [];
    // The transition to the next entry this member proposed: {revision, end} (the revision it
    // follows and the end instant it assumed; proposed again only if either changes).
    this.proposedTransition = null;
    // When proposedTransition was looked at, nothing followed the entry: a queue edit makes this member look again.
    this.transitionAwaitsQueue = false;
    // While this member plays on by transitions it computed itself because none was ordered in time
    // (assumeTransitionIfLate): the group's ordered state they follow (`state` is then the last of
    // `assumedChain`, the transitions assumed since, in order), else null.
    this.assumedFrom = null;
    this.assumedChain = [];
    // The ordered or assumed state and end whose late transition was last looked at: {revision, end}.
    this.assumeChecked = null;
    // The state this joiner read from the relay is a transition it cannot judge without the queue:
    // its player gets nothing until the queue and the group's state at its request arrive
    // (CoordinatorCore.holdsForQueueAnswer; group model seed 2567).
    this.holdsForQueueAnswer = false;
    // The state this joiner held when each of its queue requests came back in the order (sequence ->
    // state): an answer with that same state means what it processed since is the group's own.
    this.statesAtOwnRequests = new Map();
  }

  // MARK: Lead

  /** The current lead (BigInt ns): max delay anyone reported or measured + margin + max preroll, clamped. */
  get lead() {
    let delay = this.observedDelay;
    let preroll = this.configuration.preroll;
    for (const [member, report] of this.reports) {
      if (!this.members.has(member)) continue;
      delay = maxBig(delay, report.observedDelay);
      preroll = maxBig(preroll, report.preroll);
    }
    const raw = delay + this.configuration.margin + preroll;
    return minBig(maxBig(raw, this.configuration.minimumLead), this.configuration.maximumLead);
  }

  /**
   * The largest one-way delay this member measured over the recent window, leaving out samples far
   * above the window's median (more than four times it and more than HELD_DELAY_ALLOWANCE over it):
   * messages held through a relay restart or a reconnection (CoordinatorCore.observedDelay).
   */
  get observedDelay() {
    return this.pathDelay;
  }

  /** observedDelay's value, computed when a sample is recorded (every tick deadline reads the lead). */
  static pathDelay(delays) {
    if (delays.length === 0) return 0n;
    const sorted = [...delays].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const median = sorted[Math.floor((sorted.length - 1) / 2)];
    const bound = maxBig(median * 4n, median + CoordinatorCore.HELD_DELAY_ALLOWANCE);
    let delay = 0n;
    for (const sample of sorted) if (sample <= bound) delay = sample;
    return delay;
  }

  recordDelay(delay) {
    const sample = maxBig(delay, 0n);
    if (this.delays.length < Math.max(1, this.configuration.delayWindow)) {
      this.delays.push(sample);
    } else {
      this.delays[this.delayCursor] = sample;
      this.delayCursor = (this.delayCursor + 1) % this.delays.length;
    }
    this.pathDelay = CoordinatorCore.pathDelay(this.delays);
  }

  // MARK: Timeline

  /** Deadline of a suspension record: begin + timeout. */
  static deadline(record) {
    return record.begin + record.timeout;
  }

  /** When the group stops waiting for a record: min(end ?? deadline, deadline). */
  static waitEnd(record) {
    const deadline = CoordinatorCore.deadline(record);
    return minBig(record.end ?? deadline, deadline);
  }

  /** The intervals during which the group waits for suspended participants, merged and sorted. */
  waitIntervals(start) {
    const intervals = [];
    for (const id of this.suspensionOrder) {
      const record = this.suspensions.get(id);
      if (record === undefined || !record.counted) continue;
      const b = maxBig(record.begin, start);
      const e = CoordinatorCore.waitEnd(record);
      if (e > b) intervals.push([b, e]);
    }
    intervals.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    const merged = [];
    for (const interval of intervals) {
      const last = merged[merged.length - 1];
      if (last !== undefined && interval[0] <= last[1]) {
        last[1] = maxBig(last[1], interval[1]);
      } else {
        merged.push([interval[0], interval[1]]);
      }
    }
    return merged;
  }

  // MARK: Items

  /** The duration of `item` as this member knows it: the state's, its own files', another member's report. */
  durationOf(item) {
    const state = this.state;
    if (state !== null && state.item === item && state.duration !== null && state.duration !== undefined) return state.duration;
    const own = this.items.find((summary) => summary.item === item)?.duration;
    if (own !== null && own !== undefined) return own;
    for (const member of [...this.reports.keys()].sort(compareStrings)) {
      if (!this.members.has(member)) continue;
      const known = this.reports.get(member).items?.find((summary) => summary.item === item)?.duration;
      if (known !== null && known !== undefined) return known;
    }
    // The queue's entries carry the duration their adder probed (a member with no copy of the item
    // and nobody left who has it still knows where it ends).
    const entry = this.queue.entries.find((e) => e.item === item && e.duration !== null && e.duration !== undefined);
    return entry === undefined ? null : entry.duration;
  }

  /**
   * The local player jumped back into step after being `seconds` off the group's timeline (negative:
   * behind): the next presence report tells the others, whose cores report a `caughtUp` event.
   */
  noteCaughtUp(seconds) {
    if (Number.isFinite(seconds)) this.pendingCaughtUp = seconds;
  }

  /** What this member knows of `member` from its presence reports: `{reported, oneShot}`. */
  presence(member) {
    const oneShot = this.oneShotMembers.has(member);
    return { reported: this.reports.has(member) || oneShot, oneShot };
  }

  /** The members known to have `item` (this one included), from the files and presence reports. */
  membersHaving(item) {
    const result = new Set();
    if (this.localItem === item || this.items.some((summary) => summary.item === item)) result.add(this.participant);
    for (const [member, report] of this.reports) {
      if (!this.members.has(member)) continue;
      if (report.item === item || (report.items ?? []).some((summary) => summary.item === item)) result.add(member);
    }
    return result;
  }

  /** The current members other than this one that have a player (their reports name items). */
  get otherPlayingMembers() {
    const result = new Set();
    for (const [member, report] of this.reports) {
      if (member === this.participant || !this.members.has(member)) continue;
      if ((report.item !== null && report.item !== undefined) || (report.items ?? []).length > 0) result.add(member);
    }
    return result;
  }

  /** Whether this member knows who is in the group (its own `joined` came) and every other one reported. */
  get heardFromEveryMember() {
    return this.joinedSelf && [...this.members].every((member) => member === this.participant || this.reports.has(member));
  }

  /** Why the group could not follow a change to `item` (a PlaybackCoordinatorError), or null. */
  itemUnavailability(item) {
    const having = this.membersHaving(item);
    const others = this.otherPlayingMembers;
    if (having.size === 0) return PlaybackCoordinatorError.itemUnavailable(item, "no member has it");
    if (others.size > 0 && ![...others].some((member) => having.has(member))) {
      return PlaybackCoordinatorError.itemUnavailable(item, "no other member has it (only this one)");
    }
    return null;
  }

  /**
   * The group's effective timeline from the base state's anchor on (empty before any state); with
   * the item's duration known it ends there, in an `ended` segment holding the end (rate 0).
   */
  segments() {
    const state = this.state;
    if (state === null) return [];
    return this.segmentsEndingAt(state.duration ?? this.items.find((summary) => summary.item === state.item)?.duration ?? null);
  }

  /** The effective timeline, ending at the item time `end` when given (not null). */
  segmentsEndingAt(end) {
    const state = this.state;
    if (state === null) return [];
    if (end !== null && state.anchorItemTime >= end) {
      return [makeSegment(state.anchorReferenceTime, end, 0, false, null, state.rate > 0)];
    }
    const result = [makeSegment(state.anchorReferenceTime, state.anchorItemTime, state.rate, false)];
    if (!(state.rate > 0)) return result;
    for (const [b, e] of this.waitIntervals(state.anchorReferenceTime)) {
      if (end !== null && segmentItemTime(result[result.length - 1], b) >= end) break;
      const held = segmentItemTime(result[result.length - 1], b);
      result.push(makeSegment(b, held, 0, true, e));
      result.push(makeSegment(e, held, state.rate, false));
    }
    const last = result[result.length - 1];
    if (end !== null && last.rate > 0) {
      const at = last.start + secondsRounded((end - last.itemTime) / last.rate);
      result.push(makeSegment(at, end, 0, false, null, true));
    }
    return result;
  }

  /** The segment in force at `t` (the first one before the anchor), or null before any state. */
  segmentAt(t) {
    const all = this.segments();
    if (all.length === 0) return null;
    return all.findLast((segment) => segment.start <= t) ?? all[0];
  }

  /** The group's item time at `t` on the effective timeline, or null before any state. */
  effectiveItemTime(t) {
    const segment = this.segmentAt(t);
    return segment === null ? null : segmentItemTime(segment, t);
  }

  /** The effective rate at `t` (0 while paused or waiting), or null before any state. */
  effectiveRate(t) {
    const segment = this.segmentAt(t);
    return segment === null ? null : segment.rate;
  }

  /** Whether the group is waiting for a suspended participant at `t`. */
  isWaiting(t) {
    return this.segments().findLast((segment) => segment.start <= t)?.waiting ?? false;
  }

  // MARK: Inputs from the channel

  /** Handles one channel event received at reference time `now`. */
  receive(event, now) {
    switch (event.type) {
      case "joined": {
        this.members.add(event.member);
        let actions = [eventAction(playbackEvent("joined", { player: this.label(this.participant), originator: event.member, originatorName: this.names.get(event.member) ?? null, referenceTime: referenceSeconds(now) }))];
        if (event.member === this.participant) {
          this.nextPresence = null;
          this.presenceCount = 0;
          actions = actions.concat(this.tick(now));
          if (!this.joinedSelf) {
            this.joinedSelf = true;
            // The retained messages are all in: the player's first commands.
            if (this.configuration.holdsCommandsUntilJoined) actions = actions.concat(this.followEntryAvailability(now), this.announce(now));
          }
          actions = actions.concat(this.queueReplica.joinedSelf(this.otherMembers, now), this.releaseHeldCommands(now));
        }
        return actions;
      }
      case "left": {
        this.members.delete(event.member);
        this.reports.delete(event.member);
        this.oneShotMembers.delete(event.member);
        if (event.member !== this.participant) this.openSuspensionsByMember.delete(event.member);
        const actions = [eventAction(playbackEvent("left", { player: this.label(this.participant), originator: event.member, originatorName: this.names.get(event.member) ?? null, referenceTime: referenceSeconds(now) }))];
        return actions.concat(this.endSuspensions(event.member, now), this.queueReplica.left(event.member, this.otherMembers, now), this.releaseHeldCommands(now));
      }
      case "message": {
        const message = event.message;
        this.queueReplica.processed(event.sequence);
        if (message.state) {
          if (!this.queueReplica.isComplete) this.joinLog.push({ proposal: message.state, sender: event.sender, sequence: event.sequence });
          return this.acceptProposal(message.state, event.sender, event.sequence, now);
        }
        if (message.suspension) return this.acceptNotice(message.suspension, event.sender, now);
        if (message.presence) {
          const report = message.presence;
          this.recordDelay(now - report.sentAt);
          this.reports.set(event.sender, report);
          if (report.name !== null && report.name !== undefined && report.name !== "") this.names.set(event.sender, report.name);
          if (report.oneShot === true) this.oneShotMembers.add(event.sender);
          if (report.caughtUp === null || report.caughtUp === undefined || event.sender === this.participant) return [];
          return [eventAction(playbackEvent("caughtUp", { player: this.label(this.participant), originator: event.sender, originatorName: this.names.get(event.sender) ?? null, item: report.item ?? null, referenceTime: referenceSeconds(now), errorMs: report.caughtUp * 1000 }))];
        }
        if (message.queueEdit) return this.receiveQueueEdit(message.queueEdit, event.sender, event.sequence, now);
        if (message.queueRequest) {
          const held = this.assumedFrom ?? this.state;
          if (event.sender === this.participant && !this.hasQueue && held !== null) this.statesAtOwnRequests.set(event.sequence, held);
          this.queueReplica.receiveRequest(event.sender, event.sequence, this.members, this.assumedFrom ?? this.state, now);
          return this.tickQueue(now);
        }
        if (message.queueSnapshot) {
          const wasComplete = this.queueReplica.isComplete;
          this.queueReplica.receivePart(message.queueSnapshot, event.sender, event.sequence);
          let actions = this.queueReplica.tick(now, this.members);
          if (!wasComplete && this.queueReplica.isComplete) actions = actions.concat(this.queueReceived(now));
          return actions;
        }
        if (message.unsupported) return this.reportUnsupported(message.unsupported, event.sender, now);
        return [];
      }
      default:
        return [];
    }
  }

  /**
   * Says once per sender, kind and version that a message could not be read (a member runs a newer
   * coplay); the message itself is ignored, and the group carries on with the rest.
   */
  reportUnsupported(unsupported, sender, now) {
    const key = `${sender} ${unsupported.kind} ${unsupported.version}`;
    if (this.reportedUnsupported.has(key)) return [];
    this.reportedUnsupported.add(key);
    return [eventAction(playbackEvent("unsupportedMessage", {
      player: this.label(this.participant), originator: sender, originatorName: this.names.get(sender) ?? null,
      referenceTime: referenceSeconds(now), detail: unsupportedDescription(unsupported),
    }))];
  }

  /** The other current members (`members` without this one). */
  get otherMembers() {
    return new Set([...this.members].filter((member) => member !== this.participant));
  }

  acceptProposal(proposal, sender, sequence, now) {
    const ordered = this.assumedFrom;
    if (ordered === null) return this.acceptOrdered(proposal, sender, sequence, now, this.state, []);
    // While playing on by assumed transitions, a proposal is judged against the group's ordered
    // state, as every member judges it; what the member shows stays unless the order moves it.
    const shown = this.state;
    const chain = this.assumedChain;
    this.state = ordered;
    this.assumedFrom = null;
    this.assumedChain = [];
    const actions = this.acceptOrdered(proposal, sender, sequence, now, shown, chain);
    const after = this.state;
    if (this.assumedFrom === null && after !== null && sameTimeline(after, ordered)) {
      // Nothing ordered moved the group (a duplicate or stale proposal, a restatement): play on.
      this.assumedFrom = after;
      this.assumedChain = chain.map((link) => ({ ...link, revision: after.revision }));
      this.state = this.assumedChain[this.assumedChain.length - 1];
      return actions;
    }
    if (this.assumedFrom === null && after !== null && after.anchorReferenceTime > now && !chain.some((link) => sameTimeline(link, after))) {
      return this.bridge(ordered, after, actions, now);
    }
    return actions;
  }

  /**
   * The order replaced this member's assumed transitions by a state that takes effect later: until
   * its anchor the group shows its ordered state, so the player is put on that first, then told the
   * new state (CoordinatorCore.bridge; group model seed 9022).
   */
  bridge(ordered, next, actions, now) {
    this.state = ordered;
    this.announced = [];
    this.announcedRevision = null;
    const meanwhile = this.announce(now);
    this.state = next;
    this.announced = [];
    this.announcedRevision = null;
    const then = this.announce(now);
    return actions.filter((action) => action.type !== "command").concat(meanwhile, then);
  }

  /**
   * acceptProposal on the ordered state. `shown` is what the local player was last told (the ordered
   * state, or the last transition assumed); a new state that is one of the transitions of `chain`
   * (assumed, in order) confirms it, and the later ones are kept.
   */
  acceptOrdered(proposal, sender, sequence, now, shown, chain) {
    if (this.state !== null && sequence <= this.state.revision) return [];
    if (proposal.unauthenticated === true) {
      const authentic = this.authenticTransition(proposal, sender);
      if (authentic === null) return [];
      proposal = authentic;
    }
    // A transition applies only to the entry and end instant it was computed from: the first one
    // ordered wins, the others (every member proposes it) change nothing; a restatement only when
    // it is the group's state.
    if ((proposal.command === "advance" && !this.transitionApplies(proposal))
      || (proposal.command === "restate" && this.state !== null && !sameTimeline(this.state, proposal.state))) {
      return this.restateIfReplaced(proposal, sender, now);
    }
    if (proposal.command === "restate" && this.state !== null) {
      this.state = { ...this.state, revision: sequence };
      return [];
    }
    if (this.state === null && proposal.command === "advance" && !this.hasQueue) this.holdsForQueueAnswer = true;
    const accepted = { ...proposal.state, entry: proposal.state.entry ?? null, revision: sequence };
    const previousItem = shown?.item ?? null;
    const previousEntry = shown === null ? null : shown.entry ?? null;
    this.state = accepted;
    const confirmed = chain.findIndex((link) => sameTimeline(link, accepted));
    if (confirmed >= 0) {
      // One of this member's assumed transitions, now ordered: the player already follows it (or a
      // later one, kept until it is ordered too).
      const rest = chain.slice(confirmed + 1).map((link) => ({ ...link, revision: sequence }));
      if (rest.length > 0) {
        this.assumedFrom = accepted;
        this.assumedChain = rest;
        this.state = rest[rest.length - 1];
      }
    }
    const next = this.state;
    const actions = [];
    if (proposal.command !== "advance" && proposal.command !== "restate") {
      actions.push(eventAction(playbackEvent(proposal.command, {
        player: this.label(this.participant), originator: next.originator, originatorName: this.names.get(next.originator) ?? null, item: next.item, itemTime: next.anchorItemTime,
        rate: next.rate, referenceTime: referenceSeconds(next.anchorReferenceTime), revision: sequence, entry: next.entry,
      })));
    }
    if (previousItem !== next.item || previousEntry !== next.entry) {
      actions.push(this.changedItem(next, sequence, proposal.command, previousItem));
    }
    return actions.concat(this.followEntryAvailability(now), this.announce(now));
  }

  acceptNotice(notice, sender, now) {
    // What the sender knew comes first: a member that joined after a wait learns it here (the
    // relay keeps only each member's latest notice), before the notice itself applies.
    if (notice.history !== null && notice.history !== undefined) {
      // Whose suspension the notice is about: the sender's, or a member's that left.
      const owner = this.suspensions.get(notice.id)?.participant
        ?? notice.history.suspensions.find((entry) => entry.id === notice.id)?.participant ?? sender;
      if (this.assumedFrom !== null) {
        // What the sender knew is of the group's ordered state, not of this member's assumed transitions.
        const shown = this.state;
        this.state = this.assumedFrom;
        this.learn(notice.history, owner, now);
        this.assumedFrom = this.state;
        this.state = shown;
      } else {
        this.learn(notice.history, owner, now);
      }
    }
    const actions = this.recordNotice(notice, sender);
    if (sender === this.participant) {
      const index = this.ownPending.findIndex((entry) => entry.id === notice.id);
      if (index >= 0 && (notice.phase === "end" || this.ownPending[index].end === null)) this.ownPending.splice(index, 1);
    }
    const behalf = this.behalfEnds.findIndex((entry) => entry.id === notice.id);
    if (notice.phase === "end" && behalf >= 0) {
      this.behalfEnds.splice(behalf, 1);
      const record = this.suspensions.get(notice.id);
      if (sender !== this.participant && record !== undefined && record.end !== null) {
        // Another member's end for a member that left was ordered before ours, and ours will
        // replace it in the relay's retained slot: say again what the group applied.
        const correction = {
          id: record.id, phase: "end", reason: record.reason, effectiveAt: record.end, waits: record.counted,
          timeout: record.timeout, proposedItemTime: null, sentAt: now, history: this.history(),
        };
        actions.push(send({ suspension: correction }, suspensionKey(record.participant)));
      }
    }
    return actions.concat(this.revalidateAssumption(now), this.announce(now));
  }

  /**
   * Takes what a notice's sender knew of the group's waits: the suspensions of `owner` (the member
   * the notice is about) this member does not know (it joined later), the group's decision whether
   * each known one waits and when it ended, and the state's anchor once older waits were folded in.
   * Only the owner's notices add suspensions (its retained slot is the one current account of
   * them); whether one waits and when it ended never change once delivered, so any notice may tell.
   */
  learn(history, owner, now) {
    const current = this.state;
    if (current !== null && history.revision !== null && history.revision === current.revision &&
        history.anchorReferenceTime !== null && history.anchorItemTime !== null && history.anchorReferenceTime > current.anchorReferenceTime) {
      const at = history.anchorReferenceTime;
      const effective = this.effectiveItemTime(at);
      const sameLine = effective !== null && Math.abs(effective - history.anchorItemTime) < 1e-9;
      const wasAnnounced = this.announcedRevision === current.revision && sameSegments(this.announced, this.segments());
      this.state = { ...current, anchorReferenceTime: at, anchorItemTime: history.anchorItemTime };
      if (sameLine && wasAnnounced) {
        this.announced = this.segments();
      } else if (!sameLine) {
        // The sender folded in waits this member never saw: start the player over.
        this.announced = [];
        this.announcedRevision = null;
      }
    }
    for (const entry of history.suspensions) {
      const known = this.suspensions.get(entry.id);
      if (known !== undefined) {
        known.counted = entry.waits;
        if (entry.end !== null) {
          const end = maxBig(entry.end, known.begin);
          if (known.end !== end) {
            if (known.end === null) this.closeOpenSuspension(entry.id, known.participant);
            known.end = end;
            known.endReported = true;
          }
        }
        continue;
      }
      if (entry.participant !== owner) continue;
      const record = {
        id: entry.id, participant: entry.participant, reason: entry.reason, begin: entry.begin,
        end: entry.end === null ? null : maxBig(entry.end, entry.begin), timeout: entry.timeout, counted: entry.waits, endReported: false,
      };
      record.endReported = record.end !== null || now >= CoordinatorCore.deadline(record);
      this.suspensions.set(entry.id, record);
      this.suspensionOrder.push(entry.id);
      if (record.end === null && entry.participant !== this.participant && this.members.has(entry.participant)) {
        if (!this.openSuspensionsByMember.has(entry.participant)) this.openSuspensionsByMember.set(entry.participant, []);
        this.openSuspensionsByMember.get(entry.participant).push({ id: entry.id, reason: entry.reason });
      }
    }
  }

  closeOpenSuspension(id, member) {
    const open = this.openSuspensionsByMember.get(member);
    if (open === undefined) return;
    const rest = open.filter((s) => s.id !== id);
    if (rest.length === 0) this.openSuspensionsByMember.delete(member);
    else this.openSuspensionsByMember.set(member, rest);
  }

  /**
   * What this member knows of the group's waits, for the notices it sends (SuspensionHistory):
   * every suspension it still keeps (tick forgets them a minute after their wait), also those
   * that ended before the state's anchor, because a later revision may be anchored earlier than
   * the state it replaces (group model seed 2900).
   */
  history() {
    const base = this.assumedFrom ?? this.state;
    const anchor = base?.anchorReferenceTime ?? null;
    const suspensions = [];
    for (const id of this.suspensionOrder) {
      const record = this.suspensions.get(id);
      if (record === undefined) continue;
      const pendingEnd = record.end === null
        ? (this.ownPending.find((entry) => entry.id === id)?.end ?? this.behalfEnds.find((entry) => entry.id === id)?.end ?? null) : null;
      suspensions.push({
        id: record.id, participant: record.participant, reason: record.reason, begin: record.begin, end: record.end ?? pendingEnd,
        timeout: record.timeout, waits: record.counted,
      });
    }
    for (const entry of this.ownPending) if (!this.suspensions.has(entry.id)) suspensions.push({ ...entry });
    return { revision: base?.revision ?? null, anchorReferenceTime: anchor, anchorItemTime: base?.anchorItemTime ?? null, suspensions };
  }

  /** Folds the waits that ended before `horizon` into the state's anchor (the same timeline). */
  foldWaits(horizon) {
    const current = this.state;
    if (this.assumedFrom !== null || current === null || !(current.rate > 0)) return;
    const last = this.waitIntervals(current.anchorReferenceTime).findLast((interval) => interval[1] < horizon);
    if (last === undefined) return;
    const itemTime = this.effectiveItemTime(last[1]);
    const wasAnnounced = this.announcedRevision === current.revision && sameSegments(this.announced, this.segments());
    this.state = { ...current, anchorReferenceTime: last[1], anchorItemTime: itemTime };
    if (wasAnnounced) this.announced = this.segments();
  }

  /** Records a suspension notice; returns its events. */
  recordNotice(notice, sender) {
    switch (notice.phase) {
      case "begin": {
        if (this.suspensions.has(notice.id)) return [];
        let counted = false;
        if (notice.waits) {
          const deadline = notice.effectiveAt + notice.timeout;
          const waiting = new Set();
          for (const record of this.suspensions.values()) {
            if (!record.counted || record.participant === sender) continue;
            if (record.begin < deadline && CoordinatorCore.waitEnd(record) > notice.effectiveAt) waiting.add(record.participant);
          }
          counted = waiting.size < this.configuration.maximumWaitingParticipants;
        }
        this.suspensions.set(notice.id, {
          id: notice.id, participant: sender, reason: notice.reason, begin: notice.effectiveAt, end: null,
          timeout: notice.timeout, counted, endReported: false,
        });
        this.suspensionOrder.push(notice.id);
        if (!this.openSuspensionsByMember.has(sender)) this.openSuspensionsByMember.set(sender, []);
        this.openSuspensionsByMember.get(sender).push({ id: notice.id, reason: notice.reason });
        return [
          eventAction(playbackEvent("suspensionBegan", {
            player: this.label(this.participant), originator: sender, originatorName: this.names.get(sender) ?? null, item: this.state?.item,
            itemTime: this.effectiveItemTime(notice.effectiveAt), referenceTime: referenceSeconds(notice.effectiveAt),
            reason: notice.reason, suspension: notice.id, waits: counted,
          })),
        ];
      }
      case "end": {
        const record = this.suspensions.get(notice.id);
        if (record === undefined || record.end !== null) return [];
        record.end = maxBig(notice.effectiveAt, record.begin);
        const timedOut = record.end > CoordinatorCore.deadline(record);
        const wasReported = record.endReported;
        record.endReported = true;
        this.closeOpenSuspension(notice.id, record.participant);
        const actions = [];
        if (!wasReported) {
          // The originator is the suspended member, also when another member ended it because it left.
          actions.push(eventAction(playbackEvent("suspensionEnded", {
            player: this.label(this.participant), originator: record.participant, originatorName: this.names.get(record.participant) ?? null, item: this.state?.item,
            itemTime: notice.proposedItemTime, referenceTime: referenceSeconds(CoordinatorCore.waitEnd(record)),
            reason: record.reason, suspension: record.id, waits: record.counted, timedOut,
            detail: sender === record.participant ? null : "member left",
          })));
        }
        return actions;
      }
      default:
        return [];
    }
  }

  /**
   * Ends, on behalf of a member that left, its suspensions that still hold the group: every
   * remaining member sends the same end notice (one lead ahead); the first in the total order wins.
   */
  endSuspensions(member, now) {
    if (member === this.participant) return [];
    const actions = [];
    for (const id of this.suspensionOrder) {
      const record = this.suspensions.get(id);
      if (record === undefined || record.participant !== member || record.end !== null || record.endReported || !(now < CoordinatorCore.deadline(record))) continue;
      const notice = {
        id, phase: "end", reason: record.reason, effectiveAt: maxBig(now + this.lead, record.begin), waits: record.counted,
        timeout: record.timeout, proposedItemTime: null, sentAt: now, history: this.history(),
      };
      actions.push(send({ suspension: notice }, suspensionKey(member)));
      this.behalfEnds.push({ id, end: notice.effectiveAt });
    }
    return actions;
  }

  // MARK: Time

  /** Advances time: sends presence when due, reports suspensions that timed out, forgets old ones. */
  tick(now) {
    const actions = [];
    if (this.nextPresence === null || now >= this.nextPresence) {
      // Report quickly after joining (the lead needs the others' delays), then settle.
      this.presenceCount += 1;
      const divisor = this.presenceCount < 8 ? 1n << BigInt(8 - this.presenceCount) : 1n;
      this.nextPresence = now + maxBig(this.configuration.presenceInterval / divisor, milliseconds(20));
      const report = { sentAt: now, observedDelay: this.observedDelay, preroll: this.configuration.preroll, item: this.localItem, name: this.name, items: this.items.length > 0 ? this.items : null };
      if (this.pendingCaughtUp !== null) report.caughtUp = this.pendingCaughtUp;
      this.pendingCaughtUp = null;
      actions.push(send({ presence: report }, null));
    }
    for (const id of this.suspensionOrder) {
      const record = this.suspensions.get(id);
      if (record === undefined || record.endReported || record.end !== null || !(now >= CoordinatorCore.deadline(record))) continue;
      record.endReported = true;
      actions.push(eventAction(playbackEvent("suspensionEnded", {
        player: this.label(this.participant), originator: record.participant, originatorName: this.names.get(record.participant) ?? null, item: this.state?.item,
        referenceTime: referenceSeconds(CoordinatorCore.deadline(record)), reason: record.reason, suspension: record.id, waits: record.counted, timedOut: true,
      })));
    }
    const segments = this.segments();
    const end = segments[segments.length - 1];
    if (this.state !== null && end !== undefined && end.ended) {
      if (now < end.start) {
        // The end is ahead again (a wait before it, learnt after it was reported): say it when it comes.
        this.reportedEnd = null;
      } else if (!this.isReported(end.start)) {
        this.reportedEnd = { key: CoordinatorCore.endKey(this.state), at: end.start };
        actions.push(eventAction(playbackEvent("itemEnded", {
          player: this.label(this.participant), item: this.state.item, itemTime: end.itemTime, rate: 0,
          referenceTime: referenceSeconds(end.start), revision: this.state.revision,
        })));
      }
    }
    actions.push(...this.tickQueue(now));
    actions.push(...this.proposeTransitionIfDue(now));
    actions.push(...this.assumeTransitionIfLate(now));
    const horizon = now - seconds(60);
    this.foldWaits(horizon);
    this.ownPending = this.ownPending.filter((entry) => !(entry.begin + entry.timeout < horizon));
    // A wait the timeline still needs (after the anchor, while playing) stays until it is folded.
    const base = this.assumedFrom ?? this.state;
    const anchor = base !== null && base.rate > 0 ? base.anchorReferenceTime : null;
    this.suspensionOrder = this.suspensionOrder.filter((id) => {
      const record = this.suspensions.get(id);
      if (record === undefined || !(CoordinatorCore.waitEnd(record) < horizon)) return true;
      if (record.counted && anchor !== null && CoordinatorCore.waitEnd(record) > anchor) return true;
      this.behalfEnds = this.behalfEnds.filter((entry) => entry.id !== id);
      this.suspensions.delete(id);
      return false;
    });
    return actions;
  }

  /** The next reference instant at which tick() has something to do, or null. */
  get nextTickDeadline() {
    let deadline = this.nextPresence;
    for (const record of this.suspensions.values()) {
      if (record.endReported || record.end !== null) continue;
      const recordDeadline = CoordinatorCore.deadline(record);
      deadline = minBig(deadline ?? recordDeadline, recordDeadline);
    }
    const segments = this.segments();
    const end = segments[segments.length - 1];
    if (end !== undefined && end.ended && !this.isReported(end.start)) {
      deadline = minBig(deadline ?? end.start, end.start);
    }
    for (const due of [this.queueReplica.nextDeadline, this.transitionDue, this.assumeDue]) {
      if (due !== null) deadline = minBig(deadline ?? due, due);
    }
    return deadline;
  }

  // MARK: Commands to the local player

  /**
   * The local player's commands for what changed in the timeline. With `now`, segments over by
   * then are left out: the player is told once where to be (CoordinatorCore.announce(now:)).
   */
  announce(now = null) {
    const state = this.state;
    if (state === null || this.isDetached || !(this.joinedSelf || this.configuration.holdsCommandsUntilJoined !== true) || this.holdsForQueueAnswer) return [];
    if (state.item !== this.localItem) {
      this.announced = [];
      this.announcedRevision = null;
      if (this.ignoredRevision === state.revision) return [];
      this.ignoredRevision = state.revision;
      return [
        eventAction(playbackEvent("commandIgnored", {
          player: this.label(this.participant), originator: state.originator, originatorName: this.names.get(state.originator) ?? null, item: state.item,
          revision: state.revision, detail: `local item ${this.localItem ?? "none"}`,
        })),
      ];
    }
    const current = this.segments();
    const actions = [];
    let from = 0;
    let backfill = null;
    if (this.announcedRevision === state.revision) {
      while (from < current.length && from < this.announced.length && sameMotion(current[from], this.announced[from])) from += 1;
      // A command replaces only what is scheduled at or after its instant: when a segment the
      // player was given moved later or went away, the player is told what holds at its instant.
      if (from < this.announced.length && (from >= current.length || current[from].start > this.announced[from].start)) {
        const instant = this.announced[from].start;
        const index = current.findLastIndex((segment) => segment.start <= instant);
        backfill = commandKind(current[index < 0 ? 0 : index], instant);
      }
      if (from < current.length) from = Math.max(from, segmentInForce(current, now));
    } else {
      from = segmentInForce(current, now);
      const first = current[from];
      const before = this.announced.findLast((segment) => segment.start <= first.start) ?? this.announced[0];
      if (before === undefined || Math.abs(segmentItemTime(before, first.start) - first.itemTime) > 1e-6) {
        actions.push(commandAction(this.command({ kind: "seek", itemTime: first.itemTime, referenceTime: first.start, completionDueDate: first.start }, state)));
      }
    }
    if (backfill !== null && (from >= current.length || backfill.referenceTime < current[from].start)) {
      actions.push(commandAction(this.command(backfill, state)));
    }
    for (const segment of current.slice(from)) actions.push(commandAction(this.command(commandKind(segment, segment.start), state)));
    this.announced = current;
    this.announcedRevision = state.revision;
    return actions;
  }

  command(kind, state) {
    const originatorName = this.names.get(state.originator);
    return {
      ...kind, originator: state.originator, ...(originatorName === undefined ? {} : { originatorName }),
      expectedItemIdentifier: state.item, revision: state.revision,
    };
  }

  /** How events name a member: its announced name when known, its channel id otherwise. */
  label(member) {
    return this.names.get(member) ?? member;
  }

  // MARK: Local API

  /** Where a proposal made now is anchored: one lead ahead, never before the current state's anchor. */
  proposalAnchor(now) {
    return maxBig(now + this.lead, this.state?.anchorReferenceTime ?? now);
  }

  /** Proposes a rate change (0 pauses); returns the message to send. Throws PlaybackCoordinatorError. */
  proposeRate(rate, now) {
    if (!(rate === 0 || (rate >= PLAYING_RATES.lower && rate <= PLAYING_RATES.upper))) throw PlaybackCoordinatorError.invalidRate(rate);
    const anchor = this.proposalAnchor(now);
    let label;
    let next;
    const state = this.state;
    if (state !== null) {
      label = rate === 0 ? "pause" : state.rate === 0 ? "play" : "rate";
      next = makeState({
        item: state.item, rate, anchorItemTime: Math.max(0, this.effectiveItemTime(anchor) ?? 0),
        anchorReferenceTime: anchor, originator: this.participant, intendedRate: rate > 0 ? rate : state.intendedRate,
        duration: this.durationOf(state.item), entry: state.entry ?? null,
      });
    } else if (this.firstQueueEntry() !== null) {
      // The first play of a queue: the local item's entry, or the first entry.
      const entry = this.firstQueueEntry();
      if (this.localItem === null) this.localItem = entry.item;
      label = rate === 0 ? "pause" : "play";
      next = makeState({
        item: entry.item, rate, anchorItemTime: 0, anchorReferenceTime: anchor, originator: this.participant,
        duration: entry.duration ?? this.durationOf(entry.item), entry: entry.id,
      });
    } else {
      if (this.localItem === null) throw PlaybackCoordinatorError.noItem();
      label = rate === 0 ? "pause" : "play";
      next = makeState({
        item: this.localItem, rate, anchorItemTime: 0, anchorReferenceTime: anchor, originator: this.participant,
        duration: this.durationOf(this.localItem),
      });
    }
    return [send({ state: { state: next, command: label, sentAt: now } }, STATE_KEY)];
  }

  /** The entry a first play starts a queue from: the local item's entry, or the first entry without a local item; null otherwise. */
  firstQueueEntry() {
    const order = this.queue.playOrder;
    return order.find((entry) => entry.item === this.localItem) ?? (this.localItem === null ? order[0] ?? null : null);
  }

  /** Proposes play at the intended rate. */
  proposePlay(now) {
    return this.proposeRate(this.state?.intendedRate ?? 1, now);
  }

  /** Proposes a seek to `itemTime`, keeping the current rate. */
  proposeSeek(itemTime, now) {
    if (!Number.isFinite(itemTime) || !(itemTime >= 0)) throw PlaybackCoordinatorError.invalidItemTime(itemTime);
    const item = this.state?.item ?? this.localItem;
    if (item === null) throw PlaybackCoordinatorError.noItem();
    const duration = this.durationOf(item);
    if (duration !== null && itemTime > duration) throw PlaybackCoordinatorError.seekPastEnd(itemTime, duration);
    const next = makeState({
      item, rate: this.state?.rate ?? 0, anchorItemTime: itemTime, anchorReferenceTime: this.proposalAnchor(now),
      originator: this.participant, intendedRate: this.state?.intendedRate ?? null, duration, entry: this.state?.entry ?? null,
    });
    return [send({ state: { state: next, command: "seek", sentAt: now } }, STATE_KEY)];
  }

  /** Loads `identifier` locally and proposes it to the group at `itemTime`, keeping the rate. */
  proposeItem(identifier, itemTime, now) {
    if (!Number.isFinite(itemTime) || !(itemTime >= 0)) throw PlaybackCoordinatorError.invalidItemTime(itemTime);
    const duration = this.durationOf(identifier);
    if (duration !== null && itemTime > duration) throw PlaybackCoordinatorError.seekPastEnd(itemTime, duration);
    // The proposer's player loads it, unless this member has no copy of it (its player would ignore the commands).
    if (this.canPresent === null || this.canPresent(identifier) === true) this.localItem = identifier;
    const next = makeState({
      item: identifier, rate: this.state?.rate ?? 0, anchorItemTime: itemTime, anchorReferenceTime: this.proposalAnchor(now),
      originator: this.participant, intendedRate: this.state?.intendedRate ?? null, duration,
    });
    return [send({ state: { state: next, command: "item", sentAt: now } }, STATE_KEY)];
  }

  /** Tells the core which item the local player has loaded (without proposing it). */
  setLocalItem(identifier) {
    if (identifier === this.localItem) return [];
    this.localItem = identifier;
    this.announced = [];
    this.announcedRevision = null;
    this.ignoredRevision = null;
    return this.announce();
  }

  /** Gives the local player the current state again (for example after it reloaded). */
  reapplyCurrentState() {
    this.announced = [];
    this.announcedRevision = null;
    this.ignoredRevision = null;
    return this.announce();
  }

  /** Begins a local suspension; returns `{id, actions}`. A detaching reason withholds commands at once. */
  beginSuspension(reason, now) {
    this.suspensionCounter += 1;
    const id = `${this.participant}#${this.suspensionCounter}`;
    const waits = this.waitsOut(reason);
    this.localSuspensions.push({ id, reason, waits });
    const notice = {
      id, phase: "begin", reason, effectiveAt: now + this.lead,
      waits, timeout: this.configuration.suspensionTimeout, proposedItemTime: null, sentAt: now, history: this.history(),
    };
    this.ownPending.push({ id, participant: this.participant, reason, begin: notice.effectiveAt, end: null, timeout: notice.timeout, waits });
    return { id, actions: [send({ suspension: notice }, suspensionKey(this.participant))] };
  }

  /** Whether a suspension for `reason` begun now makes the group wait (waiting reason, participant limit). */
  waitsOut(reason) {
    if (!this.configuration.waitingReasons.has(reason)) return false;
    const limit = this.configuration.participantLimits?.get(reason);
    if (limit === undefined) return true;
    return Math.max(this.members.size, 1) <= limit;
  }

  /** Whether a local suspension for a detaching reason is open (commands are withheld). */
  get isDetached() {
    return this.localSuspensions.some((s) => DETACHING_REASONS.has(s.reason));
  }

  /**
   * Ends a local suspension, optionally proposing a new item time (sent as a seek after it).
   * Ending the last detaching one gives the player the group's current state.
   */
  endSuspension(id, itemTime, now) {
    const index = this.localSuspensions.findIndex((s) => s.id === id);
    if (index < 0) throw PlaybackCoordinatorError.unknownSuspension(id);
    // Checked before anything changes (CoordinatorCore.endSuspension): a time past the end proposes the end.
    if (itemTime !== null && itemTime !== undefined) {
      if (!Number.isFinite(itemTime) || !(itemTime >= 0)) throw PlaybackCoordinatorError.invalidItemTime(itemTime);
      const item = this.state?.item ?? this.localItem;
      const duration = item === null ? null : this.durationOf(item);
      if (duration !== null) itemTime = Math.min(itemTime, duration);
    }
    const wasDetached = this.isDetached;
    const [{ reason, waits }] = this.localSuspensions.splice(index, 1);
    const effective = now + this.lead;
    const notice = {
      id, phase: "end", reason, effectiveAt: effective, waits,
      timeout: this.configuration.suspensionTimeout, proposedItemTime: itemTime ?? null, sentAt: now, history: this.history(),
    };
    const pending = this.ownPending.find((entry) => entry.id === id);
    const record = this.suspensions.get(id);
    if (pending !== undefined) {
      pending.end = maxBig(effective, pending.begin);
    } else if (record !== undefined) {
      this.ownPending.push({
        id, participant: this.participant, reason, begin: record.begin, end: maxBig(effective, record.begin), timeout: record.timeout, waits: record.counted,
      });
    }
    let actions = [send({ suspension: notice }, suspensionKey(this.participant))];
    if (wasDetached && !this.isDetached) actions = actions.concat(this.reapplyCurrentState());
    if (itemTime !== null && itemTime !== undefined) actions = actions.concat(this.proposeSeek(itemTime, now));
    return actions;
  }

  /** Identifiers of the local suspensions not yet ended, sorted. */
  get openSuspensions() {
    return this.localSuspensions.map((s) => s.id).sort();
  }

  /** Why the local member is suspended now (reasons of its open suspensions, oldest first). */
  get suspensionReasons() {
    return this.localSuspensions.map((s) => s.reason);
  }

  /** The other members, sorted by id: {id, name (or undefined), suspensions: [{id, reason}]}. */
  get otherParticipants() {
    return [...this.members].filter((m) => m !== this.participant).sort(compareStrings).map((member) => ({
      id: member, name: this.names.get(member), suspensions: [...(this.openSuspensionsByMember.get(member) ?? [])],
    }));
  }

  /** What the group knows of suspension `id` (SuspensionStatus), or null. */
  suspensionStatus(id) {
    const record = this.suspensions.get(id);
    if (record === undefined) return null;
    return {
      id: record.id, participant: record.participant, reason: record.reason, begin: record.begin,
      deadline: CoordinatorCore.deadline(record), end: record.end, waits: record.counted,
    };
  }

  // MARK: Queue (CoordinatorCore+Queue.swift)
  //
  // A transition is an ordinary state, anchored at the instant the playing entry ends, at item time
  // 0 of the entry the queue plays next. Every member computes that instant from the same state and
  // proposes the same state a lead (plus TRANSITION_NOTICE) before it; the first proposal in the
  // channel's order applies and the others change nothing (a proposal's `follows`).

  /** How much earlier than the lead a member proposes the transition at an entry's end (BigInt ns). */
  static TRANSITION_NOTICE = milliseconds(500);
  /** How far above the window's median a delay sample may be and still count as the path's (observedDelay). */
  static HELD_DELAY_ALLOWANCE = milliseconds(250);

  /** The group's queue as this member has it (a PlayQueue; empty until it arrived, see hasQueue). */
  get queue() {
    return this.queueReplica.queue;
  }

  /** Whether this member has the group's queue: it joined an empty session, or a member answered its request. */
  get hasQueue() {
    return this.queueReplica.isComplete;
  }

  /** The entry the group plays, if it plays from the queue and the entry is still queued; else null. */
  get currentEntry() {
    const id = this.state?.entry ?? null;
    return id === null ? null : this.queue.entry(id);
  }

  /** Proposes an edit of the queue (queue.js's QueueEdit); it applies when the channel delivers it back. */
  proposeQueueEdit(edit, now) {
    return this.queueReplica.send(edit, now);
  }

  /**
   * Proposes moving the group to the next entry (the first, before anything played). Throws
   * PlaybackCoordinatorError queueNotReceived before the queue arrived, noEntry after the last entry
   * when repeat is not `all`.
   */
  proposeNext(now) {
    if (!this.hasQueue) throw PlaybackCoordinatorError.queueNotReceived();
    const queue = this.queue;
    const entry = queue.entryForNext(this.state?.entry ?? null);
    if (entry === null) {
      throw PlaybackCoordinatorError.noEntry(queue.isEmpty ? "the queue is empty" : `there is no entry after the last one (repeat is ${queue.repeatMode})`);
    }
    return this.proposeEntry(entry, "next", now);
  }

  /** Proposes moving the group to the previous entry. */
  proposePrevious(now) {
    if (!this.hasQueue) throw PlaybackCoordinatorError.queueNotReceived();
    const queue = this.queue;
    const entry = queue.entryForPrevious(this.state?.entry ?? null);
    if (entry === null) {
      throw PlaybackCoordinatorError.noEntry(queue.isEmpty ? "the queue is empty" : `there is no entry before the first one (repeat is ${queue.repeatMode})`);
    }
    return this.proposeEntry(entry, "previous", now);
  }

  /** Proposes moving the group to the entry at 1-based `position` of the play order. */
  proposeJump(position, now) {
    if (!this.hasQueue) throw PlaybackCoordinatorError.queueNotReceived();
    const entry = this.queue.entryAtPosition(position);
    if (entry === null) throw PlaybackCoordinatorError.noEntry(`there is no entry ${position}: the queue has ${this.queue.entries.length}`);
    return this.proposeEntry(entry, "jump", now);
  }

  /** Proposes playing `entry` from its start, keeping the group's motion (playing stays playing at the same rate; paused stays paused). */
  proposeEntry(entry, command, now) {
    const problem = this.itemUnavailability(entry.item);
    if (problem !== null) throw problem;
    if ((this.canPresent !== null && this.canPresent(entry.item) === true) || this.items.some((summary) => summary.item === entry.item)) {
      this.localItem = entry.item;
    }
    const next = makeState({
      item: entry.item, rate: this.state?.rate ?? 0, anchorItemTime: 0, anchorReferenceTime: this.proposalAnchor(now),
      originator: this.participant, intendedRate: this.state?.intendedRate ?? null, duration: entry.duration ?? this.durationOf(entry.item),
      entry: entry.id,
    });
    return [send({ state: { state: next, command, sentAt: now, follows: null } }, STATE_KEY)];
  }

  // MARK: Transitions

  /**
   * The instant the group's timeline reaches the state's own duration (waits included), which every
   * member computes alike: only the state's duration counts here, not a member's file. Null when none.
   */
  groupEnd() {
    const duration = this.state?.duration ?? null;
    if (duration === null) return null;
    const all = this.segmentsEndingAt(duration);
    const last = all[all.length - 1];
    return last !== undefined && last.ended ? last.start : null;
  }

  /** When this member proposes the transition at the end of the playing entry, if it has one to propose; else null. */
  get transitionDue() {
    const end = this.unhandledEnd(this.proposedTransition);
    return end === null ? null : end - this.lead - CoordinatorCore.TRANSITION_NOTICE;
  }

  /**
   * The group's end of the queue entry it plays (while playing, with the queue known), unless
   * `handled` ({revision, end} or null) already names this state's revision and that end; else null.
   */
  unhandledEnd(handled) {
    const state = this.state;
    if (state === null || (state.entry ?? null) === null || !(state.rate > 0) || !this.hasQueue) return null;
    const end = this.groupEnd();
    if (end === null) return null;
    if (handled !== null && handled.revision === state.revision && handled.end === end) return null;
    return end;
  }

  /** Proposes the next entry at the playing entry's end, once due. */
  proposeTransitionIfDue(now) {
    const due = this.transitionDue;
    const state = this.state;
    if (due === null || !(now >= due) || state === null || (state.entry ?? null) === null) return [];
    const end = this.groupEnd();
    if (end === null) return [];
    const entry = state.entry;
    this.proposedTransition = { revision: state.revision, end };
    const following = this.transition(this.participant);
    this.transitionAwaitsQueue = following === null;
    if (following === null) return [];
    return [send({ state: { state: following, command: "advance", sentAt: now, follows: entry } }, STATE_KEY)];
  }

  // MARK: Transitions not ordered in time

  /**
   * When this member plays on by the transition at the playing entry's end if none was ordered by
   * then: a lead before the end, the latest a timely transition arrives (every member proposes it
   * TRANSITION_NOTICE earlier); null once looked at for this state and end.
   */
  get assumeDue() {
    const end = this.unhandledEnd(this.assumeChecked);
    return end === null ? null : end - this.lead;
  }

  /**
   * Plays on by the transition every member proposes at the playing entry's end when none was
   * ordered a lead before it: this member is cut off from the relay (a restart, a failover, the
   * network), as it plays on through an entry while cut off. `state` becomes the transition (keeping
   * the ordered revision) and the ordered state is kept in `assumedFrom`: proposals are judged
   * against it as everywhere else; the transition, once ordered, confirms what the member shows, and
   * anything else ordered replaces it (acceptProposal). Not into an entry this member has no copy of,
   * nor past the queue's end. CoordinatorCore.assumeTransitionIfLate in Swift.
   */
  assumeTransitionIfLate(now) {
    const due = this.assumeDue;
    const ordered = this.state;
    if (due === null || !(now >= due) || ordered === null) return [];
    const end = this.groupEnd();
    if (end === null) return [];
    this.assumeChecked = { revision: ordered.revision, end };
    // Only for an end that has not long passed: one this member learns of more than a lead after it (it
    // joined, or learnt the state, later) was decided by the queue as it was then, not as it is now
    // (group model seed 3164); within a lead the transition is merely late.
    if (!(now < end + this.lead)) return [];
    const computed = this.transition(this.participant);
    if (computed === null) return [];
    const presentable = computed.item === this.localItem || (this.canPresent !== null && this.canPresent(computed.item) === true)
      || this.items.some((summary) => summary.item === computed.item);
    if (!presentable) return [];
    const following = { ...computed, revision: ordered.revision };
    if (this.assumedFrom === null) this.assumedFrom = ordered;
    this.assumedChain.push(following);
    this.state = following;
    // Announced as a new state (it keeps the ordered revision, but it is not that state's timeline
    // moved): the player is told where to be from its anchor on, nothing before.
    this.announcedRevision = null;
    const actions = [];
    if (ordered.item !== following.item || (ordered.entry ?? null) !== (following.entry ?? null)) {
      actions.push(this.changedItem(following, following.revision, "advance", ordered.item));
    }
    return actions.concat(this.followEntryAvailability(now), this.announce(now));
  }

  /**
   * After a wait was ordered or learnt: the assumed transitions hold only while each is still at the
   * end of the state before it (a wait moves the end later); otherwise the member goes back to the
   * ordered state, and assumes again at its new end if still nothing is ordered.
   */
  revalidateAssumption(now) {
    const ordered = this.assumedFrom;
    if (ordered === null) return [];
    const shown = this.state;
    this.state = ordered;
    let holds = true;
    for (const link of this.assumedChain) {
      if (this.groupEnd() !== link.anchorReferenceTime) {
        holds = false;
        break;
      }
      this.state = link;
    }
    if (holds) return [];
    this.state = ordered;
    this.assumedFrom = null;
    this.assumedChain = [];
    this.assumeChecked = null;
    this.announcedRevision = null;
    if (shown === null || (shown.item === ordered.item && (shown.entry ?? null) === (ordered.entry ?? null))) return [];
    return [this.changedItem(ordered, ordered.revision, null, shown.item)].concat(this.followEntryAvailability(now));
  }

  /**
   * The member moved to `next`'s item or entry (from `previous`): its itemChanged event, with the reason `command`
   * gives (none for a return to the ordered state, `command` null) and the originator unless the change was
   * automatic (an entry's end, or that return); the local item follows when this member can present it
   * (CoordinatorCore.changedItem).
   */
  changedItem(next, revision, command, previous) {
    const automatic = command === null || command === "advance";
    if (next.item !== this.localItem && this.canPresent !== null && this.canPresent(next.item) === true) this.localItem = next.item;
    return eventAction(playbackEvent("itemChanged", {
      player: this.label(this.participant), originator: automatic ? null : next.originator,
      originatorName: automatic ? null : this.names.get(next.originator) ?? null, item: next.item,
      referenceTime: referenceSeconds(next.anchorReferenceTime), revision, reason: command === null ? null : CoordinatorCore.changeReason(command),
      detail: previous === null ? null : `from ${previous}`, entry: next.entry,
    }));
  }

  /** The state the group moves to at the playing entry's end, by this member's state and queue (null: none). */
  transition(originator) {
    const state = this.state;
    if (state === null || (state.entry ?? null) === null) return null;
    const end = this.groupEnd();
    if (end === null) return null;
    const next = this.queue.entryAfterEnd(state.entry);
    if (next === null) return null;
    return makeState({
      item: next.item, rate: state.rate, anchorItemTime: 0, anchorReferenceTime: end, originator,
      intendedRate: state.intendedRate, duration: next.duration ?? this.durationOf(next.item), entry: next.id,
    });
  }

  /**
   * What an unauthenticated transition (from a member without control, where only hosts control)
   * applies: the transition this member computes itself, when the proposal names it (the entry it
   * follows and its end, the next entry and its item); otherwise null. A member without a state or the
   * queue cannot check it and takes nothing (a joiner starts from the last signed state and moves on
   * by its own transitions). StateProposal.isUnauthenticated in Swift.
   */
  authenticTransition(proposal, sender) {
    if (proposal.command !== "advance" || this.state === null || !this.hasQueue || !this.transitionApplies(proposal)) return null;
    const following = this.transition(sender);
    if (following === null || following.entry !== (proposal.state.entry ?? null) || following.item !== proposal.state.item) return null;
    return { state: following, command: "advance", sentAt: proposal.sentAt, follows: proposal.follows };
  }

  /**
   * Whether a transition proposal applies: the group plays the entry it follows, and the group's end
   * of it (with the waits known at this point of the channel's order) is its anchor. A member
   * without a state takes it (a joiner reading the retained state).
   */
  transitionApplies(proposal) {
    const state = this.state;
    if (state === null) return true;
    const follows = proposal.follows ?? null;
    if (follows === null || (state.entry ?? null) !== follows) return false;
    const end = this.groupEnd();
    return end !== null && end === proposal.state.anchorReferenceTime;
  }

  /**
   * After this member's own transition (or restatement) was ordered and changed nothing: the relay
   * now keeps it as the retained state, which is not the group's state unless it says the same.
   * Sends the group's state again, so a joiner starts from the right one.
   */
  restateIfReplaced(proposal, sender, now) {
    const state = this.state;
    if (sender !== this.participant || state === null || sameTimeline(state, proposal.state)) return [];
    return [send({ state: { state, command: "restate", sentAt: now, follows: null } }, STATE_KEY)];
  }

  /** Whether the end at `instant` of the state in force was reported already (CoordinatorCore.isReported). */
  isReported(instant) {
    if (this.reportedEnd === null || this.state === null) return false;
    return this.reportedEnd.key === CoordinatorCore.endKey(this.state) || this.reportedEnd.at === instant;
  }

  /** What reportedEnd compares: the state whose end was reported (CoordinatorCore.endKey). */
  static endKey(state) {
    return `${state.revision} ${state.item} ${state.entry ?? ""}`;
  }

  /** Why the group's entry changed, for itemChanged events (null for commands that do not change it). */
  static changeReason(command) {
    switch (command) {
      case "advance": return "end";
      case "next": case "previous": case "jump": case "item": return command;
      default: return null;
    }
  }

  // MARK: Queue messages

  receiveQueueEdit(notice, sender, sequence, now) {
    this.queueReplica.receiveEdit(notice.edit, sender, sequence, (this.assumedFrom ?? this.state)?.entry ?? null, now);
    if (this.transitionAwaitsQueue && this.hasQueue) {
      // An entry may follow now: propose the transition after all (group model seed 4160).
      this.proposedTransition = null;
      this.transitionAwaitsQueue = false;
    }
    let actions = this.tickQueue(now);
    if (this.hasQueue) actions = actions.concat(this.queueEvent("queueChanged", sender, CoordinatorCore.describe(notice.edit), now));
    return actions;
  }

  /** The replica's work when due, and the player's commands held for the queue if it started from the retained copy meanwhile. */
  tickQueue(now) {
    return this.queueReplica.tick(now, this.members).concat(this.releaseHeldCommands(now));
  }

  /** The player's first commands, held while this joiner's state was a retained transition it could not judge, once the queue is in. */
  releaseHeldCommands(now) {
    if (!this.holdsForQueueAnswer || !this.hasQueue) return [];
    this.holdsForQueueAnswer = false;
    return this.followEntryAvailability(now).concat(this.announce(now));
  }

  /**
   * The queue arrived (an answer, or the retained copy): take the answer's state if it is not the
   * one this member started from, and replay on it the proposals and queue edits ordered after the
   * request, each in its turn (a removal of the playing entry depends on which entry played then:
   * group model seed 2459, CoordinatorCore.queueReceived).
   */
  queueReceived(now) {
    const actions = this.queueEvent("queueChanged", null, "received", now);
    const log = this.joinLog;
    this.joinLog = [];
    const heldAt = this.statesAtOwnRequests;
    this.statesAtOwnRequests = new Map();
    const taken = this.queueReplica.takeAnsweredState();
    if (taken === null || taken.state === null) return actions.concat(this.releaseHeldCommands(now));
    const mine = heldAt.get(taken.through);
    if (mine !== undefined && mine.revision === taken.state.revision && sameTimeline(mine, taken.state)) {
      // This member held the group's state at its request: what it processed since is the group's
      // (a replay would judge proposals against waits ordered after them: group model seed 23984).
      for (const edit of taken.edits) this.queueReplica.applyAnswered(edit.edit, edit.playing);
      return actions.concat(this.releaseHeldCommands(now));
    }
    const before = this.state;
    this.state = { ...taken.state, entry: taken.state.entry ?? null };
    const pending = [...taken.edits];
    const applyEdits = (until) => {
      while (pending.length > 0 && (until === null || pending[0].sequence < until)) {
        this.queueReplica.applyAnswered(pending.shift().edit, (this.assumedFrom ?? this.state)?.entry ?? null);
      }
    };
    for (const entry of log) {
      if (entry.sequence <= taken.through) continue;
      applyEdits(entry.sequence);
      this.acceptProposal(entry.proposal, entry.sender, entry.sequence, now);
    }
    applyEdits(null);
    const after = this.state;
    if (before !== null && after !== null && before.revision === after.revision && sameTimeline(before, after)) return actions.concat(this.releaseHeldCommands(now));
    this.holdsForQueueAnswer = false;
    if (after !== null && after.item !== this.localItem && this.canPresent !== null && this.canPresent(after.item) === true) this.localItem = after.item;
    this.announced = [];
    this.announcedRevision = null;
    return actions.concat(this.followEntryAvailability(now), this.announce(now));
  }

  /** Whether the group plays a queue entry whose item this member cannot present. */
  get lacksCurrentEntry() {
    const state = this.state;
    if (state === null || state.entry === null || state.entry === undefined || this.canPresent === null) return false;
    return state.item !== this.localItem && this.canPresent(state.item) !== true;
  }

  /**
   * Sits out a queue entry this member has no copy of (CoordinatorCore.followEntryAvailability): a
   * `missingEntry` event and a detaching coordinatedPlaybackNotPossible suspension, which the group
   * does not wait for; ended once the group plays an item it has (the player then gets the state).
   */
  followEntryAvailability(now) {
    if (this.configuration.suspendsWhileEntryMissing !== true) return [];
    if (!(this.joinedSelf || this.configuration.holdsCommandsUntilJoined !== true) || this.holdsForQueueAnswer) return [];
    const state = this.state;
    if (this.lacksCurrentEntry) {
      const entry = state.entry;
      if (this.missingEntry !== null && this.missingEntry.entry === entry) return [];
      const known = this.queue.entry(entry);
      let actions = [eventAction(playbackEvent("missingEntry", {
        player: this.label(this.participant), originator: this.participant, originatorName: this.name,
        item: state.item, referenceTime: referenceSeconds(state.anchorReferenceTime), revision: state.revision,
        detail: known?.title ?? null, entry,
      }))];
      if (this.missingEntry !== null) {
        this.missingEntry = { suspension: this.missingEntry.suspension, entry };
      } else {
        const begun = this.beginSuspension("coordinatedPlaybackNotPossible", now);
        this.missingEntry = { suspension: begun.id, entry };
        actions = actions.concat(begun.actions);
      }
      return actions;
    }
    if (this.missingEntry === null) return [];
    const missing = this.missingEntry;
    this.missingEntry = null;
    try {
      return this.endSuspension(missing.suspension, null, now);
    } catch {
      return [];
    }
  }

  queueEvent(type, originator, detail, now) {
    return [eventAction(playbackEvent(type, {
      player: this.label(this.participant), originator, originatorName: originator === null ? null : this.names.get(originator) ?? null,
      referenceTime: referenceSeconds(now), detail, entry: this.state?.entry ?? null,
    }))];
  }

  /** An edit in words, for events. */
  static describe(edit) {
    switch (edit.op) {
      case "add": {
        const titles = edit.entries.slice(0, 3).map((entry) => entry.title).join(", ") + (edit.entries.length > 3 ? ", …" : "");
        const place = edit.at === "end" ? "at the end" : edit.at === "start" ? "at the start" : "after another entry";
        return `added ${edit.entries.length} (${titles}) ${place}`;
      }
      case "remove": return `removed ${edit.ids.length}`;
      case "move": return "moved an entry";
      case "clear": return "cleared the queue";
      case "repeat": return `repeat ${edit.mode}`;
      case "shuffle": return edit.seed === null || edit.seed === undefined ? "shuffle off" : "shuffle on";
      default: return edit.op;
    }
  }
}
