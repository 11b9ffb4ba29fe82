// Notices people see over the video: "alice paused at 12:34", "waiting for carol (loading)",
// "dave joined". The same words as Swift's PlaybackNotices (the mpv member's on-screen display):
// both are checked by Tests/Vectors/notices/notices.json. And MembershipAnnouncements, the twin of
// Swift's: another member's `joined` waits for its first presence report (then it names the member),
// and a one-shot member (`coplay control`, its presence says `oneShot`) is announced neither
// joining nor leaving. Pure: no DOM, no clock.

/** Which notices are shown: every one, only commands, or none (`--notices` on coplay's CLI). */
export const NOTICE_LEVELS = Object.freeze(["all", "commands", "off"]);

/** The event types the level `commands` keeps. */
export const COMMAND_TYPES = new Set(["play", "pause", "seek", "rate", "item", "next", "previous", "jump", "queueChanged", "itemChanged"]);

/** A position as people read it: `12:34` under an hour, `1:02:03` from an hour on (the second on screen). */
export function noticePosition(seconds) {
  const whole = Number.isFinite(seconds) ? Math.max(0, Math.floor(seconds)) : 0;
  const h = Math.floor(whole / 3600);
  const m = Math.floor(whole / 60) % 60;
  const s = whole % 60;
  const ss = s < 10 ? `0${s}` : `${s}`;
  return h > 0 ? `${h}:${m < 10 ? `0${m}` : m}:${ss}` : `${m}:${ss}`;
}

/** A rate as people read it: `1.25`, `2`, `0.5` (at most four decimals). */
export function noticeNumber(value) {
  const scaled = Math.round(value * 10000);
  const whole = Math.trunc(scaled / 10000);
  let fraction = scaled % 10000;
  if (fraction === 0) return `${whole}`;
  let digits = "";
  for (let i = 0; i < 4; i += 1) {
    digits += `${Math.floor(fraction / 1000)}`;
    fraction = (fraction % 1000) * 10;
  }
  return `${whole}.${digits.replace(/0+$/, "")}`;
}

const quoted = (text) => `\u201C${text}\u201D`;

function queueEdit(detail) {
  const words = (detail ?? "").split(" ").filter((w) => w !== "");
  const entries = (count) => (count === "1" ? "1 entry" : `${count} entries`);
  switch (words[0]) {
    case "added": if (words.length > 1) return `added ${entries(words[1])}`; break;
    case "removed": if (words.length > 1) return `removed ${entries(words[1])}`; break;
    case "moved": return "moved an entry";
    case "cleared": return "cleared the queue";
    case "repeat": if (words.length > 1) return `set repeat to ${words[1]}`; break;
    case "shuffle": if (words.length > 1) return `turned shuffle ${words[1]}`; break;
    default: break;
  }
  return "changed the queue";
}

function waitReason(reason) {
  switch (reason) {
    case "buffering": return "loading";
    case "stallRecovery": return "stalled";
    case "userChangingTime": return "changing the time";
    case "interruption": return "interrupted";
    case "userActionRequired": return "needs to act";
    case "playingInterstitial": return "interstitial";
    case null: case undefined: return "suspended";
    default: return reason.startsWith("custom:") ? reason.slice("custom:".length) : reason;
  }
}

const present = (value) => value !== null && value !== undefined;

/**
 * The words for one event (a coordinator event object), without the state Notices keeps and without
 * a level: null for events that are no notice.
 */
