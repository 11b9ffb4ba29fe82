import Foundation
import GroupSessions
import RateLimiting

/// A chat message a member accepted, ready to show.
public struct ChatEntry: Hashable, Sendable {
    /// The participant whose frame carried it (for history: the one that sent it then).
    public var sender: ParticipantID
    /// The sender's name as signed.
    public var name: String
    /// How to show the sender (``MemberDirectory/label(name:key:)``) when it arrived.
    public var label: String
    /// The sender's key.
    public var key: MemberPublicKey
    /// The text.
    public var text: String
    /// The sender's wall clock when sending, seconds since the Unix epoch.
    public var sentAt: Double
    /// `true` for a message sent before this member joined (from the relay's history slots).
    public var isHistory: Bool
    /// `true` for this member's own message (reported when the relay confirmed it).
    public var isOwn: Bool
}

/// The chat's rules as a value (sans-IO): what a member accepts, what it sends, and the history
/// slots. ``ChatChannel`` runs it over a group session; tests drive it directly.
///
/// Receiving (``receive(_:from:isHistory:now:)``) ignores, and says why:
/// - a message whose name or text is not clean or is too long, or whose signature does not verify
///   in this session (a forgery, an alteration, a copy from another session);
/// - a message from a participant that announced another key or name (``MemberDirectory``);
/// - a message seen already (same key and `sentAt`: a replay);
/// - beyond ``ChatLimits/receiveBurst`` live messages of one key plus ``ChatLimits/receiveRate`` per
///   second (flooding). History at joining is not rate limited: it is at most 50 messages.
///
/// Sending (``compose(_:key:name:wallClock:)``) cleans the text, refuses an empty or too long one
/// and more than ``ChatLimits/sendBurst`` messages of its key in any ``ChatLimits/sendWindowSeconds``
/// seconds (by the messages' `sentAt`, history included: a `coplay chat` run counts the runs before
/// it), each with a ``ChatError`` that says so, and numbers the message after the highest one seen.
public struct ChatRoom: Sendable {
    /// Why a received message was ignored.
    public enum Rejection: String, Error, Hashable, Sendable {
        /// Its name or text is empty, too long or has control characters.
        case malformed
        /// The signature does not verify (forged, altered, another session's).
        case badSignature
        /// Its sender announced another key or name.
        case notTheSendersKey
        /// A message seen before.
        case replay
        /// Its key sends faster than ``ChatLimits`` allow.
        case flooding
    }

    /// The session whose messages verify.
    public let session: SessionID
    /// Names and keys.
    public private(set) var directory = MemberDirectory()
    /// The highest ``ChatMessage/ordinal`` seen (`nil`: no message yet).
    public private(set) var highestOrdinal: UInt64?
    private var seen: Set<Seen> = []
    private var seenOrder: [Seen] = []
    private var receiveBuckets: [MemberPublicKey: TokenBucket] = [:]
    /// The latest `sentAt` values of each key's messages (at most ``ChatLimits/sendBurst``).
    private var recent: [MemberPublicKey: [UInt64]] = [:]
    private var lastSentAt: UInt64 = 0

    private struct Seen: Hashable, Sendable {
        var key: MemberPublicKey
        var sentAt: UInt64
    }

    /// A room for `session`.
    public init(session: SessionID) {
        self.session = session
    }

    /// Takes a member's identity statement (from `sender`'s frame): bound when it verifies and is
    /// about `sender`.
    @discardableResult
    public mutating func receive(identity: MemberIdentity, from sender: ParticipantID) -> Bool {
        guard identity.participant == sender, identity.isValid(in: session) else { return false }
        return directory.bind(identity)
    }

