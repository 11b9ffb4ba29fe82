import Crypto
import Foundation
import GroupSessions
import PlaybackCoordinator

/// Who controls a session where only hosts control, at a point of the relay's order, and which
/// commands count (sans-IO; docs/protocol.md, "Roles: who may control").
///
/// - A key **controls** when it is the host key, or when the latest ``RoleStatement`` about it
///   accepted so far is a grant. ``receive(_:)`` takes statements: one that is malformed (a name
///   that is not one, the host key as its subject), not signed by the host key in this session, or
///   not newer (`issuedAt`) than the last accepted about its key is ignored.
/// - ``admit(_:from:)`` takes coordination messages: a `state`, `queueEdit` or `queueSnapshot`
///   counts only inside a `SignedCoordinationMessage` whose signature by its key verifies for
///   this session and the frame's sender, whose key controls at this point, and whose inner
///   `sentAt` is not below the last accepted one of the same key and sender (equal: another body
///   only, as the parts of one queue copy); `suspension`, `presence` and `queueRequest` pass
///   unsigned. Everything ignored is counted in ``rejections`` by ``Rejection``.
///
/// Feed it statements and messages in the relay's order, one at a time (``RoleGate`` does), and
/// every member decides the same for the same command.
///
/// ```swift
/// var book = RoleBook(session: invite.session, hostKey: MemberPublicKey(bytes: invite.hostKey!)!)
/// let signed = try RoleBook.sign(.state(proposal), with: hostKey, session: invite.session, participant: me)
/// book.admit(.signed(signed), from: me)   // .success(.state(proposal))
/// ```
public struct RoleBook: Sendable {
    /// Why a statement or a message did not count.
    public enum Rejection: String, Error, Hashable, Sendable, CaseIterable {
        /// A command (`state`, `queueEdit`, `queueSnapshot`) that is not signed.
        case unsigned
        /// Not readable as what it claims: a key, body or signature that is not base64url of the
        /// right length, an inner message that is not a command, a statement's name that is not a
        /// name, or a statement about the host key.
        case malformed
        /// The signature does not verify (forged, altered, another session's or another sender's).
        case badSignature
        /// Signed by a key that does not control at this point of the order.
        case noControl
        /// A command not newer than the last accepted one of its key and sender (a re-sent or
        /// reordered copy).
        case replay
        /// A role statement not newer than the last accepted one about its key.
        case stale
    }

    /// The session whose statements and commands verify.
    public let session: SessionID
    /// The host key: it always controls, and signs the statements.
    public let hostKey: MemberPublicKey
    /// The latest accepted statement about each key.
    public private(set) var statements: [MemberPublicKey: RoleStatement] = [:]
    /// How many statements and messages were ignored, by reason.
    public private(set) var rejections: [Rejection: Int] = [:]
    private var lastCommands: [Signer: LastCommand] = [:]

    private struct Signer: Hashable, Sendable {
        var key: MemberPublicKey
        var participant: ParticipantID
    }

    private struct LastCommand: Sendable {
        var sentAt: Int64
        var bodies: Set<[UInt8]>
    }

    /// A book where only `hostKey` controls, before any statement.
    public init(session: SessionID, hostKey: MemberPublicKey) {
        self.session = session
        self.hostKey = hostKey
    }

    /// Whether `key` controls now.
    public func controls(_ key: MemberPublicKey) -> Bool {
        key == hostKey || statements[key]?.action == .grant
    }

    /// The keys granted control now (the host key not among them), sorted.
    public var granted: [MemberPublicKey] { statements.values.filter { $0.action == .grant }.map(\.key).sorted() }

    /// Takes a role statement in the order's place it arrived at.
    ///
    /// - Returns: the statement when it counts (the subject's control changes from here on), or why not.
    @discardableResult
    public mutating func receive(_ statement: RoleStatement) -> Result<RoleStatement, Rejection> {
        let result = check(statement)
        switch result {
        case .success: statements[statement.key] = statement
        case .failure(let reason): rejections[reason, default: 0] += 1
        }
        return result
    }

