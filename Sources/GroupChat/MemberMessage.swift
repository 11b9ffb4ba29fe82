import Foundation
import GroupSessions

/// What members say to one another outside playback: who they are and chat. One envelope name,
/// `MemberMessage`, whose JSON body is `{"kind": …, "v": 1, …}` like the coordination messages
/// (docs/protocol.md, "Member messages"). An older member has no handler for the name and drops
/// these messages without a word.
public enum MemberMessage: Hashable, Sendable {
    /// A member's signed identity (name and key).
    case identity(MemberIdentity)
    /// A chat message.
    case chat(ChatMessage)
    /// A member's sealing key, bound to its member key (and its controller attestation).
    case sealingKey(SealingKeyStatement)
    /// A host's removal of a member, with the others' sealed successor invites.
    case removal(Removal)
    /// The host's grant or revocation of control (a session where only hosts control).
    case role(RoleStatement)
    /// A kind this build does not know, or a newer version of one: ignored.
    case unsupported(kind: String, version: Int)

    /// The kinds and the version this build writes and reads.
    public enum Kind: String, Sendable, CaseIterable {
        case identity, chat, role, sealingKey, removal

        /// The version written (and the highest read).
        public var version: Int { 1 }
    }
}

extension MemberMessage: Codable {
    private enum Keys: String, CodingKey {
        case kind, v, participant, name, key, signature, sentAt, text, n, action, issuedAt, sealingKey, controller, removed, invites
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let kindText = try container.decode(String.self, forKey: .kind)
        let version = try container.decode(Int.self, forKey: .v)
        guard version >= 1 else { throw DecodingError.dataCorruptedError(forKey: .v, in: container, debugDescription: "version below 1") }
        guard let kind = Kind(rawValue: kindText), version <= kind.version else {
            self = .unsupported(kind: kindText, version: version)
            return
        }
        switch kind {
        case .identity:
            let text = try container.decode(String.self, forKey: .participant)
            guard text.count == 16, let raw = UInt64(text, radix: 16) else {
                throw DecodingError.dataCorruptedError(forKey: .participant, in: container, debugDescription: "not 16 hex digits")
            }
            self = .identity(MemberIdentity(
                participant: ParticipantID(rawValue: raw), name: try container.decode(String.self, forKey: .name),
                key: try Self.key(.key, in: container), signature: try Self.signature(.signature, in: container)))
        case .chat:
            self = .chat(ChatMessage(
                name: try container.decode(String.self, forKey: .name), key: try Self.key(.key, in: container),
                sentAt: try container.decode(UInt64.self, forKey: .sentAt),
                text: try container.decode(String.self, forKey: .text), ordinal: try container.decode(UInt64.self, forKey: .n),
                signature: try Self.signature(.signature, in: container)))
        case .sealingKey:
            guard let sealing = SealingPublicKey(text: try container.decode(String.self, forKey: .sealingKey)) else {
                throw DecodingError.dataCorruptedError(forKey: .sealingKey, in: container, debugDescription: "not a 32-byte base64url X25519 key")
            }
            self = .sealingKey(SealingKeyStatement(
                key: try Self.key(.key, in: container), sealingKey: sealing, signature: try Self.signature(.signature, in: container),
                controller: try container.decodeIfPresent(String.self, forKey: .controller).map { _ in try Self.signature(.controller, in: container) }))
        case .removal:
            let invites = try container.decode([SealedInviteCoding].self, forKey: .invites)
            guard invites.count <= Removal.maximumInvites else {
                throw DecodingError.dataCorruptedError(forKey: .invites, in: container, debugDescription: "more than \(Removal.maximumInvites) invites")
            }
            self = .removal(Removal(
                removed: try Self.key(.removed, in: container), removedName: try container.decode(String.self, forKey: .name),
                issuedAt: try container.decode(UInt64.self, forKey: .issuedAt), invites: try invites.map { try $0.invite },
                signature: try Self.signature(.signature, in: container)))
        case .role:
            self = .role(RoleStatement(
                action: try container.decode(RoleStatement.Action.self, forKey: .action), key: try Self.key(.key, in: container),
                name: try container.decode(String.self, forKey: .name), issuedAt: try container.decode(UInt64.self, forKey: .issuedAt),
                signature: try Self.signature(.signature, in: container)))
        }
    }

