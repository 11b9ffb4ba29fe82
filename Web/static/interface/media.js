// The session's media before joining: the file picker and drops on the screen, a message in its
// place when the page cannot join, the video element's source, and the person's copy (or the link's
// `media` URL) fingerprinted, to be checked against the session's activity.

import { fingerprintOfBlob, fingerprintOfURL, fingerprintsMatch } from "../player/fingerprint.js";
import { fileNameOfURL, resolveMediaURL } from "./pageurl.js";
import { isMediaFile } from "../player/library.js";
import { $, library, state, video } from "./state.js";
import { fail, hideBanner } from "./log.js";
import { setPhase } from "./status.js";
import { filesOfDrop, takeFiles } from "./copies.js";

export let mediaChosen = null; // resolve function for the file picker

function showPicker(title) {
  $("picker").hidden = false;
  delete $("picker").dataset.mode;
  if (title) $("picker-title").textContent = `Choose your copy of “${title}”`;
}

export function bindPicker() {
  // Before joining the files are for the session's video; after, copies of the group's entries.
  const take = (files) => {
    if (files.length === 0) return;
    if (state.joined) takeFiles(files);
    else mediaChosen?.(files);
  };
  $("file").addEventListener("change", (e) => {
    const files = [...(e.target.files ?? [])];
    e.target.value = "";
    take(files);
  });
  const screen = $("screen");
  let depth = 0;
  screen.addEventListener("dragenter", (e) => {
    if (!e.dataTransfer?.types?.includes("Files")) return;
    e.preventDefault();
    depth += 1;
    screen.classList.add("dragging");
    $("drop-hint").hidden = false;
  });
  screen.addEventListener("dragover", (e) => {
    if (e.dataTransfer?.types?.includes("Files")) e.preventDefault();
  });
  screen.addEventListener("dragleave", () => {
    depth = Math.max(0, depth - 1);
    if (depth === 0) {
      screen.classList.remove("dragging");
      $("drop-hint").hidden = true;
    }
  });
  screen.addEventListener("drop", async (e) => {
    e.preventDefault();
    depth = 0;
    screen.classList.remove("dragging");
    $("drop-hint").hidden = true;
    take(await filesOfDrop(e.dataTransfer));
  });
}

/** A message in place of the video (no file to choose): the page cannot join. */
export function screenMessage(title, text) {
  $("picker").hidden = false;
  $("picker").dataset.mode = "message";
  $("picker-title").textContent = title;
  $("picker-text").textContent = text;
}

/** Stops waiting for files (the page cannot join: a pick would go nowhere). */
export function cancelPick() {
  mediaChosen = null;
}

/** Waits for files from the picker or a drop (a dropped folder's files). */
function pickFiles(title) {
  showPicker(title);
  return new Promise((resolve) => {
    mediaChosen = (files) => {
      mediaChosen = null;
      resolve(files);
    };
  });
}

export let objectURL = null;

export function loadVideo(source, crossOrigin = false) {
  if (state.halted) return; // the page gave up (a media URL still being checked finishes later)
  if (objectURL !== null) URL.revokeObjectURL(objectURL);
  objectURL = null;
  let src = source;
  if (source instanceof Blob) {
    objectURL = URL.createObjectURL(source);
    src = objectURL;
  }
  if (crossOrigin) video.crossOrigin = "anonymous";
  else video.removeAttribute("crossorigin");
  video.src = src;
  video.load();
}

/** The media: a fingerprinted File or URL, `{name, fingerprint, size}`, loaded into the video. */
export async function obtainMedia(mediaParameter, title) {
  if (mediaParameter !== null) {
    const url = resolveMediaURL(mediaParameter, location.href);
    const name = fileNameOfURL(url);
    setPhase("checking");
    try {
      const result = await fingerprintOfURL(url);
      const crossOrigin = new URL(url).origin !== location.origin;
      loadVideo(result.blob ?? url, result.blob === null && crossOrigin);
      library.add({ fingerprint: result.fingerprint, name, size: result.size, source: result.blob ?? url, crossOrigin: result.blob === null && crossOrigin });
      return { name, fingerprint: result.fingerprint, size: result.size, source: "url", copies: [] };
    } catch (error) {
      fail("Cannot read the video", `${name}: ${error?.message ?? error}. You can choose your own copy instead.`, { tone: "warn" });
    }
  }
  let files = await pickFiles(title);
  // A folder (or several files): its media files; one file is taken as it is.
  if (files.length > 1) files = files.filter(isMediaFile);
  if (files.length === 0) return obtainMedia(null, title);
  hideBanner();
  setPhase("checking");
  $("picker-title").textContent = files.length === 1 ? `Checking “${files[0].name}”…` : `Checking ${files.length} files…`;
  const copies = [];
  for (const file of files) {
    const fingerprint = await fingerprintOfBlob(file);
    copies.push({ file, copy: library.add({ fingerprint, name: file.name, size: file.size, source: file }) });
  }
  // The session's video if it is among them (the activity may not be known yet: main() looks again).
  const first = copies.find(({ copy }) => state.activity !== null && fingerprintsMatch(copy.fingerprint, state.activity.fingerprint)) ?? copies[0];
  return { name: first.file.name, fingerprint: first.copy.fingerprint, size: first.file.size, source: "file", file: first.file, copies };
}
