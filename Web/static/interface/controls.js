// The group commands: the buttons, keys and the test hook (`window.coplayPage.control`) all go
// through `act`, which sends only once joined and where this page's commands count (where only hosts
// control: with the host key or a grant, roles.js), and logs what could not be sent.

import { ONLY_HOSTS, uncheckedBodies } from "../sync/roles.js";
import { COORDINATION_MESSAGE_NAME } from "../sync/messages.js";
import { parsePosition } from "./transport.js";
import { $, chat, mayControl, session, shell, state } from "./state.js";
import { logLine } from "./log.js";

export const control = Object.freeze({
  play: () => act(() => (state.intendedRate !== (shell?.state?.intendedRate ?? 1) ? shell.rate(state.intendedRate) : shell.play())),
  pause: () => act(() => shell.pause()),
  // Seconds, or a time as people type it ("1:30", "1:02:03", "90"; transport.js).
  seek: (t) => {
    const seconds = typeof t === "string" ? parsePosition(t) : Number(t);
    if (seconds === null || !Number.isFinite(seconds)) return Promise.resolve(logLine(`Not a time: ${t}`, "warn"));
    return act(() => shell.seek(Math.max(0, seconds)));
  },
  rate: (r) => setRate(Number(r)),
  next: () => act(() => shell.next()),
  previous: () => act(() => shell.previous()),
  // A 1-based position in the queue's play order, as the panel numbers it.
  jump: (position) => act(() => shell.jump(Number(position))),
  // Sends a chat message as the box does; resolves once the relay confirmed it (rejects with the error it shows).
  chat: (text) => (chat === null ? Promise.reject(new Error("chat: not connected")) : chat.send(text)),
  repeat: (mode) => editQueue({ op: "repeat", mode }),
  shuffle: (on) => editQueue({ op: "shuffle", seed: on ? randomSeed() : null }),
  // Tests: a pause sent past this page's own gate, as a page without control could send it (unsigned,
  // and signed with its member key); members that check roles ignore both.
  forcedPause: () => forcedPause(),
});

export async function act(run) {
  if (shell === null || !state.joined) {
    logLine("Not joined yet", "warn");
    return;
  }
  if (!mayControl()) {
    logLine(`Not sent: ${ONLY_HOSTS}`, "warn");
    return;
  }
  try {
    await run();
  } catch (error) {
    logLine(`Could not send the command: ${error?.message ?? error}`, "bad");
  }
}

export async function setRate(rate) {
  if (!(rate > 0) || !Number.isFinite(rate)) return;
  state.intendedRate = rate;
  $("rate").value = String(rate);
  // While the group is paused a rate would start it: keep it for the next play.
  if ((shell?.state?.rate ?? 0) > 0) await act(() => shell.rate(rate));
}

export function togglePlay() {
  if ((shell?.state?.rate ?? 0) > 0) control.pause();
  else control.play();
}

async function forcedPause() {
  if (shell === null || !state.joined) throw new Error("not joined");
  const [action] = shell.core.proposeRate(0, shell.synchronizedNow());
  for (const body of await uncheckedBodies(action.message, chat?.key ?? null, session.invite.session, session.participant)) {
    await session.sendMessage(COORDINATION_MESSAGE_NAME, body);
  }
}

/** A fresh 32-bit shuffle seed. */
function randomSeed() {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

export function editQueue(edit) {
  return act(() => shell.editQueue(edit));
}
