// What happens, as the person reads it: coordinator and player events become log lines and notices
// over the video (and the hook's events), and the player's notices (muted autoplay, another video,
// the end) the overlay.

import { $, shell, state } from "./state.js";
import { isParticipantID, preciseTime, queueChangeText, reasonText, signedMs } from "./words.js";
import { entryName, flushPendingJoins, keepEvent, logLine, originatorLabel, pendingJoins } from "./log.js";
import { showNotice } from "./noticeboard.js";
import { updateUI } from "./status.js";
import { followEntry, onQueueChanged } from "./copies.js";

// The events of accepted commands, queue commands included (the first of them is the group's state
// as the page found it).
const COMMAND_EVENTS = new Set(["play", "pause", "seek", "rate", "item", "next", "previous", "jump"]);

/** Coordinator and player events -> log lines (and notices over the video). */
export function onPlaybackEvent(event) {
  showNotice(event);
  // This page's player jumped back into step from far off (the computer slept): the others hear of it.
  if (event.type === "correction" && event.detail === "seek" && Math.abs(event.errorMs ?? 0) >= 2000) shell?.noteCaughtUp(event.errorMs / 1000);
  if (COMMAND_EVENTS.has(event.type) && !state.sawGroupState) {
    // The first state is the group's as the page found it (retained at the relay), not something
    // someone just did.
    state.sawGroupState = true;
    const where = preciseTime(event.itemTime);
    logLine(event.rate > 0 ? `The group is playing (from ${where}${event.rate !== 1 ? ` at ${event.rate}×` : ""})` : `The group is paused at ${where}`, "info", event);
    updateUI();
    followEntry();
    return;
  }
  switch (event.type) {
    case "joined":
      // A member names itself in its first presence report, a moment after joining: its line waits for
      // the name (up to 3 s). One that leaves unnamed only sent something (`coplay chat`): no lines.
      if (event.originator !== state.participantId && isParticipantID(shell?.label(event.originator) ?? event.originator)) {
        pendingJoins.set(event.originator, { event, since: performance.now() });
      } else {
        logLine("joined", "member", event, originatorLabel(event));
      }
      break;
    case "left":
      flushPendingJoins();
      if (pendingJoins.delete(event.originator)) break;
      logLine("left", "member", event, originatorLabel(event));
      break;
    case "play":
      logLine(`played from ${preciseTime(event.itemTime)}${event.rate !== 1 ? ` at ${event.rate}×` : ""}`, "command", event, originatorLabel(event));
      break;
    case "pause":
      logLine(`paused at ${preciseTime(event.itemTime)}`, "command", event, originatorLabel(event));
      break;
    case "seek":
      logLine(`moved to ${preciseTime(event.itemTime)}`, "command", event, originatorLabel(event));
      break;
    case "rate":
      logLine(`set the speed to ${event.rate}×`, "command", event, originatorLabel(event));
      break;
    case "item":
      logLine("switched the video", "command", event, originatorLabel(event));
      break;
    case "next":
      logLine(`moved everyone to the next entry, ${entryName(event)}`, "command", event, originatorLabel(event));
      break;
    case "previous":
      logLine(`went back to ${entryName(event)}`, "command", event, originatorLabel(event));
      break;
    case "jump":
      logLine(`jumped to ${entryName(event)}`, "command", event, originatorLabel(event));
      break;
    case "itemChanged":
      if (event.reason === "end") logLine(`Now playing ${entryName(event)}`, "info", event);
      else if (event.detail && event.entry === null) logLine(`The group now plays ${event.item === state.activity?.item ? state.activity?.title ?? "this video" : "another video"}`, "info", event);
      followEntry();
      break;
    case "queueChanged":
      if (event.detail !== "received") logLine(queueChangeText(event.detail), "command", event, event.originator === null ? undefined : originatorLabel(event));
      onQueueChanged();
      break;
    case "itemEnded":
      logLine(`The video ended at ${preciseTime(event.itemTime)}: everyone holds its last frame`, "info", event);
      break;
    case "commandIgnored":
      // The group plays an item this page has no copy of (or not yet: the core names it before the
      // queue arrived): followEntry says which entry and asks for it.
      followEntry();
      break;
    case "suspensionBegan":
      logLine(`is ${reasonText(event.reason)}${event.waits ? " — everyone waits" : ""}`, "warn", event, originatorLabel(event));
      break;
    case "suspensionEnded":
      logLine(event.timedOut ? "took too long; the group goes on" : "is ready again", event.timedOut ? "warn" : "info", event, originatorLabel(event));
      break;
    case "caughtUp":
      {
        const seconds = Math.round(Math.abs(event.errorMs ?? 0) / 1000);
        logLine(event.errorMs < 0 ? `caught up after ${seconds} s away` : `was ${seconds} s ahead and jumped back in step`, "info", event, originatorLabel(event));
      }
      break;
    case "unsupportedMessage":
      // A member runs a newer coplay: say so once (the coordinator reports each sender, kind and version once).
      logLine(`sent a ${event.detail}`, "warn", event, originatorLabel(event));
      break;
    case "correction":
      if (event.detail === "seek" && event.afterStart) {
        // A start's own adjustment, not the page losing the group: with an audio track Chromium's media
        // clock starts with the audio output, tens of ms after play() and differently each time.
        logLine(`Start adjusted with a seek (was ${signedMs(event.errorMs)})`, "info", event);
      } else if (event.detail === "seek") logLine(`Resynchronized with a seek (was ${signedMs(event.errorMs)})`, "warn", event);
      else if (event.detail === "restart") {
        // A start whose first frames were off, done again at once: kept for the hook, not logged.
        keepEvent({ ...event, text: `start redone (was ${signedMs(event.errorMs)})`, kind: "correction" });
      } else {
        state.trims += 1; // speed trims are frequent: counted, kept in the hook's events, not logged
        keepEvent({ ...event, text: "trim", kind: "correction" });
      }
      break;
    case "stopped":
      // The frame this page stopped on (compared with the other members' `stopped` lines): kept for the hook, not logged.
      keepEvent({ ...event, text: `stopped at frame ${event.index ?? "?"}`, kind: "stopped" });
      break;
    default:
      break;
  }
  updateUI();
}

export function onPlayerNotice(notice) {
  const overlay = $("overlay");
  if (notice === null) {
    overlay.hidden = true;
    return;
  }
  switch (notice.kind) {
    case "autoplay":
      $("unmute").hidden = false;
      logLine("The browser allowed playback only without sound: press Unmute", "warn");
      break;
    case "foreignItem":
      $("overlay-text").textContent = "The group is watching another video — this page only has yours. Waiting for the group to come back to it.";
      overlay.hidden = false;
      break;
    case "ended":
      $("overlay-text").textContent = "End of the video";
      overlay.hidden = false;
      break;
    case "error":
      logLine(notice.detail, "bad");
      break;
    default:
      break;
  }
}
