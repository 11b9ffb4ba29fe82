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
    /// The host's grant or revocation of control (a session where only hosts control).
    case role(RoleStatement)
    /// A kind this build does not know, or a newer version of one: ignored.
    case unsupported(kind: String, version: Int)

    /// The kinds and the version this build writes and reads.
    public enum Kind: String, Sendable, CaseIterable {
        case identity, chat, role

        /// The version written (and the highest read).
        public var version: Int { 1 }
    }
}

extension MemberMessage: Codable {
    private enum Keys: String, CodingKey {
        case kind, v, participant, name, key, signature, sentAt, text, n, action, issuedAt
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
        let name = try container.decode(String.self, forKey: .name)
        guard let key = MemberPublicKey(text: try container.decode(String.self, forKey: .key)) else {
            throw DecodingError.dataCorruptedError(forKey: .key, in: container, debugDescription: "not a 32-byte base64url key")
        }
        guard let signature = Base64URLText.decode(try container.decode(String.self, forKey: .signature)), signature.count == 64 else {
            throw DecodingError.dataCorruptedError(forKey: .signature, in: container, debugDescription: "not a 64-byte base64url signature")
        }
        switch kind {
        case .identity:
            let text = try container.decode(String.self, forKey: .participant)
            guard text.count == 16, let raw = UInt64(text, radix: 16) else {
                throw DecodingError.dataCorruptedError(forKey: .participant, in: container, debugDescription: "not 16 hex digits")
            }
            self = .identity(MemberIdentity(participant: ParticipantID(rawValue: raw), name: name, key: key, signature: signature))
        case .chat:
            self = .chat(ChatMessage(
                name: name, key: key, sentAt: try container.decode(UInt64.self, forKey: .sentAt),
                text: try container.decode(String.self, forKey: .text), ordinal: try container.decode(UInt64.self, forKey: .n),
                signature: signature))
        case .role:
            self = .role(RoleStatement(
                action: try container.decode(RoleStatement.Action.self, forKey: .action), key: key, name: name,
                issuedAt: try container.decode(UInt64.self, forKey: .issuedAt), signature: signature))
        }
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
        case .unsupported(let kind, let version):
            try container.encode(kind, forKey: .kind)
            try container.encode(version, forKey: .v)
        }
    }
}
