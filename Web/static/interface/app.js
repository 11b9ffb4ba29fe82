// The page: wires the JavaScript core (session, channel, clock, coordinator shell) to the <video>
// adapter and the UI. Everything the page needs comes from its URL's fragment (pageurl.js); the
// invite's secret only ever leaves this module as keys derived by crypto.js. Nothing here logs it.
//
// Flow: parse the fragment -> connect to the relay's WebSocket on this origin (hello / welcome,
// retained frames: the session's activity and the group's state) -> synchronize the clock over the
// WebSocket while the person picks their copy of the media (or the `media` URL is fetched) -> check
// its fingerprint against the activity -> join -> coordinate (shell.js + player.js). Several files
// none of which is the activity's join too, as does one file that the queue's retained copy lists, and
// are checked against the group's queue once it is in (copies.js reviewCoverage).
//
// The interface's parts, each importing only the ones before it (Tests/Web/layers.test.mjs): state.js,
// words.js, log.js, noticeboard.js, controls.js, queueview.js, people.js, status.js, copies.js,
// events.js, media.js, hook.js (`window.coplayPage`, the test and bench hook), and this file: main()
// and the session's callbacks.

import { fromUTF8 } from "../wire/bytes.js";
import { GroupSessionCoordinationChannel } from "../sync/channel.js";
import { ChatPanel } from "./chatpanel.js";
import { SyncedClock, TimeClient, TimeExchange, browserLocalNTP } from "../sync/clock.js";
import { fingerprintsMatch, parseFingerprint } from "../player/fingerprint.js";
import { AEADSuite, onlyHostsControl, parseInvite } from "../wire/invite.js";
import { parseFragment, webSocketURL, withInvite } from "./pageurl.js";
import { PlayerDeck } from "../player/deck.js";
import { GroupSession, openWebSocket } from "../session/session.js";
import { CoordinatorShell } from "../sync/shell.js";
import { RolesGate, listenForRoles } from "../sync/roles.js";
import { retainedQueue } from "../sync/queue.js";
import {
  $, assign, chat, library, localMs, offsetMs, player, pollAbort, roles, session, shell, state, syncedClock, timeClient, video,
} from "./state.js";
import { describeEnd, describeOpenFailure, describeRemoval } from "./words.js";
import { fail, hideBanner, keepEvent, logLine, reload, showBanner } from "./log.js";
import { showNoticeText } from "./noticeboard.js";
import { successorInvite } from "../session/removal.js";
import { bindControls, onRole, setPhase, updateControls, updateUI } from "./status.js";
import { bindQueuePanel, createVideo, gridFor } from "./copies.js";
import { onPlaybackEvent, onPlayerNotice } from "./events.js";
import { bindPicker, cancelPick, loadVideo, objectURL, obtainMedia, screenMessage } from "./media.js";
import "./hook.js"; // window.coplayPage, before main() runs

/** The status pill and banner follow the session's resumes after a lost connection. */
function onReconnecting(reconnecting) {
  shell?.connectionInterrupted(reconnecting);
  if (reconnecting) {
    if (!state.joined) return;
    setPhase("reconnecting");
    showBanner("Reconnecting", "The connection to the relay dropped; coplay is resuming the session (it gives up after 30 s).", { tone: "warn" });
    logLine("Lost the connection to the relay; resuming", "warn");
  } else if (state.phase === "reconnecting") {
    setPhase("joined");
    hideBanner();
    logLine("Reconnected to the relay", "info");
  }
}

/** The relay's WebSocket on this origin, the clock's exchange over the session's socket, and the link's name (main sets them). */
let wsURL = null;
let exchange = null;
let persistentKey = false;

/**
 * A session of `invite` with its coordination channel (through `gate` where only hosts control), the
 * chat and the role statements wired and the page's callbacks set; not opened yet. Channel events
 * before the shell exists wait in `backlog`.
 */
