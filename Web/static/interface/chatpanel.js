// The page's chat box: the member's signing key (kept per name in IndexedDB, non-extractable), its
// identity announced to the group, received messages checked by chat.js's ChatRoom and drawn with
// their senders' labels, and the text field. The rules are chat.js's (Node-tested); this is wiring.

import {
  ChatError, ChatRoom, MEMBER_MESSAGE_NAME, MemberKey, chatLines, draftStatus, encodeMemberMessage, memberMessageFromJSON, retainName,
} from "../session/chat.js";
import { RemovalFollower, SealingKey, sealingKeyToJSON } from "../session/removal.js";
import { parseJSON, stringifyJSON } from "../wire/json.js";
import { toBase64URL as toKeyText, utf8 } from "../wire/bytes.js";

const DATABASE = "coplay";
const STORE = "member-keys";

/** Opens (creating) the page's key store, or null where IndexedDB is not available. */
function openStore() {
  if (typeof indexedDB === "undefined") return Promise.resolve(null);
  return new Promise((resolve) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => resolve(null);
    request.onblocked = () => resolve(null);
  });
}

function storeRequest(db, mode, run) {
  return new Promise((resolve, reject) => {
    const request = run(db.transaction(STORE, mode).objectStore(STORE));
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/**
 * The signing key of `name`: the one this browser keeps for the name (a CryptoKeyPair whose private
 * key cannot be exported, in IndexedDB), made and kept the first time; a fresh key for this page only
 * when `persistent` is false (the page made the name up) or IndexedDB is unavailable.
 */
export async function memberKey(name, { persistent }) {
  if (!persistent) return MemberKey.generate();
  try {
    const db = await openStore();
    if (db === null) return MemberKey.generate();
    const stored = await storeRequest(db, "readonly", (store) => store.get(name));
    if (stored?.privateKey && stored?.publicKey) return MemberKey.fromKeyPair(stored);
    const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    // Two tabs of one name at once: the first write wins, and both use what is stored.
    const again = await storeRequest(db, "readonly", (store) => store.get(name));
    if (again?.privateKey) return MemberKey.fromKeyPair(again);
    await storeRequest(db, "readwrite", (store) => store.put(pair, name));
    return MemberKey.fromKeyPair(pair);
  } catch {
    return MemberKey.generate();
  }
}

/**
 * The chat of a page: wraps the session's message and presence callbacks (construct it after the
 * coordination channel), so member messages received before joining count as history. It also
 * announces the page's sealing key after its identity and follows removals (removal.js): `onremoval`
 * gets the outcome of the first valid one. When the page moves to a successor session, `attach` the
 * chat to it and `start` it there (the same name and key, a fresh sealing key; the lines stay).
 */
export class ChatPanel {
  /**
   * @param {object} options
   * @param {import("../session/session.js").GroupSession} options.session
   * @param {Document} options.document
   * @param {() => number} [options.nowMs] monotonic milliseconds (the rate limits).
   */
  constructor({ session, document, nowMs = () => performance.now() }) {
    this.session = session;
    this.document = document;
    this.nowMs = nowMs;
    this.entries = [];
    this.ignored = {};
    this.key = null;
    this.name = null;
    /** Called with each entry as it is shown (the test hook, the log). */
    this.onentry = () => {};
    /** Called with the outcome of the first valid removal in the session (RemovalFollower). */
    this.onremoval = () => {};
    this.bind();
    this.attach(session);
  }

  /** Listens to `session` (a successor, after a move: messages of the one before are no longer taken). */
  attach(session) {
    this.session = session;
    this.room = new ChatRoom(session.invite.session);
    this.joined = false;
    this.sealing = null;
    this.sealingError = null;
    this.hostSigner = null;
    this.follower = null;
    const coordination = session.onmessage;
    session.onmessage = (name, body, context) => {
      if (name !== MEMBER_MESSAGE_NAME) return coordination(name, body, context);
      if (this.session === session) this.receive(body, context);
    };
    const presence = session.onpresence;
    session.onpresence = (type, participant) => {
      presence(type, participant);
      if (type === "joined" && this.joined && this.session === session && participant !== session.participant) this.announce([participant]);
    };
  }

  $(id) {
    return this.document.getElementById(id);
  }

  bind() {
    const input = this.$("chat-input");
    const form = this.$("chat-form");
    if (!input || !form) return;
    input.addEventListener("input", () => this.drawDraft());
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = input.value;
      this.send(text).then(
        () => {
          input.value = "";
          this.drawDraft();
        },
        (error) => this.note(error instanceof ChatError ? error.message : `chat: ${error?.message ?? error}`),
      );
    });
  }

  /**
   * Once joined: sign as `name` (the person's own key when they chose the name) and announce it, with
   * a fresh sealing key for this session (attested by `hostSigner`, the host key, with a controller invite).
   * A browser that cannot make one (no X25519 in its WebCrypto) chats without it: it announces its
   * identity only, and a host's removal of someone else leaves it behind (`sealingError` says why).
   */
  async start(name, { persistentKey, hostSigner = null }) {
    this.name = name;
    this.key ??= await memberKey(name, { persistent: persistentKey });
    this.sealingError = null;
    try {
      this.sealing = await SealingKey.generate();
    } catch (error) {
      this.sealing = null;
      this.sealingError = error?.message ?? String(error);
      console.warn("coplay: no sealing key (a host's removal of someone will leave this page behind):", this.sealingError);
    }
    this.hostSigner = hostSigner;
    const directory = this.room.directory;
    this.follower = new RemovalFollower({
      session: this.session.invite.session, hostKey: this.session.invite.hostKey ?? null, memberKey: this.key, sealingKey: this.sealing,
      labelOf: (participant) => directory.labelOf(participant),
      label: (name, key) => (directory.tags.has(toKeyText(key)) ? directory.label(name, key) : name),
    });
    this.joined = true;
    await this.announce([]);
    const input = this.$("chat-input");
    if (input) input.disabled = false;
    const send = this.$("chat-send");
    if (send) send.disabled = false;
    this.draw();
  }

  /** The page is out of its session for good (removed, left behind, the session over): the box keeps its lines and takes no more. */
  close() {
    this.joined = false;
    for (const id of ["chat-input", "chat-send"]) {
      const element = this.$(id);
      if (element) element.disabled = true;
    }
  }

  /**
   * The page's identity to everyone (`to` empty) or to the members named, and right after it (same
   * sender, so in order) its sealing key: what a host's removal seals the successor's invite to.
   */
  async announce(to) {
    if (this.key === null) return;
    const { session } = this;
    try {
      const identity = await this.key.identity(session.invite.session, session.participant, this.name);
      await this.room.receiveIdentity(identity, session.participant);
      const statement = this.sealing === null ? null : await this.sealing.statement(session.invite.session, this.key, this.hostSigner);
      await session.sendMessage(MEMBER_MESSAGE_NAME, encodeMemberMessage({ identity }), { recipients: to });
      if (statement !== null) await session.sendMessage(MEMBER_MESSAGE_NAME, utf8(stringifyJSON(sealingKeyToJSON(statement))), { recipients: to });
    } catch (error) {
      console.warn("coplay: could not announce this page's identity", error?.message ?? error);
    }
  }

  receive(body, context) {
    let json;
    let message;
    try {
      json = parseJSON(new TextDecoder("utf-8", { fatal: true }).decode(body));
      message = memberMessageFromJSON(json);
    } catch {
      return;
    }
    if (json?.kind === "removal") {
      // Before `start` the page has announced no sealing key: nobody sealed it anything, nor removed it.
      this.follower?.receive(json, context.sender).then((outcome) => {
        if (outcome.ignored) this.ignored[`removal ${outcome.ignored}`] = (this.ignored[`removal ${outcome.ignored}`] ?? 0) + 1;
        else if (!outcome.dropped) this.onremoval(outcome);
      });
    } else if (message.identity) {
      this.room.receiveIdentity(message.identity, context.sender).then(() => this.draw());
    } else if (message.chat) {
      this.room.receive(message.chat, context.sender, { history: !this.joined, nowMs: this.nowMs() }).then((result) => {
        if (result.entry) this.add(result.entry);
        else this.ignored[result.ignored] = (this.ignored[result.ignored] ?? 0) + 1;
      });
    }
  }

  /** Cleans, checks, signs and sends `text`; resolves once the relay confirmed it. */
  async send(text) {
    if (!this.joined || this.key === null) throw new ChatError("notJoined", "chat: not joined yet");
    const wallClockNs = BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000)) * 1000n;
    const message = await this.room.compose(text, this.key, this.name, wallClockNs);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new ChatError("notSent", "chat: the relay did not confirm the message")), 10000);
      this.session
        .sendMessage(MEMBER_MESSAGE_NAME, encodeMemberMessage({ chat: message }), {
          retainName: retainName(message.ordinal),
          onAck: () => {
            clearTimeout(timer);
            this.room.sent(message, this.session.participant).then((entry) => {
              this.add(entry);
              resolve(entry);
            });
          },
        })
        .catch((error) => {
          clearTimeout(timer);
          reject(new ChatError("notSent", `chat: the message was not sent: ${error?.message ?? error}`));
        });
    });
  }

  add(entry) {
    this.entries.push(entry);
    this.onentry(entry);
    // A refusal stays until a message of the page's sent after it is confirmed (not one sent before it,
    // whose confirmation can come after the refusal).
    if (entry.own && entry.sentAtMs >= (this.notedAtMs ?? -Infinity)) this.note(null);
    this.draw();
  }

  note(text) {
    this.notedAtMs = text === null ? null : performance.timeOrigin + performance.now();
    const note = this.$("chat-note");
    if (!note) return;
    note.hidden = text === null;
    note.textContent = text ?? "";
  }

  drawDraft() {
    const input = this.$("chat-input");
    const counter = this.$("chat-count");
    if (!input || !counter) return;
    const status = draftStatus(input.value);
    counter.textContent = input.value === "" ? "" : status.count;
    counter.dataset.over = String(status.over);
  }

  draw() {
    const list = this.$("chat");
    if (!list) return;
    const lines = chatLines(this.entries, { formatTime: (ms) => new Date(ms).toLocaleTimeString([], { hour12: false, hour: "2-digit", minute: "2-digit" }) });
    list.replaceChildren(
      ...lines.map((line) => {
        const li = this.document.createElement("li");
        if (line.own) li.dataset.own = "true";
        if (line.history) li.dataset.history = "true";
        const time = this.document.createElement("time");
        time.textContent = line.time;
        const who = this.document.createElement("b");
        who.textContent = line.who;
        const text = this.document.createElement("span");
        text.textContent = line.text;
        li.append(time, who, text);
        return li;
      }),
    );
    if (lines.length === 0) {
      const li = this.document.createElement("li");
      li.className = "empty";
      li.textContent = this.joined ? "No messages yet" : "Not joined yet";
      list.append(li);
    }
    list.scrollTop = list.scrollHeight;
  }

  /** The test hook's view: {entries: [{who, text, label, key, history, own}], ignored}. */
  get view() {
    return {
      entries: this.entries.map(({ label, text, key, history, own, sentAtMs }) => ({ who: own ? "you" : label, label, text, key, history, own, sentAtMs })),
      ignored: { ...this.ignored },
      key: this.key === null ? null : { tag: this.key.tag },
      // Whether the page announced a sealing key in this session (a removal can move it), and why not.
      sealing: this.sealing !== null, sealingError: this.sealingError ?? null,
    };
  }
}
