// The coordinator's shell in the browser: the counterpart of Sources/PlaybackCoordinator/PlaybackCoordinator.swift
// over coordinator.js's CoordinatorCore. It feeds channel events to the core at the reference clock's
// current time, runs the tick timer (presence, suspension timeouts), carries out the core's actions
// (messages to the channel, commands to the player, events to listeners), offers the group commands
// (play, pause, rate, seek, item, suspensions) and turns the player's readiness into suspensions.

import { CoordinatorCore, PlaybackCoordinatorError, defaultConfiguration, milliseconds } from "./coordinator.js";
import { ReadinessFollower } from "./readiness.js";
import { MembershipAnnouncements } from "./notices.js";

/** The coordinator cannot propose anything before the reference clock is synchronized. */
export class NotSynchronizedError extends Error {
  constructor() {
    super("the reference clock is not synchronized yet");
    this.name = "NotSynchronizedError";
  }
}

/** GroupPlayback.Options' coordinator defaults for a member that presents frames: a lead of at least 120 ms. */
export function playbackConfiguration() {
  return { ...defaultConfiguration(), minimumLead: milliseconds(120) };
}

/**
 * How long after this page's connection came back other members may still be resuming theirs (ns): the
 * relay is back for all of them at once, and their reconnect backoff is at most 2 s plus a quarter of
 * jitter (session.js `defaultPolicy`, ReconnectPolicy.swift); the reports they held meanwhile arrive
 * just after their own resume.
 */
export const RESUME_GRACE_NS = 3_000_000_000n;

/**
 * A channel event as the core should see it across a lost connection. The core takes every presence
 * report's `now - sentAt` as a one-way delay (the largest of its last 64 is the delay it reports, and
 * the people list shows); a report sent before the members were all connected again was held by the
 * outage, not by the path: a relay restart made a page report "delay 5423.3 ms" for a minute. So a
 * report sent before this page's connection came back (`outage.until`, reference ns; null while still
 * reconnecting) plus `graceNs` (the others' resumes) is passed on stamped as received now, no delay
 * sample (its other fields are kept: the core reads nothing else from `sentAt`).
 *
 * @param {object} event a channel event.
 * @param {{since: bigint, until: bigint|null}|null} outage the latest lost connection, or null.
 * @param {bigint|null} now reference ns.
 * @param {bigint} [graceNs]
 */
export function withoutOutageDelay(event, outage, now, graceNs = RESUME_GRACE_NS) {
  const report = event?.type === "message" ? event.message?.presence : undefined;
  if (report === undefined || report === null || outage === null || now === null) return event;
  if (outage.until !== null && report.sentAt >= outage.until + graceNs) return event;
  return { ...event, message: { ...event.message, presence: { ...report, sentAt: now } } };
}

export class CoordinatorShell {
  /**
   * @param {object} options
   * @param {{send(message, retainKey): Promise, localParticipant: string}} options.channel the coordination channel;
   *   the shell takes over its `onevent`.
   * @param {{now(): bigint|null}} options.reference the shared reference clock (ReferenceTime ns).
   * @param {{handle(command): void}} options.player the local player.
   * @param {object} [options.configuration] CoordinatorCore tuning.
   * @param {string|null} [options.localItem]
   * @param {((item: string) => boolean)|null} [options.canPresent]
   * @param {string|null} [options.name] the local member's display name.
   * @param {{item: string, duration: number|null}[]} [options.items] what the local player can play, with
   *   durations (the group's timeline ends at an item's duration; presence reports carry them).
   * @param {Array} [options.backlog] channel events received before the shell existed, in order.
   * @param {() => number} [options.realtime] seconds since the Unix epoch, to stamp events.
   * @param {{setTimeout, clearTimeout}} [options.timers]
   * @param {(message: string, error?: unknown) => void} [options.log]
   */
  constructor({
    channel, reference, player, configuration = playbackConfiguration(), localItem = null, canPresent = null, name = null,
    items = [], backlog = [], realtime = () => Date.now() / 1000, timers = globalThis, log = () => {},
  }) {
    this.channel = channel;
    this.reference = reference;
    this.player = player;
    this.realtime = realtime;
    this.timers = timers;
    this.log = log;
    this.core = new CoordinatorCore({ participant: channel.localParticipant, configuration, localItem, canPresent, name, items });
    /** Holds other members' `joined` until they said who they are; silences one-shot members. */
    this.announcements = new MembershipAnnouncements();
    this.lastNow = 0n;
    this.running = false;
    this.tickTimer = null;
    /** Every event, as it happens (PlaybackEvent fields plus `realtime`). */
    this.onevent = () => {};
    this.readiness = new ReadinessFollower({
      graceMs: Number(configuration.readinessGrace ?? milliseconds(100)) / 1e6,
      begin: (reason) => this.beginSuspension(reason),
      end: (id) => this.endSuspension(id),
      timers,
      log,
    });
    this.backlog = backlog;
    /** The latest lost connection to the relay, in reference ns: `{since, until}` (until null while resuming). */
    this.outage = null;
  }

