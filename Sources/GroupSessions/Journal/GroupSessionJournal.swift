import Foundation

/// Shares files and other large values with every member of a ``GroupSession``: attachments
/// of up to 100 MiB, sealed end to end and kept by the relay for the session's lifetime.
///
/// An attachment is cut into 64 KiB chunks, each sealed with a key derived from the uploader's
/// payload key (ChaCha20-Poly1305; the session, attachment and chunk index are bound as
/// associated data). The relay stores only ciphertext, announces every complete attachment to
/// every member (and to members that join later, without anyone uploading again), serves
/// chunks on request, and deletes the journal when the session's last member leaves.
///
/// Transfers are flow-controlled both ways: an upload keeps at most 16 chunks unacknowledged by
/// the relay and a download asks for at most 32 chunks ahead of its reader, so a 100 MiB
/// transfer never floods the connection and messages on the same session keep flowing.
///
/// ```swift
/// let journal = GroupSessionJournal(session: session)
/// let attachment = try await journal.add(Data(contentsOf: poster), label: "poster.jpg")
/// for await attachments in journal.attachments {
///     for attachment in attachments { let bytes = try await journal.load(attachment) }
/// }
/// ```
public final class GroupSessionJournal: Sendable {
    /// The largest attachment: 100 MiB (the relay enforces its own limit too).
    public static let maximumAttachmentSize = 100 << 20

    let engine: SessionEngine

    /// Creates the journal of `session`. Every journal of one session shares its state.
    public init<Activity>(session: GroupSession<Activity>) { engine = session.engine }

    /// The current list of attachments, in the order the relay announced them.
    public var currentAttachments: [Attachment] { engine.journal.attachments }

    /// The whole list of attachments now, then again after every addition or removal.
    ///
    /// Finishes when the session is invalidated.
    public var attachments: AsyncStream<[Attachment]> { engine.journal.updates() }

    /// Announcements this member could not open (tampered or sealed under another key); they
    /// are never listed.
    public var rejectedAnnouncementCount: Int { engine.journal.rejectedAnnouncements }

    private func requireJoined() throws {
        switch engine.state {
        case .joined: return
        case .waiting: throw GroupSessionError.notJoined
        case .invalidated(let reason): throw GroupSessionError.invalidated("\(reason)")
        }
    }

    /// Uploads `data` as a new attachment and returns it once the relay has stored all of it
    /// and announced it to every member.
    ///
    /// - Parameters:
    ///   - data: Up to ``maximumAttachmentSize`` bytes.
    ///   - label: A free-form label other members see (sealed; the relay cannot read it).
    ///   - progress: Called with (bytes sent, total) after each chunk is queued.
    /// - Returns: The attachment, as the other members see it.
    /// - Throws: ``GroupSessionError`` if the attachment is too large, the session is not
    ///   joined, or the relay refuses it (its size limit, the session's journal quota).
    public func add(
        _ data: Data, label: String = "", progress: (@Sendable (_ sent: Int, _ total: Int) -> Void)? = nil
    ) async throws -> Attachment {
        guard data.count <= Self.maximumAttachmentSize else {
            throw GroupSessionError.attachmentTooLarge(size: data.count, limit: Self.maximumAttachmentSize)
        }
        try requireJoined()
        return try await engine.journal.upload(data, label: label, progress: progress)
    }

    /// Uploads a `Codable` value as JSON, labelled with its type name.
    ///
    /// ```swift
    /// let attachment = try await journal.add(Playlist(items: items))
    /// let playlist = try await journal.load(Playlist.self, from: attachment)
    /// ```
    public func add<Value: Encodable & Sendable>(_ value: Value) async throws -> Attachment {
        try await add(JSONEncoder().encode(value), label: String(describing: Value.self))
    }

    /// Removes an attachment for every member; returns once the relay has deleted it.
    ///
    /// - Throws: ``GroupSessionError`` if not joined or the attachment is not in the journal.
    public func remove(_ attachment: Attachment) async throws {
        try requireJoined()
        try await engine.journal.remove(attachment.id)
    }

    /// Apple's spelling of ``remove(_:)``: removes an attachment for every member.
    public func remove(attachment: Attachment) async throws {
        try await remove(attachment)
    }

    /// The attachment's bytes as a sequence of chunks, pulled from the relay as they are read
    /// and checked against the attachment's SHA-256 at the end.
    ///
    /// Works for admitted (not yet joined) members too.
    public func chunks(of attachment: Attachment) -> AttachmentChunks {
        AttachmentChunks(client: engine.journal, attachment: attachment)
    }

    /// Loads a whole attachment.
    ///
    /// - Parameters:
    ///   - attachment: An attachment from ``attachments``.
    ///   - progress: Called with (bytes received, total) after each chunk.
    /// - Throws: ``GroupSessionError`` if the relay no longer has it, or a chunk was tampered
    ///   with, reordered or missing.
    public func load(
        _ attachment: Attachment, progress: (@Sendable (_ received: Int, _ total: Int) -> Void)? = nil
    ) async throws -> Data {
        var data = Data(capacity: attachment.size)
        for try await chunk in chunks(of: attachment) {
            data.append(chunk)
            progress?(data.count, attachment.size)
        }
        return data
    }

    /// Loads an attachment added with ``add(_:)-(Value)`` and decodes it.
    public func load<Value: Decodable>(_ type: Value.Type, from attachment: Attachment) async throws -> Value {
        try JSONDecoder().decode(Value.self, from: await load(attachment))
    }
}
