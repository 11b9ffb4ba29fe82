// The queue panel as drawn: rows from queuepanel.js's view model (pure, Node-tested), their buttons
// and drag-and-drop reordering, the repeat and shuffle buttons, the note under the list.

import { dropEdit, missingNotice, moveEdit, nextRepeatMode, queueView } from "./queuepanel.js";
import { $, library, mayControl, roles, shell, state } from "./state.js";
import { who } from "./log.js";
import { control, editQueue } from "./controls.js";

/** Whether this page has a copy of a queue entry. */
export const hasCopy = (entry) => library.copyForEntry(entry) !== null;

export function currentQueueView() {
  return queueView({
    queue: shell.queue, hasQueue: shell.hasQueue, playing: shell.state?.entry ?? null,
    label: (id) => who(shell.label(id)), me: state.participantId, hasCopy, live: state.joined && state.phase === "joined" && mayControl(),
    viewer: roles !== null && !roles.controls,
  });
}

let drawnQueue = null; // the view last drawn (JSON), so a periodic update redraws only on changes
export let draggedEntry = null;

function svgIcon(path, viewBox = "0 0 24 24") {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", viewBox);
  svg.setAttribute("aria-hidden", "true");
  const p = document.createElementNS(ns, "path");
  p.setAttribute("d", path);
  svg.append(p);
  return svg;
}

/** Sets `element`'s title: `title`, or where the page does not control, why it is off. */
function titled(element, title, locked) {
  element.title = locked ?? title;
}

function miniButton(className, label, path, enabled, run, locked = null) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = `mini ${className}`;
  titled(button, label, locked);
  button.setAttribute("aria-label", label);
  button.disabled = !enabled;
  button.append(svgIcon(path));
  button.addEventListener("click", (e) => {
    e.stopPropagation();
    run();
  });
  return button;
}

function queueRow(row, view) {
  const li = document.createElement("li");
  li.className = "queue-row";
  li.dataset.id = row.id;
  li.dataset.status = row.status;
  li.dataset.playing = String(row.playing);
  if (view.canReorder) li.draggable = true;

  const position = document.createElement("button");
  position.type = "button";
  position.className = "queue-pos";
  position.disabled = !row.canJump;
  titled(position, row.playing ? "Playing now" : `Play “${row.title}” for everyone`, row.playing ? null : view.locked);
  position.setAttribute("aria-label", row.playing ? `Entry ${row.position}, playing` : `Play entry ${row.position}`);
  if (row.playing) position.append(svgIcon("M8 5.5v13l10.5-6.5z"));
  else position.textContent = String(row.position);
  position.addEventListener("click", () => control.jump(row.position));

  const text = document.createElement("div");
  text.className = "queue-text";
  const title = document.createElement("span");
  title.className = "queue-title";
  title.textContent = row.title;
  title.title = row.title;
  const meta = document.createElement("span");
  meta.className = "queue-meta";
  const time = document.createElement("time");
  time.textContent = row.duration;
  meta.append(time, ` · added by ${row.addedBy}`);
  if (!row.hasCopy) {
    const missing = document.createElement("span");
    missing.className = "missing";
    missing.textContent = " · no copy";
    meta.append(missing);
  }
  text.append(title, meta);

  const actions = document.createElement("div");
  actions.className = "queue-actions";
  actions.append(
    miniButton("up", "Move up", "M12 19V5M6 11l6-6 6 6", row.canUp, () => editQueue(moveEdit(shell.queue, row.id, -1)), view.locked),
    miniButton("down", "Move down", "M12 5v14M6 13l6 6 6-6", row.canDown, () => editQueue(moveEdit(shell.queue, row.id, 1)), view.locked),
    miniButton("remove", "Remove from the queue", "M6 6l12 12M18 6 6 18", row.canRemove, () => editQueue({ op: "remove", ids: [row.id] }), view.locked),
  );
  li.append(position, text, actions);
  li.addEventListener("dblclick", () => {
    if (row.canJump) control.jump(row.position);
  });
  li.addEventListener("dragstart", (e) => {
    draggedEntry = row.id;
    li.classList.add("dragging");
    e.dataTransfer.effectAllowed = "move";
    e.dataTransfer.setData("text/x-coplay-entry", row.id);
  });
  li.addEventListener("dragend", () => {
    draggedEntry = null;
    li.classList.remove("dragging");
  });
  const below = (e) => e.clientY > li.getBoundingClientRect().top + li.offsetHeight / 2;
  li.addEventListener("dragover", (e) => {
    if (draggedEntry === null) return;
    e.preventDefault();
    li.classList.toggle("drag-over", !below(e));
    li.classList.toggle("drag-over-end", below(e));
  });
  li.addEventListener("dragleave", () => li.classList.remove("drag-over", "drag-over-end"));
  li.addEventListener("drop", (e) => {
    if (draggedEntry === null) return;
    e.preventDefault();
    e.stopPropagation();
    li.classList.remove("drag-over", "drag-over-end");
    const index = shell.queue.entries.findIndex((entry) => entry.id === row.id);
    const edit = dropEdit(shell.queue, draggedEntry, index + (below(e) ? 1 : 0));
    draggedEntry = null;
    if (edit !== null) editQueue(edit);
  });
  return li;
}