    /// Takes a chat message carried by `sender`'s frame.
    ///
    /// - Parameters:
    ///   - message: the message as decoded.
    ///   - sender: the participant whose frame carried it.
    ///   - isHistory: it came from the relay's history slots when this member joined.
    ///   - now: monotonic time (the flooding limit).
    /// - Returns: the entry to show, or why it was ignored.
    public mutating func receive(
        _ message: ChatMessage, from sender: ParticipantID, isHistory: Bool, now: Duration
    ) -> Result<ChatEntry, Rejection> {
        guard message.isWellFormed else { return .failure(.malformed) }
        guard message.isValid(in: session) else { return .failure(.badSignature) }
        if let identity = directory.identities[sender],
            identity.key != message.key || Array(identity.name.unicodeScalars) != Array(message.name.unicodeScalars)
        {
            return .failure(.notTheSendersKey)
        }
        let seenKey = Seen(key: message.key, sentAt: message.sentAt)
        guard !seen.contains(seenKey) else { return .failure(.replay) }
        if !isHistory {
            var bucket = receiveBuckets[message.key]
                ?? TokenBucket(capacity: Double(ChatLimits.receiveBurst), rate: ChatLimits.receiveRate, now: now)
            let allowed = bucket.take(now: now)
            receiveBuckets[message.key] = bucket
            guard allowed else { return .failure(.flooding) }
        }
        remember(seenKey)
        count(message)
        return .success(entry(message, sender: sender, isHistory: isHistory, isOwn: false))
    }

    /// A message to send: `text` cleaned, checked and signed, numbered after the highest seen.
    ///
    /// - Parameters:
    ///   - text: what the person typed (cleaned here).
    ///   - key: the member's signing key.
    ///   - name: the member's name (cleaned here).
    ///   - wallClock: nanoseconds since the Unix epoch now (the message's `sentAt`, raised to keep
    ///     it unique per key; the rate limit's clock).
    /// - Throws: ``ChatError`` for an empty or too long text, or beyond the rate limit.
    public mutating func compose(_ text: String, key: MemberKey, name: String, wallClock: UInt64) throws(ChatError) -> ChatMessage {
        let clean = try ChatText.sendable(text)
        let name = try ChatText.name(name)
        let sentAt = max(wallClock, lastSentAt + 1)
        let window = UInt64(ChatLimits.sendWindowSeconds * 1e9)
        let inWindow = (recent[key.publicKey] ?? []).filter { $0 + window > sentAt }
        if inWindow.count >= ChatLimits.sendBurst, let oldest = inWindow.min() {
            throw .rateLimited(wait: Double(oldest + window - sentAt) / 1e9)
        }
        let ordinal = highestOrdinal.map { $0 + 1 } ?? 0
        let message: ChatMessage
        do {
            message = try ChatMessage(signedBy: key, session: session, name: name, sentAt: sentAt, text: clean, ordinal: ordinal)
        } catch {
            throw .notSent("could not sign: \(error)")
        }
        lastSentAt = sentAt
        note(sentAt, of: message.key)
        return message
    }

    /// Records the member's own message once the relay confirmed it; the entry to show.
    public mutating func sent(_ message: ChatMessage, as sender: ParticipantID) -> ChatEntry {
        remember(Seen(key: message.key, sentAt: message.sentAt))
        count(message)
        return entry(message, sender: sender, isHistory: false, isOwn: true)
    }

    private mutating func count(_ message: ChatMessage) {
        highestOrdinal = max(highestOrdinal ?? 0, message.ordinal)
        directory.record(name: message.name, key: message.key)
        note(message.sentAt, of: message.key)
    }

    /// Counts a message of `key` sent at `sentAt` for the sending limit (once).
    private mutating func note(_ sentAt: UInt64, of key: MemberPublicKey) {
        var times = recent[key, default: []]
        guard !times.contains(sentAt) else { return }
        times.append(sentAt)
        times.sort()
        recent[key] = Array(times.suffix(ChatLimits.sendBurst))
    }

    private func entry(_ message: ChatMessage, sender: ParticipantID, isHistory: Bool, isOwn: Bool) -> ChatEntry {
        ChatEntry(
            sender: sender, name: message.name, label: directory.label(name: message.name, key: message.key), key: message.key,
            text: message.text, sentAt: Double(message.sentAt) / 1e9, isHistory: isHistory, isOwn: isOwn)
    }

    private mutating func remember(_ key: Seen) {
        seen.insert(key)
        seenOrder.append(key)
        if seenOrder.count > ChatLimits.rememberedMessages {
            seen.remove(seenOrder.removeFirst())
        }
    }
}
