import GroupSessions

/// One chat message, signed by its sender's key and self-contained: it carries the sender's name
/// and key, so a member that joins after the sender left still checks it and names its sender.
///
/// The signature covers (docs/protocol.md, "Chat"):
///
/// ```
/// "coplay chat v1" 0x00 | session (16) | key (32) | sentAt u64 | nameLength u16 | name (UTF-8) |
/// textLength u32 | text (UTF-8)
/// ```
///
/// ``ordinal`` is not signed: it only picks the relay slot that keeps the message for late joiners.
public struct ChatMessage: Hashable, Sendable {
    /// The sender's display name.
    public var name: String
    /// The sender's public key.
    public var key: MemberPublicKey
    /// The sender's wall clock when sending, nanoseconds since the Unix epoch; unique per key (a
    /// sender never uses one twice), so a receiver drops a second message with the same key and
    /// `sentAt` as a replay.
    public var sentAt: UInt64
    /// The text (clean, at most ``ChatText/maximumLength`` scalars).
    public var text: String
    /// The message's place in the session's chat as its sender counted it: it is retained under
    /// `coplay.chat.(ordinal % 50)`.
    public var ordinal: UInt64
    /// Ed25519 signature of ``canonicalBytes(session:)`` by ``key``.
    public var signature: [UInt8]

    /// A message as received (check it with ``isValid(in:)``).
    public init(name: String, key: MemberPublicKey, sentAt: UInt64, text: String, ordinal: UInt64, signature: [UInt8]) {
        self.name = name
        self.key = key
        self.sentAt = sentAt
        self.text = text
        self.ordinal = ordinal
        self.signature = signature
    }

    /// A message signed by `key`.
    public init(signedBy key: MemberKey, session: SessionID, name: String, sentAt: UInt64, text: String, ordinal: UInt64) throws {
        self.init(name: name, key: key.publicKey, sentAt: sentAt, text: text, ordinal: ordinal, signature: [])
        signature = try key.signature(for: canonicalBytes(session: session))
    }

    /// The bytes the signature covers.
    public func canonicalBytes(session: SessionID) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay chat v1")
        writer.raw(session.bytes)
        writer.raw(key.bytes)
        writer.u64(sentAt)
        writer.shortText(name)
        writer.longText(text)
        return writer.bytes
    }

    /// Whether its name and text follow ``ChatText``'s rules (clean, not empty, not too long).
    public var isWellFormed: Bool {
        !text.isEmpty && ChatText.length(text) <= ChatText.maximumLength && ChatText.isClean(text)
            && !name.isEmpty && ChatText.length(name) <= ChatText.maximumNameLength && ChatText.isClean(name)
    }

    /// Whether it is well formed and its signature verifies in `session`.
    public func isValid(in session: SessionID) -> Bool {
        isWellFormed && key.isValidSignature(signature, for: canonicalBytes(session: session))
    }

    /// The retained-message name of its history slot.
    public var retainName: String { Self.retainName(slot: ordinal % ChatLimits.historySlots) }

    /// `coplay.chat.SLOT`.
    public static func retainName(slot: UInt64) -> String { "coplay.chat.\(slot)" }
}
