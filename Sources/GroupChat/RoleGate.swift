import Foundation
import GroupSessions
import Logging
import PlaybackCoordinator
import Synchronization

/// The roles of a joined session where only hosts control: a ``RoleBook`` fed with the session's
/// role statements and coordination messages in the relay's order, as the channel's
/// `CoordinationGate`.
///
/// - Role statements (``MemberMessage/role(_:)``) arrive on a subscription of their own, the
///   retained ones at once when the gate is made; coordination messages arrive through
///   ``incoming(_:from:)``, which the `GroupSessionCoordinationChannel` calls on the same read
///   loop. Both take the book in turn, so every command is decided at its place in the order.
///   Make the gate before the channel (the retained statements come first).
/// - ``outgoing(_:from:)`` signs this member's commands with its signing key (the host key for
///   a controller invite, the member's own key otherwise) while that key controls, and refuses
///   them with `PlaybackCoordinatorError.onlyHostsControl` when it does not; a transition at an
///   entry's end goes unsigned then (``RoleBook/isTransition(_:)``), which receivers check
///   against the transition they compute themselves.
/// - ``events`` tells every accepted statement (`roleChanged`) and every ignored statement or
///   message (`messageRejected`, with the running count).
///
/// ```swift
/// let gate = RoleGate(session: session, invite: invite, memberKey: key)!
/// let playback = try await GroupPlayback.prepare(session: session, timeServer: invite, gate: gate)
/// ```
public final class RoleGate<Activity: GroupActivity>: CoordinationGate, Sendable {
    /// The session.
    public let session: GroupSession<Activity>
    /// The key this member signs its commands with.
    public let signingKey: MemberKey
    /// Role changes and ignored messages, as events (`PlaybackEvent.EventType.roleChanged`,
    /// `PlaybackEvent.EventType.messageRejected`).
    public let events: AsyncStream<PlaybackEvent>

    private let state: Mutex<State>
    private let continuation: AsyncStream<PlaybackEvent>.Continuation
    private let logger: Logger

    private struct State: Sendable {
        var book: RoleBook
        var directory = MemberDirectory()
        var lastSigned: ReferenceTime?
        var subscription: GroupSessionMessenger.Subscription?
    }

