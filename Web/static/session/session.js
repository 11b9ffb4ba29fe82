// A group-session member over one WebSocket to the relay (docs/protocol.md, "Session life cycle",
// "Data frames", "Keepalive", "Reconnect and resume", "WebSocket transport"). The counterpart of
// Sources/GroupSessions/Session/SessionEngine.swift, reduced to what the browser participant needs:
// hello / welcome (+ retained frames) / join, sealed messages with per-sender replay protection,
// acks, presence, ping/pong and liveness, time requests, and resume after a lost connection.
//
// The socket is injected: any object with `send(Uint8Array)`, `close(code, reason)` and the
// callbacks `onmessage(Uint8Array | string)` and `onclose()` (see `openWebSocket`), so Node tests
// drive it with an in-memory relay. Sockets call `onopen()` once, asynchronously, after creation.

import { toHex } from "../wire/bytes.js";
import { OpenError, PayloadCipher, SessionKeys } from "../wire/crypto.js";
import { EnvelopeKind, decodeEnvelope, encodeEnvelope } from "../wire/envelope.js";
import {
  FrameFlags, FrameType, RelayErrorCode, decodeAck, decodeError, decodeMessage, decodeTimeReply, decodeWelcome, encodeFrame,
  encodeHello, encodeTimeRequest, expandPresence, makeFrame, routeLength,
} from "../wire/frame.js";

/** A participant id as the coordinator names it: 16 lowercase hex digits (GroupSessionCoordinationChannel). */
export function participantName(id) {
  return id.toString(16).padStart(16, "0");
}

/** A fresh random non-zero 64-bit participant id. */
export function randomParticipant() {
  const bytes = new BigUint64Array(1);
  do globalThis.crypto.getRandomValues(bytes);
  while (bytes[0] === 0n);
  return bytes[0];
}

/** Wraps a browser WebSocket (`ws(s)://HOST:PORT/ws`) in the socket shape GroupSession uses. */
export function openWebSocket(url) {
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  const socket = {
    send: (bytes) => ws.send(bytes),
    close: (code = 1000, reason = "") => ws.close(code, reason),
    onmessage: () => {},
    onclose: () => {},
    onopen: () => {},
  };
  ws.onopen = () => socket.onopen();
  ws.onmessage = (event) => socket.onmessage(typeof event.data === "string" ? event.data : new Uint8Array(event.data));
  ws.onclose = () => socket.onclose();
  ws.onerror = () => {};
  return socket;
}

/** Reconnect and keepalive settings (ReconnectPolicy.swift's defaults), milliseconds. */
export function defaultPolicy() {
  return { pingInterval: 5000, livenessTimeout: 15000, initialBackoff: 100, maximumBackoff: 2000, giveUpAfter: 30000 };
}

/**
 * One member of one session.
 *
 * Events (assign the callbacks): `onmessage(name, body, context)` with context
 * `{sender, sequence, senderSequence, retained, own}` (own messages are reported at their ack, with
 * the relay's stamp, so every member sees the same sequence for the same message);
 * `onpresence(type, participant)` with type "joined" | "left"; `onactivity(name, body)`;
 * `onend(reason)` when the session is over for this member; `ontimereply(reply, t4)`;
 * `onreconnecting(true)` when a joined member lost its connection and starts resuming,
 * `onreconnecting(false)` when it resumed (a failed resume ends with `onend("connectionLost")`).
 */
export class GroupSession {
  /**
   * @param {object} options
   * @param {{host, port, session, secret, aead}} options.invite a parsed invite.
   * @param {() => object} options.connect opens a socket to the relay.
   * @param {bigint} [options.participant] the local participant id (random by default).
   * @param {() => bigint} [options.localNow] the local NTP clock, for time requests.
   */
  static async create({ invite, connect, participant = randomParticipant(), policy = defaultPolicy(), localNow = null }) {
    const session = new GroupSession();
    session.invite = invite;
    session.connect = connect;
    session.participant = participant;
    session.policy = policy;
    session.localNow = localNow;
    session.keys = await SessionKeys.derive(invite);
    session.cipher = await PayloadCipher.create(session.keys);
    return session;
  }

