// The browser's GroupSession and coordination channel against a small in-memory relay that follows
// docs/protocol.md's routing rules (hello, welcome + retained frames, join, stamping, acks, ping,
// time requests) and its WebSocket transport's one-frame-per-message rule.

import { test } from "node:test";
import assert from "node:assert/strict";

import { equalBytes, toHex } from "../../Web/static/wire/bytes.js";
import { sha256 } from "../../Web/static/wire/crypto.js";
import { GroupSessionCoordinationChannel } from "../../Web/static/sync/channel.js";
import {
  FrameFlags, FrameType, decodeHello, decodeMessage, decodeRoute, decodeTimeRequest, encodeAck, encodeFrame, encodeTimeReply,
  encodePresence, encodeWelcome, makeFrame,
} from "../../Web/static/wire/frame.js";
import { AEADSuite } from "../../Web/static/wire/invite.js";
import { GroupSession, participantName } from "../../Web/static/session/session.js";

/** A relay for one session, in memory. */
class TestRelay {
  constructor() {
    this.sequence = 0n;
    this.tokenHash = null;
    this.connections = new Set();
    this.retained = new Map(); // hex key -> frame bytes (stamped)
    this.log = [];
  }

  connect() {
    const relay = this;
    const connection = { admitted: false, joined: false, id: null, closed: false };
    const socket = {
      send(bytes) {
        if (connection.closed) throw new Error("closed");
        relay.receive(connection, bytes);
      },
      close(code) {
        if (connection.closed) return;
        connection.closed = true;
        connection.closeCode = code;
        relay.connections.delete(connection);
        queueMicrotask(() => socket.onclose());
      },
      onmessage: () => {},
      onclose: () => {},
      onopen: () => {},
    };
    connection.socket = socket;
    connection.deliver = (frame) => queueMicrotask(() => !connection.closed && socket.onmessage(encodeFrame(frame)));
    this.connections.add(connection);
    queueMicrotask(() => socket.onopen());
    return socket;
  }

  stamp(frame) {
    this.sequence += 1n;
    return { ...frame, sequence: this.sequence };
  }

  async receive(connection, bytes) {
    const frame = decodeMessage(bytes); // throws on anything but exactly one frame
    this.log.push(frame.type);
    switch (frame.type) {
      case FrameType.timeRequest: {
        const t1 = decodeTimeRequest(frame.payload);
        connection.deliver(makeFrame({ type: FrameType.timeReply, session: frame.session, sender: 0n, payload: encodeTimeReply({ t1, t2: t1 + 100n, t3: t1 + 200n }) }));
        return;
      }
      case FrameType.hello: {
        const { token } = decodeHello(frame.payload);
        const hash = await sha256(token);
        if (this.tokenHash === null) this.tokenHash = hash;
        if (!equalBytes(hash, this.tokenHash)) return connection.socket.close(1008);
        connection.admitted = true;
        connection.id = frame.sender;
        this.session = frame.session;
        const members = [...this.connections].filter((c) => c.joined).map((c) => c.id);
        connection.deliver(makeFrame({ type: FrameType.welcome, session: frame.session, sender: 0n, payload: encodeWelcome({ sequence: this.sequence, maximumPayload: 307200, ratePerSecond: 2000, burst: 20000, members, retainedCount: this.retained.size }) }));
        for (const retained of this.retained.values()) connection.deliver({ ...retained, flags: retained.flags | FrameFlags.replayed });
        return;
      }
      case FrameType.join: {
        connection.joined = true;
        const joined = this.stamp(makeFrame({ type: FrameType.joined, session: this.session, sender: connection.id }));
        for (const c of this.connections) if (c.admitted) c.deliver(joined);
        return;
      }
      case FrameType.data: {
        const { route } = decodeRoute(frame.payload);
        const stamped = this.stamp({ ...frame, sender: connection.id });
        if (route.retainKey.length > 0) this.retained.set(toHex(route.retainKey), stamped);
        this.lastData = stamped;
        for (const c of this.connections) {
          if (c === connection) continue;
          if (c.joined || (c.admitted && route.retainKey.length > 0)) c.deliver(stamped);
        }
        connection.deliver(makeFrame({ type: FrameType.ack, session: this.session, sender: 0n, sequence: stamped.sequence, payload: encodeAck(route.senderSequence) }));
        return;
      }
      case FrameType.ping:
        connection.deliver(makeFrame({ type: FrameType.pong, session: this.session, sender: 0n, sequence: frame.sequence }));
        return;
      default:
        return;
    }
  }
}