    /// Starts taking the session's role statements (and the members' identities). Make it before
    /// joining, or right after: statements and identities sent before it are not seen (retained
    /// statements are handed over at once).
    ///
    /// - Parameters:
    ///   - session: a joined session.
    ///   - hostKey: the session's host key (the invite's).
    ///   - signingKey: what this member signs its commands with.
    ///   - logger: ignored messages are logged at debug.
    public init(session: GroupSession<Activity>, hostKey: MemberPublicKey, signingKey: MemberKey, logger: Logger = .current) {
        self.session = session
        self.signingKey = signingKey
        self.logger = logger
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1024))
        state = Mutex(State(book: RoleBook(session: session.id, hostKey: hostKey)))
        let messenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        let sessionID = session.id
        let subscription = messenger.receive(MemberMessage.self) { [weak self] message, context in
            switch message {
            case .role(let statement): self?.receive(statement, from: context.source.id)
            case .identity(let identity) where identity.participant == context.source.id && identity.isValid(in: sessionID):
                self?.state.withLock { _ = $0.directory.bind(identity) }
            default: break
            }
        }
        state.withLock { $0.subscription = subscription }
    }

    /// The gate of `invite`'s session where only hosts control (`nil` where everyone controls):
    /// signing with the host key for a controller invite, with `memberKey` for a viewer invite.
    public convenience init?(session: GroupSession<Activity>, invite: Invite, memberKey: MemberKey, logger: Logger = .current) {
        guard let hostBytes = invite.hostKey, let hostKey = MemberPublicKey(bytes: hostBytes) else { return nil }
        let signing = invite.hostSeed.flatMap { try? MemberKey(seed: $0) } ?? memberKey
        self.init(session: session, hostKey: hostKey, signingKey: signing, logger: logger)
    }

    deinit {
        // Directly, as ChatChannel does: the session never runs its handlers under the lock that
        // cancelling takes, so the last reference may go inside a handler.
        state.withLock({ $0.subscription })?.cancel()
        continuation.finish()
    }

    /// The book as it is now.
    public var book: RoleBook { state.withLock { $0.book } }

    /// The members' verified identities received so far (names bound to keys): what `coplay
    /// control … grant NAME` resolves NAME with.
    public var directory: MemberDirectory { state.withLock { $0.directory } }

    /// Whether this member's signing key controls now.
    public var controls: Bool { state.withLock { $0.book.controls(signingKey.publicKey) } }

    /// Ignored statements and messages so far, by reason.
    public var rejections: [RoleBook.Rejection: Int] { state.withLock { $0.book.rejections } }

    private func receive(_ statement: RoleStatement, from sender: ParticipantID) {
        state.withLock { state in
            switch state.book.receive(statement) {
            case .success:
                continuation.yield(PlaybackEvent(
                    type: .roleChanged, realtime: Date().timeIntervalSince1970, originator: Self.participant(sender),
                    detail: statement.action.rawValue, text: statement.name, key: statement.key.text))
            case .failure(let reason):
                rejected(reason, from: sender, key: nil, book: state.book)
            }
        }
    }

    private func rejected(_ reason: RoleBook.Rejection, from sender: ParticipantID, key: String?, book: RoleBook) {
        logger.debug("ignored a message", metadata: ["sender": "\(sender)", "reason": "\(reason)"])
        continuation.yield(PlaybackEvent(
            type: .messageRejected, realtime: Date().timeIntervalSince1970, originator: Self.participant(sender), reason: reason.rawValue,
            key: key, count: book.rejections.values.reduce(0, +)))
    }

    private static func participant(_ id: ParticipantID) -> PlaybackParticipantID { PlaybackParticipantID(id.description) }

    public func outgoing(_ message: CoordinationMessage, from participant: ParticipantID) throws -> CoordinationMessage {
        guard RoleBook.isCommand(message) else { return message }
        let signed = try state.withLock { state throws -> SignedCoordinationMessage? in
            guard state.book.controls(signingKey.publicKey) else {
                // A member without control still moves the program on at an entry's end: unsigned.
                if case .state(let proposal) = message, RoleBook.isTransition(proposal) { return nil }
                throw PlaybackCoordinatorError.onlyHostsControl
            }
            // Never below the last signed: what a receiver takes as a replay (the coordinator sends
            // from two tasks, so a message made earlier can go later).
            var message = message
            if let last = state.lastSigned, let sentAt = message.sentAt, sentAt < last { message = Self.message(message, sentAt: last) }
            state.lastSigned = max(state.lastSigned ?? message.sentAt!, message.sentAt!)
            return try RoleBook.sign(message, with: signingKey, session: session.id, participant: participant)
        }
        return signed.map(CoordinationMessage.signed) ?? message
    }

    public func incoming(_ message: CoordinationMessage, from sender: ParticipantID) -> CoordinationMessage? {
        state.withLock { state in
            switch state.book.admit(message, from: sender) {
            case .success(let inner): return inner
            case .failure(let reason):
                var key: String?
                if case .signed(let signed) = message { key = signed.key }
                rejected(reason, from: sender, key: key, book: state.book)
                return nil
            }
        }
    }

    /// `message` (a command) with its `sentAt` set to `sentAt`.
    static func message(_ message: CoordinationMessage, sentAt: ReferenceTime) -> CoordinationMessage {
        switch message {
        case .state(var proposal):
            proposal.sentAt = sentAt
            return .state(proposal)
        case .queueEdit(var notice):
            notice.sentAt = sentAt
            return .queueEdit(notice)
        case .queueSnapshot(var part):
            part.sentAt = sentAt
            return .queueSnapshot(part)
        default:
            return message
        }
    }

    /// Sends a role statement (signed by the host key) to everyone, retained under its
    /// ``RoleStatement/retainName``, and returns once the relay confirmed it.
    ///
    /// - Throws: when it cannot be sent or the relay does not confirm it within `timeout`.
    public static func publish(_ statement: RoleStatement, on session: GroupSession<Activity>, timeout: Duration = .seconds(10)) async throws {
        let messenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        let confirmation = Confirmation<Void>()
        try messenger.sendStamped(MemberMessage.role(statement), retainedAs: statement.retainName) { _ in
            confirmation.resolve(.success(()))
        }
        try await confirmation.value(timeout: timeout) {
            ChatError.notSent("the relay did not confirm the \(statement.action.rawValue) within \(timeout)")
        }
    }
}