  constructor() {
    this.state = "idle"; // idle | welcomed | joined | ended
    this.members = new Set();
    this.lastStamp = 0n;
    this.nextSenderSequence = 1n;
    this.replay = new Map(); // sender -> last accepted sender sequence
    this.unacked = []; // {senderSequence, bytes}
    this.ackCallbacks = new Map(); // senderSequence -> (stamp) => void
    this.maximumPayload = Infinity;
    this.rejectedFrames = 0;
    this.incoming = Promise.resolve(); // frames are handled one at a time, in arrival order
    this.outgoing = Promise.resolve(); // sends are sealed and written in sender-sequence order
    this.socket = null;
    this.welcomed = null;
    this.everJoined = false;
    this.onmessage = () => {};
    this.onpresence = () => {};
    this.onactivity = () => {};
    this.onend = () => {};
    this.ontimereply = () => {};
    /** Time replies received in this session (the test hook: the clock follows the relay over the session the page is in). */
    this.timeReplies = 0;
    this.onreconnecting = () => {};
    /** `(frame, error)`: a frame's handler threw; the frames after it are still handled. */
    this.onhandlererror = (frame, error) => console.error(`coplay: handling a frame of type ${frame.type} failed:`, error);
    this.reconnecting = false;
  }

  /** The 16-hex-digit name of the local participant. */
  get localName() {
    return participantName(this.participant);
  }

  // MARK: Connecting

  /** Connects, says hello and waits for the welcome and the retained frames after it. */
  async open() {
    await this.attach(null);
  }

  /** Sends `join` and waits until the relay announces this member as joined. */
  async join() {
    if (this.state === "ended") throw new Error("the session is over");
    const joined = new Promise((resolve, reject) => {
      this.joinWaiter = { resolve, reject };
    });
    this.sendFrame(FrameType.join);
    await joined;
  }

  /** Leaves the session (the relay announces `left` and closes). */
  leave() {
    if (this.state === "ended") return;
    this.sendFrame(FrameType.leave);
    this.finish("left");
  }

  async attach(resumeAfter) {
    const socket = this.connect();
    this.socket = socket;
    const welcomed = new Promise((resolve, reject) => {
      this.welcomeWaiter = { resolve, reject };
    });
    socket.onmessage = (data) => this.receiveMessage(socket, data);
    socket.onclose = () => this.connectionClosed(socket);
    const hello = () => {
      this.sendFrame(FrameType.hello, encodeHello(this.keys.joinToken, resumeAfter), FrameFlags.presenceBatches);
      this.heard();
      this.startKeepalive();
    };
    socket.onopen = hello; // sockets call onopen once, after this returns
    await welcomed;
  }

  sendFrame(type, payload = new Uint8Array(0), flags = 0, sequence = 0n) {
    if (this.socket === null) return;
    const frame = makeFrame({ type, flags, session: this.invite.session, sender: this.participant, sequence, payload });
    try {
      this.socket.send(encodeFrame(frame));
    } catch {
      // A closed socket: the close callback handles it.
    }
  }

  /** Sends a timeRequest (allowed before hello); the reply goes to `ontimereply`. */
  requestTime(t1) {
    this.sendFrame(FrameType.timeRequest, encodeTimeRequest(t1));
  }

  // MARK: Keepalive

  startKeepalive() {
    this.stopKeepalive();
    const { pingInterval, livenessTimeout } = this.policy;
    let pings = 0n;
    if (pingInterval > 0) this.pingTimer = setInterval(() => this.sendFrame(FrameType.ping, undefined, 0, ++pings), pingInterval);
    if (livenessTimeout > 0) {
      this.livenessTimer = setInterval(() => {
        if (Date.now() - this.lastHeard > livenessTimeout) this.socket?.close(4000, "nothing heard from the relay");
      }, Math.min(1000, livenessTimeout));
    }
  }

  stopKeepalive() {
    clearInterval(this.pingTimer);
    clearInterval(this.livenessTimer);
  }

  heard() {
    this.lastHeard = Date.now();
  }

  // MARK: Reconnect and resume

  connectionClosed(socket) {
    if (socket !== this.socket || this.state === "ended") return;
    this.stopKeepalive();
    this.socket = null;
    if (this.state !== "joined") {
      this.welcomeWaiter?.reject(new Error("the relay closed the connection"));
      this.finish("connectionLost");
      return;
    }
    if (this.reconnecting) {
      // One attempt of the reconnect under way failed (no relay, or it closed before the welcome):
      // that loop backs off and tries again, and gives up at its deadline. (Starting a new loop here
      // would restart the deadline with every refused attempt: the page would never give up.)
      this.welcomeWaiter?.reject(new Error("the relay closed the connection"));
      return;
    }
    this.reconnect();
  }

  async reconnect() {
    this.reconnecting = true;
    this.onreconnecting(true);
    const started = Date.now();
    let backoff = this.policy.initialBackoff;
    try {
      while (this.state !== "ended") {
        const jitter = backoff * (0.75 + Math.random() * 0.5);
        await new Promise((resolve) => setTimeout(resolve, jitter));
        if (Date.now() - started > this.policy.giveUpAfter) break;
        try {
          this.resuming = true;
          await this.attach(this.lastStamp);
          this.reconnecting = false;
          this.onreconnecting(false);
          return;
        } catch (error) {
          if (error?.code === RelayErrorCode.cannotResume) break;
          backoff = Math.min(backoff * 2, this.policy.maximumBackoff);
        }
      }
    } finally {
      this.reconnecting = false;
    }
    this.finish("connectionLost");
  }