const invite = {
  host: "127.0.0.1", port: 7000, aead: AEADSuite.aes256GCM,
  session: Uint8Array.from({ length: 16 }, (_, i) => i), secret: Uint8Array.from({ length: 32 }, (_, i) => 200 - i),
};
const policy = { pingInterval: 0, livenessTimeout: 0, initialBackoff: 10, maximumBackoff: 20, giveUpAfter: 100 };
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

test("two members: retained state for the late joiner, same sequence for sender and receiver, replay guard", async () => {
  const relay = new TestRelay();
  const alice = await GroupSession.create({ invite, connect: () => relay.connect(), participant: 0xaaaan, policy });
  const aliceEvents = [];
  const aliceChannel = new GroupSessionCoordinationChannel(alice);
  aliceChannel.onevent = (event) => aliceEvents.push(event);
  await alice.open();
  await alice.join();
  assert.equal(alice.state, "joined");
  assert.deepEqual(aliceEvents, [{ type: "joined", member: participantName(0xaaaan) }]);

  const state = { state: { state: { item: "clip", rate: 1, anchorItemTime: 0, anchorReferenceTime: 1790000000100000000n, originator: alice.localName, revision: 0n, intendedRate: 1, duration: null, entry: null }, command: "play", sentAt: 1790000000000000000n, follows: null } };
  assert.equal(await aliceChannel.send(state, "coplay.playback.state"), 1n);
  await settle();
  assert.deepEqual(aliceEvents.at(-1), { type: "message", message: state, sender: alice.localName, sequence: 2n });
  assert.equal(alice.unacked.length, 0);

  const bob = await GroupSession.create({ invite, connect: () => relay.connect(), participant: 0xbbbbn, policy });
  const bobEvents = [];
  const bobChannel = new GroupSessionCoordinationChannel(bob);
  bobChannel.onevent = (event) => bobEvents.push(event);
  await bob.open(); // resolves after the retained frame
  assert.deepEqual(bobEvents, [
    { type: "joined", member: participantName(0xaaaan) },
    { type: "message", message: state, sender: alice.localName, sequence: 2n },
  ]);
  await bob.join();
  await settle();
  assert.deepEqual(bobEvents.at(-1), { type: "joined", member: participantName(0xbbbbn) });
  assert.deepEqual(aliceEvents.at(-1), { type: "joined", member: participantName(0xbbbbn) });

  const presence = { presence: { sentAt: 1790000001000000000n, observedDelay: 1_000_000n, preroll: 0n, item: "clip", name: "bob", items: null } };
  await bobChannel.send(presence);
  await settle();
  assert.deepEqual(aliceEvents.at(-1), { type: "message", message: presence, sender: bob.localName, sequence: 4n });
  assert.deepEqual(bobEvents.at(-1), { type: "message", message: presence, sender: bob.localName, sequence: 4n });

  // The relay sends the same frame again (as a replay would): dropped by the replay guard.
  const before = aliceEvents.length;
  const connectionOfAlice = [...relay.connections].find((c) => c.id === 0xaaaan);
  connectionOfAlice.deliver({ ...relay.lastData, sequence: 9n });
  // A tampered frame: rejected.
  const tampered = { ...relay.lastData, sequence: 10n, payload: relay.lastData.payload.map((b, i, a) => (i === a.length - 1 ? b ^ 1 : b)) };
  connectionOfAlice.deliver(tampered);
  await settle();
  assert.equal(aliceEvents.length, before);
  assert.equal(alice.rejectedFrames, 2);
});

test("time requests before hello, text messages and malformed frames close the socket", async () => {
  const relay = new TestRelay();
  const session = await GroupSession.create({ invite, connect: () => relay.connect(), participant: 5n, policy });
  const replies = [];
  session.localNow = () => 42n;
  session.ontimereply = (reply, t4) => replies.push({ ...reply, t4 });
  const opened = session.open();
  session.requestTime(1000n); // before hello is sent (the socket opens asynchronously)
  await opened;
  await settle();
  assert.deepEqual(replies, [{ t1: 1000n, t2: 1100n, t3: 1200n, t4: 42n }]);
  assert.equal(session.timeReplies, 1, "the replies this session received are counted");
  assert.equal(relay.log[0], FrameType.timeRequest);

  const socket = session.socket;
  let code = null;
  socket.close = (c) => (code = c);
  socket.onmessage("hello");
  assert.equal(code, 1003);
  socket.onmessage(Uint8Array.of(0, 0, 0, 36, 1));
  assert.equal(code, 1002);
});