  /** The local participant (16 hex digits). */
  get participant() {
    return this.core.participant;
  }

  /** Starts: the backlog first, then live channel events and the tick timer. */
  start() {
    if (this.running) return;
    this.running = true;
    for (const event of this.backlog.splice(0)) this.receive(event);
    this.channel.onevent = (event) => {
      if (this.running) this.receive(event);
    };
    this.tick();
  }

  receive(event) {
    const now = this.now();
    this.perform(this.core.receive(withoutOutageDelay(event, this.outage, now), now));
    this.releaseAnnouncements();
  }

  /** Tells the held `joined` events whose member has now said who it is (or waited long enough). */
  releaseAnnouncements() {
    if (this.announcements.nextDeadline === null) return;
    for (const event of this.announcements.release(this.now(), (member) => this.presenceOf(member))) {
      this.onevent({ ...event, realtime: this.realtime() });
    }
  }

  presenceOf(member) {
    return { ...this.core.presence(member), name: this.core.names.get(member) ?? null };
  }

  /**
   * The local player jumped back into step after being `seconds` off (negative: behind): the others
   * hear of it in the next presence report ("web-1a2b caught up after 20 s away").
   */
  noteCaughtUp(seconds) {
    this.core.noteCaughtUp(seconds);
  }

  /**
   * The connection to the relay was lost (`true`, the session resumes it) or is back (`false`):
   * presence reports sent before it came back are no delay samples (`withoutOutageDelay`).
   */
  connectionInterrupted(interrupted) {
    const now = this.now();
    if (interrupted) this.outage = { since: now, until: null };
    else if (this.outage !== null && this.outage.until === null) this.outage = { ...this.outage, until: now };
  }

  /**
   * What a shell continuing this one's player in a successor session needs (CoordinatorHandOver in
   * Swift): what this core last told the player, and the item the player has loaded.
   */
  handOver() {
    return { announced: this.core.announced, localItem: this.core.localItem };
  }

  /**
   * Takes over from `handOver` (before `start`): the player follows what it was told, so a successor
   * whose state restates the same timeline sends it nothing that changes its motion.
   */
  adopt({ announced, localItem }) {
    this.core.announced = announced;
    this.core.localItem = localItem;
  }

  /** Stops the tick timer and readiness following; channel events are then ignored. */
  stop() {
    this.running = false;
    if (this.tickTimer !== null) this.timers.clearTimeout(this.tickTimer);
    this.tickTimer = null;
    this.readiness.stop();
  }

  tick() {
    this.tickTimer = null;
    if (!this.running) return;
    const now = this.now();
    this.perform(this.core.tick(now));
    this.releaseAnnouncements();
    let pause = milliseconds(250);
    for (const deadline of [this.core.nextTickDeadline, this.announcements.nextDeadline]) {
      if (deadline === null) continue;
      const until = deadline - this.now();
      pause = until < pause ? (until > 0n ? until : 0n) : pause;
    }
    this.tickTimer = this.timers.setTimeout(() => this.tick(), Number(pause) / 1e6 + 0.1);
  }

  // MARK: State

  /** The group's accepted state, or null. */
  get state() {
    return this.core.state;
  }

  /** The group's item time now, or null before any state. */
  get currentItemTime() {
    return this.core.effectiveItemTime(this.now());
  }

  /** Whether the group waits for a suspended member now. */
  get isWaiting() {
    return this.core.isWaiting(this.now());
  }

  /** Whether the group's timeline has reached the item's end (its last picture held, by nobody's command). */
  get hasEnded() {
    const now = this.now();
    const last = this.core.segments().at(-1);
    return now !== null && last !== undefined && last.ended && now >= last.start;
  }

  /**
   * The members as the page shows them: `{id, name, local, item, delayMs, suspended: [{reason, waits}]}`,
   * the local member first.
   */
  members() {
    const now = this.now();
    const list = [];
    const ids = new Set(this.core.members);
    ids.add(this.core.participant);
    for (const id of ids) {
      // A member that only sends one command (`coplay control`) is nobody to list.
      if (this.core.oneShotMembers.has(id)) continue;
      const report = this.core.reports.get(id);
      const suspended = [];
      for (const record of this.core.suspensions.values()) {
        if (record.participant !== id || record.endReported) continue;
        if (now >= CoordinatorCore.waitEnd(record)) continue;
        suspended.push({ reason: record.reason, waits: record.counted, pending: now < record.begin });
      }
      list.push({
        id,
        name: this.core.names.get(id) ?? null,
        local: id === this.core.participant,
        joined: this.core.members.has(id),
        item: id === this.core.participant ? this.core.localItem : report?.item ?? null,
        delayMs: report === undefined ? null : Number(report.observedDelay) / 1e6,
        suspended,
      });
    }
    list.sort((a, b) => (a.local !== b.local ? (a.local ? -1 : 1) : (a.name ?? a.id).localeCompare(b.name ?? b.id)));
    return list;
  }