  finish(reason) {
    if (this.state === "ended") return;
    this.state = "ended";
    this.stopKeepalive();
    this.welcomeWaiter?.reject(new Error(`session ${reason}`));
    this.joinWaiter?.reject(new Error(`session ${reason}`));
    try {
      this.socket?.close(1000, reason);
    } catch {
      // already closed
    }
    this.onend(reason);
  }

  // MARK: Inbound

  receiveMessage(socket, data) {
    if (socket !== this.socket) return;
    this.heard();
    if (typeof data === "string") {
      socket.close(1003, "text messages are not part of the protocol");
      return;
    }
    let frames;
    try {
      // A `presence` frame is read as the `joined` / `left` frames it carries.
      frames = expandPresence(decodeMessage(data));
    } catch {
      socket.close(1002, "not one well-formed frame");
      return;
    }
    // A handler that fails is reported, and the frames after it are still handled in order.
    for (const frame of frames) this.incoming = this.incoming.then(() => this.handle(frame)).catch((error) => this.onhandlererror(frame, error));
  }

  async handle(frame) {
    switch (frame.type) {
      case FrameType.welcome:
        return this.handleWelcome(frame);
      case FrameType.data:
        return this.handleData(frame);
      case FrameType.ack:
        return this.handleAck(frame);
      case FrameType.joined:
      case FrameType.left:
        return this.handlePresence(frame);
      case FrameType.end:
        return this.finish("ended");
      case FrameType.error:
        return this.handleError(frame);
      case FrameType.ping:
        return this.sendFrame(FrameType.pong, undefined, 0, frame.sequence);
      case FrameType.timeReply: {
        const t4 = this.localNow?.() ?? null;
        try {
          const reply = decodeTimeReply(frame.payload);
          this.timeReplies += 1;
          this.ontimereply(reply, t4);
        } catch {
          // malformed reply: dropped
        }
        return;
      }
      default:
        return; // pong, journal frames, newer types
    }
  }

  handleWelcome(frame) {
    let welcome;
    try {
      welcome = decodeWelcome(frame.payload);
    } catch {
      return this.finish("refused: malformed welcome");
    }
    this.maximumPayload = welcome.maximumPayload;
    if (this.resuming) {
      // Resumed: re-send every unacknowledged reliable frame, unchanged, before anything new.
      this.resuming = false;
      for (const { bytes } of this.unacked) this.socket?.send(bytes);
      this.welcomeWaiter?.resolve();
      return;
    }
    if (this.state === "idle") this.state = "welcomed";
    this.lastStamp = welcome.sequence;
    const previous = this.members;
    this.members = new Set(welcome.members);
    for (const member of [...welcome.members].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (!previous.has(member)) this.onpresence("joined", member);
    }
    this.retainedRemaining = welcome.retainedCount;
    if (this.retainedRemaining === 0) this.welcomeWaiter?.resolve();
  }

  async handleData(frame) {
    if (frame.sequence > this.lastStamp) this.lastStamp = frame.sequence;
    const replayed = (frame.flags & FrameFlags.replayed) !== 0;
    try {
      let opened;
      try {
        opened = await this.cipher.open(frame);
      } catch (error) {
        if (!(error instanceof OpenError)) throw error;
        this.rejectedFrames += 1;
        return;
      }
      const { route, plaintext } = opened;
      const last = this.replay.get(frame.sender);
      if (last !== undefined && route.senderSequence <= last) {
        if (!replayed) this.rejectedFrames += 1;
        return;
      }
      this.replay.set(frame.sender, route.senderSequence);
      let envelope;
      try {
        envelope = decodeEnvelope(plaintext);
      } catch {
        this.rejectedFrames += 1;
        return;
      }
      if (envelope.kind === EnvelopeKind.message) {
        this.onmessage(envelope.name, envelope.body, {
          sender: frame.sender, sequence: frame.sequence, senderSequence: route.senderSequence, retained: route.retainKey.length > 0, own: false,
        });
      } else if (envelope.kind === EnvelopeKind.activity) {
        this.onactivity(envelope.name, envelope.body);
      }
    } finally {
      if (replayed && this.retainedRemaining > 0) {
        this.retainedRemaining -= 1;
        if (this.retainedRemaining === 0) this.welcomeWaiter?.resolve();
      }
    }
  }

