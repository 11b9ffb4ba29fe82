// The page's words and numbers, pure (no DOM, no state): the status pill's phases, times and signed
// milliseconds as the page writes them, queue edits and suspension reasons as people say them, the
// people list's delays and avatar colours, and the banner's explanations of a refused or ended
// session. Node-tested (Tests/Web/interface.test.mjs); the panels (interface/*.js) put them on the page.

import { RelayErrorCode } from "../wire/frame.js";

/**
 * How good a sync error is (ms): "good" within the dead band `bandMs` (+1 ms: what rVFC shows of the
 * media clock moves in 3.3 ms steps, so a few ms is as good as a browser gets), "warn" within a frame
 * (`frameMs`), else "bad".
 */
export function errorTone(errorMs, bandMs, frameMs) {
  const abs = Math.abs(errorMs);
  if (abs <= bandMs + 1) return "good";
  return abs <= Math.max(frameMs, bandMs + 1) ? "warn" : "bad";
}

/** How the page names a member's label: "Someone" for none, "NAME (you)" for this page's name, "member abcd" for an id. */
export function memberLabel(label, ownName) {
  if (label === undefined || label === null) return "Someone";
  if (label === ownName) return `${label} (you)`;
  return isParticipantID(label) ? `member ${label.slice(-4)}` : label;
}

export const PHASES = {
  starting: ["Starting", "busy"],
  connecting: ["Connecting", "busy"],
  syncing: ["Syncing clock", "busy"],
  media: ["Waiting for the video", "busy"],
  checking: ["Checking the video", "busy"],
  joining: ["Joining", "busy"],
  joined: ["Joined", "good"],
  reconnecting: ["Reconnecting", "busy"],
  mismatch: ["Wrong video", "bad"],
  error: ["Not connected", "bad"],
  ended: ["Session over", "bad"],
  removed: ["Removed", "bad"],
  leftBehind: ["Left behind", "bad"],
};

export function clockText(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) seconds = 0;
  const whole = Math.floor(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function preciseTime(seconds) {
  return `${clockText(seconds)}.${String(Math.floor(((seconds % 1) + 1) % 1 * 10))}`;
}

export const isParticipantID = (label) => typeof label === "string" && /^[0-9a-f]{16}$/.test(label);

/** A queue edit as the log says it (CoordinatorCore.describe's words, as people say them). */
export function queueChangeText(detail) {
  const text = String(detail ?? "changed the queue");
  if (text.startsWith("repeat ")) return `set repeat to ${text.slice(7)}`;
  if (text === "shuffle on") return "turned shuffle on";
  if (text === "shuffle off") return "turned shuffle off";
  return text.replace(/^(added|removed) 1 /, "$1 one ").replace(/^removed 1$/, "removed an entry").replace(/^removed (\d+)$/, "removed $1 entries");
}

export function reasonText(reason) {
  if (reason === "buffering") return "loading";
  if (reason === "stallRecovery") return "stalled";
  if (reason === "playingInterstitial") return "playing something else";
  if (reason === "coordinatedPlaybackNotPossible") return "not following";
  if (reason === "userActionRequired") return "waiting for a click";
  return String(reason ?? "away").replace(/^custom:/, "");
}

export function signedMs(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  const abs = Math.abs(ms);
  const digits = abs < 10 ? 2 : abs < 100 ? 1 : 0;
  return `${ms >= 0 ? "+" : "−"}${abs.toFixed(digits)} ms`;
}

export function avatarColor(id) {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) % 360;
  return `hsl(${h} 70% 68%)`;
}

/**
 * A member's reported delay for the people list. The report is the largest one-way delay the member saw
 * over its last 64 presence reports (about a minute); across a relay restart that includes messages held
 * during the outage (seconds), which is not the path's delay. Above the coordinator's largest lead (2 s)
 * no delay can be a path's, so the list says what it is instead of showing "delay 5423.3 ms" for a minute.
 */
export function delayText(delayMs) {
  if (delayMs > 2000) return "delay — (held during a reconnect)";
  return `delay ${delayMs.toFixed(1)} ms`;
}

export function describeOpenFailure(error, wsURL) {
  if (error?.code === RelayErrorCode.unauthorized) {
    return ["Wrong secret", "The relay refused this invite: its secret does not match the session. Ask the host for the link again."];
  }
  if (error?.code === RelayErrorCode.sessionEnded) return ["Session over", "This session has ended."];
  if (error?.code !== undefined) return ["The relay refused to connect", error.message];
  return ["Cannot reach the relay", `No connection to ${wsURL}. Is \`coplay serve\` running, and is this the address it printed?`];
}

export function describeEnd(reason, wasJoined) {
  if (reason === "ended") return ["Session over", "The host ended the session."];
  if (reason === "left") return ["You left", "This page left the session."];
  if (reason.startsWith("connectionLost")) {
    const detail = reason.replace(/^connectionLost:?\s*/, "");
    if (!wasJoined) return ["Relay closed", `The relay closed the connection before this page joined. ${detail || "Reload the page once `coplay serve` runs again."}`.trim()];
    return ["Relay closed", `The connection to the relay was lost and could not be resumed. ${detail || "Playback stopped here; reload the page once `coplay serve` runs again."}`.trim()];
  }
  if (reason.startsWith("refused")) return ["The relay refused this member", reason.replace(/^refused:\s*/, "")];
  return ["Session over", reason];
}

/**
 * What the page says about a host's removal (removal.js's outcome; `coplay host` / `join` print the
 * same): [notice, banner title, banner text], the banner's null for a move (the page plays on).
 */
export function describeRemoval(outcome) {
  if (outcome.removed) {
    const text = `you were removed from this session by ${outcome.removed.by ?? "a host"}`;
    return [text, "You were removed", `${text[0].toUpperCase()}${text.slice(1)}. Playback stopped here; ask a host for a new link to watch again.`];
  }
  if (outcome.moved) return [`${outcome.moved.removed} was removed; moved to a new session`, null, null];
  const { removed, reason } = outcome.leftBehind;
  return [
    `${removed} was removed; this page was left behind`,
    "Left behind",
    `A host removed ${removed} and moved everyone else to a new session, but ${LEFT_BEHIND[reason] ?? LEFT_BEHIND.noInvite}. Playback stopped here and this page no longer follows the group; ask a host for a new link to watch again.`,
  ];
}

/** Why a page was left behind (removal.js's `leftBehind.reason`), as the banner says it. */
const LEFT_BEHIND = {
  noSealingKey: "this browser could not make the key a new session's invite is sealed to (its WebCrypto has no X25519), so this page was not given one",
  noInvite: "this page was not given its invite (its key did not reach the host in time, or it joined after the removal was prepared)",
  unopened: "the invite sealed to this page did not open",
};