  /** How events name a member. */
  label(member) {
    return this.core.label(member);
  }

  // MARK: Group commands (this member is the originator)

  /** Proposes a rate (0 pauses). */
  async rate(rate) {
    await this.send(this.core.proposeRate(rate, this.synchronizedNow()));
  }

  /** Resumes at the intended rate. */
  /**
   * Proposes play. Refused (a PlaybackCoordinatorError) when the group is on an item that, as far as
   * every member's presence report tells, nobody has: playing it would move nobody's picture.
   */
  async play() {
    const item = this.core.state?.item;
    if (item !== undefined && this.core.heardFromEveryMember && this.core.membersHaving(item).size === 0) {
      throw this.core.itemUnavailability(item);
    }
    await this.send(this.core.proposePlay(this.synchronizedNow()));
  }

  async pause() {
    await this.rate(0);
  }

  /** Proposes a seek to `itemTime` seconds, keeping the rate. */
  async seek(itemTime) {
    await this.send(this.core.proposeSeek(itemTime, this.synchronizedNow()));
  }

  /** Moves the group to `identifier` at `itemTime`. */
  async item(identifier, itemTime = 0) {
    await this.send(this.core.proposeItem(identifier, itemTime, this.synchronizedNow()));
  }

  // MARK: Queue (PlaybackCoordinator's queue API)

  /** The group's queue as this member has it (a PlayQueue; see hasQueue). */
  get queue() {
    return this.core.queue;
  }

  /** Whether the group's queue arrived (a joiner asks for it on joining). */
  get hasQueue() {
    return this.core.hasQueue;
  }

  /** The queue entry the group plays, or null. */
  get currentEntry() {
    return this.core.currentEntry;
  }

  /** Proposes an edit of the group's queue (queue.js's QueueEdit); it applies when the channel delivers it back. */
  async editQueue(edit) {
    await this.send(this.core.proposeQueueEdit(edit, this.synchronizedNow()));
  }

  /** The reference instant (BigInt ns) new entry ids are made from (PlaybackCoordinator.makeQueueEntries). */
  entryStamp() {
    return this.synchronizedNow();
  }

  /** Moves the group to the next entry. */
  async next() {
    await this.send(this.core.proposeNext(this.synchronizedNow()));
  }

  /** Moves the group to the previous entry. */
  async previous() {
    await this.send(this.core.proposePrevious(this.synchronizedNow()));
  }

  /** Moves the group to the entry at 1-based `position` of the play order. */
  async jump(position) {
    await this.send(this.core.proposeJump(position, this.synchronizedNow()));
  }

  /**
   * The items this member can play, with durations (its presence reports tell the others; the
   * group's timeline ends at an item's duration). Sent with the next presence report.
   */
  setItems(items) {
    this.core.items = items;
  }

  /** Tells the core which item the local player has loaded. */
  setLocalItem(identifier) {
    this.perform(this.core.setLocalItem(identifier));
  }

  /** Gives the player the group's current state again. */
  reapplyCurrentState() {
    this.perform(this.core.reapplyCurrentState());
  }

  /** Begins a suspension; resolves with its id. */
  async beginSuspension(reason) {
    const { id, actions } = this.core.beginSuspension(reason, this.synchronizedNow());
    await this.send(actions);
    return id;
  }

  /** Ends a local suspension, optionally proposing an item time. */
  async endSuspension(id, itemTime = null) {
    await this.send(this.core.endSuspension(id, itemTime, this.synchronizedNow()));
  }

  /** The player's readiness ("ready" | "loading" | "seeking" | "starved"); repeats are ignored. */
  reportReadiness(readiness) {
    this.readiness.report(readiness);
  }

  // MARK: Plumbing

  now() {
    const now = this.reference.now();
    if (now !== null && now > this.lastNow) this.lastNow = now;
    return this.lastNow;
  }

  synchronizedNow() {
    if (this.reference.now() === null) throw new NotSynchronizedError();
    return this.now();
  }

  async send(actions) {
    for (const action of actions) {
      if (action.type === "send") {
        await this.channel.send(action.message, action.retainKey);
      } else {
        this.perform([action]);
      }
    }
  }

  perform(actions) {
    for (const action of actions) {
      switch (action.type) {
        case "send":
          this.channel.send(action.message, action.retainKey).catch((error) => this.log("send failed", error));
          break;
        case "command":
          try {
            this.player.handle(action.command);
          } catch (error) {
            this.log("the player refused a command", error);
          }
          break;
        case "event":
          for (const event of this.announcements.pass(action.event, this.core.participant, this.now(), (member) => this.presenceOf(member))) {
            this.onevent({ ...event, realtime: this.realtime() });
          }
          break;
        default:
          break;
      }
    }
  }
}

export { PlaybackCoordinatorError };
