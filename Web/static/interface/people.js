// The people list: each member with its avatar, what it plays, how far in step (this page: its
// player's error; the others: what they report), and its reported delay.

import { FrameGrid } from "../player/schedule.js";
import { $, library, player, shell, state } from "./state.js";
import { avatarColor, delayText, errorTone, reasonText, signedMs } from "./words.js";

/** How good a sync error is against the player's dead band and the activity's frame (words.js `errorTone`). */
export function syncTone(errorMs) {
  const band = player?.thresholds?.deadbandMs ?? 4;
  const frameMs = (FrameGrid.fromActivity(state.activity)?.interval ?? 0.04) * 1000;
  return errorTone(errorMs, band, frameMs);
}

export function updatePeople() {
  const list = $("people");
  if (state.stopped) {
    // Out of the session for good: nobody here is in step with this page any more.
    if (list.dataset.stopped !== "true") {
      const li = document.createElement("li");
      li.className = "empty";
      li.textContent = "Not in a session";
      list.replaceChildren(li);
      list.dataset.stopped = "true";
      $("people-count").textContent = "";
    }
    return;
  }
  if (shell === null) return;
  const group = shell.state;
  const members = shell.members().filter((m) => m.joined || m.local);
  $("people-count").textContent = members.length > 0 ? String(members.length) : "";
  const items = members.map((m) => {
    const li = document.createElement("li");
    const label = m.name ?? `member ${m.id.slice(-4)}`;
    const avatar = document.createElement("span");
    avatar.className = "avatar";
    avatar.style.background = avatarColor(m.id);
    avatar.textContent = label.slice(0, 1).toUpperCase();
    const person = document.createElement("div");
    person.className = "person";
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = label;
    if (m.local) {
      const small = document.createElement("small");
      small.textContent = " (you)";
      name.append(small);
    }
    const detail = document.createElement("span");
    detail.className = "detail";
    const badge = document.createElement("span");
    badge.className = "badge";
    let badgeText = "in sync";
    let tone = "good";
    const details = [];
    if (m.suspended.length > 0) {
      badgeText = reasonText(m.suspended[0].reason);
      tone = "warn";
      details.push(m.suspended[0].waits ? "the group waits" : "not waited for");
    } else if (group !== null && m.item !== null && m.item !== group.item) {
      badgeText = "other video";
      tone = "warn";
    } else if (m.local) {
      const sync = player?.status;
      if (sync?.foreignItem) {
        badgeText = "other video";
        tone = "warn";
      } else if (sync?.ended) {
        badgeText = "at the end";
        tone = "";
      } else if (sync?.errorMs !== null && sync?.errorMs !== undefined) {
        badgeText = signedMs(sync.errorMs);
        tone = syncTone(sync.errorMs);
      } else {
        badgeText = group !== null && group.rate > 0 ? "starting" : "paused";
        tone = "";
      }
    } else if (group === null || group.rate === 0) {
      badgeText = "paused";
      tone = "";
    }
    if (m.delayMs !== null && !m.local) details.push(delayText(m.delayMs));
    if (m.local) details.push(state.missing !== null ? `no copy of “${state.missing.entry?.title ?? "this video"}”` : (library.copyFor(group?.item ?? "")?.name ?? state.media?.name ?? ""));
    detail.textContent = details.filter(Boolean).join(" · ") || (m.local ? "this browser" : "member");
    person.append(name, detail);
    badge.textContent = badgeText;
    if (tone) badge.dataset.tone = tone;
    li.append(avatar, person, badge);
    return li;
  });
  list.replaceChildren(...items);
}