async function prepareSession(invite, gate) {
  const next = await GroupSession.create({ invite, connect: () => openWebSocket(wsURL), localNow: browserLocalNTP });
  const channel = new GroupSessionCoordinationChannel(next, { gate });
  // After the channel: it wraps the session's callbacks, so the chat kept by the relay arrives as history.
  if (chat === null) {
    assign({ chat: new ChatPanel({ session: next, document }) });
    chat.onremoval = onRemoval;
  } else {
    chat.attach(next);
  }
  // After both: role statements reach the gate in the relay's order with the coordination messages.
  if (gate !== null) {
    gate.onrole = onRole;
    listenForRoles(next, gate);
  }
  const backlog = [];
  channel.onevent = (event) => backlog.push(event);
  next.onactivity = receiveActivity;
  next.ontimereply = (reply, t4) => exchange.receive(reply, t4);
  next.onreconnecting = onReconnecting;
  next.onend = (reason) => onSessionEnd(next, reason);
  return { next, channel, backlog };
}

/** The session is over for this page (not a session it moved away from, nor one whose open() failed: its caller says why). */
function onSessionEnd(ended, reason) {
  if (ended !== session || !ended.opened || state.moving) return;
  const wasJoined = state.joined;
  stopPlaying();
  chat?.close();
  if (state.phase === "mismatch" || state.phase === "removed" || state.phase === "leftBehind") return;
  setPhase(reason === "left" ? "ended" : "error");
  const [title, text] = describeEnd(reason, wasJoined);
  fail(title, text, { actions: [reload] });
}

function stopPlaying() {
  state.joined = false;
  state.stopped = true;
  player?.stop();
  shell?.stop();
  pollAbort && (pollAbort.aborted = true);
}

/** The coordinator of `channel` over the page's player; `backlog`: its channel's events so far. */
function makeShell(channel, localItem, backlog) {
  return new CoordinatorShell({
    channel, reference: { now: () => syncedClock.now() }, player, localItem, name: state.name, backlog,
    // Any item of the group this page has a copy of (library.js): the core follows the group to it.
    canPresent: (item) => {
      if (!library.has(item) && shell?.hasQueue) library.learnEntries(shell.queue.entries);
      return library.has(item);
    },
    items: library.items(),
    log: (message, error) => console.warn(`coplay: ${message}`, error?.message ?? ""),
  });
}

/** Starts `shell` (the assigned one) on the page's player. */
function startShell() {
  shell.onevent = onPlaybackEvent;
  shell.start();
  // Without a player yet (joined without the session's first item) there is nothing to wait for: the
  // page sits out what it has no copy of, and its player's readiness counts once it plays an entry.
  shell.reportReadiness(player.active === null ? "ready" : player.readiness);
}

/** Signs as the link's name in the current session, announcing its identity and sealing key. */
function startChat() {
  return chat.start(state.name, { persistentKey, hostSigner: roles?.hostSigner ?? null }).then(
    () => {
      // A grant names this key (`coplay control … grant NAME`, resolved through the identity the chat announced).
      if (roles !== null) roles.memberKey = chat.key;
      updateControls();
    },
    (error) => logLine(`Chat unavailable: ${error?.message ?? error}`, "warn"),
  );
}

/**
 * A host removed someone (removal.js's outcome, in the old session before its end): this page stops
 * (it is the one removed), moves to the successor whose invite was sealed to it, or is left behind.
 */
function onRemoval(outcome) {
  const [notice, title, text] = describeRemoval(outcome);
  const event = outcome.removed
    ? { type: "removed", originatorName: outcome.removed.by ?? null }
    : { type: "moved", originatorName: (outcome.moved ?? outcome.leftBehind).removed, detail: outcome.moved ? "moved" : "left behind" };
  keepEvent({ ...event, text: notice, kind: "info", realtime: Date.now() / 1000 });
  showNoticeText(notice);
  if (outcome.removed) stopFollowing("removed", title, text);
  else if (outcome.moved) moveTo(outcome.moved.invite, notice);
  else stopFollowing("leftBehind", title, text); // the group is gone: nothing here to follow
}

/**
 * The page is out of the group for good (removed, left behind, or it could not join the successor):
 * it stops now, whether or not the host ends the old session, and leaves it (a session left does not
 * reconnect, so nothing more is opened); it says why over the video and in the banner, with no retry
 * (the old invite leads nowhere), and its panels stop showing a live session.
 */
function stopFollowing(phase, title, text) {
  setPhase(phase);
  stopPlaying();
  session.leave();
  chat?.close();
  screenMessage(title, "This page is no longer in the session.");
  fail(title, text, { actions: [] });
  updateControls();
  updateUI();
}