test("a lost connection resumes with resumeAfter and re-sends unacknowledged frames", async () => {
  const relay = new TestRelay();
  const session = await GroupSession.create({ invite, connect: () => relay.connect(), participant: 7n, policy });
  await session.open();
  await session.join();
  const hellos = [];
  const original = relay.receive.bind(relay);
  let dropData = true;
  relay.receive = async (connection, bytes) => {
    const frame = decodeMessage(bytes);
    if (frame.type === FrameType.hello) hellos.push(decodeHello(frame.payload));
    if (frame.type === FrameType.data && dropData) return; // lost with the connection
    return original(connection, bytes);
  };
  const sent = session.sendMessage("Chat", new TextEncoder().encode("{}"));
  await sent;
  assert.equal(session.unacked.length, 1);
  dropData = false;
  [...relay.connections][0].socket.close(1006);
  await new Promise((resolve) => setTimeout(resolve, 80));
  assert.equal(hellos.length, 1);
  assert.equal(hellos[0].resumeAfter, 1n); // its own joined frame
  assert.equal(session.unacked.length, 0); // re-sent after the welcome and acknowledged
  assert.equal(session.state, "joined");
  session.leave();
  assert.equal(session.state, "ended");
});

test("a relay that stays away: one reconnect loop, which gives up at its deadline", async () => {
  const relay = new TestRelay();
  let attempts = 0;
  let down = false;
  const connect = () => {
    if (!down) return relay.connect();
    // What a browser WebSocket does when nothing listens: no open, a close.
    attempts += 1;
    const socket = { send() { throw new Error("closed"); }, close() {}, onmessage() {}, onclose() {}, onopen() {} };
    setTimeout(() => socket.onclose(), 1);
    return socket;
  };
  const session = await GroupSession.create({ invite, connect, participant: 9n, policy: { ...policy, giveUpAfter: 150 } });
  const reconnecting = [];
  let ended = null;
  session.onreconnecting = (value) => reconnecting.push(value);
  session.onend = (reason) => {
    ended = reason;
  };
  await session.open();
  await session.join();
  down = true;
  [...relay.connections][0].socket.close(1001);
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(ended, "connectionLost"); // before the fix every refused attempt restarted the deadline: never
  assert.deepEqual(reconnecting, [true]);
  assert.ok(attempts >= 3 && attempts <= 20, `attempts: ${attempts}`); // backoff 10-20 ms over 150 ms, not a storm
});

test("a relay that comes back: resumed, onreconnecting(true) then (false)", async () => {
  const relay = new TestRelay();
  let down = false;
  const connect = () => {
    if (!down) return relay.connect();
    const socket = { send() { throw new Error("closed"); }, close() {}, onmessage() {}, onclose() {}, onopen() {} };
    setTimeout(() => socket.onclose(), 1);
    return socket;
  };
  const session = await GroupSession.create({ invite, connect, participant: 11n, policy: { ...policy, giveUpAfter: 1000 } });
  const reconnecting = [];
  session.onreconnecting = (value) => reconnecting.push(value);
  await session.open();
  await session.join();
  down = true;
  [...relay.connections][0].socket.close(1001);
  await new Promise((resolve) => setTimeout(resolve, 60));
  down = false;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(reconnecting, [true, false]);
  assert.equal(session.state, "joined");
  session.leave();
});

test("join after the session ended fails instead of waiting forever", async () => {
  const relay = new TestRelay();
  const session = await GroupSession.create({ invite, connect: () => relay.connect(), participant: 13n, policy });
  await session.open();
  [...relay.connections][0].socket.close(1001); // not joined yet: the session ends
  await settle();
  assert.equal(session.state, "ended");
  await assert.rejects(session.join(), /over/);
});