  handleAck(frame) {
    let senderSequence;
    try {
      senderSequence = decodeAck(frame.payload);
    } catch {
      return;
    }
    if (frame.sequence > this.lastStamp) this.lastStamp = frame.sequence;
    while (this.unacked.length > 0 && this.unacked[0].senderSequence <= senderSequence) this.unacked.shift();
    const callback = this.ackCallbacks.get(senderSequence);
    this.ackCallbacks.delete(senderSequence);
    callback?.(frame.sequence);
  }

  handlePresence(frame) {
    if (frame.sequence > this.lastStamp) this.lastStamp = frame.sequence;
    if (frame.type === FrameType.joined) {
      const isNew = !this.members.has(frame.sender);
      this.members.add(frame.sender);
      if (frame.sender === this.participant && this.state !== "joined") {
        this.state = "joined";
        this.everJoined = true;
        this.joinWaiter?.resolve();
      }
      if (isNew) this.onpresence("joined", frame.sender);
    } else if (this.members.delete(frame.sender)) {
      this.onpresence("left", frame.sender);
    }
  }

  handleError(frame) {
    let error;
    try {
      error = decodeError(frame.payload);
    } catch {
      return;
    }
    if (error.senderSequence > 0n) {
      this.unacked = this.unacked.filter((entry) => entry.senderSequence !== error.senderSequence);
      this.ackCallbacks.delete(error.senderSequence);
    }
    const failure = Object.assign(new Error(`relay refused: ${error.detail} (code ${error.code})`), { code: error.code });
    if ([RelayErrorCode.rateLimited, RelayErrorCode.frameTooLarge, RelayErrorCode.quotaExceeded, RelayErrorCode.notJoined].includes(error.code)) return;
    this.welcomeWaiter?.reject(failure);
    this.joinWaiter?.reject(failure);
    if (error.code === RelayErrorCode.cannotResume) this.finish(`connectionLost: the relay cannot resume this session: ${error.detail}`);
    if ([RelayErrorCode.unauthorized, RelayErrorCode.tooManyConnections, RelayErrorCode.slowConsumer, RelayErrorCode.malformed, RelayErrorCode.unsupportedVersion].includes(error.code)) {
      this.finish(`refused: ${error.detail}`);
    }
  }

  // MARK: Outbound

  /**
   * Seals and sends one application message to every member (SessionEngine.send).
   *
   * @param {string} name the message type name (e.g. "CoordinationMessage").
   * @param {Uint8Array} body its JSON (or raw bytes).
   * @param {object} [options]
   * @param {string|null} [options.retainName] keeps it at the relay under HMAC("message:" + retainName).
   * @param {boolean} [options.evictable] with retainName: the relay may drop it to make room for another
   *   retained name once the session holds its most (FrameFlags.evictable).
   * @param {boolean} [options.unreliable]
   * @param {(stamp: bigint) => void} [options.onAck] called with the relay's stamp.
   * @param {bigint[]} [options.recipients] only these members (empty: everyone); not with retainName.
   * @returns {Promise<bigint>} the sender sequence it was given.
   */
  sendMessage(name, body, { retainName = null, evictable = false, unreliable = false, onAck = null, recipients = [] } = {}) {
    if (this.state !== "joined") return Promise.reject(new Error("not joined"));
    const senderSequence = this.nextSenderSequence;
    this.nextSenderSequence += 1n;
    if (onAck !== null) this.ackCallbacks.set(senderSequence, onAck);
    const work = this.outgoing.then(async () => {
      const retainKey = retainName === null ? new Uint8Array(0) : await this.keys.retainKey("message:" + retainName);
      const plaintext = encodeEnvelope({ kind: EnvelopeKind.message, name, body });
      const route = { senderSequence, recipients: [...recipients].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), retainKey };
      if (routeLength(route) + plaintext.length + 16 > this.maximumPayload) {
        this.ackCallbacks.delete(senderSequence);
        throw new Error(`message too large for the relay (${plaintext.length} bytes)`);
      }
      const flags = (unreliable ? FrameFlags.unreliable : 0) | (evictable && retainName !== null ? FrameFlags.evictable : 0);
      const frame = await this.cipher.seal(plaintext, route, flags, this.participant);
      const bytes = encodeFrame(frame);
      if (!unreliable) this.unacked.push({ senderSequence, bytes });
      // While reconnecting, reliable frames wait in `unacked` (re-sent after the welcome); unreliable ones are dropped.
      if (this.socket !== null && !this.resuming) this.socket.send(bytes);
      return senderSequence;
    });
    // The caller gets `work` and its error; the chain only keeps the next send in order after a failed one.
    this.outgoing = work.catch(() => {});
    return work;
  }

  /** The relay-facing id of the session, for logs. */
  get sessionHex() {
    return toHex(this.invite.session);
  }
}