export function noticeText(event, local = null, titles = {}) {
  const isLocal = present(event.originator) && event.originator === local;
  const who = isLocal ? "you" : event.originatorName ?? (present(event.originator) ? `member ${String(event.originator).slice(-4)}` : "someone");
  const at = noticePosition(event.itemTime ?? 0);
  const title = (present(event.entry) ? titles[event.entry] : undefined) ?? (present(event.item) ? titles[event.item] : undefined) ?? null;
  switch (event.type) {
    case "play": {
      const rate = event.rate ?? 1;
      return rate === 1 ? `${who} played from ${at}` : `${who} played at ${noticeNumber(rate)}× from ${at}`;
    }
    case "pause": return `${who} paused at ${at}`;
    case "seek": return `${who} moved to ${at}`;
    case "rate": {
      const rate = event.rate ?? 0;
      return rate === 0 ? `${who} paused at ${at}` : `${who} changed the speed to ${noticeNumber(rate)}×`;
    }
    case "item": return `${who} switched to ${title === null ? "another video" : quoted(title)}`;
    case "next": return `${who} skipped to ${title === null ? "the next entry" : quoted(title)}`;
    case "previous": return `${who} went back to ${title === null ? "the previous entry" : quoted(title)}`;
    case "jump": return `${who} jumped to ${title === null ? "another entry" : quoted(title)}`;
    case "itemChanged": return event.reason === "end" ? `next: ${title ?? "the next entry"}` : null;
    case "queueChanged": return present(event.originator) ? `${who} ${queueEdit(event.detail)}` : null;
    case "itemEnded": return `${title === null ? "the video" : quoted(title)} ended`;
    case "joined": return isLocal ? null : `${who} joined`;
    case "left": return isLocal ? null : `${who} left`;
    case "suspensionBegan": return event.waits === true ? `waiting for ${who} (${waitReason(event.reason)})` : null;
    case "suspensionEnded":
      if (event.waits !== true || event.detail === "member left") return null;
      if (event.timedOut === true) return `stopped waiting for ${who}`;
      return isLocal ? "you are ready" : `${who} is ready`;
    case "caughtUp": {
      const error = event.errorMs ?? 0;
      const seconds = Math.round(Math.abs(error) / 1000);
      return error < 0 ? `${who} caught up after ${seconds} s away` : `${who} was ${seconds} s ahead and jumped back in step`;
    }
    // A message as it came (history from before this member joined is not news).
    case "chat": return event.detail !== "history" && present(event.text) ? `${who}: ${event.text}` : null;
    // Where only hosts control: the host granted or revoked a member's control (named as the statement names it).
    case "roleChanged": {
      const name = event.text ?? "a member";
      return event.detail === "grant" ? `${name} may control the session now` : `${name} no longer controls the session`;
    }
    default: return null;
  }
}

/** Feed it every event in order; `notice(event)` answers the text to show, or null (Swift's PlaybackNotices). */
export class Notices {
  constructor({ level = "all", local = null, titles = {} } = {}) {
    this.level = level;
    this.local = local;
    this.titles = titles;
    this.ownJoin = null;
    this.sawState = false;
  }

  notice(event) {
    const isLocal = present(event.originator) && event.originator === this.local;
    if (event.type === "joined") {
      if (isLocal) {
        this.ownJoin = event.referenceTime ?? this.ownJoin ?? 0;
        return null;
      }
      // Members listed when this one joined were there already: not news.
      if (this.ownJoin === null || !present(event.referenceTime) || !(event.referenceTime > this.ownJoin)) return null;
    } else if (["play", "pause", "seek", "rate", "item"].includes(event.type)) {
      // The first state is what the group was doing when this member came (or its own start).
      const first = !this.sawState;
      this.sawState = true;
      if (first) return null;
    }
    if (this.level === "off" || (this.level !== "all" && !COMMAND_TYPES.has(event.type))) return null;
    return noticeText(event, this.local, this.titles);
  }
}

/**
 * Decides when another member's `joined` and `left` are told (Swift's MembershipAnnouncements):
 * a `joined` waits for the member's first presence report, or `nameWait` (ns); a one-shot member,
 * and one that came and went before it was told, are announced neither joining nor leaving.
 * `presence(member)` answers `{reported, oneShot, name}`; times are reference ns (bigint).
 */
export class MembershipAnnouncements {
  constructor(nameWait = 3_000_000_000n) {
    this.nameWait = nameWait;
    this.held = [];
    this.silenced = new Set();
  }

  get nextDeadline() {
    let deadline = null;
    for (const { since } of this.held) if (deadline === null || since + this.nameWait < deadline) deadline = since + this.nameWait;
    return deadline;
  }

  pass(event, local, now, presence) {
    const member = event.originator;
    if ((event.type !== "joined" && event.type !== "left") || !present(member) || member === local) return [event];
    if (event.type === "joined") {
      this.held = this.held.filter((entry) => entry.event.originator !== member);
      this.silenced.delete(member);
      this.held.push({ event, since: now });
      return this.release(now, presence);
    }
    const index = this.held.findIndex((entry) => entry.event.originator === member);
    if (index >= 0) {
      this.held.splice(index, 1);
      return [];
    }
    if (this.silenced.delete(member) || presence(member).oneShot) return [];
    return [event];
  }

  release(now, presence) {
    const told = [];
    const kept = [];
    for (const entry of this.held) {
      const member = entry.event.originator;
      const known = presence(member);
      if (known.oneShot) this.silenced.add(member);
      else if (known.reported || now >= entry.since + this.nameWait) told.push({ ...entry.event, originatorName: known.name ?? entry.event.originatorName ?? null });
      else kept.push(entry);
    }
    this.held = kept;
    return told;
  }
}
