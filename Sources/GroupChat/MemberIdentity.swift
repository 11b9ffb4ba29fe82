import GroupSessions

/// A member's signed statement "participant P of session S is key K, named N": how the others bind
/// a name to a key. Members send it when they join and to each member that joins after them
/// (``MemberMessage/identity(_:)``); it is not retained.
///
/// The signature covers (docs/protocol.md, "Member keys"):
///
/// ```
/// "coplay identity v1" 0x00 | session (16) | participant u64 | key (32) | nameLength u16 | name (UTF-8)
/// ```
///
/// so a statement copied into another session, or sent by another participant, does not verify.
public struct MemberIdentity: Hashable, Sendable {
    /// The participant the statement is about (the frame's sender must be this participant).
    public var participant: ParticipantID
    /// Its display name.
    public var name: String
    /// Its public key.
    public var key: MemberPublicKey
    /// Ed25519 signature of ``canonicalBytes(session:)`` by ``key``.
    public var signature: [UInt8]

    /// A statement as received (check it with ``isValid(in:)``).
    public init(participant: ParticipantID, name: String, key: MemberPublicKey, signature: [UInt8]) {
        self.participant = participant
        self.name = name
        self.key = key
        self.signature = signature
    }

    /// A statement signed by `key`.
    public init(signedBy key: MemberKey, session: SessionID, participant: ParticipantID, name: String) throws {
        self.init(participant: participant, name: name, key: key.publicKey, signature: [])
        signature = try key.signature(for: canonicalBytes(session: session))
    }

    /// The bytes the signature covers.
    public func canonicalBytes(session: SessionID) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay identity v1")
        writer.raw(session.bytes)
        writer.u64(participant.rawValue)
        writer.raw(key.bytes)
        writer.shortText(name)
        return writer.bytes
    }

    /// Whether the signature verifies in `session` and the name follows ``ChatText``'s rules.
    public func isValid(in session: SessionID) -> Bool {
        ChatText.isClean(name) && !name.isEmpty && ChatText.length(name) <= ChatText.maximumNameLength
            && key.isValidSignature(signature, for: canonicalBytes(session: session))
    }
}
