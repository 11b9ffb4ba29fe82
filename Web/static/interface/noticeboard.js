// Notices over the video: their words are notices.js's (the same as mpv's on-screen notices), the
// level the person chose is kept in localStorage, and each shows for a few seconds.

import { NOTICE_LEVELS, Notices } from "../sync/notices.js";
import { $, shell, state } from "./state.js";

/** Its words (notices.js, the same as mpv's on-screen notices), and what was shown. */
export const notices = new Notices({ level: savedNoticeLevel() });
export const noticeBoard = { all: [], duration: 5000, capacity: 4 };

function savedNoticeLevel() {
  try {
    const saved = localStorage.getItem("coplay.notices");
    return NOTICE_LEVELS.includes(saved) ? saved : "all";
  } catch {
    return "all";
  }
}

/** Shows the notice of `event` (if it is one at the chosen level) over the video for a few seconds. */
export function showNotice(event) {
  notices.local = state.participantId;
  for (const entry of shell?.queue?.entries ?? []) notices.titles[entry.id] = entry.title;
  if (state.activity !== null) notices.titles[state.activity.item] ??= state.activity.title;
  const text = notices.notice(event);
  if (text !== null) showNoticeText(text);
}

/** Shows `text` over the video for a few seconds (a notice of the page's own, such as a move to a new session). */
export function showNoticeText(text) {
  noticeBoard.all.push(text);
  if (noticeBoard.all.length > 200) noticeBoard.all.splice(0, noticeBoard.all.length - 200);
  const list = $("notices");
  const li = document.createElement("li");
  li.textContent = text;
  list.append(li);
  while (list.children.length > noticeBoard.capacity) list.firstChild.remove();
  setTimeout(() => {
    li.classList.add("leaving");
    setTimeout(() => li.remove(), 400);
  }, noticeBoard.duration);
}