test("hello asks for presence batches; a presence frame reads as its joined/left frames, in order", async () => {
  const relay = new TestRelay();
  const hellos = [];
  const connect = () => {
    const socket = relay.connect();
    const send = socket.send;
    socket.send = (bytes) => {
      const frame = decodeMessage(bytes);
      if (frame.type === FrameType.hello) hellos.push(frame);
      return send(bytes);
    };
    return socket;
  };
  const alice = await GroupSession.create({ invite, connect, participant: 0xaaaan, policy });
  const events = [];
  const channel = new GroupSessionCoordinationChannel(alice);
  channel.onevent = (event) => events.push(event);
  await alice.open();
  await alice.join();
  assert.equal(hellos.length, 1);
  assert.ok(hellos[0].flags & FrameFlags.presenceBatches);
  const [connection] = relay.connections;
  const entries = [
    { type: FrameType.joined, participant: 0xbbbbn, sequence: 2n },
    { type: FrameType.joined, participant: 0xccccn, sequence: 3n },
    { type: FrameType.left, participant: 0xbbbbn, sequence: 4n },
  ];
  connection.deliver(makeFrame({ type: FrameType.presence, session: invite.session, sender: 0n, sequence: 4n, payload: encodePresence(entries) }));
  await settle();
  assert.deepEqual(events.slice(1), [
    { type: "joined", member: participantName(0xbbbbn) },
    { type: "joined", member: participantName(0xccccn) },
    { type: "left", member: participantName(0xbbbbn) },
  ]);
  assert.equal(alice.lastStamp, 4n);
  assert.deepEqual([...alice.members].sort(), [0xaaaan, 0xccccn]);
  alice.close?.();
});

test("a message handler that throws is reported with its frame, and the frames after it are still handled in order", async () => {
  const relay = new TestRelay();
  const alice = await GroupSession.create({ invite, connect: () => relay.connect(), participant: 0xaaaan, policy });
  const bob = await GroupSession.create({ invite, connect: () => relay.connect(), participant: 0xbbbbn, policy });
  for (const member of [alice, bob]) {
    await member.open();
    await member.join();
  }
  const received = [];
  const failures = [];
  bob.onmessage = (name, body) => {
    const text = new TextDecoder().decode(body);
    received.push(text);
    if (text === "second") throw new Error("handler broke");
  };
  bob.onhandlererror = (frame, error) => failures.push([frame.type, error.message]);
  for (const text of ["first", "second", "third"]) await alice.sendMessage("Note", new TextEncoder().encode(text));
  await settle();
  assert.deepEqual(received, ["first", "second", "third"]);
  assert.deepEqual(failures, [[FrameType.data, "handler broke"]]);
});

test("a suspension notice's retained slot is marked evictable for the relay; the state's and unretained messages are not", async () => {
  const relay = new TestRelay();
  const flagsSent = [];
  const alice = await GroupSession.create({
    invite, participant: 0xaaaan, policy,
    connect: () => {
      const socket = relay.connect();
      const send = socket.send;
      socket.send = (bytes) => {
        const frame = decodeMessage(bytes);
        if (frame.type === FrameType.data) flagsSent.push(frame.flags);
        send(bytes);
      };
      return socket;
    },
  });
  const channel = new GroupSessionCoordinationChannel(alice);
  channel.onevent = () => {};
  await alice.open();
  await alice.join();
  const t = 1790000000000000000n;
  const state = { state: { state: { item: "clip", rate: 1, anchorItemTime: 0, anchorReferenceTime: t, originator: alice.localName, revision: 0n, intendedRate: 1, duration: null, entry: null }, command: "play", sentAt: t, follows: null } };
  const suspension = { suspension: { id: "s", phase: "begin", reason: "buffering", effectiveAt: t, waits: true, timeout: 1n, proposedItemTime: null, sentAt: t, history: null } };
  const presence = { presence: { sentAt: t, observedDelay: 1_000_000n, preroll: 0n, item: "clip", name: "alice", items: null } };
  await channel.send(state, "coplay.playback.state");
  await channel.send(suspension, "coplay.playback.suspension.alice");
  await channel.send(presence);
  await settle();
  assert.deepEqual(flagsSent.map((flags) => (flags & FrameFlags.evictable) !== 0), [false, true, false]);
  // Only the relay reads the flag: the page still delivers its own messages as before.
  assert.equal(alice.unacked.length, 0);
});
