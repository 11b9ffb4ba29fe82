import Foundation

extension GroupSessionMessenger {
    /// A registration made by ``GroupSessionMessenger/receive(_:_:)``; ``cancel()`` ends it.
    public final class Subscription: Sendable {
        private let cancelHandler: @Sendable () -> Void

        init(cancel: @escaping @Sendable () -> Void) { cancelHandler = cancel }

        /// Stops the handler (it may still run once if a message is being delivered right now).
        public func cancel() { cancelHandler() }
    }

    /// Calls `handler` for every message of one type, synchronously on the session's read loop, in
    /// the relay's total order. Retained messages already held are handed over first, at once.
    ///
    /// Use this instead of ``messages(of:)->AsyncStream<(Message,MessageContext)>`` when the order must be exact across this member's own
    /// messages and the others': the callbacks of ``sendStamped(_:retainedAs:evictable:stamped:)`` run on the
    /// same read loop, so a consumer that forwards both into one stream sees every message, its
    /// own included, in strictly increasing ``MessageContext/sequence``. (An `AsyncStream` plus a
    /// forwarding task in between would let an own message overtake a peer's.)
    ///
    /// Handlers run one at a time, each message once, never under the session's state lock: a
    /// handler may send, subscribe or cancel (this subscription included). It holds up every other
    /// handler and stream of the session while it runs, so keep it quick (yielding to an
    /// `AsyncStream` continuation is the intended use).
    ///
    /// ```swift
    /// let (stream, continuation) = AsyncStream.makeStream(of: (Chat, MessageContext).self)
    /// let subscription = messenger.receive(Chat.self) { chat, context in continuation.yield((chat, context)) }
    /// try messenger.sendStamped(Chat(text: "hi")) { context in continuation.yield((Chat(text: "hi"), context)) }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the message type; messages that fail to decode as it are skipped.
    ///   - handler: receives each message and its context.
    /// - Returns: the registration; cancel it to stop.
    public func receive<Message: Decodable & Sendable>(
        _ type: Message.Type, _ handler: @escaping @Sendable (Message, MessageContext) -> Void
    ) -> Subscription {
        let name = Self.name(of: type)
        let id = engine.addHandler(name: name) { body, context in
            if let message = try? JSONDecoder().decode(Message.self, from: Data(body)) { handler(message, context) }
        }
        let engine = self.engine
        return Subscription { engine.removeHandler(id, name: name) }
    }
}
