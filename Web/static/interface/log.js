// The banner and the event log: the banner's title, text and buttons; log lines (kept for the test
// hook's events too) that name members by name once known (a member's `joined` line waits for its
// name); how log lines name an entry.

import { $, shell, state } from "./state.js";
import { isParticipantID, memberLabel } from "./words.js";

/** Shows the banner; `actions` are [{label, run, primary}]. */
export function showBanner(title, text, { tone = "bad", actions = [] } = {}) {
  const banner = $("banner");
  banner.dataset.tone = tone;
  $("banner-title").textContent = title;
  $("banner-text").textContent = text;
  const box = $("banner-actions");
  box.replaceChildren();
  for (const action of actions) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = action.primary ? "button primary" : "button";
    button.textContent = action.label;
    button.addEventListener("click", action.run);
    box.append(button);
  }
  banner.hidden = false;
}

export function hideBanner() {
  $("banner").hidden = true;
}

export function fail(title, text, options = {}) {
  state.lastError = { title, text };
  showBanner(title, text, options);
  logLine(`${title}: ${text}`, "bad");
}

export const reload = { label: "Try again", run: () => location.reload(), primary: true };

/** Keeps an entry in the hook's events (the last 500). */
export function keepEvent(entry) {
  state.events.push(entry);
  if (state.events.length > 500) state.events.splice(0, state.events.length - 500);
}

/**
 * Adds a line to the event log (and to the hook's events when `event` is given). With `subject` (a
 * member's label: its name, or its 16-hex-digit id while its name is not known yet) the line starts
 * with that member, shown by name as soon as the name is known (members announce it just after
 * joining, so their first events name them by id).
 */
export function logLine(text, kind = "info", event = null, subject = undefined) {
  const hasSubject = subject !== undefined;
  const fullText = hasSubject ? `${who(subject)} ${text}` : text;
  const entry = { ...(event ?? { type: "note" }), text: fullText, kind, realtime: event?.realtime ?? Date.now() / 1000 };
  keepEvent(entry);
  const li = document.createElement("li");
  li.dataset.kind = kind;
  const time = document.createElement("time");
  time.textContent = new Date(entry.realtime * 1000).toLocaleTimeString([], { hour12: false });
  const span = document.createElement("span");
  if (hasSubject) {
    const name = document.createElement("b");
    name.className = "who";
    name.textContent = who(subject);
    if (isParticipantID(subject)) name.dataset.member = subject;
    span.append(name, " " + text);
  } else {
    span.textContent = text;
  }
  li.append(time, span);
  const log = $("log");
  log.prepend(li);
  while (log.children.length > 200) log.lastChild.remove();
}

export function who(label) {
  return memberLabel(label, state.name);
}

/** How a log line names an event's originator: its name when the event carries one, else its id. */
export function originatorLabel(event) {
  return event.originatorName ?? event.originator;
}

/** Members whose `joined` line waits for their name: id -> {event, since}. */
export const pendingJoins = new Map();

/** Prints the waiting `joined` lines whose member is named now, or that waited 3 s. */
export function flushPendingJoins() {
  for (const [member, { event, since }] of pendingJoins) {
    const label = shell?.label(member) ?? member;
    if (isParticipantID(label) && performance.now() - since < 3000) continue;
    pendingJoins.delete(member);
    logLine("joined", "member", event, label);
  }
}

/** Log lines that named a member by id: by name once it is known. */
export function renameLogMembers() {
  if (shell === null) return;
  for (const element of $("log").querySelectorAll("[data-member]")) {
    const label = shell.label(element.dataset.member);
    if (label === element.dataset.member) continue;
    element.textContent = who(label);
    delete element.dataset.member;
  }
}

/** An entry as log lines name it: “Title”, from the event's entry id (else its item). */
export function entryName(event) {
  const entry = event.entry ? shell?.queue.entry(event.entry) : null;
  if (entry) return `“${entry.title}”`;
  if (event.item === state.activity?.item) return `“${state.activity.title}”`;
  return "another video";
}
