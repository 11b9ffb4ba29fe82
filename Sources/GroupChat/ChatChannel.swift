import Foundation
import GroupSessions
import Logging
import Synchronization

/// The chat of a joined group session: messages signed with the member's key, sealed end to end
/// like every message (the relay routes and keeps them without reading them), the last 50 kept by
/// the relay for late joiners.
///
/// - ``entries`` yields every accepted message: first the history (what the relay kept, oldest
///   first, ``ChatEntry/isHistory``), then each message as it arrives, the member's own ones when
///   the relay confirmed them. Ignored ones are counted in ``rejections``.
/// - ``send(_:timeout:)`` cleans, checks, signs and sends a text, retained in its history slot; it returns
///   once the relay confirmed it, or throws a ``ChatError`` that says why not.
/// - ``run()`` announces the member's identity (name bound to key) to everyone now and to each
///   member that joins later, until cancelled. A member that only sends one message (`coplay
///   chat`) does not run it: its messages carry its name and key anyway.
///
/// ```swift
/// let chat = try ChatChannel(session: session, key: MemberKey(), name: "alice", logger: logger)
/// let announcing = Task { await chat.run() }
/// Task { for await entry in chat.entries { print("\(entry.label): \(entry.text)") } }
/// try await chat.send("hello")
/// ```
public final class ChatChannel<Activity: GroupActivity>: Sendable {
    /// The session.
    public let session: GroupSession<Activity>
    /// The member's name (cleaned).
    public let name: String
    /// The accepted messages, history first.
    public let entries: AsyncStream<ChatEntry>

    private let key: MemberKey
    /// This member's sealing key for this session (``SealingKeyStatement``).
    private let sealing = SealingKey()
    /// The host key's seed, when this member holds the controller invite.
    private let hostSigner: MemberKey?
    private let onRemoval: (@Sendable (RemovalOutcome) -> Void)?
    private let messenger: GroupSessionMessenger
    private let logger: Logger
    private let origin = ContinuousClock.now
    private let state: Mutex<State>
    private let continuation: AsyncStream<ChatEntry>.Continuation

    private struct State: Sendable {
        var room: ChatRoom
        var live = false
        var rejections: [ChatRoom.Rejection: Int] = [:]
        var subscription: GroupSessionMessenger.Subscription?
        var sealingKeys: [MemberPublicKey: SealingKeyEntry] = [:]
        var removalHandled = false
        var removalRejections: [RemovalRejection: Int] = [:]
    }

    /// Starts listening: the history the relay kept is taken at once.
    ///
    /// - Parameters:
    ///   - session: a joined session.
    ///   - key: the member's signing key.
    ///   - name: its display name (cleaned by ``ChatText``).
    ///   - logger: ignored messages are logged at debug.
    ///   - onRemoval: called, on the session's read loop and before the session's end arrives, with
    ///     the outcome of the first valid ``Removal`` (signed by the invite's host key): this member
    ///     moves (its successor invite opened), was removed, or was left behind. Keep it short.
    /// - Throws: ``ChatError`` for a name that cannot be one.
    public init(
        session: GroupSession<Activity>, key: MemberKey, name: String, logger: Logger,
        onRemoval: (@Sendable (RemovalOutcome) -> Void)? = nil
    ) throws {
        self.session = session
        self.key = key
        self.onRemoval = onRemoval
        hostSigner = try session.invite.hostSeed.map { try MemberKey(seed: $0) }
        self.name = try ChatText.name(name)
        self.logger = logger
        messenger = GroupSessionMessenger(session: session, deliveryMode: .reliable)
        let (stream, continuation) = AsyncStream.makeStream(of: ChatEntry.self, bufferingPolicy: .unbounded)
        entries = stream
        self.continuation = continuation
        state = Mutex(State(room: ChatRoom(session: session.id)))
        let subscription = messenger.receive(MemberMessage.self) { [weak self] message, context in
            self?.receive(message, context: context)
        }
        state.withLock {
            $0.subscription = subscription
            $0.live = true
        }
    }

    deinit {
        // Directly, even when the last reference goes inside a message handler: the session never
        // runs its handlers under the lock that cancelling takes.
        state.withLock({ $0.subscription })?.cancel()
        continuation.finish()
    }

    /// How many messages were ignored, by reason.
    public var rejections: [ChatRoom.Rejection: Int] { state.withLock { $0.rejections } }

    /// The member's public key.
    public var publicKey: MemberPublicKey { key.publicKey }

    /// This member's sealing key's public half (what it announces).
    public var sealingPublicKey: SealingPublicKey { sealing.publicKey }

    /// How many removals were ignored, by reason.
    public var removalRejections: [RemovalRejection: Int] { state.withLock { $0.removalRejections } }