    private func check(_ statement: RoleStatement) -> Result<RoleStatement, Rejection> {
        guard statement.isWellFormed, statement.key != hostKey else { return .failure(.malformed) }
        guard statement.isValid(in: session, hostKey: hostKey) else { return .failure(.badSignature) }
        if let last = statements[statement.key], statement.issuedAt <= last.issuedAt { return .failure(.stale) }
        return .success(statement)
    }

    /// Takes a coordination message from `sender`'s frame at its place in the order.
    ///
    /// - Returns: the message the coordinator receives (a signed command's inner message; other
    ///   kinds as they are), or why it does not count.
    public mutating func admit(_ message: CoordinationMessage, from sender: ParticipantID) -> Result<CoordinationMessage, Rejection> {
        let result = check(message, from: sender)
        if case .failure(let reason) = result { rejections[reason, default: 0] += 1 }
        return result
    }

    private mutating func check(_ message: CoordinationMessage, from sender: ParticipantID) -> Result<CoordinationMessage, Rejection> {
        switch message {
        case .state(var proposal) where Self.isTransition(proposal):
            // A transition needs no authority (the program moves on at an entry's end with or without
            // a controller there): it goes to the coordinator marked, which applies only the
            // transition it computes itself.
            proposal.isUnauthenticated = true
            return .success(.state(proposal))
        case .state, .queueEdit, .queueSnapshot: return .failure(.unsigned)
        case .suspension, .presence, .queueRequest, .unsupported: return .success(message)
        case .signed(let signed):
            guard let key = MemberPublicKey(text: signed.key), let body = Base64URLText.decode(signed.body),
                let signature = Base64URLText.decode(signed.signature), signature.count == 64
            else { return .failure(.malformed) }
            guard let inner = try? JSONDecoder().decode(CoordinationMessage.self, from: Data(body)), Self.isCommand(inner),
                let sentAt = inner.sentAt
            else { return .failure(.malformed) }
            guard key.isValidSignature(signature, for: Self.signedBytes(session: session, participant: sender, body: body)) else {
                return .failure(.badSignature)
            }
            guard controls(key) else { return .failure(.noControl) }
            let signer = Signer(key: key, participant: sender)
            var last = lastCommands[signer] ?? LastCommand(sentAt: .min, bodies: [])
            if sentAt.nanoseconds < last.sentAt || (sentAt.nanoseconds == last.sentAt && last.bodies.contains(body)) {
                return .failure(.replay)
            }
            if sentAt.nanoseconds > last.sentAt { last = LastCommand(sentAt: sentAt.nanoseconds, bodies: []) }
            last.bodies.insert(body)
            lastCommands[signer] = last
            return .success(inner)
        }
    }

    /// Whether `proposal` is a transition at an entry's end, which a member without control sends
    /// unsigned.
    public static func isTransition(_ proposal: StateProposal) -> Bool {
        proposal.command == .advance && proposal.follows != nil
    }

    /// Whether `message` is a command: what only controllers send, signed.
    public static func isCommand(_ message: CoordinationMessage) -> Bool {
        switch message {
        case .state, .queueEdit, .queueSnapshot: true
        case .suspension, .presence, .queueRequest, .signed, .unsupported: false
        }
    }

    /// The bytes a signed command's signature covers:
    /// `"coplay command v1" 0x00 | session (16) | participant u64 | body`.
    public static func signedBytes(session: SessionID, participant: ParticipantID, body: [UInt8]) -> [UInt8] {
        var writer = CanonicalWriter(domain: "coplay command v1")
        writer.raw(session.bytes)
        writer.u64(participant.rawValue)
        writer.raw(body)
        return writer.bytes
    }

    /// `message` (a command) signed by `key` for `participant`'s frame in `session`.
    ///
    /// - Throws: when `message` cannot be encoded or signed.
    public static func sign(
        _ message: CoordinationMessage, with key: MemberKey, session: SessionID, participant: ParticipantID
    ) throws -> SignedCoordinationMessage {
        // Sorted keys: the same message signs to the same bytes (the receivers take whatever bytes
        // were signed; this only makes coplay's own output reproducible).
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = Array(try encoder.encode(message))
        let signature = try key.signature(for: signedBytes(session: session, participant: participant, body: body))
        return SignedCoordinationMessage(key: key.publicKey.text, body: Base64URLText.encode(body), signature: Base64URLText.encode(signature))
    }
}