/**
 * Moves to the successor session (docs/protocol.md, "Moving"): opens and joins it (with its own gate,
 * made before the join), then hands the player over to a new coordinator there (the same player, clock
 * and media; the successor's retained state restates the same timeline, so the player plays on), leaves
 * the old session, announces itself there, and puts the successor's invite in the address bar.
 */
async function moveTo(text, notice) {
  state.moving = true;
  let opened;
  try {
    const invite = successorInvite(text, { onlyHosts: roles !== null });
    const gate = onlyHostsControl(invite) ? await RolesGate.forInvite(invite) : null;
    opened = { ...(await prepareSession(invite, gate)), gate };
    await opened.next.open();
    opened.next.opened = true;
    await opened.next.join();
  } catch (error) {
    opened?.next.leave();
    state.moving = false;
    stopFollowing("leftBehind", "Could not follow the group",
      `A host moved the group to a new session, and this page could not join it: ${error?.message ?? error}. Playback stopped here; ask a host for a new link to watch again.`);
    return;
  }
  const { next, channel, backlog, gate } = opened;
  const previous = session;
  const handOver = shell.handOver();
  shell.stop();
  state.participantId = next.localName; // before the shell: the page's own `joined` is no news
  assign({ session: next, roles: gate, shell: makeShell(channel, handOver.localItem, backlog) });
  shell.adopt(handOver);
  startShell();
  previous.leave();
  state.moving = false;
  history.replaceState(history.state, "", withInvite(location.hash, text));
  $("subtitle").textContent = subtitle(next.invite);
  logLine(notice, "info");
  startChat();
  updateControls();
  updateUI();
}

const subtitle = (invite) =>
  `${invite.host}:${invite.port} · session ${Array.from(invite.session.slice(0, 4), (b) => b.toString(16).padStart(2, "0")).join("")}…`;

function waitForActivity(timeoutMs) {
  if (state.activity !== null) return Promise.resolve(state.activity);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs);
    activityWaiters.push((activity) => {
      clearTimeout(timer);
      resolve(activity);
    });
  });
}
const activityWaiters = [];

function receiveActivity(name, body) {
  let activity;
  try {
    activity = JSON.parse(fromUTF8(body));
  } catch {
    return;
  }
  if (typeof activity?.item !== "string" || typeof activity?.fingerprint !== "string") return;
  state.activity = activity;
  $("title").textContent = activity.title || "Watch together";
  for (const waiter of activityWaiters.splice(0)) waiter(activity);
}

