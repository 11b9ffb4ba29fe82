import Foundation
import GroupSessions

/// A host's removal of a member (member message `removal`): everyone else moves to a successor
/// session whose invite each remaining member receives sealed to its own sealing key
/// (``SealingKeyStatement``); the removed member receives none. Signed by the session's host key.
///
/// Signed bytes (docs/protocol.md, "Removing a member"):
///
/// ```
/// "coplay removal v1" 0x00 | session (16) | removed (32) | issuedAt u64 | nameLength u16 | name |
/// count u16 | count x (key (32) | sealingKey (32) | enc (32) | sealedLength u32 | sealed)
/// ```
///
/// Each sealed invite is HPKE (``Sealing``) with info `"coplay successor v1" 0x00 | session (16) |
/// key (32)`: it opens only with that member's sealing key, and only as this session's successor
/// for that member key.
public struct Removal: Hashable, Sendable {
    /// One remaining member's sealed successor invite.
    public struct SealedInvite: Hashable, Sendable {
        /// The member key it is for.
        public var key: MemberPublicKey
        /// The sealing key it was sealed to.
        public var sealingKey: SealingPublicKey
        /// The invite's text (controller or viewer invite), sealed.
        public var box: SealedBox

        /// A sealed invite as received.
        public init(key: MemberPublicKey, sealingKey: SealingPublicKey, box: SealedBox) {
            self.key = key
            self.sealingKey = sealingKey
            self.box = box
        }
    }

    /// One remaining member to seal an invite to.
    public struct Recipient: Sendable {
        /// Its member key.
        public var key: MemberPublicKey
        /// Its sealing key.
        public var sealingKey: SealingPublicKey
        /// The successor invite it gets (the controller invite for controllers, the viewer invite otherwise).
        public var invite: String

        /// A recipient.
        public init(key: MemberPublicKey, sealingKey: SealingPublicKey, invite: String) {
            self.key = key
            self.sealingKey = sealingKey
            self.invite = invite
        }
    }

    /// The removed member's key.
    public var removed: MemberPublicKey
    /// The removed member's name when it was removed (clean, as in chat).
    public var removedName: String
    /// The issuer's wall clock, nanoseconds since the Unix epoch.
    public var issuedAt: UInt64
    /// The remaining members' sealed invites.
    public var invites: [SealedInvite]
    /// Ed25519 by the host key over ``canonicalBytes(session:)``.
    public var signature: [UInt8]

    /// The most sealed invites one removal carries (one per remaining member).
    public static let maximumInvites = 1_000

    /// A removal as received (check it with ``isValid(in:hostKey:)``).
    public init(removed: MemberPublicKey, removedName: String, issuedAt: UInt64, invites: [SealedInvite], signature: [UInt8]) {
        self.removed = removed
        self.removedName = removedName
        self.issuedAt = issuedAt
        self.invites = invites
        self.signature = signature
    }

    /// Seals `recipients`' invites and signs the removal with `hostKey`.
    public init(
        signedBy hostKey: MemberKey, session: SessionID, removed: MemberPublicKey, removedName: String, issuedAt: UInt64,
        recipients: [Recipient]
    ) throws {
        let invites = try recipients.map { recipient in
            SealedInvite(
                key: recipient.key, sealingKey: recipient.sealingKey,
                box: try Sealing.seal(Array(recipient.invite.utf8), to: recipient.sealingKey, info: Self.info(session: session, key: recipient.key)))
        }
        self.init(removed: removed, removedName: removedName, issuedAt: issuedAt, invites: invites, signature: [])
        signature = try hostKey.signature(for: canonicalBytes(session: session))
    }

    /// HPKE's info for the invite sealed to `key` in `session`.
    public static func info(session: SessionID, key: MemberPublicKey) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay successor v1")
        writer.raw(session.bytes)
        writer.raw(key.bytes)
        return writer.bytes
    }

    /// The bytes the signature covers.
    public func canonicalBytes(session: SessionID) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay removal v1")
        writer.raw(session.bytes)
        writer.raw(removed.bytes)
        writer.u64(issuedAt)
        writer.shortText(removedName)
        writer.u16(invites.count)
        for invite in invites {
            writer.raw(invite.key.bytes)
            writer.raw(invite.sealingKey.bytes)
            writer.raw(invite.box.encapsulatedKey)
            writer.u32(invite.box.ciphertext.count)
            writer.raw(invite.box.ciphertext)
        }
        return writer.bytes
    }

    /// Whether the removal is well formed and signed by `hostKey` in `session`: at most
    /// ``maximumInvites``, no invite for the removed key, one per key, 32-byte encapsulated keys.
    public func isValid(in session: SessionID, hostKey: MemberPublicKey) -> Bool {
        guard invites.count <= Self.maximumInvites, !invites.contains(where: { $0.key == removed }),
            Set(invites.map(\.key)).count == invites.count, invites.allSatisfy({ $0.box.encapsulatedKey.count == 32 }),
            ChatText.isClean(removedName), ChatText.length(removedName) <= ChatText.maximumNameLength
        else { return false }
        return hostKey.isValidSignature(signature, for: canonicalBytes(session: session))
    }

    /// The successor invite sealed to `key`, opened with `sealingKey`; `nil` when the removal
    /// holds none for `key` (the member is the removed one, or was not known to the remover).
    ///
    /// - Throws: when the invite for `key` does not open with `sealingKey` (sealed to another key, or altered).
    public func invite(for key: MemberPublicKey, sealingKey: SealingKey, session: SessionID) throws -> String? {
        guard let sealed = invites.first(where: { $0.key == key }) else { return nil }
        let bytes = try Sealing.open(sealed.box, with: sealingKey, info: Self.info(session: session, key: key))
        return String(decoding: bytes, as: UTF8.self)
    }
}