    private static func key(_ field: Keys, in container: KeyedDecodingContainer<Keys>) throws -> MemberPublicKey {
        guard let key = MemberPublicKey(text: try container.decode(String.self, forKey: field)) else {
            throw DecodingError.dataCorruptedError(forKey: field, in: container, debugDescription: "not a 32-byte base64url key")
        }
        return key
    }

    private static func signature(_ field: Keys, in container: KeyedDecodingContainer<Keys>) throws -> [UInt8] {
        guard let signature = Base64URLText.decode(try container.decode(String.self, forKey: field)), signature.count == 64 else {
            throw DecodingError.dataCorruptedError(forKey: field, in: container, debugDescription: "not a 64-byte base64url signature")
        }
        return signature
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch self {
        case .identity(let identity):
            try container.encode(Kind.identity.rawValue, forKey: .kind)
            try container.encode(Kind.identity.version, forKey: .v)
            try container.encode(identity.participant.description, forKey: .participant)
            try container.encode(identity.name, forKey: .name)
            try container.encode(identity.key.text, forKey: .key)
            try container.encode(Base64URLText.encode(identity.signature), forKey: .signature)
        case .chat(let message):
            try container.encode(Kind.chat.rawValue, forKey: .kind)
            try container.encode(Kind.chat.version, forKey: .v)
            try container.encode(message.name, forKey: .name)
            try container.encode(message.key.text, forKey: .key)
            try container.encode(message.sentAt, forKey: .sentAt)
            try container.encode(message.text, forKey: .text)
            try container.encode(message.ordinal, forKey: .n)
            try container.encode(Base64URLText.encode(message.signature), forKey: .signature)
        case .role(let statement):
            try container.encode(Kind.role.rawValue, forKey: .kind)
            try container.encode(Kind.role.version, forKey: .v)
            try container.encode(statement.action, forKey: .action)
            try container.encode(statement.key.text, forKey: .key)
            try container.encode(statement.name, forKey: .name)
            try container.encode(statement.issuedAt, forKey: .issuedAt)
            try container.encode(Base64URLText.encode(statement.signature), forKey: .signature)
        case .sealingKey(let statement):
            try container.encode(Kind.sealingKey.rawValue, forKey: .kind)
            try container.encode(Kind.sealingKey.version, forKey: .v)
            try container.encode(statement.key.text, forKey: .key)
            try container.encode(statement.sealingKey.text, forKey: .sealingKey)
            try container.encode(Base64URLText.encode(statement.signature), forKey: .signature)
            try container.encodeIfPresent(statement.controller.map(Base64URLText.encode), forKey: .controller)
        case .removal(let removal):
            try container.encode(Kind.removal.rawValue, forKey: .kind)
            try container.encode(Kind.removal.version, forKey: .v)
            try container.encode(removal.removed.text, forKey: .removed)
            try container.encode(removal.removedName, forKey: .name)
            try container.encode(removal.issuedAt, forKey: .issuedAt)
            try container.encode(removal.invites.map(SealedInviteCoding.init), forKey: .invites)
            try container.encode(Base64URLText.encode(removal.signature), forKey: .signature)
        case .unsupported(let kind, let version):
            try container.encode(kind, forKey: .kind)
            try container.encode(version, forKey: .v)
        }
    }
}

/// One sealed invite of a `removal` as JSON: `{"key", "sealingKey", "enc", "sealed"}` (base64url).
private struct SealedInviteCoding: Codable {
    var key: String
    var sealingKey: String
    var enc: String
    var sealed: String

    init(_ invite: Removal.SealedInvite) {
        key = invite.key.text
        sealingKey = invite.sealingKey.text
        enc = Base64URLText.encode(invite.box.encapsulatedKey)
        sealed = Base64URLText.encode(invite.box.ciphertext)
    }

    var invite: Removal.SealedInvite {
        get throws {
            guard let member = MemberPublicKey(text: key), let sealing = SealingPublicKey(text: sealingKey),
                let encapsulated = Base64URLText.decode(enc), encapsulated.count == 32, let ciphertext = Base64URLText.decode(sealed)
            else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not a sealed invite")) }
            return Removal.SealedInvite(key: member, sealingKey: sealing, box: SealedBox(encapsulatedKey: encapsulated, ciphertext: ciphertext))
        }
    }
}