export function updateQueuePanel() {
  const card = $("queue-card");
  if (shell === null || !state.joined) {
    card.hidden = true;
    return;
  }
  card.hidden = false;
  const commands = mayControl();
  const view = currentQueueView();
  // Where only hosts control and this page does not: every control of the group's queue is off and
  // says why (its title, and the hint under the list); choosing its own copies stays on (the picker).
  $("queue-repeat").disabled = !commands;
  $("queue-shuffle").disabled = !commands;
  $("queue-file").disabled = !view.canAdd;
  $("queue-card").dataset.viewer = String(view.locked !== null);
  const add = $("queue-add");
  add.setAttribute("aria-disabled", String(!view.canAdd));
  add.dataset.title ??= add.title;
  titled(add, add.dataset.title, view.locked);
  $("queue-hint").hidden = view.locked === null;
  const hasEntries = view.rows.length > 0;
  $("next").hidden = !hasEntries;
  $("previous").hidden = !hasEntries;
  $("next").disabled = !view.canNext;
  $("previous").disabled = !view.canPrevious;
  for (const id of ["next", "previous"]) {
    const button = $(id);
    button.dataset.title ??= button.title;
    titled(button, button.dataset.title, view.locked);
  }
  const key = JSON.stringify(view);
  if (key === drawnQueue) return;
  drawnQueue = key;
  $("queue-summary").textContent = view.summary;
  const repeat = $("queue-repeat");
  repeat.dataset.mode = view.repeatMode;
  const repeatLabel = `Repeat: ${view.repeatMode === "one" ? "this entry" : view.repeatMode === "all" ? "the whole queue" : "off"}`;
  titled(repeat, `${repeatLabel} (click: ${nextRepeatMode(view.repeatMode) === "one" ? "repeat this entry" : nextRepeatMode(view.repeatMode) === "all" ? "repeat the queue" : "repeat off"})`,
    view.locked === null ? null : `${repeatLabel}: ${view.locked}`);
  $("queue-repeat-label").textContent = repeatLabel;
  const shuffle = $("queue-shuffle");
  shuffle.setAttribute("aria-pressed", String(view.shuffled));
  titled(shuffle, view.shuffled ? "Shuffle is on: one shuffled order, the same for everyone (click: off)" : "Shuffle: one shuffled order, the same for everyone",
    view.locked === null ? null : `Shuffle ${view.shuffled ? "on" : "off"}: ${view.locked}`);
  const list = $("queue");
  if (view.empty !== null) {
    const li = document.createElement("li");
    li.className = "empty";
    li.textContent = view.empty;
    list.replaceChildren(li);
  } else {
    list.replaceChildren(...view.rows.map((row) => queueRow(row, view)));
  }
  const note = $("queue-note");
  if (note.textContent.startsWith("Checking")) return;
  if (state.missing !== null) {
    note.hidden = false;
    note.dataset.tone = "warn";
    note.textContent = missingNotice(state.missing.entry).short;
  } else if (view.reorderHint !== null && hasEntries) {
    note.hidden = false;
    delete note.dataset.tone;
    note.textContent = view.reorderHint;
  } else {
    note.hidden = true;
  }
}