async function main() {
  bindControls();
  bindPicker();
  bindQueuePanel();
  setInterval(updateUI, 250);

  let fragment;
  try {
    fragment = parseFragment(location.hash);
  } catch (error) {
    setPhase("error");
    screenMessage("This link is damaged", "Ask the host for the link again.");
    return fail("This link is damaged", error.message, { actions: [] });
  }
  if (fragment.invite === null) {
    setPhase("error");
    screenMessage("No session to join", "This page plays in step with a coplay session. Open the link that `coplay host` printed.");
    return fail("No invite in this link", "Open the page address that `coplay host` printed (it ends in #invite=…).", { tone: "info" });
  }
  let invite;
  try {
    invite = parseInvite(fragment.invite);
  } catch (error) {
    setPhase("error");
    screenMessage("This invite is not valid", "Ask the host for the link again.");
    return fail("This invite is not valid", error.message);
  }
  if (invite.aead !== AEADSuite.aes256GCM) {
    setPhase("error");
    screenMessage("Not a browser session", "The host made this session for native players only.");
    return fail(
      "This invite is not for browsers",
      "It uses ChaCha20-Poly1305, which browsers cannot run. Ask the host for a browser invite (one with ?aead=aes-256-gcm).",
    );
  }
  if (globalThis.crypto?.subtle === undefined) {
    setPhase("error");
    screenMessage("Needs a secure connection", "Open the page over https:// (or on this machine, as localhost).");
    return fail("This page needs a secure connection", "Browsers allow encryption only on https:// pages or on localhost. Open the page over https.");
  }
  if (onlyHostsControl(invite)) {
    // Where only hosts control: a controller invite's seed must be its host key's before it signs anything.
    try {
      assign({ roles: await RolesGate.forInvite(invite) });
    } catch (error) {
      setPhase("error");
      screenMessage("This invite is not valid", "Ask the host for the link again.");
      return fail("This invite is not valid", error.message);
    }
  }

  wsURL = webSocketURL(location);
  $("subtitle").textContent = subtitle(invite);

  // Start on the media at once: the person can pick a file while the page connects.
  const mediaPromise = obtainMedia(fragment.media, null).then(
    (media) => ({ media }),
    (error) => ({ error }),
  );

  setPhase("connecting");
  // The clock's requests go over the current session's socket (the successor's after a move).
  exchange = new TimeExchange({ send: (t1) => session.requestTime(t1), timeout: 1000 });
  const { next, channel, backlog } = await prepareSession(invite, roles);
  assign({ session: next });
  state.participantId = session.localName;
  state.name = fragment.name ?? `web-${state.participantId.slice(-4)}`;
  persistentKey = fragment.name != null;

  try {
    await session.open();
    session.opened = true;
  } catch (error) {
    setPhase("error");
    const [title, text] = describeOpenFailure(error, wsURL);
    cancelPick();
    state.halted = true;
    video.removeAttribute("src"); // nothing plays for a session the page cannot join
    video.load();
    screenMessage(title, "This page is not connected to the session.");
    return fail(title, text, { actions: [reload] });
  }

  // The clock: a burst over the WebSocket until the estimate is good, then polling.
  setPhase("syncing");
  assign({ syncedClock: new SyncedClock({ localNow: browserLocalNTP }) });
  assign({ timeClient: new TimeClient({ transport: exchange, syncedClock }) });
  const clockReady = timeClient.converge().then(
    () => null,
    (error) => error,
  );

  const activity = await waitForActivity(4000);
  if (activity === null) {
    showBanner("Waiting for the host", "The session has not said what it plays yet. Is the invite right, and is the host still there?", { tone: "warn" });
    await waitForActivity(Infinity);
    hideBanner();
  }
  if (parseFingerprint(state.activity.fingerprint) === null) {
    setPhase("error");
    return fail("Unknown video fingerprint", `The session identifies its video as “${state.activity.fingerprint}”, which this page cannot check.`);
  }
  if (!$("picker").hidden) $("picker-title").textContent = `Choose your copy of “${state.activity.title}”`;

  const clockError = await clockReady;
  if (clockError !== null) {
    setPhase("error");
    return fail("The relay's clock did not answer", `${clockError.message}. The relay must answer time requests over the WebSocket.`, { actions: [reload] });
  }
  if (state.phase === "syncing") setPhase("media");

  // The media, checked against the session's fingerprint until it matches.
  let outcome = await mediaPromise;
  for (;;) {
    if (outcome.error) {
      setPhase("error");
      return fail("Cannot read the video", outcome.error?.message ?? String(outcome.error));
    }
    let media = outcome.media;
    const match = (media.copies ?? []).find(({ copy }) => fingerprintsMatch(copy.fingerprint, state.activity.fingerprint));
    if (match !== undefined) media = { ...media, name: match.file.name, fingerprint: match.copy.fingerprint, size: match.file.size, file: match.file };
    if (fingerprintsMatch(media.fingerprint, state.activity.fingerprint)) {
      state.media = media;
      if (media.file) loadVideo(media.file);
      break;
    }
    // Files that are not the session's first item may be later entries of its queue, which a member
    // receives in full once it joined. Several files (or a folder) join, then say which of them it has
    // (copies.js reviewCoverage) or that none is in the session; so does a single file that the queue's
    // retained copy (replayed at the welcome, before joining) lists. Any other single file is refused.
    const copies = media.source === "file" ? media.copies ?? [] : [];
    const laterEntry = copies.length === 1 ? entryOfCopy(retainedQueue(backlog), copies[0].copy) : null;
    if (copies.length > 1 || laterEntry !== null) {
      state.media = null;
      state.coverage = { files: copies.map(({ file }) => file.name), notice: null, key: null };
      logLine(laterEntry === null
        ? `None of your ${copies.length} files is “${state.activity.title}”, the video the session started with: joining to find them in the group's queue`
        : `“${media.name}” is not “${state.activity.title}”, the video the session started with, but entry ${laterEntry.position} of the group's queue (“${laterEntry.entry.title}”): joining`, "info");
      break;
    }
    const expected = parseFingerprint(state.activity.fingerprint);
    setPhase("mismatch");
    video.removeAttribute("src"); // do not show the wrong video
    video.load();
    const sizes = expected.size === media.size ? "the same size but different content" : `${media.size.toLocaleString()} bytes, the session's has ${expected.size.toLocaleString()}`;
    state.lastError = { title: "Wrong video", text: `${media.name} is not the session's media` };
    logLine(`“${media.name}” is not the session's media (${state.activity.title})`, "bad");
    showBanner(
      "This is not the session's media",
      `“${media.name}” is not “${state.activity.title}”, the video this session plays (${sizes}). The page will not join with it.`,
      { actions: media.source === "file" ? [] : [reload] },
    );
    if (media.source !== "file") return;
    $("picker-title").textContent = `Choose your copy of “${state.activity.title}”`;
    outcome = await obtainMedia(null, state.activity.title).then((m) => ({ media: m }), (error) => ({ error }));
  }
  hideBanner();
  $("picker").hidden = true;
  $("title").textContent = state.activity.title || state.media?.name || "Watch together";
  if (state.coverage !== null) {
    screenMessage("Getting the group's queue…", `None of your files is “${state.activity.title}”, the video the session started with. `
      + "This page joins and looks for them among the entries of the group's queue.");
  }

  // Join and coordinate.
  setPhase("joining");
  try {
    await session.join();
  } catch (error) {
    setPhase("error");
    const [title, text] = describeOpenFailure(error, wsURL);
    return fail(title, text, { actions: [reload] });
  }
  state.joined = true;
  const clock = {
    nowMs: () => (syncedClock.isSynchronized ? localMs() + offsetMs() : null),
    offsetMs,
  };
  // The page's file is the session's item (its fingerprint was checked): the activity says how long it is.
  library.learn({ item: state.activity.item, fingerprint: state.activity.fingerprint, duration: Number(state.activity.duration) });
  if (state.media?.source === "file") library.add({ fingerprint: state.media.fingerprint, name: state.media.name, size: state.media.size, source: state.media.file });
  assign({ player: new PlayerDeck({ createVideo, library, clock, gridFor }) });
  let localItem = null;
  if (state.coverage === null) {
    localItem = state.activity.item;
    player.adopt(localItem, video, objectURL);
    player.show(localItem);
  } else {
    // No copy of the first item (the copies are in the library): the page's element is the deck's first.
    state.ownVideoFree = true;
  }
  assign({ shell: makeShell(channel, localItem, backlog) });
  // Live bindings: after a move they reach the successor's shell.
  player.onreadiness = (readiness) => shell.reportReadiness(readiness);
  player.onevent = onPlaybackEvent;
  player.onnotice = onPlayerNotice;
  player.start();
  startShell();
  assign({ pollAbort: { aborted: false } });
  timeClient.run(pollAbort).catch((error) => logLine(`The clock stopped following the relay: ${error?.message ?? error}`, "warn"));
  // A name from the link is the person's: its key is kept in this browser; a made-up one gets a fresh key.
  startChat();
  setPhase("joined");
  updateUI();
  if (state.coverage !== null) {
    // The queue comes from a member's answer or the retained copy within seconds (QueueReplica's timeout).
    setTimeout(() => {
      if (state.joined && !shell.hasQueue) {
        fail("The group's queue did not arrive", "This page joined without the session's first video and cannot tell which of your files the group plays.", { tone: "warn", actions: [reload] });
      }
    }, 15000);
  }
}

/** The entry of `queue` (a PlayQueue or null) that `copy` is a copy of, with its 1-based position: `{entry, position}`, or null. */
function entryOfCopy(queue, copy) {
  const index = queue?.entries.findIndex((entry) => fingerprintsMatch(copy.fingerprint, entry.fingerprint)) ?? -1;
  return index < 0 ? null : { entry: queue.entries[index], position: index + 1 };
}

main().catch((error) => {
  setPhase("error");
  fail("Something went wrong", error?.message ?? String(error), { actions: [reload] });
});