    /// The members whose sealing keys arrived, bound to their identities: what a remover seals to.
    public var members: [SealedMember] {
        state.withLock { state in
            state.room.directory.identities.values.compactMap { identity in
                guard let entry = state.sealingKeys[identity.key] else { return nil }
                return SealedMember(
                    participant: identity.participant, name: identity.name,
                    label: state.room.directory.label(name: identity.name, key: identity.key), key: identity.key,
                    sealingKey: entry.sealingKey, isController: entry.isController)
            }.sorted { $0.label < $1.label }
        }
    }

    /// Every member that announced its identity, with its label (whether or not it announced a sealing key).
    public var identities: [(label: String, identity: MemberIdentity)] {
        state.withLock { state in
            state.room.directory.identities.values.map { (state.room.directory.label(name: $0.name, key: $0.key), $0) }
                .sorted { $0.label < $1.label }
        }
    }

    /// Sends `removal` (signed by the host key) to every member and waits for the relay's acknowledgement.
    ///
    /// - Throws: ``ChatError/notSent(_:)`` when it could not be sent or the relay did not confirm it within `timeout`.
    public func send(removal: Removal, timeout: Duration = .seconds(10)) async throws {
        let confirmation = Confirmation<Void>()
        do {
            try messenger.sendStamped(MemberMessage.removal(removal), retainedAs: nil) { _ in
                confirmation.resolve(.success(()))
            }
        } catch {
            throw ChatError.notSent("\(error)")
        }
        try await confirmation.value(timeout: timeout) {
            ChatError.notSent("the relay did not confirm the removal within \(timeout)")
        }
    }

    /// The label people see for a participant that announced its identity.
    public func label(of participant: Participant) -> String? {
        state.withLock { $0.room.directory.label(of: participant.id) }
    }

    private var now: Duration { origin.duration(to: .now) }

    private func receive(_ message: MemberMessage, context: MessageContext) {
        let now = self.now
        state.withLock { state in
            switch message {
            case .identity(let identity):
                if !state.room.receive(identity: identity, from: context.source.id) {
                    logger.debug("ignored an identity statement", metadata: ["sender": "\(context.source.id)"])
                }
            case .chat(let chat):
                switch state.room.receive(chat, from: context.source.id, isHistory: !state.live, now: now) {
                case .success(let entry): continuation.yield(entry)
                case .failure(let reason):
                    state.rejections[reason, default: 0] += 1
                    logger.debug("ignored a chat message", metadata: ["sender": "\(context.source.id)", "reason": "\(reason)"])
                }
            case .sealingKey(let statement):
                // Bound to the sender's identity (sent right after it), verified in this session.
                guard state.room.directory.identities[context.source.id]?.key == statement.key, statement.isValid(in: session.id) else {
                    logger.debug("ignored a sealing key statement", metadata: ["sender": "\(context.source.id)"])
                    return
                }
                let isController = session.invite.hostKey.flatMap(MemberPublicKey.init(bytes:))
                    .map { statement.isController(in: session.id, hostKey: $0) } ?? false
                if state.sealingKeys[statement.key] == nil {
                    state.sealingKeys[statement.key] = SealingKeyEntry(sealingKey: statement.sealingKey, isController: isController)
                }
            case .removal(let removal):
                receive(removal, from: context.source.id, state: &state)
            case .role, .unsupported:
                break
            }
        }
    }

    private func receive(_ removal: Removal, from sender: ParticipantID, state: inout State) {
        guard let hostKey = session.invite.hostKey.flatMap(MemberPublicKey.init(bytes:)) else {
            state.removalRejections[.noHostKey, default: 0] += 1
            return
        }
        guard removal.isValid(in: session.id, hostKey: hostKey) else {
            state.removalRejections[.badSignature, default: 0] += 1
            logger.info("ignored a removal that the host key did not sign", metadata: ["sender": "\(sender)"])
            return
        }
        guard !state.removalHandled else {
            state.removalRejections[.repeated, default: 0] += 1
            return
        }
        state.removalHandled = true
        let by = state.room.directory.label(of: sender)
        let removedLabel = state.room.directory.label(name: removal.removedName, key: removal.removed)
        let outcome: RemovalOutcome
        if removal.removed == key.publicKey {
            outcome = .removed(by: by)
        } else {
            do {
                if let text = try removal.invite(for: key.publicKey, sealingKey: sealing, session: session.id) {
                    outcome = .moved(invite: text, removed: removedLabel, by: by)
                } else {
                    outcome = .leftBehind(removed: removedLabel, by: by)
                }
            } catch {
                logger.info("the successor invite sealed to this member does not open", metadata: ["error": "\(error)"])
                outcome = .leftBehind(removed: removedLabel, by: by)
            }
        }
        onRemoval?(outcome)
    }

