import Foundation

/// Sends and receives application messages in a ``GroupSession``, sealed end to end.
///
/// Messages are typed `Codable` values (JSON inside the sealed envelope) or raw `Data`,
/// addressed to every member or a subset. `.reliable` messages (the default) reach every
/// member present when sent, FIFO per sender; `.unreliable` ones may be dropped for a member
/// that is falling behind. Every received message carries a ``MessageContext`` with the sender
/// and the relay's total-order sequence number.
///
/// A message may also be *retained* under a name: the relay keeps the latest one per name and
/// hands it to every member that joins later, before anything else (use it for state such as
/// the playback position).
///
/// ```swift
/// let messenger = GroupSessionMessenger(session: session)
/// Task { for await (chat, context) in messenger.messages(of: Chat.self) { print(context.source, chat.text) } }
/// try messenger.send(Chat(text: "hi"))
/// try messenger.send(PlaybackState(...), retainedAs: "playback")
/// ```
public final class GroupSessionMessenger: Sendable {
    /// Delivery guarantees.
    public enum DeliveryMode: Hashable, Sendable {
        /// Every member present when sent receives it, in each sender's order.
        case reliable
        /// May be dropped for a member that is falling behind.
        case unreliable
    }

    /// Who a message goes to.
    public enum Recipients: Hashable, Sendable {
        /// Every other joined member.
        case all
        /// Only these members.
        case only(Set<Participant>)

        /// Only this member (GroupActivities' `.only(participant)`).
        public static func only(_ participant: Participant) -> Recipients { .only([participant]) }
    }

    /// GroupActivities' name for ``Recipients`` (`messenger.send(value, to: .only(members))`).
    public typealias Participants = Recipients

    /// The largest message body (the JSON or raw bytes): 256 KiB.
    public static let maximumMessageSize = SessionEngine.maximumMessageSize

    let engine: SessionEngine
    /// This messenger's delivery mode.
    public let deliveryMode: DeliveryMode

    /// Creates a messenger on `session`.
    public init<Activity>(session: GroupSession<Activity>, deliveryMode: DeliveryMode = .reliable) {
        engine = session.engine
        self.deliveryMode = deliveryMode
    }

    /// The name a message type travels under: its unqualified type name.
    static func name<M>(of type: M.Type) -> String { String(describing: type) }

    private func recipients(_ recipients: Recipients) -> [ParticipantID] {
        switch recipients {
        case .all: []
        case .only(let set): set.map(\.id).sorted()
        }
    }

    /// Sends a typed message.
    ///
    /// - Parameters:
    ///   - message: Any `Encodable` value; it travels as JSON.
    ///   - recipients: `.all` (default) or `.only([...])`.
    /// - Throws: ``GroupSessionError`` above 256 KiB, beyond the rate limit, or when not joined.
    public func send<Message: Encodable & Sendable>(_ message: Message, to recipients: Recipients = .all) throws {
        if case .only(let set) = recipients, set.isEmpty { return }
        try engine.send(
            name: Self.name(of: Message.self), body: Array(try JSONEncoder().encode(message)),
            recipients: self.recipients(recipients), retainName: nil, unreliable: deliveryMode == .unreliable)
    }

    /// Sends raw bytes.
    public func send(_ data: Data, to recipients: Recipients = .all) throws {
        if case .only(let set) = recipients, set.isEmpty { return }
        try engine.send(
            name: Envelope.rawDataName, body: Array(data), recipients: self.recipients(recipients), retainName: nil,
            unreliable: deliveryMode == .unreliable)
    }

    /// Sends a typed message to every member and has the relay retain it under `name`: the
    /// latest message per name is handed to every member that joins later. Retained messages
    /// are always reliable. An `evictable` one may be dropped by the relay to make room for
    /// another name once the session holds its most retained names (``FrameFlags/evictable``).
    public func send<Message: Encodable & Sendable>(
        _ message: Message, retainedAs name: String, evictable: Bool = false
    ) throws {
        try engine.send(
            name: Self.name(of: Message.self), body: Array(try JSONEncoder().encode(message)), recipients: [],
            retainName: name, evictable: evictable, unreliable: false)
    }

    /// Messages of one type, with their context, in the session's order. Retained messages of
    /// this type already received are delivered first. Messages that fail to decode as
    /// `Message` are skipped.
    public func messages<Message: Decodable & Sendable>(of type: Message.Type) -> AsyncStream<(Message, MessageContext)> {
        let (stream, continuation) = AsyncStream.makeStream(of: (Message, MessageContext).self)
        let name = Self.name(of: type)
        let id = engine.addHandler(name: name, finish: { continuation.finish() }) { body, context in
            if let message = try? JSONDecoder().decode(Message.self, from: Data(body)) {
                continuation.yield((message, context))
            }
        }
        let engine = self.engine
        // Directly: the session never delivers under its state lock, which removing takes.
        continuation.onTermination = { _ in engine.removeHandler(id, name: name) }
        return stream
    }

    /// Raw `Data` messages with their context.
    public func messages(of type: Data.Type) -> AsyncStream<(Data, MessageContext)> {
        let (stream, continuation) = AsyncStream.makeStream(of: (Data, MessageContext).self)
        let id = engine.addHandler(name: Envelope.rawDataName, finish: { continuation.finish() }) { body, context in
            continuation.yield((Data(body), context))
        }
        let engine = self.engine
        continuation.onTermination = { _ in engine.removeHandler(id, name: Envelope.rawDataName) }
        return stream
    }
}
