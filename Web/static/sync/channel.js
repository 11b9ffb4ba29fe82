// The coordination channel over a GroupSession (Sources/PlaybackCoordinator/GroupSessionCoordinationChannel.swift):
// CoordinationMessages travel as envelopes named "CoordinationMessage", reliable, to every member;
// a retain key K becomes the retained-message name K (relay key HMAC("message:" + K)). The relay
// does not echo a member's own messages, so each is reported back to the local coordinator at its
// ack, with the relay's stamp as sequence. Messages are delivered in strictly increasing sequence
// (a message that would not be is dropped). Participants are 16-hex-digit ids. A body that is no
// message is dropped; one this page cannot read (a newer kind or version) is delivered as
// {unsupported: {kind, version}}, which the coordinator reports (messages.js, docs/protocol.md).
//
// In a session where only hosts control, a RolesGate (roles.js) stands between the session and the
// coordinator: every coordination message, the page's own included (at its ack), is checked by it in
// the relay's order before it is delivered, and the page's commands go out wrapped and signed (or,
// without control, not at all).

import { COORDINATION_MESSAGE_NAME, decodeMessageBody, encodeMessageBody, retainedSlotIsEvictable } from "./messages.js";
import { participantName } from "../session/session.js";

export class GroupSessionCoordinationChannel {
  /**
   * @param {import("../session/session.js").GroupSession} session an open (welcomed) or joined session.
   * @param {{gate?: import("./roles.js").RolesGate|null}} [options] the gate of a hosts session.
   */
  constructor(session, { gate = null } = {}) {
    this.session = session;
    this.gate = gate;
    this.localParticipant = session.localName;
    this.lastSequence = null;
    this.dropped = 0;
    this.sending = Promise.resolve();
    /** Receives channel events: {type: "message", message, sender, sequence} | {type: "joined"|"left", member}. */
    this.onevent = () => {};
    session.onmessage = (name, body, context) => {
      if (name !== COORDINATION_MESSAGE_NAME) return;
      if (gate !== null) {
        const sender = participantName(context.sender);
        gate.receiveCoordination(body, context.sender, (message) => this.deliver(message, sender, context.sequence));
        return;
      }
      let message;
      try {
        message = decodeMessageBody(body);
      } catch {
        return; // not a CoordinationMessage: dropped, as Swift's messenger drops what does not decode
      }
      this.deliver(message, participantName(context.sender), context.sequence);
    };
    session.onpresence = (type, participant) => this.onevent({ type, member: participantName(participant) });
  }

  deliver(message, sender, sequence) {
    if (this.lastSequence !== null && sequence <= this.lastSequence) {
      this.dropped += 1;
      return;
    }
    this.lastSequence = sequence;
    this.onevent({ type: "message", message, sender, sequence });
  }

  /** Sends a message to the group (the sender included, at its ack), retained under `retainKey` when given. */
  send(message, retainKey = null) {
    if (this.gate !== null) return this.sendChecked(message, retainKey);
    return this.session.sendMessage(COORDINATION_MESSAGE_NAME, encodeMessageBody(message), {
      retainName: retainKey,
      evictable: retainedSlotIsEvictable(message),
      onAck: (stamp) => this.deliver(message, this.localParticipant, stamp),
    });
  }

  /**
   * A hosts session: the message wrapped and signed by the gate (in the order sent; signing is
   * asynchronous), delivered back at its ack through the gate like any other member's. A command this
   * page may not send rejects with "only hosts control this session" (an automatic one is dropped).
   */
  sendChecked(message, retainKey) {
    const gate = this.gate;
    const work = this.sending.then(async () => {
      const sealed = await gate.seal(message, this.session.participant, retainKey);
      if (sealed === null) return null;
      const { body, retainName } = sealed;
      return this.session.sendMessage(COORDINATION_MESSAGE_NAME, body, {
        retainName,
        evictable: retainedSlotIsEvictable(message),
        onAck: (stamp) => gate.receiveCoordination(body, this.session.participant, (checked) => this.deliver(checked, this.localParticipant, stamp)),
      });
    });
    // The caller gets `work` and its error; the chain only keeps the next send in order after a failed one.
    this.sending = work.catch(() => {});
    return work;
  }
}