    /// Sends `text` to everyone and keeps it in its history slot.
    ///
    /// - Parameters:
    ///   - text: what the person typed (cleaned here).
    ///   - timeout: how long to wait for the relay's confirmation.
    /// - Returns: the message as the others see it, once the relay confirmed it.
    /// - Throws: ``ChatError`` for an empty or too long text, beyond the rate limit (5 messages in
    ///   10 s), or when the relay did not confirm it within `timeout`.
    @discardableResult
    public func send(_ text: String, timeout: Duration = .seconds(10)) async throws -> ChatEntry {
        let wallClock = UInt64(max(0, Date().timeIntervalSince1970 * 1e9))
        let message = try state.withLock { state throws(ChatError) in
            try state.room.compose(text, key: key, name: name, wallClock: wallClock)
        }
        let local = session.localParticipant.id
        let confirmation = Confirmation<ChatEntry>()
        do {
            try messenger.sendStamped(MemberMessage.chat(message), retainedAs: message.retainName) { [weak self] _ in
                guard let self else { return }
                let entry = self.state.withLock { $0.room.sent(message, as: local) }
                self.continuation.yield(entry)
                confirmation.resolve(.success(entry))
            }
        } catch {
            throw ChatError.notSent("\(error)")
        }
        return try await confirmation.value(timeout: timeout) {
            ChatError.notSent("the relay did not confirm it within \(timeout)")
        }
    }

    /// Announces this member's identity to everyone, and again to each member that joins, until
    /// cancelled or the session ends.
    public func run() async {
        let updates = session.activeParticipantsUpdates
        let local = session.localParticipant
        var known = session.activeParticipants
        announce(to: .all)
        for await members in updates {
            let new = members.subtracting(known).subtracting([local])
            known = members
            if !new.isEmpty { announce(to: .only(new)) }
        }
    }

    private func announce(to recipients: GroupSessionMessenger.Recipients) {
        do {
            let identity = try MemberIdentity(signedBy: key, session: session.id, participant: session.localParticipant.id, name: name)
            // The member knows itself: its own label counts its key for its name.
            _ = state.withLock { $0.room.receive(identity: identity, from: identity.participant) }
            try messenger.send(MemberMessage.identity(identity), to: recipients)
            // Right after the identity (same sender, so in order): the key a remover seals this
            // member's successor invite to.
            let statement = try SealingKeyStatement(
                signedBy: key, sealingKey: sealing.publicKey, session: session.id, hostKey: hostSigner)
            state.withLock {
                $0.sealingKeys[key.publicKey] = SealingKeyEntry(sealingKey: sealing.publicKey, isController: hostSigner != nil)
            }
            try messenger.send(MemberMessage.sealingKey(statement), to: recipients)
        } catch {
            logger.info("could not announce this member's identity", metadata: ["error": "\(error)"])
        }
    }
}

/// A member's announced sealing key.
struct SealingKeyEntry: Sendable {
    var sealingKey: SealingPublicKey
    /// The host key attested that the member holds the controller invite.
    var isController: Bool
}

/// A member a remover can seal a successor invite to.
public struct SealedMember: Hashable, Sendable {
    /// Its participant in the session.
    public var participant: ParticipantID
    /// Its name.
    public var name: String
    /// How people see it (`alice`, or `alice#3f9a2c` when the name is shared).
    public var label: String
    /// Its member key.
    public var key: MemberPublicKey
    /// Its sealing key.
    public var sealingKey: SealingPublicKey
    /// Whether the host key attested that it holds the controller invite.
    public var isController: Bool
}

/// What a member does about a valid ``Removal``.
public enum RemovalOutcome: Hashable, Sendable {
    /// The removal holds this member's successor invite (opened): it moves there.
    case moved(invite: String, removed: String, by: String?)
    /// This member is the removed one.
    case removed(by: String?)
    /// The removal holds no invite for this member (it announced no sealing key in time): it stays behind.
    case leftBehind(removed: String, by: String?)
}

/// Why a removal was ignored.
public enum RemovalRejection: String, Hashable, Sendable {
    /// The session has no host key (everyone controls): nobody can remove anyone.
    case noHostKey
    /// Not signed by the host key in this session, altered, or malformed.
    case badSignature
    /// A removal after the first one handled in this session.
    case repeated
}

/// The relay's confirmation of one sent message, or a timeout: whichever comes first.
final class Confirmation<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var result: Result<Value, any Error>?
        var waiter: CheckedContinuation<Value, any Error>?
    }

    private let state = Mutex(State())

    /// The first result counts; later ones are dropped.
    func resolve(_ result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    /// The value once confirmed; `timedOut` after `timeout`.
    func value(timeout: Duration, timedOut: @escaping @Sendable () -> any Error) async throws -> Value {
        // The timer is a child of this call: cancelled (and awaited) as soon as the value is there.
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { [weak self] in
                try await Task.sleep(for: timeout)
                self?.resolve(.failure(timedOut()))
            }
            defer { group.cancelAll() }
            return try await withCheckedThrowingContinuation { waiter in
                let ready = state.withLock { state -> Result<Value, any Error>? in
                    if let result = state.result { return result }
                    state.waiter = waiter
                    return nil
                }
                if let ready { waiter.resume(with: ready) }
            }
        }
    }
}
