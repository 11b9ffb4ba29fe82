import Foundation

extension GroupSessionMessenger {
    /// Sends a typed message and reports the relay's stamp for it once the relay acknowledges it.
    ///
    /// The relay never echoes a member's own messages back to it, but it acknowledges each one with
    /// the per-session sequence number (stamp) it gave the frame. Members that must place their own
    /// messages in the group's single total order (the playback coordinator, whose highest-stamped
    /// state wins) use this to learn where their message landed. The callback runs once, on the
    /// session's read loop, in the relay's order relative to other members' messages; it never runs
    /// if the connection closes first or the relay refuses the frame.
    ///
    /// ```swift
    /// try messenger.sendStamped(State(rate: 1), retainedAs: "state") { context in
    ///     print("my state is stamp \(context.sequence)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - message: the message, JSON-encoded.
    ///   - name: when not `nil`, the relay also retains it under this name for late joiners.
    ///   - evictable: with `name`, the relay may drop this retained message to make room for
    ///     another name once the session holds its most (``FrameFlags/evictable``).
    ///   - stamped: receives the context the other members see for this message.
    public func sendStamped<Message: Encodable & Sendable>(
        _ message: Message, retainedAs name: String? = nil, evictable: Bool = false,
        stamped: @escaping @Sendable (MessageContext) -> Void
    ) throws {
        let local = Participant(id: engine.local)
        let retained = name != nil
        try engine.send(
            name: Self.name(of: Message.self), body: Array(try JSONEncoder().encode(message)), recipients: [],
            retainName: name, evictable: evictable, unreliable: false,
            onAck: { stamp, senderSequence in
                stamped(MessageContext(source: local, sequence: stamp, senderSequence: senderSequence, isRetained: retained))
            })
    }
}
